#!/usr/bin/env python3
"""The bank model against Nsight Compute, on many patterns in one profiling session.

    ncu_check.py table BUILD        the lesson's probe table: a Markdown table for README.md
    ncu_check.py generated BUILD    a few hundred seeded lane -> address patterns per width

BUILD is the build folder (or the path of its 06_bank_conflicts_probes, lesson 06's probe tool,
probes.cu). Each pattern is one launch of bank_probe (one warp, one shared load), all launches
under one ncu process, so the counters of launch i belong to pattern i; then the same for
bank_probe_store (one shared store of the pattern). `generated` prints one line per access and width (patterns, agreeing,
disagreeing, the first few disagreements); both modes exit 1 on any disagreement. Options of
`generated`: --count N (patterns per width, default 300), --seed S (default 6), --save FILE
(every pattern with the model's and ncu's counts, as CSV).
NCU=/path/to/ncu picks the profiler.
"""
import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile

LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
LD_BC = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
ST_BC = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
PROBE_BYTES = 32768  # kProbeWords * 4 in main.cu
LANES = 32


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"ncu_check.py: {' '.join(cmd[:6])} ... failed (exit {p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def model(binary, args):
    """name -> (width, wavefronts, conflicts), in the order the program runs them."""
    out = {}
    for line in run([binary, *args, "--list"]).splitlines():
        name, width, wf, bc = line.split()
        out[name] = (int(width), int(wf), int(bc))
    return out


def profile(binary, args):
    """One ncu process over every launch of the probe kernels: a list of {metric: value}, in launch order."""
    ncu = os.environ.get("NCU", "ncu")
    text = run([ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--metrics",
                ",".join([LD_WF, LD_BC, ST_WF, ST_BC]), "-k", "regex:bank_probe", binary, *args])
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit("ncu_check.py: no CSV table in ncu's output:\n" + text[-2000:])
    launches = {}
    for row in csv.DictReader(lines[start:]):
        if not (row.get("ID") or "").isdigit():
            continue
        value = row["Metric Value"].replace(",", "")
        launches.setdefault(int(row["ID"]), {})[row["Metric Name"]] = int(float(value))
    return [launches[i] for i in sorted(launches)]


# ---------------------------------------------------------------- generated patterns
def generate(width, count, seed):
    """count patterns of `width`-byte lanes: random and structured, with and without pairs and
    inactive lanes. Returns [(name, [byte address or -1] * 32)]."""
    rng = random.Random(seed * 1000 + width)
    slots = PROBE_BYTES // width

    def window(k):  # k distinct slots somewhere in the array
        base = rng.randrange(slots)
        spread = rng.choice([1, 1, 2, 8, 32, 33])
        return [(base + i * spread) % slots for i in range(k)]

    def values(n):  # n slots, drawn from a small window (repeats: broadcasts and conflicts)
        w = window(rng.choice([1, 2, 3, 4, 8, 16, 32, 64]))
        return [rng.choice(w) for _ in range(n)]

    def strided(n):
        stride, off = rng.choice([0, 1, 2, 3, 4, 5, 8, 16, 17, 32, 33, 64]), rng.randrange(slots)
        return [(off + i * stride) % slots for i in range(n)]

    def permuted(n):
        stride, off, x = rng.choice([1, 2, 4, 8, 32, 33]), rng.randrange(slots), rng.randrange(32)
        return [(off + ((i ^ x) % n) * stride) % slots for i in range(n)]

    def lane_fn(kind):  # a lane -> slot map of a given shape
        g = rng.choice([2, 4, 8, 16])
        if kind == "div":
            v = rng.choice([values, strided, permuted])(LANES // g)
            return lambda l: v[l // g]
        if kind == "mod":
            v = rng.choice([values, strided, permuted])(g)
            return lambda l: v[l % g]
        v = rng.choice([values, strided, permuted])(LANES)
        return lambda l: v[l]

    def paired(mask):  # lanes n and n ^ mask share a slot
        v = rng.choice([values, strided, permuted])(LANES)
        return lambda l: v[min(l, l ^ mask)]

    kinds = ["random", "strided", "permuted", "div", "mod", "pair1", "pair2", "pair_broken"]
    patterns = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        if kind in ("random", "strided", "permuted"):
            v = {"random": values, "strided": strided, "permuted": permuted}[kind](LANES)
            f = lambda l, v=v: v[l]
        elif kind in ("div", "mod"):
            f = lane_fn(kind)
        elif kind in ("pair1", "pair2"):
            f = paired(1 if kind == "pair1" else 2)
        else:  # paired, then one lane moved elsewhere
            g, odd, other = paired(rng.choice([1, 2])), rng.randrange(LANES), rng.randrange(slots)
            f = lambda l, g=g, odd=odd, other=other: other if l == odd else g(l)
        addr = [f(l) * width for l in range(LANES)]
        # one pattern in four: some lanes stay out (a random few, or every other one)
        inactive = ""
        r = rng.random()
        if r < 0.15:
            for l in rng.sample(range(LANES), rng.randrange(1, 24)):
                addr[l] = -1
            inactive = "_some_off"
        elif r < 0.25:
            step = rng.choice([1, 2])
            for l in range(LANES):
                if (l // step) % 2:
                    addr[l] = -1
            inactive = f"_alternate{step}_off"
        patterns.append((f"g{width}_{i:03d}_{kind}{inactive}", addr))
    return patterns


def write_patterns(path, patterns_by_width):
    with open(path, "w") as f:
        for width, patterns in patterns_by_width.items():
            for name, addr in patterns:
                f.write(f"{name} {width} {' '.join(map(str, addr))}\n")


def compare(binary, probe_args, store):
    """Model and ncu side by side: [(name, width, model wf, model bc, ncu wf, ncu bc)]."""
    store_flag = ["--store"] if store else []
    predicted = model(binary, probe_args + store_flag)
    counts = profile(binary, probe_args + store_flag)
    if len(counts) != len(predicted):
        sys.exit(f"ncu_check.py: {len(predicted)} patterns but ncu profiled {len(counts)} launches")
    wf, bc = (ST_WF, ST_BC) if store else (LD_WF, LD_BC)
    return [(name, w, m_wf, m_bc, c[wf], c[bc]) for (name, (w, m_wf, m_bc)), c in zip(predicted.items(), counts)]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["table", "generated"])
    ap.add_argument("binary", metavar="BUILD")
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--save")
    a = ap.parse_args(argv)
    binary = os.path.join(a.binary, "06_bank_conflicts_probes") if os.path.isdir(a.binary) else a.binary
    if not os.access(binary, os.X_OK):
        sys.exit(f"ncu_check.py: no executable at {binary} (cmake --build BUILD --target 06_bank_conflicts_probes)")

    if a.mode == "table":
        loads = compare(binary, [], False)
        stores = compare(binary, [], True)
        print("| probe | width | ld wavefronts: model | ncu | ld conflicts: model | ncu "
              "| st wavefronts: model | ncu | st conflicts: model | ncu | agree |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        bad = 0
        for ld, st in zip(loads, stores):
            agree = ld[2:4] == ld[4:6] and st[2:4] == st[4:6]
            bad += not agree
            print(f"| {ld[0]} | {ld[1]} | {ld[2]} | {ld[4]} | {ld[3]} | {ld[5]} | {st[2]} | {st[4]} | {st[3]} | {st[5]} "
                  f"| {'yes' if agree else 'no'} |")
        print(f"\n{len(loads)} probes: {len(loads) - bad} agree with the model on load and store wavefronts and conflicts, "
              f"{bad} do not.\nld: bank_probe (one shared load); st: bank_probe_store (one shared store of the same pattern).")
        return 1 if bad else 0

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "patterns.txt")
        write_patterns(path, {w: generate(w, a.count, a.seed) for w in (4, 8, 16)})
        results = {"load": compare(binary, ["--file", path], False),
                   "store": compare(binary, ["--file", path], True)}
        with open(path) as f:
            addresses = {line.split()[0]: line.split()[2:] for line in f}
    failed = False
    print(f"generated patterns (seed {a.seed}), model vs ncu: wavefronts and conflicts must both match")
    for op, rows in results.items():
        for width in (4, 8, 16):
            mine = [r for r in rows if r[1] == width]
            bad = [r for r in mine if (r[2], r[3]) != (r[4], r[5])]
            wf_bad = sum(r[2] != r[4] for r in mine)
            print(f"{op}s, {width:2d} bytes: {len(mine)} patterns, {len(mine) - len(bad)} agree, {len(bad)} disagree"
                  f" ({wf_bad} of them on wavefronts)")
            for name, _, m_wf, m_bc, n_wf, n_bc in bad[:4]:
                print(f"    {name}: model {m_wf} wavefronts / {m_bc} conflicts, ncu {n_wf} / {n_bc}; "
                      f"addresses {' '.join(addresses[name])}")
            failed |= bool(bad)
    if a.save:
        with open(a.save, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["op", "name", "width", "model_wf", "model_bc", "ncu_wf", "ncu_bc", "addresses"])
            for op, rows in results.items():
                for r in rows:
                    w.writerow([op, *r, " ".join(addresses[r[0]])])
    print("ALL AGREE" if not failed else "DISAGREEMENTS (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
