"""A cell's configure without CMake's compiler detection: one build folder, configured once in the
sandbox exactly as a cell's compile configures (the same command, the same environment, as the
run's own user id, which no cell has), before any submission is looked at. A cell's empty build
folder then starts with its CMakeCache.txt and CMakeFiles/<cmake version>/*.cmake, the template's
path rewritten to the cell's: CMake takes it for a build folder configured before and skips the
compilers' identification and ABI tests (about 2.5 of a configure's 3 s; on two H200s that was
part of the wait of each GPU for the first cell). The COURSE_GRADE_* values are given again by
every cell's configure.

The template is made with the course: in the course cache's entry while this run builds it (the
entry's name hashes the tools found on PATH, which are what the detection finds), or in --out without
a cache. A complete entry is never written again: one without a template (the sandbox could not
configure it) leaves the cells to configure from nothing, as before."""
from __future__ import annotations

import glob
import os
import re
import shutil

from . import run, sandbox
from .box import Box
from .course_build import Course

NAME = "cell-template"
_VERSION = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)*(-[0-9A-Za-z.]+)?")  # CMakeFiles/<cmake version>
READY = "ready"  # (written last: the template was configured and checked)
LIMIT_S = 300
# A cell's configure (bash -c CONFIGURE NAME VIEW BOX LESSON PREBUILT CONFIG...): the template's
# whole command, and the first half of a cell's compile (compile.build_script).
CONFIGURE = ('cmake -S "$1" -B "$2/build" "${@:5}" -DCOURSE_GRADE_LESSON="$3" -DCOURSE_GRADE_SOURCE="$2/src/main.cu" '
             '-DCOURSE_GRADE_COMMON="$4"')


def folder(course: Course) -> str:
    """The template's build folder (it may not exist)."""
    return os.path.join(course.work, NAME, "box", "build")


def files(build: str) -> list[str]:
    """What a cell's build folder takes from the template BUILD (paths relative to it)."""
    found = [p for p in glob.glob(os.path.join(build, "CMakeFiles", "[0-9]*", "*.cmake"))
             if _VERSION.fullmatch(os.path.basename(os.path.dirname(p)))]  # (not a target's NN_lesson.dir)
    return ["CMakeCache.txt"] + sorted(os.path.relpath(p, build) for p in found)


def make(box: Box, course: Course, lesson: str) -> tuple[str, str]:
    """Configures the template for LESSON's compile in the sandbox. Returns (its build folder, '')
    or ('', why not)."""
    top = os.path.join(course.work, NAME)
    if os.path.lexists(top):
        shutil.rmtree(top)
    src = os.path.join(top, "box", "src")
    os.makedirs(src)
    os.makedirs(folder(course))
    with open(os.path.join(src, "main.cu"), "w"):
        pass
    uid = box.uid_base if box.as_root and not box.o.no_sandbox else None
    if uid is not None:
        run.chown_tree(top, uid, uid)
    os.chmod(top, 0o755)
    cmd = ["bash", "-c", CONFIGURE, "configure", course.view, os.path.join(top, "box"), lesson, course.prebuilt] + course.config
    prefix = sandbox.command(box.cfg, "compile", os.path.join(top, "box"), uid=uid, nproc_base=box.nproc_base(),
                             status_fd=None if box.o.no_sandbox else "{status_fd}", data_mib=box.o.mem_mib)
    log = os.path.join(top, "configure.log")
    step = run.run_step(prefix + cmd, log, LIMIT_S, 1 << 20, mem_bytes=box.o.mem_mib << 20, uid=uid,
                        count_procs=not box.o.no_sandbox, status=not box.o.no_sandbox)
    if uid is not None:
        run.kill_uid(uid)
        run.chown_tree(top, os.getuid(), os.getgid())  # (the grader's again: no user of the sandbox owns it)
    if step.rc != 0 or len(files(folder(course))) < 2:
        return "", "its configure in the sandbox ended with exit code %d (see %s)" % (step.rc, log)
    with open(os.path.join(folder(course), "CMakeCache.txt"), "rb") as f:
        recorded = os.fsencode("CMAKE_CACHEFILE_DIR:INTERNAL=" + folder(course)) in f.read().splitlines()
    if not recorded:  # (the path a cell's copy rewrites must be the one CMake checks)
        return "", "CMake did not record its folder as %s (see %s)" % (folder(course), log)
    with open(os.path.join(top, READY), "w") as f:
        f.write(folder(course) + "\n")
    return folder(course), ""


def ready(course: Course) -> str:
    """The template that this course's build made (its build folder), or ''."""
    return folder(course) if os.path.isfile(os.path.join(course.work, NAME, READY)) else ""


def copy_into(template: str, build: str) -> None:
    """The template's files into a cell's empty BUILD, the template's path rewritten to BUILD's
    (raises OSError)."""
    old, new = os.fsencode(template), os.fsencode(build)
    for rel in files(template):
        with open(os.path.join(template, rel), "rb") as f:
            data = f.read()
        dest = os.path.join(build, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "xb") as f:
            f.write(data.replace(old, new))


def info(template: str, why_not: str) -> str:
    """run-info.txt's line of the template."""
    if template:
        return ("Each cell's configure started from a build folder configured once in the sandbox (%s): "
                "CMake's compiler detection ran once, not in every cell." % template)
    return "Each cell's configure detected the compilers itself: no configured template (%s)." % why_not
