#!/usr/bin/env bash
# ncu_patterns.sh — the bank model against Nsight Compute on generated patterns: 300 seeded
# lane -> address patterns per width (4, 8 and 16 bytes; random, strided, permuted, grouped,
# paired on n ^ 1 or n ^ 2, pairs broken by one lane, some lanes inactive), each one launch of
# bank_probe and one of bank_probe_store, under one ncu process each (ncu_check.py generated).
# Prints one line per access and width and exits 1 on any disagreement.
#
# usage: lessons/06_bank_conflicts/ncu_patterns.sh [BUILD] [ncu_check.py options: --count N --seed S --save FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
shift || true
python3 "$here/ncu_check.py" generated "$BUILD/06_bank_conflicts_probes" "$@"
