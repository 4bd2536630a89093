#!/usr/bin/env bash
# The judge's memory and time on two hostile transcripts of MIB MiB each (default 256), measured with
# GNU time: the judge is verdict_fixture (tests/harness/verdict_fixture.cpp), as `--host --judge`.
#   distinct:  tiny records, every key different (an index of every record once took ~5 bytes of
#              memory per byte of transcript)
#   repeated:  one key of the first test case, repeated (the judge skips them one by one, up to its
#              bound of 2^20 records)
#
#   judge_bound.sh build/verdict_fixture [MIB]
# Prints one line per transcript: seconds and peak resident memory. Needs python3 and /usr/bin/time.
set -eu
judge=$1 mib=${2:-256}
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
python3 - "$tmp" "$mib" <<'PY'
import struct, sys
folder, mib = sys.argv[1], int(sys.argv[2])
def record(key):
    return struct.pack('<I', len(key)) + key + struct.pack('<I', 1) + b'i' + struct.pack('<Q', 0)
for name, keys in (("distinct", lambda i: b"x#%d" % i), ("repeated", lambda i: b"judged: two values, both right#1")):
    with open(f"{folder}/{name}.bin", "wb") as f:
        size, i, chunk = 20, 0, []
        f.write(b"course-transcript 1\n")
        while size < mib << 20:
            r = record(keys(i)); chunk.append(r); size += len(r); i += 1
            if len(chunk) == 100000: f.write(b"".join(chunk)); chunk = []
        f.write(b"".join(chunk))
    print(f"{name}: {i} records, {size} bytes")
PY
for name in distinct repeated; do
  /usr/bin/time -f "$name: %e s, peak resident memory %M KiB (judge exit code %x)" \
    "$judge" --host --judge "$tmp/$name.bin" --verdict "$tmp/verdict.json" > /dev/null 2> "$tmp/time.txt" || true
  tail -n 1 "$tmp/time.txt"
done
