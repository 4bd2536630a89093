"""The mutation run (scripts/mutation_run.sh, whose comment block says what it does, is its wrapper):
`python3 -m grading.mutation.run [options]`, from the course's root; MUTATION_RUN_CWD is the folder
--out is relative to (the wrapper's caller's). Exit code: 0 when the run completed, 1 when it could
not run, 2 for a bad command line."""
from __future__ import annotations

import csv
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor

from .. import mutation_report
from . import layers
from .layers import Run
from .options import Mutant, Options, Refused, cores, dry_run, mutants, parse, usage


class Died(Exception):
    """The run could not go on: its message, and exit code 1."""


def _out(cmd: list[str]) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return 127, ""
    return p.returncode, p.stdout.decode("utf-8", "replace")


def _first(text: str) -> str:
    return text.split("\n")[0] if text else ""


def find_tools(o: Options) -> str:
    """CUOBJDUMP (the static rules) and compute-sanitizer, on PATH or beside nvcc; the sanitizer
    ("" when none: the memcheck layer is off, and summary.txt says so)."""
    nvcc = shutil.which("nvcc")
    beside = os.path.dirname(nvcc) if nvcc else ""
    if not os.environ.get("CUOBJDUMP") and not shutil.which("cuobjdump") and nvcc and os.access(os.path.join(beside, "cuobjdump"), os.X_OK):
        os.environ["CUOBJDUMP"] = os.path.join(beside, "cuobjdump")
    sanitizer = shutil.which("compute-sanitizer") or ""
    if not sanitizer and nvcc and os.access(os.path.join(beside, "compute-sanitizer"), os.X_OK):
        sanitizer = os.path.join(beside, "compute-sanitizer")
    return sanitizer


def env_txt(r: Run, o: Options, argv: list[str], n: int, memcheck_missing: bool) -> None:
    """OUT/env.txt: what ran where."""
    rc, head = _out(["git", "-C", r.root, "rev-parse", "HEAD"])
    _, status = _out(["git", "-C", r.root, "status", "--porcelain"])
    rc_gpu, gpu = _out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    rc_nvcc, nvcc = _out(["nvcc", "--version"])
    release = "\n".join(x for x in nvcc.split("\n") if "release" in x.lower())
    san = _out([r.sanitizer, "--version"])[1] if r.sanitizer else ""  # (bash ran its builtin false: nothing)
    rc_gxx, gxx = _out(["g++", "--version"])
    lines = ["date: " + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "commit: %s%s" % (head.strip() if rc == 0 else "unknown", " (with uncommitted changes)" if status.strip() else ""),
             "command: scripts/mutation_run.sh " + " ".join(argv),
             "gpu: " + (_first(gpu) if rc_gpu == 0 else "none"),
             "nvcc: " + (release if rc_nvcc == 0 and release else "none"),
             "compute-sanitizer: %s %s%s" % (r.sanitizer or "none", _first("\n".join(x for x in san.split("\n") if "version" in x.lower())),
                                             " (MEMCHECK LAYER OFF: none found)" if memcheck_missing else ""),
             "cmake: " + _first(_out(["cmake", "--version"])[1]),
             "g++ (the lint): %s%s" % (_first(gxx) if rc_gxx == 0 else "none", " (LINT LAYER OFF: --no-lint)" if not o.lint else ""),
             "cores: %d; compile jobs: %d; memcheck jobs: %d; deadline: %d s; check time limit: %d s (memcheck: %d s)"
             % (cores(), o.jobs, o.memcheck_jobs, o.deadline, r.limit, r.memcheck_limit),
             "mutants: %d" % n]
    with open(os.path.join(r.out, "env.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _tail(path: str, n: int) -> None:
    with open(path, encoding="utf-8", errors="replace") as f:
        sys.stdout.write("".join(x + "\n" for x in f.read().rstrip("\n").split("\n")[-n:]))


def prepare(r: Run, o: Options, ms: list[Mutant]) -> list[str]:
    """A copy of the course in WORK/src with every mutant's main.cu and a target for each,
    configured in WORK/build; the exercise region each mutant changes."""
    print("copying the course to %s ..." % r.src)
    shutil.rmtree(r.src, ignore_errors=True)
    os.makedirs(r.src)
    tar = ("tar --exclude='./build*' --exclude='./.git' --exclude='./.wt' --exclude='./.deps' -cf - . | (cd %s && tar -xf -)"
           % _quote(r.src))
    if subprocess.run(["bash", "-c", "set -o pipefail; " + tar], cwd=r.root).returncode != 0:
        raise Died("could not copy the course")
    ids = os.path.join(r.work, "ids.txt")
    with open(ids, "w", encoding="utf-8") as f:
        f.write("".join(m.id + "\n" for m in ms))
    try:
        mutation_report.write_mutants(r.root, r.src, ids)
    except (OSError, KeyError, ValueError) as e:
        print("mutation_report.py: %s" % e, file=sys.stderr)
        raise Died("could not write the mutants")
    with open(os.path.join(r.src, "mutants", "regions.txt"), encoding="utf-8") as f:
        regions = f.read().split("\n")
    print("configuring %s ..." % r.build)
    configure = os.path.join(r.logs, "configure.txt")
    with open(configure, "wb") as log:
        rc = subprocess.run(["cmake", "--preset", "default", "-B", r.build] + o.extra, stdout=log, stderr=subprocess.STDOUT, cwd=r.src).returncode
    if rc != 0:
        _tail(configure, 20)
        raise Died("configure failed (%s)" % configure)
    shutil.rmtree(os.path.join(r.build, "ready"), ignore_errors=True)
    os.makedirs(os.path.join(r.build, "ready"))
    return regions


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def build_solution(r: Run, o: Options) -> None:
    """The course's own lessons, built first (under what the deadline leaves)."""
    print("building the course's own lessons: %s ..." % " ".join(r.lessons))
    log = os.path.join(r.logs, "solution.build.txt")
    with open(log, "wb") as f:
        rc = subprocess.run(["timeout", "-k", "5", str(r.left()), "cmake", "--build", r.build, "-j", str(o.jobs), "--target"]
                            + [x + "_check" for x in r.lessons], stdout=f, stderr=subprocess.STDOUT).returncode
    if rc in (124, 137):
        raise Died("the deadline came while the course's own code was building (%s)" % log)
    if rc != 0:
        _tail(log, 30)
        raise Died("the course's own code does not build (%s)" % log)


def check_solution(r: Run, o: Options) -> bool:
    """Every layer on the course's own code (each must pass it, or that layer's verdicts mean
    nothing: said in summary.txt, not a stop). Whether the GPU checks were skipped (no GPU)."""
    print("checking the course's own code (every layer must pass it, or that layer's verdicts mean nothing) ...")
    no_gpu = False
    for lesson in r.lessons:
        name, check = "solution." + lesson, os.path.join(r.build, lesson + "_check")
        if o.lint:
            layers.run_lint(r, name, os.path.join(r.src, "lessons", lesson, "main.cu"))
        layers.run_checks(r, name, check)
        gpu = r.get(name, "gpu")
        no_gpu = no_gpu or gpu == "skipped"
        if o.memcheck and gpu == "passed":
            layers.run_memcheck(r, name, check)
        layers.run_static(r, name, lesson, check)
        bad = layers.solution_problems(r, name)
        if bad:
            with open(os.path.join(r.work, "solution_problems.txt"), "a", encoding="utf-8") as f:
                f.write("lesson %s: caught by %s (logs: %s/%s.*)\n" % (lesson, bad, r.logs, name))
            print("WARNING: lesson %s's own code is caught by %s here: that layer says nothing about its mutants" % (lesson, bad))
    if no_gpu:
        print("note: no usable GPU: GPU checks, memcheck and speed are skipped; this run measures compile, host and static only")
    return no_gpu


def start_builder(r: Run, o: Options, ms: list[Mutant]) -> subprocess.Popen:
    """The mutants' build, in the background (ninja -k 0), in its own process group."""
    log = open(os.path.join(r.logs, "mutants.build.txt"), "wb")
    cmd = ["cmake", "--build", r.build, "-j", str(o.jobs), "--target"] + [m.name + "_ready" for m in ms] + ["--", "-k", "0"]
    try:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        log.close()


def stop(p: subprocess.Popen) -> None:
    """The builder and everything it started (ninja, nvcc)."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except OSError:
            pass
    p.wait()


def check_mutants(r: Run, o: Options, ms: list[Mutant], builder: subprocess.Popen, memchecks: ThreadPoolExecutor) -> list[Future]:
    """Compile, host and GPU checks: each mutant as soon as ninja has built it; memcheck (a few at
    once, beside the next mutants' checks) on each that passed the GPU checks."""
    print("checking each mutant as it is built (%d mutants, %d compile jobs) ..." % (len(ms), o.jobs))
    pending, done, futures = list(ms), 0, []
    while pending:
        builder_done = builder.poll() is not None
        progressed, still = False, []
        for m in pending:
            if r.past_deadline():
                r.put(m.name, "compile", "not run (deadline)")
            elif os.path.isfile(os.path.join(r.build, "ready", m.name)):
                r.put(m.name, "compile", "ok")
                layers.run_checks(r, m.name, os.path.join(r.build, m.name + "_check"))
                done, progressed = done + 1, True
                print("[%d/%d] %s: host %s, GPU %s" % (done, len(ms), m.id, r.get(m.name, "host"), r.get(m.name, "gpu")), flush=True)
                if o.memcheck and r.get(m.name, "gpu") == "passed":
                    futures.append(memchecks.submit(layers.run_memcheck, r, m.name, os.path.join(r.build, m.name + "_check")))
            elif builder_done:
                r.put(m.name, "compile", "FAILED")
                done, progressed = done + 1, True
                print("[%d/%d] %s: does not compile" % (done, len(ms), m.id), flush=True)
            else:
                still.append(m)
        pending = still
        if r.past_deadline():
            break
        if not progressed:
            time.sleep(1)
    return futures


def split_build_log(r: Run) -> None:
    """Each mutant's compiler errors, from the build log (ninja names the target of a failed step)."""
    target = None
    with open(os.path.join(r.logs, "mutants.build.txt"), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line.startswith("FAILED: "):
            found = re.search(r"mut[0-9]{3}", line)
            target = os.path.join(r.logs, found.group(0) + ".build.txt") if found else None
        if re.match(r"\[[0-9]+/[0-9]+\] ", line):
            target = None
        if target:
            with open(target, "a", encoding="utf-8") as out:
                out.write(line + "\n")


def static_and_waits(r: Run, o: Options, ms: list[Mutant], futures: list[Future]) -> list[Mutant]:
    """The static rules (on the CPU, --jobs at once) of what compiled; then the memcheck runs still
    going and the lint. The mutants that passed the GPU checks."""
    survivors = [m for m in ms if r.get(m.name, "gpu") == "passed"]
    static = [m for m in ms if r.get(m.name, "compile") == "ok"]
    print("static rules on %d mutants%s ..." % (len(static), ", then the memcheck runs still going (%d mutants passed the GPU checks)"
                                                 % len(survivors) if o.memcheck else ""), flush=True)
    with ThreadPoolExecutor(o.jobs) as pool:
        list(pool.map(lambda m: layers.run_static(r, m.name, m.lesson, os.path.join(r.build, m.name + "_check")), static))
    for f in futures:
        f.result()
    return survivors


def speed(r: Run, o: Options, survivors: list[Mutant], regions: list[str]) -> None:
    """Speed, one at a time on a quiet machine, between the solution's rounds (another each time
    the mutants measured pass another --solution-every of the list, and one at the end)."""
    print("speed: the solution's rounds and the mutants that passed the checks%s ..." % (" and memcheck" if o.memcheck else ""), flush=True)
    layers.solution_round(r)
    nxt = o.every
    reserve = 20 if o.deadline > 0 else 0  # the last ~20 s are kept for the solution's closing round
    for m in survivors:
        if o.memcheck and r.get(m.name, "memcheck") != "clean":
            continue
        if r.left() <= reserve:
            r.put(m.name, "speed", "not run (deadline)")
            continue
        if m.index >= nxt:
            layers.solution_round(r)
            nxt = (m.index // o.every + 1) * o.every
        region = regions[m.index] if m.index < len(regions) else ""
        layers.run_speed(r, m.name, m.lesson, os.path.join(r.build, m.name + "_check"), region)
        print("%s: speed %s" % (m.id, r.get(m.name, "speed")), flush=True)
    if not r.past_deadline():
        layers.solution_round(r)


def report(r: Run, o: Options, ms: list[Mutant], no_gpu: bool, memcheck: bool) -> None:
    """OUT/mutants.csv and summary.txt (grading/mutation_report.py, pipeline.caught_by), and the logs
    worth reading beside them (each cut to 32 KiB): the course's own code's, and every layer's of
    each mutant no layer caught; logs/index.txt names the mutant of each mutNNN."""
    try:
        sys.stdout.write(mutation_report.report(r.state, r.out, os.path.join(r.work, "ids.txt"),
                                                os.path.join(r.root, "grading", "equivalent_mutants.txt"),
                                                int(time.time()) - r.start, o.deadline, memcheck, no_gpu,
                                                os.path.join(r.work, "solution_problems.txt")))
    except (OSError, KeyError, ValueError) as e:
        print("mutation_report.py: %s" % e, file=sys.stderr)
    os.makedirs(os.path.join(r.out, "logs"), exist_ok=True)
    with open(os.path.join(r.out, "logs", "index.txt"), "w", encoding="utf-8") as f:
        f.write("".join("%s %s\n" % (m.name, m.id) for m in ms))
    uncaught = []
    try:
        with open(os.path.join(r.out, "mutants.csv"), encoding="utf-8") as f:
            uncaught = ["mut%03d" % k for k, row in enumerate(csv.DictReader(f)) if row["caught_by"] not in mutation_report.LAYERS]
    except (OSError, KeyError):
        pass
    with open(os.path.join(r.work, "uncaught.txt"), "w", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in uncaught))
    for path in glob.glob(os.path.join(r.logs, "solution.*")) + [p for x in uncaught for p in glob.glob(os.path.join(r.logs, x + ".*"))]:
        if os.path.isfile(path):
            with open(path, "rb") as src:
                src.seek(max(0, os.path.getsize(path) - 32768))
                data = src.read()
            with open(os.path.join(r.out, "logs", os.path.basename(path)), "wb") as dst:
                dst.write(data)


def setup(root: str, o: Options, argv: list[str]) -> tuple[Run, list[Mutant], bool]:
    """The tools, the mutants (or the plan, for --dry-run: then None), the folders and env.txt."""
    sanitizer = find_tools(o)
    memcheck_missing = False
    if o.memcheck and not sanitizer and not o.dry:
        print("note: no compute-sanitizer on PATH or beside nvcc: the memcheck layer is off")
        o.memcheck, memcheck_missing = False, True
    start = int(time.time())
    ms = mutants(root, o)
    if not ms:
        raise Refused("mutation_run.sh: no mutant matches")
    lessons = sorted({m.lesson for m in ms})
    r = Run(root, "", "", int(os.environ.get("MUTANT_TIME_LIMIT") or 60), int(os.environ.get("MEMCHECK_TIME_LIMIT") or 180),
            o.deadline, start, sanitizer, lessons=tuple(lessons))
    if o.dry:
        return r, ms, memcheck_missing
    out = os.path.join(os.environ.get("MUTATION_RUN_CWD") or os.getcwd(), o.out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError:
        raise Died("cannot create %s" % o.out)
    r.out = os.path.abspath(out)
    r.work = o.work if o.work.startswith("/") else os.path.join(root, o.work)
    try:
        for d in (r.state, r.logs):
            shutil.rmtree(d, ignore_errors=True)
        if os.path.exists(os.path.join(r.work, "solution_problems.txt")):
            os.unlink(os.path.join(r.work, "solution_problems.txt"))
        os.makedirs(r.state)
        os.makedirs(r.logs)
    except OSError:
        raise Died("cannot create %s" % r.work)
    env_txt(r, o, argv, len(ms), memcheck_missing)
    r.gpu_name = _first(_out(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])[1])
    return r, ms, memcheck_missing


def course(r: Run, o: Options, ms: list[Mutant]) -> None:
    """The run, layer by layer (pipeline.PLANS["mutation"]): the course's own code first, then the
    mutants as they are built, the static rules, the speed, and the report."""
    regions = prepare(r, o, ms)
    build_solution(r, o)
    # The course solution's speed, first, on a quiet machine (before the mutants build): whatever the
    # deadline cuts later, solution.csv has this round.
    if os.path.exists(os.path.join(r.out, "solution.csv")):
        os.unlink(os.path.join(r.out, "solution.csv"))
    print("the course solution's speed cases (round 1) ...", flush=True)
    layers.solution_round(r)
    builder = start_builder(r, o, ms)
    build_started = time.monotonic()
    # The lint of every mutant (on the CPU, two at a time) and memcheck (a few at once) run beside
    # the checks; the report waits for them.
    lints, memchecks = ThreadPoolExecutor(2), ThreadPoolExecutor(o.memcheck_jobs)
    try:
        linted = [lints.submit(layers.run_lint, r, m.name, os.path.join(r.src, "mutants", m.name, "main.cu")) for m in ms] if o.lint else []
        no_gpu = check_solution(r, o)
        futures = check_mutants(r, o, ms, builder, memchecks)
        stop(builder)
        print("build of the mutants: %d s" % int(time.monotonic() - build_started))
        split_build_log(r)
        survivors = static_and_waits(r, o, ms, futures + linted)
    finally:
        stop(builder)
        lints.shutdown(cancel_futures=True)
        memchecks.shutdown(cancel_futures=True)
    if not no_gpu:
        speed(r, o, survivors, regions)
    if not os.path.isfile(os.path.join(r.out, "solution.csv")):
        with open(os.path.join(r.out, "solution.csv"), "w", encoding="utf-8") as f:
            f.write("gpu,exercise,kernel,ms,ceiling,ceiling_ms,runs,spread\n")
    report(r, o, ms, no_gpu, o.memcheck)
    print("results: %s (mutants.csv, summary.txt, solution.csv, env.txt, logs/)   all logs: %s" % (r.out, r.logs))


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        o = parse(argv)
        if o.help:
            sys.stdout.write(usage(root))
            return 0
        r, ms, _ = setup(root, o, argv)
        if o.dry:
            dry_run(root, o, ms, list(r.lessons))
            return 0
        signal.signal(signal.SIGTERM, _interrupted)
        course(r, o, ms)
    except Refused as e:
        print(e, file=sys.stderr)
        return 2
    except (Died, RuntimeError) as e:
        print("mutation_run.sh: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
