#!/usr/bin/env bash
# ncu_probes.sh — the bank model against Nsight Compute on every probe of the lesson's table.
#
# Each probe is one launch of bank_probe (one warp, one shared load) and one of bank_probe_store
# (one shared store of the same pattern), all under one ncu process per kind (ncu_check.py
# table), so the counters of each launch belong to that one instruction. Prints the SASS of the
# probe kernels first, then a Markdown table for README.md; exits 1 if the model and ncu disagree.
#
# usage: lessons/06_bank_conflicts/ncu_probes.sh [BUILD]   (default build; needs the target
#        06_bank_conflicts_probes: cmake --build BUILD --target 06_bank_conflicts_probes)
#        NCU=/path/to/ncu lessons/06_bank_conflicts/ncu_probes.sh ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
BIN="$BUILD/06_bank_conflicts_probes"
[[ -x "$BIN" ]] || { echo "no executable at $BIN (cmake --build $BUILD --target 06_bank_conflicts_probes)" >&2; exit 2; }
command -v "${NCU:-ncu}" >/dev/null || { echo "ncu not found (set NCU=/path/to/ncu)" >&2; exit 2; }

# First, prove each probe kernel's access is ONE instruction of the intended width.
if command -v cuobjdump >/dev/null; then
    echo "SASS of the probe kernels (shared loads and stores only):"
    cuobjdump -sass "$BIN" | awk '/Function :/ { on = ($0 ~ /bank_probe/); if (on) print } on && /LDS|STS/ { print "    " $0 }'
    echo
fi
python3 "$here/ncu_check.py" table "$BIN"
