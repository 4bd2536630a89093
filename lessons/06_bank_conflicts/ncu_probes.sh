#!/usr/bin/env bash
# ncu_probes.sh — the bank model against Nsight Compute, one probe at a time.
#
# For every pattern the lesson lists (06_bank_conflicts --list-probes), run the lesson with
# --probe NAME under ncu: that launches bank_probe once, one warp, one shared load, so the
# counters belong to that single load instruction. Prints a Markdown table for README.md.
#
# usage: lessons/06_bank_conflicts/ncu_probes.sh [path/to/06_bank_conflicts]   (default build/06_bank_conflicts)
#        NCU=/path/to/ncu lessons/06_bank_conflicts/ncu_probes.sh ...
#
# The store counters see only the probe's fill of its 32 KiB array with 16-byte stores
# (32768 / 128 = 256 wavefronts if conflict-free): the same for every probe, so a loaded pattern
# shows up in the load columns alone.
set -euo pipefail

BIN=${1:-build/06_bank_conflicts}
[[ -d "$BIN" ]] && BIN="$BIN/06_bank_conflicts"   # a build folder works too
NCU=${NCU:-ncu}
LD_WF=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
LD_BC=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
ST_WF=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
ST_BC=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum

[[ -x "$BIN" ]] || { echo "no executable at $BIN (build it: cmake --build build --target 06_bank_conflicts)" >&2; exit 2; }
command -v "$NCU" >/dev/null || { echo "ncu not found (set NCU=/path/to/ncu)" >&2; exit 2; }

# First, prove each probe kernel's load is ONE instruction of the intended width (LDS, LDS.64, LDS.128).
if command -v cuobjdump >/dev/null; then
    echo "SASS of the probe kernels (shared loads and stores only):"
    cuobjdump -sass "$BIN" | awk '/Function :/ { on = ($0 ~ /bank_probe/); if (on) print } on && /LDS|STS/ { print "    " $0 }'
    echo
fi

metric() {  # metric NAME CSV-TEXT -> the value ncu printed for it (thousands separators removed)
    printf '%s\n' "$2" | awk -F'","' -v m="\"$1\"" 'index($0, m) { v = $NF; gsub(/[",]/, "", v); print v }' | tail -n 1
}

echo "| probe | width | model ld wavefronts | ncu ld wavefronts | model ld conflicts | ncu ld conflicts | ncu st wavefronts | ncu st conflicts | agree |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
while read -r name width model_wf model_bc; do
    csv=$("$NCU" --clock-control none --csv --metrics "$LD_WF,$LD_BC,$ST_WF,$ST_BC" -k regex:bank_probe \
              "$BIN" --probe "$name" </dev/null 2>/dev/null) || { echo "| $name | ncu failed |"; continue; }
    ld_wf=$(metric "$LD_WF" "$csv"); ld_bc=$(metric "$LD_BC" "$csv")
    st_wf=$(metric "$ST_WF" "$csv"); st_bc=$(metric "$ST_BC" "$csv")
    agree=no
    [[ "$ld_wf" == "$model_wf" && "$ld_bc" == "$model_bc" ]] && agree=yes
    echo "| $name | $width | $model_wf | ${ld_wf:-?} | $model_bc | ${ld_bc:-?} | ${st_wf:-?} | ${st_bc:-?} | $agree |"
done < <("$BIN" --list-probes)
echo
echo "Model: lanes served together (4-byte: the warp; 8- and 16-byte: each half-warp, but the whole warp for an"
echo "8-byte load where each half-warp asks for a single address) cost the largest number of"
echo "distinct 4-byte words asked of one bank; model conflicts = wavefronts - sum of ceil(distinct words / 32)."
echo "'agree' = both the load wavefronts and the load conflicts match."
