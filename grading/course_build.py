"""The course, built once before any submission is looked at, outside any sandbox: common/ and
every graded lesson's check built from the course's OWN main.cu (the judges, which build while the
first cells compile); then the two libraries a cell links (prebuilt/) and the course view (what a
sandbox sees of the course: the student pack's tree). Kept in the course cache (course_cache.py)
for the next run of the same course: a run that finds its entry complete builds nothing."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from . import course_cache, run
from .exits import ME, Stop
from .names import visible
from .options import Options

LIBRARIES = ("libcourse_common.a", "libcourse_harness.a", "libcourse_harness_main.a")
COMMON_TARGETS = ["course_common", "course_harness", "course_harness_main", "common_check"]


@dataclass
class Course:
    """Where the course was built, and how."""
    config: list[str]       # the cmake configure options (a cell's compile uses them too)
    work: str               # OUT, or OUT/slice-K for a Slurm task
    common: str             # the course's build folder: its judges are COMMON/NN_name_check
    log: str
    t0: float               # when its build began (time.monotonic)
    data_limit_runs: bool = False  # RLIMIT_DATA on runs and judges too (the course's check passed under it)
    prebuilt: str = ""
    view: str = ""
    judges: Future | None = None  # the judges' build: its exit code
    entry: course_cache.Entry | None = None  # its entry of the course cache (None: built in OUT)
    cached: bool = False    # the entry was complete: nothing built
    lessons: list[str] | None = None  # the judges built (the entry is complete once they are)
    template: str = ""      # the build folder a cell's configure starts from (cell_template), or ''


def tail(path: str, n: int = 20) -> None:
    """The last N lines of a log, on stderr."""
    try:
        with open(path, "rb") as f:
            lines = f.read()[-65536:].decode("utf-8", "replace").splitlines()
        sys.stderr.write("\n".join(lines[-n:]) + "\n")
    except OSError:
        pass


def _logged(cmd: list[str], log: str, append: bool = False) -> int:
    return run.wait_logged(run.spawn_logged(cmd, log, append=append))


def config_of(o: Options) -> list[str]:
    """The cmake configure options of the course's build (a cell's compile uses them too)."""
    config = ["-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        config += ["-G", "Ninja"]
    if o.arch:
        config.append("-DCMAKE_CUDA_ARCHITECTURES=" + o.arch)
    return config + o.cmake_defs


def configure(o: Options, repo: str, work: str, stop: Stop) -> Course:
    """common/ configured and built (the libraries and common's own check)."""
    config = config_of(o)
    common = os.path.join(work, "common")
    course = Course(config=config, work=work, common=common, log=common + ".log", t0=time.monotonic())
    print("%s: building the course and its judges once (log: %s)" % (ME, course.log), flush=True)
    os.makedirs(work, exist_ok=True)
    ok = _logged(["cmake", "-S", repo, "-B", common] + config, course.log) == 0
    ok = ok and _logged(["cmake", "--build", common, "--target"] + COMMON_TARGETS, course.log, append=True) == 0
    if not ok:
        tail(course.log)
        stop.die(1, "could not build the course's common/ (see %s); nothing graded" % course.log)
    return course


def probe_data_limit(o: Options, course: Course, stop: Stop) -> None:
    """RLIMIT_DATA (a hard stop beside the watchdog on resident memory) for runs and judges only
    where the course's own check passes under it: the CUDA runtime of some drivers reserves large
    private mappings at start (RLIMIT_AS always breaks it). Compiles always get it. Without it, the
    check must pass at all: else no usable GPU."""
    env = dict(os.environ, COURSE_REQUIRE_GPU="0" if o.host_only else "1")
    check = [os.path.join(course.common, "common_check"), "--host" if o.host_only else "--gpu"]
    p = subprocess.run(["prlimit", "--data=%d" % (o.mem_mib << 20), "--"] + check, capture_output=True, env=env,
                       stdin=subprocess.DEVNULL)
    course.data_limit_runs = p.returncode == 0
    if not o.host_only and not course.data_limit_runs:
        p = subprocess.run(check, capture_output=True, env=env, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            text = (p.stdout + p.stderr).decode("utf-8", "replace")
            m = re.search(r"COURSE_REQUIRE_GPU is set but (?:no usable CUDA GPU: )?(.*)", text)
            if m:
                stop.die(3, "no usable GPU: nvidia-smi lists one, but the CUDA runtime says %s (nothing graded)" % visible(m.group(1).strip()))
            sys.stderr.write("\n".join(text.splitlines()[-5:]) + "\n")
            stop.die(1, "the check of common/ failed on this GPU (exit %d); nothing graded" % p.returncode)


def start_judges(course: Course, lessons: list[str]) -> None:
    """The judges of LESSONS, built in the background (course.judges: the build's exit code)."""
    targets = COMMON_TARGETS + ["%s_check" % lesson for lesson in sorted(set(lessons))]
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judges")
    course.judges = pool.submit(_logged, ["cmake", "--build", course.common, "--target"] + targets, course.log, True)
    pool.shutdown(wait=False)


def wait_judges(course: Course) -> int:
    """The judges' build's exit code, once it ended (waited for in naps: signals get through)."""
    assert course.judges is not None
    while not course.judges.done():
        wait([course.judges], timeout=0.5)
    rc = course.judges.result()
    if rc == 0 and course.entry is not None and not course.entry.complete:
        course_cache.finish(course.entry, time.monotonic() - course.t0, course.lessons or [])
    return rc


def info_line(course: Course) -> str:
    """run-info.txt's line of the course's build (bench/throughput.sh reads it)."""
    seconds = time.monotonic() - course.t0
    if course.cached:
        assert course.entry is not None
        return "The course and its judges came from the course cache (%s), ready in %.2f s." % (visible(course.entry.dir), seconds)
    line = "The course and its judges were built once, in %.2f s." % seconds
    if course.entry is not None:
        line += "\nThey are kept in the course cache (%s) for the next run of this course." % visible(course.entry.dir)
    return line


def _open_to_cells(top: str) -> None:
    """Every folder and file under TOP readable by the cells' users (and runnable where it was)."""
    for root, _dirs, files in os.walk(top):
        os.chmod(root, 0o755)
        for n in files:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444 | (0o111 if os.stat(p).st_mode & 0o100 else 0))


def make_view(repo: str, course: Course, stop: Stop) -> None:
    """prebuilt/ (the libraries a cell links) and course-view/ (the student pack's tree)."""
    course.prebuilt = os.path.join(course.work, "prebuilt")
    os.makedirs(course.prebuilt, exist_ok=True)
    for lib in LIBRARIES:
        shutil.copy(os.path.join(course.common, lib), course.prebuilt)
    course.view = view = os.path.join(course.work, "course-view")
    if os.path.isdir(view):
        shutil.rmtree(view)
    tgz = os.path.join(course.work, "course-view.tar.gz")
    vlog = os.path.join(course.work, "course-view.log")
    ok = _logged(["cmake", "-DOUT=" + tgz, "-P", os.path.join(repo, "scripts", "make_student_pack.cmake")], vlog) == 0
    if ok:
        os.makedirs(view)
        ok = _logged(["tar", "-xzf", tgz, "-C", view, "--strip-components=1"], vlog, append=True) == 0
    if not ok:
        tail(vlog, 1000)
        stop.die(1, "could not make the course view for the sandbox (see %s); nothing graded" % vlog)
    os.unlink(tgz)
    for top in (view, course.prebuilt):
        _open_to_cells(top)


def _cached(o: Options, course: Course, stop: Stop) -> Course:
    """COURSE from its complete entry of the cache: only the check of the GPU and the tools."""
    print("%s: the course and its judges from the course cache (%s)" % (ME, visible(course.work)), flush=True)
    _checks(o, course, stop)
    course.cached = True
    course.prebuilt, course.view = os.path.join(course.work, "prebuilt"), os.path.join(course.work, "course-view")
    done: Future = Future()
    done.set_result(0)
    course.judges = done
    return course


def _checks(o: Options, course: Course, stop: Stop) -> None:
    probe_data_limit(o, course, stop)
    # (after the GPU is known to work: without one, that is what the instructor must hear)
    if o.memcheck and not o.host_only and not o.sanitize and shutil.which("compute-sanitizer") is None:
        stop.die(1, "the memcheck subset needs compute-sanitizer (part of the CUDA toolkit) on PATH; "
                    "or grade without it with --no-memcheck (nothing graded)")


def open_cache(o: Options, repo: str, cache: str, skip: list[str], lessons: list[str]) -> course_cache.Entry | None:
    """This run's entry of the course cache CACHE (with the judges of LESSONS), or None (said) when
    the cache cannot be used."""
    try:
        arch_given = bool(o.arch) or any(d.startswith("-DCMAKE_CUDA_ARCHITECTURES") for d in o.cmake_defs)
        name = course_cache.key(repo, skip + [cache], config_of(o), arch_given, lessons)
        return course_cache.open_entry(cache, name)
    except OSError as e:
        print("%s: the course cache %s cannot be used (%s): the course is built in --out"
              % (ME, visible(cache), visible(e.strerror or str(e))), flush=True)
        return None


def build(o: Options, repo: str, work: str, lessons: list[str], stop: Stop,
          entry: course_cache.Entry | None = None) -> Course:
    """common/ and the check of each of LESSONS built from the course's own main.cu (the judges),
    outside any sandbox, before any submission is looked at; the judges build while the first
    cells compile. Then the two libraries a cell links and the course view. With ENTRY (the
    course cache's), in it; nothing is built when it is complete."""
    if entry is not None and entry.complete:
        t0 = time.monotonic()
        common = os.path.join(entry.dir, "common")
        return _cached(o, Course(config=config_of(o), work=entry.dir, common=common, log=common + ".log", t0=t0, entry=entry), stop)
    course = configure(o, repo, entry.dir if entry is not None else work, stop)
    course.entry = entry
    _checks(o, course, stop)
    course.lessons = sorted(set(lessons))
    start_judges(course, course.lessons)
    make_view(repo, course, stop)
    return course

