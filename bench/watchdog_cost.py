#!/usr/bin/env python3
"""watchdog_cost.py [--course DIR] [--beside N,N,...] [--extra N] — what watching a step costs the
grader while other steps run beside it: the time a 0.3 s step (`sleep 0.3`) takes beyond 0.3 s in
grading/run.py's run_step (median and largest of 10), while N other steps (each a shell with five
`sleep 3`, watched for memory and processes like a compile) run in threads of the same process,
among EXTRA idle processes (default 200, as on a busy grading machine). DIR: the course whose
grading/run.py is measured (default: this one; give an older checkout to compare). No GPU, no
sandbox; a few seconds for each N."""
import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--course", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap.add_argument("--beside", default="0,8,16,28")
ap.add_argument("--extra", type=int, default=200)
a = ap.parse_args()
sys.path.insert(0, os.path.abspath(a.course))
from grading import run  # noqa: E402

idle = [subprocess.Popen(["sleep", "600"]) for _ in range(a.extra)]
try:
    for n in [int(x) for x in a.beside.split(",")]:
        stop = threading.Event()

        def compile_like() -> None:
            while not stop.is_set():
                run.run_step(["sh", "-c", "sleep 3 & sleep 3 & sleep 3 & sleep 3 & sleep 3 & wait"], os.devnull, 60, 1 << 20,
                             mem_bytes=8 << 30, count_procs=True)

        threads = [threading.Thread(target=compile_like, daemon=True) for _ in range(n)]
        for t in threads:
            t.start()
        time.sleep(2)
        procs = len(run.process_table())
        over = []
        for _ in range(10):
            t0 = time.monotonic()
            run.run_step(["sleep", "0.3"], os.devnull, 60, 1 << 20, mem_bytes=8 << 30, count_procs=True)
            over.append(time.monotonic() - t0 - 0.3)
        stop.set()
        print("%2d steps beside (%d processes): a 0.3 s step took %.3f s more (median of 10), at most %.3f s more"
              % (n, procs, statistics.median(over), max(over)), flush=True)
        for t in threads:
            t.join()
finally:
    for p in idle:
        p.kill()
        p.wait()
