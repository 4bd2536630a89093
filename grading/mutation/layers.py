"""The layers of the mutation run over one program (a mutant, mutNNN, or the course's own code of a
lesson, solution.LESSON), each as grading/pipeline.py's PLANS["mutation"] lists them: lint, run
(host, then GPU checks), memcheck (the --small subset), static rules, speed. Each writes its outcome,
one word line, to STATE/NAME.LAYER, which grading/mutation_report.py reads (pipeline.caught_by).
Every run of a program is limited to the per-run limit, cut to what the deadline leaves."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass

from .. import mutation_report


@dataclass
class Run:
    """What every layer needs: the folders, the limits and the deadline of this run."""
    root: str
    work: str
    out: str
    limit: int = 60               # MUTANT_TIME_LIMIT
    memcheck_limit: int = 180     # MEMCHECK_TIME_LIMIT
    deadline: int = 0             # seconds from start; 0: none
    start: int = 0
    sanitizer: str = ""
    gpu_name: str = ""
    lessons: tuple[str, ...] = ()
    round: int = 0

    @property
    def logs(self) -> str:
        return os.path.join(self.work, "logs")

    @property
    def state(self) -> str:
        return os.path.join(self.work, "state")

    @property
    def build(self) -> str:
        return os.path.join(self.work, "build")

    @property
    def src(self) -> str:
        return os.path.join(self.work, "src")

    def left(self) -> int:
        if self.deadline > 0:
            return self.deadline - (int(time.time()) - self.start)
        return 1000000

    def past_deadline(self) -> bool:
        return self.left() <= 0

    def limited(self, cmd: list[str], log: str, limit: int | None = None, cwd: str | None = None,
                err: str | None = None) -> int:
        """CMD under the per-run limit cut to what the deadline leaves (124 when none is left),
        its output to LOG (and its errors to ERR, else LOG too)."""
        t = min(self.limit if limit is None else limit, self.left())
        with open(log, "wb") as out:
            if t < 1:
                return 124
            errf = open(err, "wb") if err else None
            try:
                return subprocess.run(["timeout", "-k", "5", str(t)] + cmd, stdout=out,
                                      stderr=errf if errf else subprocess.STDOUT, cwd=cwd).returncode
            finally:
                if errf:
                    errf.close()

    def put(self, name: str, layer: str, outcome: str) -> None:
        with open(os.path.join(self.state, "%s.%s" % (name, layer)), "w", encoding="utf-8") as f:
            f.write(outcome + "\n")

    def get(self, name: str, layer: str) -> str | None:
        """The layer's outcome as `$(cat STATE/NAME.LAYER)` reads it; None when there is none."""
        try:
            with open(os.path.join(self.state, "%s.%s" % (name, layer)), encoding="utf-8", errors="replace") as f:
                return f.read().rstrip("\n")
        except OSError:
            return None


def run_checks(r: Run, name: str, check: str) -> None:
    """run: the host checks, then the GPU checks without the speed cases (up to the first failed
    assertion: a caught mutant costs no more GPU time)."""
    rc = r.limited([check, "--host"], os.path.join(r.logs, name + ".host.txt"))
    r.put(name, "host", "ok" if rc == 0 else "timeout" if rc in (124, 137) else "FAILED")
    if rc != 0:
        r.put(name, "gpu", "-")
        return
    rc = r.limited([check, "--gpu", "--test-case-exclude=speed: *", "--abort-after=1"], os.path.join(r.logs, name + ".gpu.txt"))
    r.put(name, "gpu", {0: "passed", 77: "skipped", 124: "timeout", 137: "timeout"}.get(rc, "FAILED"))


def run_memcheck(r: Run, name: str, check: str) -> None:
    """memcheck: the --small subset under compute-sanitizer's memcheck."""
    if r.past_deadline():
        r.put(name, "memcheck", "not run (deadline)")
        return
    rc = r.limited([r.sanitizer, "--tool", "memcheck", "--error-exitcode", "99", check, "--gpu", "--small"],
                   os.path.join(r.logs, name + ".memcheck.txt"), limit=r.memcheck_limit)
    r.put(name, "memcheck", {0: "clean", 77: "skipped", 99: "ERROR", 124: "timeout", 137: "timeout"}.get(rc, "FAILED"))


def _last_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:
        return ""
    if lines and lines[-1] == "":
        lines.pop()
    return lines[-1] if lines else ""


def run_static(r: Run, name: str, lesson: str, program: str) -> None:
    """static rules: the rubric's static rules on the compiled program (grading/static_evidence.py
    of the course copy): CONTRACT (a required rule), SHORT, ok, or not judged."""
    rubric = os.path.join(r.src, "lessons", lesson, "rubric.json")
    if not os.path.isfile(rubric):
        r.put(name, "static", "-")
        return
    if r.past_deadline():
        r.put(name, "static", "not run (deadline)")
        return
    log = os.path.join(r.logs, name + ".static.txt")
    with open(log, "wb") as f:
        rc = subprocess.run(["python3", "-m", "grading.static_evidence", "check", rubric, program], stdout=f,
                            stderr=subprocess.STDOUT, cwd=r.src).returncode
    words = ""
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f.read().split("\n"):
            if re.match(r"\s+\[(SHORT|short)", line):
                words = re.sub(r" +", " ", line.lstrip(" "))
                break
    if rc == 1:
        r.put(name, "static", "CONTRACT " + words)
    elif rc == 0:
        r.put(name, "static", ("SHORT " + words) if words else "ok")
    else:
        r.put(name, "static", "not judged: " + _last_line(log))


def run_lint(r: Run, name: str, source: str) -> None:
    """lint: grading/ub_lint.py of the course copy on the main.cu (g++ -O3 on its device code as host C++)."""
    if r.past_deadline():
        r.put(name, "lint", "not run (deadline)")
        return
    log = os.path.join(r.logs, name + ".lint.txt")
    r.limited(["python3", "-m", "grading.ub_lint", "--json", source], log, cwd=r.src)
    r.put(name, "lint", mutation_report.lint_words(log))


def solution_round(r: Run) -> None:
    """The speed cases of every lesson's own code, appended to OUT/solution.csv."""
    r.round += 1
    f = os.path.join(r.work, "solution.round%d.jsonl" % r.round)
    open(f, "w").close()
    for lesson in r.lessons:
        if r.past_deadline():
            break
        r.limited([os.path.join(r.build, lesson + "_check"), "--gpu", "--test-case=speed: *", "--evidence", f],
                  os.path.join(r.logs, "solution.%s.speed%d.txt" % (lesson, r.round)))
    try:
        mutation_report.solution_rows(f, os.path.join(r.out, "solution.csv"), r.gpu_name)
    except (OSError, KeyError, ValueError) as e:
        print("mutation_report.py: %s" % e, file=sys.stderr)


def run_speed(r: Run, name: str, lesson: str, check: str, region: str) -> None:
    """speed: the speed case of the exercise region the mutant changes (all of the lesson's when it
    is not known), judged by grading/evidence.py against this run's solution rounds."""
    rubric = os.path.join(r.src, "lessons", lesson, "rubric.json")
    cases = "speed: *" if region in ("", "-") else "speed: " + region
    f = os.path.join(r.logs, name + ".speed.jsonl")
    open(f, "w").close()
    if r.past_deadline():
        r.put(name, "speed", "not run (deadline)")
        return
    rc = r.limited([check, "--gpu", "--test-case=" + cases, "--evidence", f], os.path.join(r.logs, name + ".speed.txt"))
    if rc in (124, 137):
        r.put(name, "speed", "timeout")
    elif rc not in (0, 77):
        r.put(name, "speed", "FAILED")
    elif not os.path.isfile(os.path.join(r.src, "grading", "evidence.py")) or not os.path.isfile(rubric):
        r.put(name, "speed", "not judged (no grading/evidence.py or rubric)")
    elif os.path.getsize(f) == 0:
        r.put(name, "speed", "not measured (no speed case ran)")
    else:
        judged = os.path.join(r.logs, name + ".speed.json")
        with open(judged, "wb") as out, open(os.path.join(r.logs, name + ".speed.err"), "wb") as err:
            subprocess.run(["python3", "-m", "grading.evidence", "judge", rubric, "--lines", f, "--solutions",
                            os.path.join(r.out, "solution.csv")], stdout=out, stderr=err, cwd=r.src)
        r.put(name, "speed", mutation_report.speed_words(judged))


def solution_problems(r: Run, name: str) -> str:
    """The layers that catch the course's own code (NAME: solution.LESSON), as summary.txt names them."""
    bad = []
    if r.get(name, "host") != "ok":
        bad.append("host")
    lint = r.get(name, "lint") or "-"
    if lint.startswith("UB"):
        bad.append("lint (%s)" % lint)
    gpu = r.get(name, "gpu") or ""
    if gpu not in ("passed", "skipped"):
        bad.append("GPU checks (%s)" % gpu)
    memcheck = r.get(name, "memcheck")
    if memcheck is not None and memcheck != "clean":
        bad.append("memcheck (%s)" % memcheck)
    static = r.get(name, "static") or ""
    if static not in ("ok", "-") and not static.startswith("not judged"):
        bad.append("static (%s)" % static)
    return ", ".join(bad)
