"""A cell's grading after its compile, layer by layer, each a function over the cell's run
(CellRun): 1. run: the runner, sandboxed, records every value the submission hands back (nothing it
prints is believed); 2. judge: the course's own check, outside the sandbox, judges the recorded
values and writes the verdict; 3. the sanitizers (--sanitize); 4. the memcheck subset; 5. the
performance evidence. Then the cell's result and timing, in its record, and its progress line.
The pass rule (passed so far, the memcheck gate) is grading/pipeline.py's, which every tool shares."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import gpus as gpus_
from . import gradebook, judge, pipeline, run, sandbox, witness
from .cell_evidence import performance
from .context import Grading
from .findings import log_says, memcheck_subset_finding, run_finding, sanitizer_finding
from .names import shorten
from .runfolder import Cell

# The doctest option that leaves out the `speed: <id>` test cases (harness/check_main.hpp): in the
# sanitizers' runs (a large size timed many times, under a sanitizer, would prove nothing more) and
# in runner and judge with --no-performance.
SKIP_SPEED = "--test-case-exclude=speed: *"


@dataclass
class CellRun:
    """One grading of a compiled cell on one GPU (None: the environment's), beside SHARE - 1 others."""
    cell: Cell
    gpu: tuple | None
    share: int
    findings: list[str] = field(default_factory=list)
    lint: list[str] = field(default_factory=list)  # the lint's finding: first in the cell's findings
    stop: str | None = None       # why its worker must take no more cells (its GPU is not the grader's)
    step: run.Step = field(default_factory=run.Step)  # the runner's
    grade: judge.Grade | None = None
    judge_peak: int = 0
    san_peak: int = 0
    memcheck_ran: bool = False
    judge_s: float = 0.0          # the judge's seconds (twice judged: both)
    judge_beside_s: float = 0.0   # of those, beside the next cell's run (grading/overlap.py): off its GPU's critical path
    judged_again: bool = False    # judged beside the next cell's run, then again alone (not a full pass)
    t0: float = 0.0               # time.monotonic() when its run began
    marks: list[float] = field(default_factory=list)  # time.monotonic() after each layer

    @property
    def check(self) -> str:
        return os.path.join(self.cell.dir, "box", "build", self.cell.lesson + "_check")

    @property
    def uuid(self) -> str:
        return self.gpu[1] if self.gpu else ""

    def passed_so_far(self) -> bool:
        g = self.grade
        return pipeline.grader_passed_so_far(self.findings, g.passed if g else None, g.total if g else None)

    def gpu_left_busy(self, after: str) -> str:
        """Alone on its GPU: whether the cell left it in use (then a finding, and its worker stops)."""
        busy = gpus_.wait_free(self.uuid)
        if busy:
            self.stop = "the GPU was still in use after the cell of %s" % self.cell.label
            return "left the GPU in use after %s (%s)" % (after, busy)
        return ""


def layer_run(g: Grading, r: CellRun) -> None:
    """1. the runner, sandboxed: records what the submission hands back (fd TRANSCRIPT)."""
    o = g.o
    mode = ["--host"] if o.host_only else []
    # Without the performance evidence no speed test case runs (runner and judge alike: the
    # judge expects what the runner recorded): grading costs what it did before they existed.
    if not o.performance:
        mode = mode + [SKIP_SPEED]
    transcript = os.path.join(r.cell.dir, "transcript.bin")
    tfd = os.open(transcript, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        r.step = g.box.run(r.cell.dir, r.cell.number, "run", o.timeout, "run",
                           [r.check] + mode + ["--record", "/dev/fd/3", "--seed", str(g.seed)] + g.box.hidden_arg,
                           r.gpu, fd3=tfd)
    finally:
        os.close(tfd)
    r.marks.append(time.monotonic())
    r.findings += run_finding(o, r.cell.dir, "run", r.step, o.timeout)
    if r.share == 1 and not o.host_only:
        busy = r.gpu_left_busy("it ended")
        if busy:
            r.findings.append(busy)


@dataclass
class Judged:
    """One run of the judge: its grade (None: it did not finish), what it found, its peak memory and seconds."""
    grade: judge.Grade | None = None
    findings: list[str] = field(default_factory=list)
    peak: int = 0
    seconds: float = 0.0

    def passed(self) -> bool:
        """A full pass, nothing missing or inconsistent: a verdict that a step beside it cannot have
        made (grading/overlap.py takes it; anything else is judged again, alone on the GPU)."""
        gr = self.grade
        return (gr is not None and not self.findings and gr.total > 0 and gr.passed == gr.total and gr.missing == 0
                and gr.inconsistent == 0 and not gr.course_failures)


def _judge_step(g: Grading, r: CellRun, transcript: str, verdict_path: str, out: Judged,
                started: Callable[[int | None], None] | None) -> None:
    o = g.o
    env = dict(os.environ, COURSE_REQUIRE_GPU="0" if o.host_only else "1", **({} if o.host_only else sandbox.CUDA_ENV))
    if r.uuid:
        env["CUDA_VISIBLE_DEVICES"] = r.uuid
    cmd = judge.command(os.path.join(g.course.common, r.cell.lesson + "_check"), o.host_only, transcript, g.seed,
                        o.hidden, verdict_path, [] if o.performance else [SKIP_SPEED])
    if g.course.data_limit_runs:
        cmd = ["prlimit", "--data=%d" % (o.mem_mib << 20), "--"] + cmd
    jstep = run.run_step(cmd, os.path.join(r.cell.dir, "judge.log"), o.timeout + 60, 4 << 20,
                         mem_bytes=o.mem_mib << 20, env=env, cwd=r.cell.dir, cpus=g.box.step_cpus(False), started=started)
    out.peak = jstep.peak_rss
    try:
        out.grade = judge.read_verdict(verdict_path, r.cell.lesson, g.seed)
    except judge.VerdictError as e:
        if jstep.mem_killed:
            why = "went over the memory limit (%d MiB): raise --mem-mib" % o.mem_mib
        elif jstep.timed_out:
            why = "timed out after %d s" % (o.timeout + 60)
        else:
            why = "exit %d; %s; see judge.log" % (jstep.rc, e)
        out.findings.append("the judge did not finish (%s): grader error" % why)


def judge_once(g: Grading, r: CellRun, started: Callable[[int | None], None] | None = None) -> Judged:
    """The judge, once, over the cell's transcript (kept for another time); the cell's run is not changed."""
    o = g.o
    t = time.monotonic()
    out = Judged()
    transcript = os.path.join(r.cell.dir, "transcript.bin")
    verdict_path = os.path.join(r.cell.dir, "verdict.json")
    judge.clear(verdict_path)
    tsize = os.path.getsize(transcript)
    if tsize > o.transcript_mib << 20:
        out.findings.append("the run recorded %d MiB of values, over the %d MiB the judge reads (--transcript-mib): not judged"
                            % (tsize >> 20, o.transcript_mib))
    else:
        _judge_step(g, r, transcript, verdict_path, out, started)
    out.seconds = time.monotonic() - t
    return out


def apply_judge(r: CellRun, out: Judged) -> None:
    """The judge's outcome into the cell's run (the transcript is removed: judged for good)."""
    try:
        os.unlink(os.path.join(r.cell.dir, "transcript.bin"))
    except FileNotFoundError:
        pass
    r.grade, r.judge_peak = out.grade, max(r.judge_peak, out.peak)
    r.findings += out.findings
    if r.grade is not None:
        r.findings += judge.findings(r.grade, r.step.rc, r.findings)
        if r.grade.passed != r.grade.total and log_says(os.path.join(r.cell.dir, "run.log"), rb"cudaErrorMemoryAllocation|out of memory"):
            r.findings.append("the run reported that the GPU was out of memory")


def layer_judge(g: Grading, r: CellRun) -> None:
    """2. the judge: the course's own check, outside the sandbox, judging the recorded values."""
    out = judge_once(g, r)
    r.judge_s += out.seconds
    apply_judge(r, out)
    r.marks.append(time.monotonic())


def layer_sanitizers(g: Grading, r: CellRun) -> None:
    """3. the sanitizers, sandboxed, over the runner's GPU checks; not after a run stopped at a limit."""
    o = g.o
    if (o.sanitize and not o.host_only and not r.step.timed_out and not r.step.mem_killed
            and r.step.rc != 153 and r.stop is None):
        found = []
        for tool in ("racecheck", "memcheck"):
            s = g.box.run(r.cell.dir, r.cell.number, tool, o.sanitize_timeout, "run",
                          ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", r.check, "--gpu", SKIP_SPEED,
                           "--seed", str(g.seed)] + g.box.hidden_arg, r.gpu)
            r.san_peak = max(r.san_peak, s.peak_rss)
            found += sanitizer_finding(tool, s, os.path.join(r.cell.dir, tool + ".log"), o.sanitize_timeout, o.mem_mib)
            if r.share == 1:
                busy = r.gpu_left_busy(tool)
                if busy:
                    found.append(busy)
                    break
        if found:
            if r.passed_so_far():
                r.findings.append("passed, " + "; ".join(found))
            else:
                r.findings += found
    r.marks.append(time.monotonic())


# The memcheck subset's time limit: the small shapes under memcheck take a few seconds where the
# whole run took one or two (about 1 s for lesson 01, 30 s at most on an H100). compute-sanitizer
# also waits for every process the checks start, so a submission that leaves a sleeping child
# behind (the attack suite's escape.cu) held its GPU worker for all of --sanitize-timeout (600 s):
# now for at most MEMCHECK_FLOOR_S, or MEMCHECK_FACTOR times its own run's time, whichever is more.
MEMCHECK_FLOOR_S = 120
MEMCHECK_FACTOR = 20


def memcheck_limit(sanitize_timeout: int, run_seconds: float) -> int:
    """The memcheck subset's limit: never above --sanitize-timeout."""
    return min(sanitize_timeout, max(MEMCHECK_FLOOR_S, int(MEMCHECK_FACTOR * run_seconds + 0.999)))


def layer_memcheck(g: Grading, r: CellRun) -> None:
    """4. the memcheck subset: the runner's GPU checks on their small shapes under memcheck,
    sandboxed; only where the cell passed so far (an error cannot fail a failed cell more)."""
    o = g.o
    gr = r.grade
    if (o.memcheck and not o.sanitize and not o.host_only and r.stop is None and gr is not None and gr.total > 0
            and pipeline.grader_passed_so_far(r.findings + r.lint, gr.passed, gr.total)):
        r.memcheck_ran = True
        limit = memcheck_limit(o.sanitize_timeout, r.step.seconds)
        s = g.box.run(r.cell.dir, r.cell.number, "memcheck-small", limit, "run",
                      ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "99", r.check, "--gpu", "--small",
                       "--seed", str(g.seed)] + g.box.hidden_arg, r.gpu)
        r.san_peak = max(r.san_peak, s.peak_rss)
        r.findings += memcheck_subset_finding(s, os.path.join(r.cell.dir, "memcheck-small.log"), limit, o.mem_mib)
        if r.share == 1:
            busy = r.gpu_left_busy("memcheck")
            if busy:
                r.findings.append(busy)
    r.marks.append(time.monotonic())


def layer_witness(g: Grading, r: CellRun) -> None:
    """4b. the speed witness (grading/witness.py): the course's own check, in the cell's sandbox,
    times the submission's kernels; its times replace whatever the runner recorded. Only where the
    cell passed so far: a failed cell's speed is not timed."""
    o, gr, cell = g.o, r.grade, r.cell
    if not o.performance or o.host_only or gr is None or not gr.evidence:
        r.marks.append(time.monotonic())
        return
    lines: dict[str, dict[str, Any]] = {}
    failed, unavailable = "", cell.witness_unavailable
    if unavailable or cell.witness is not None:  # (merge says "not measured" where it is unavailable)
        failed = cell.witness or ""
    elif r.stop is not None or not pipeline.grader_passed_so_far(r.findings + r.lint, gr.passed, gr.total):
        failed = "the cell did not pass its checks"
    else:
        out = os.path.join(cell.dir, "witness.jsonl")
        wfd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        judge_bin = os.path.join(g.course.common, cell.lesson + "_check")
        shown = judge_bin if o.no_sandbox else sandbox.WITNESS_JUDGE
        try:
            s = g.box.run(cell.dir, cell.number, "witness", o.timeout, "run",
                          witness.command(shown, witness.cubin_dir(os.path.join(cell.dir, "box")), g.seed), r.gpu,
                          fd3=wfd, judge=judge_bin)
        finally:
            os.close(wfd)
        r.san_peak = max(r.san_peak, s.peak_rss)
        lines = witness.read_lines(out)
        r.findings += [shorten(f) for f in witness.wrong_outputs(lines)]
        if s.timed_out:
            failed = "the timed runs went over the time limit (%d s)" % o.timeout
        elif not s.started or s.rc != 0:
            failed = "the witness ended with exit %d (see witness.log)" % s.rc
        if r.share == 1:
            busy = r.gpu_left_busy("the speed witness")
            if busy:
                r.findings.append(busy)
    gr.evidence = witness.merge(gr.evidence, lines, failed, unavailable)
    r.marks.append(time.monotonic())


def layer_evidence(g: Grading, r: CellRun) -> dict[str, Any]:
    """5. performance evidence: the verdict's speed evidence and the compiled kernels' static facts,
    judged by the lesson's rubric; a contract it breaks (a "required" rule) fails correctness."""
    perf = performance(g.o, g.rubrics, r.cell, r.grade)
    if perf.get("contracts_broken"):
        broken = "a contract the GPU checks cannot see: " + perf["contracts_broken"][0]
        r.findings.append(("passed, but " + broken) if r.passed_so_far() and not r.lint else broken)
    r.findings = r.lint + r.findings
    r.marks.append(time.monotonic())
    return perf


def _timing(r: CellRun) -> None:
    t1, t2, t3, t4, t4b, t5 = r.marks
    add = r.cell.timing.add
    for key, value in (("run_s", t1 - r.t0), ("judge_s", r.judge_s), ("sanitize_s", t3 - t2)):
        add(key, value)
    if r.judge_beside_s > 0 or r.judged_again:
        add("judge_beside_s", r.judge_beside_s)
    if r.judged_again:
        add("judged_again", 1)
    for key, n in (("share", r.share), ("run_mib", r.step.peak_rss >> 20), ("judge_mib", r.judge_peak >> 20),
                   ("sanitize_mib", r.san_peak >> 20)):
        add(key, n)
    if r.memcheck_ran:
        add("memcheck_s", t4 - t3)
    add("witness_s", t4b - t4)
    add("evidence_s", t5 - t4b)
    if r.gpu:
        add("gpu", "%s" % r.gpu[0])
    r.cell.timing.write(r.cell.dir)


def finish(g: Grading, r: CellRun, perf: dict[str, Any]) -> None:
    """Nothing of the cell may still run; its timing, its result and its progress line."""
    cell, gr = r.cell, r.grade
    uid = g.box.cell_uid(cell.number)
    if uid is not None and run.uid_processes({uid}):
        r.findings.append("a process of this cell outlived it")
        r.stop = "a process of the cell of %s outlived it" % cell.label
    _timing(r)
    finding = shorten("; ".join(r.findings))
    if gr is None:
        gradebook.finish_cell(cell.dir, "yes", "0", "", finding, performance=perf)
        total: Any = "?"
    else:
        gradebook.finish_cell(cell.dir, "yes", str(gr.passed), str(gr.total), finding, str(gr.course_passed),
                              str(gr.course_total), performance=perf)
        total = gr.total
    shown = perf["performance"] + (" (" + shorten(perf["short"], 120) + ")" if perf.get("short") else "")
    assert g.progress is not None
    g.progress.line("%s: %s of %s test cases passed%s; performance %s"
                    % (cell.label, gr.passed if gr else 0, total, " \u2014 " + finding if finding else "", shown))


def wait_built(g: Grading, cell: Cell) -> str | None:
    """Waits for CELL's compile; the reason its worker must stop when the compiling stopped first."""
    while not cell.compiled.wait(0.5):
        if g.compile_done.is_set() and not cell.compiled.is_set():
            return "the compiling stopped before the cell of %s was built" % cell.label
    return None


def start_cell(g: Grading, cell: Cell, gpu: tuple | None, share: int) -> tuple[CellRun | None, str | None]:
    """Waits for CELL's compile and a free GPU, then runs it (layer 1). Returns the cell's run, to be
    judged (None: the cell is finished already, or was not started), and the reason its worker must
    take no more cells (its GPU is not the grader's), else None."""
    stopped = wait_built(g, cell)
    if stopped:
        return None, stopped
    assert g.progress is not None
    if cell.compiled_value != "yes":
        gradebook.finish_cell(cell.dir, cell.compiled_value, finding=cell.compile_finding)
        g.progress.line("%s: %s" % (cell.label, "does not compile" if cell.compiled_value == "no" else cell.compile_finding))
        return None, None
    if share == 1 and not g.o.host_only:
        busy = gpus_.wait_free(gpu[1] if gpu else "")
        if busy:  # something outside the grader holds the GPU: grade nothing more on it
            return None, ("the GPU%s was in use by another program before the cell of %s (%s)"
                          % (" " + gpu[0] if gpu else "", cell.label, busy))
    r = CellRun(cell, gpu, share)
    # 0. the lint's finding, made while the cell compiled: undefined behaviour no run of the compiled
    # kernel can show. It comes first in the cell's findings (its layer is first), once the run's are known.
    r.lint = [cell.lint] if cell.lint and cell.lint.startswith("undefined behaviour") else []
    # and the compiled code's reduced precision, a library doing an exercise's work (grading/shortcuts.py):
    # no pass, so no memcheck subset, no speed witness and no speed credit either.
    r.lint += cell.shortcuts
    r.t0 = time.monotonic()
    layer_run(g, r)
    return r, r.stop


def end_cell(g: Grading, r: CellRun) -> str | None:
    """After its judge (layer 2): the cell's other layers, its result and timing. Returns a reason
    when its worker must take no more cells, else None."""
    layer_sanitizers(g, r)
    layer_memcheck(g, r)
    layer_witness(g, r)
    perf = layer_evidence(g, r)
    finish(g, r, perf)
    return r.stop


def grade_cell(g: Grading, cell: Cell, gpu: tuple | None, share: int) -> str | None:
    """Runs and judges CELL (compiled before), writes its result into its record. Returns a reason when its
    worker must take no more cells (its GPU is not the grader's), else None."""
    r, stop = start_cell(g, cell, gpu, share)
    if r is None:
        return stop
    layer_judge(g, r)
    return end_cell(g, r)
