#!/usr/bin/env python3
"""sandbox_cost.py [--runs N] [--box DIR] [-- CMD ARG...] — what one sandboxed step of a cell costs the grader.

Runs CMD (default: true) N times (default 5) the way grade.sh runs a cell's step: the cell's user's
processes killed before and after (grading/run.kill_uid, as root), and between them the step in a
bubblewrap sandbox (grading/sandbox.command) under run.run_step's watchdog (memory, processes).
Prints the median seconds of each part: before (kill_uid), step, after (kill_uid), total. A
program CMD names must be visible in the sandbox (under /usr, /opt, ...; not /tmp, /root or /home);
--box DIR shows DIR read-only, as a cell's box (its compiled check) is shown to its run.
No GPU is given to the step. Needs bubblewrap (tests/grading/integration/need_bwrap.sh says why it may not start).
"""
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from grading import run, sandbox  # noqa: E402


def main(argv):
    runs, cmd, box = 5, ["true"], None
    args = list(argv)
    while args[:1] in (["--runs"], ["--box"]) and len(args) >= 2:
        if args[0] == "--runs" and args[1].isdigit() and int(args[1]) > 0:
            runs = int(args[1])
        elif args[0] == "--box" and os.path.isdir(args[1]):
            box = os.path.realpath(args[1])
        else:
            break
        args = args[2:]
    if args[:1] == ["--"] and len(args) > 1:
        cmd, args = args[1:], []
    if args:
        print(__doc__.strip())
        return 2
    scratch = tempfile.mkdtemp(prefix="sandbox-cost-")
    try:
        os.chmod(scratch, 0o755)
        return measure(runs, cmd, box or scratch, os.path.join(scratch, "step.log"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def measure(runs, cmd, box, log):
    as_root = os.geteuid() == 0
    ro, links = sandbox.system_dirs(paths=[cmd[0]] if os.path.isabs(cmd[0]) else [])
    cfg = sandbox.Config(as_root=as_root, ro_dirs=ro, links=links, view=box, prebuilt=box,
                         hide=sandbox.hide_list(["/root", "/home"]),
                         env={v: os.environ[v] for v in sandbox.PASSENV if os.environ.get(v)})
    uid = sandbox.UID_FIRST + sandbox.SLOT_SIZE * (sandbox.SLOTS - 1) + 1 if as_root else None
    nproc_base = 0 if as_root else len(run.uid_processes({os.getuid()}))
    parts = []
    for _ in range(runs):
        t0 = time.monotonic()
        if uid is not None:
            run.kill_uid(uid)
        t1 = time.monotonic()
        pre = sandbox.command(cfg, "run", box, uid=uid, nproc_base=nproc_base, status_fd="{status_fd}")
        step = run.run_step(pre + cmd, log, 60, 1 << 20, mem_bytes=4096 << 20, uid=uid, count_procs=True, status=True)
        t2 = time.monotonic()
        if uid is not None:
            run.kill_uid(uid)
        t3 = time.monotonic()
        if step.rc != 0 or not step.started:
            with open(log, "rb") as f:
                print("the step failed (exit %d): %s" % (step.rc, f.read(300).decode("utf-8", "replace").strip()))
            return 1
        parts.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
    med = [statistics.median(p[i] for p in parts) for i in range(4)]
    print("%s: %d runs%s; medians, s: before %.3f, step %.3f, after %.3f, total %.3f"
          % (" ".join(cmd), runs, "" if as_root else " (not root: no cell user, no kill_uid)", *med))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
