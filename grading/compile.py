"""Compiling a cell: the lesson's check.cu against the student's main.cu (the RUNNER), in the
cell's sandbox, from the course view (the student pack's tree, no solutions).

The cell's own folder: box/src/main.cu (a copy of the submission, read without following links)
and box/build, owned by the cell's user; cell.json and the logs beside box/, where the sandbox
cannot reach them. Preparing the box is checked: a grader error never reads as "does not compile".
"""
import os
import re
import shutil

from . import cell_template, plan, run
from .names import quote_output, visible

BUILD_LIMIT_S = 600
_ERROR = re.compile(rb": (fatal )?error|CMake Error|nvcc fatal")
_FAILED = re.compile(rb"^FAILED: ")
# How the compilers say that an allocation failed (cc1plus, cicc, the linker, a C++ runtime): under
# RLIMIT_DATA (every compile's hard memory limit) a compiler stops itself with such a line.
_OUT_OF_MEMORY = re.compile(rb"out of memory|cannot allocate memory|virtual memory exhausted|memory exhausted|std::bad_alloc", re.I)


class BoxError(Exception):
    """The grader could not prepare a cell's box: a grader error."""


def prepare_box(cell_dir, submissions, source, max_bytes, uid=None, inode=(), template=""):
    """box/src/main.cu and box/build (with TEMPLATE's configured files: cell_template), owned by
    UID when given. Raises plan.SourceError (the submission's folder changed into something not
    allowed) or BoxError. INODE: the file the plan resolved, for a main.cu with other hard links
    (plan.read_source)."""
    data = plan.read_source(submissions, source, max_bytes, inode)
    box = os.path.join(cell_dir, "box")
    try:
        if os.path.lexists(box):
            shutil.rmtree(box)
        os.makedirs(os.path.join(box, "src"))
        os.makedirs(os.path.join(box, "build"))
        if template:
            cell_template.copy_into(template, os.path.join(box, "build"))
        fd = os.open(os.path.join(box, "src", "main.cu"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if uid is not None:
            run.chown_tree(box, uid, uid)
        os.chmod(cell_dir, 0o755)
        os.chmod(box, 0o755)
    except OSError as e:
        raise BoxError("grader error: could not prepare the cell's folder (%s: %s)" % (visible(e.filename or box), e.strerror))
    return box


def build_script():
    """The command a compile runs in the sandbox (as bash -c SCRIPT compile VIEW BOX LESSON PREBUILT CONFIG...)."""
    return cell_template.CONFIGURE + ' && cmake --build "$2/build" --target "$3_check" -j 1'


def compile_command(view, box, lesson, prebuilt, config):
    return ["bash", "-c", build_script(), "compile", view, box, lesson, prebuilt] + list(config)


def first_error(log_path, box):
    """The compiler's first error line in the build log (text the submission can shape: it is
    quoted, never said in the grader's voice), or None."""
    try:
        with open(log_path, "rb") as f:
            lines = f.read(8 << 20).splitlines()
    except OSError:
        return None
    line = next((l for l in lines if _ERROR.search(l)), None) or next((l for l in lines if _FAILED.match(l)), None)
    if line is None:
        return None
    return line.replace(os.fsencode(box + "/src/"), b"")


def out_of_memory_line(log_path):
    """The build log's first line in which a compiler says it ran out of memory (not a diagnostic of
    the submission's code: no "error:" or "warning:" line, where #error could write the words), or None."""
    try:
        with open(log_path, "rb") as f:
            lines = f.read(8 << 20).splitlines()
    except OSError:
        return None
    return next((l for l in lines if _OUT_OF_MEMORY.search(l) and not _ERROR.search(l) and b"warning:" not in l), None)


def last_line(log_path):
    try:
        with open(log_path, "rb") as f:
            lines = [l for l in f.read(8 << 20).splitlines() if l.strip()]
    except OSError:
        return b""
    return lines[-1] if lines else b""


def finding(step, log_path, box, output_kib, mem_mib):
    """Why a build did not give a runner (STEP: run.Step of the build)."""
    if not step.started:
        with open(log_path, "rb") as f:
            first = f.readline(300)
        return "the sandbox refused to start the compiler: " + visible(first.decode("utf-8", "replace").strip())
    if step.mem_killed:
        f = "the build went over the memory limit (%d MiB) and was stopped" % mem_mib
    elif step.timed_out:
        f = "the build timed out after %d s" % BUILD_LIMIT_S
    elif out_of_memory_line(log_path) is not None:
        f = ("does not compile: the compiler reported running out of memory (every compile's memory limit: %d MiB, "
             "--mem-mib): %s" % (mem_mib, quote_output(out_of_memory_line(log_path).decode("utf-8", "surrogateescape"))))
    else:
        err = first_error(log_path, box)
        if err is not None:
            f = "does not compile; the compiler's first error: " + quote_output(err.decode("utf-8", "surrogateescape"))
        else:
            f = ("does not compile: the build ended with exit code %d; its last line: %s"
                 % (step.rc, quote_output(last_line(log_path).decode("utf-8", "surrogateescape"))))
        if mem_mib and step.peak_rss > 0.9 * mem_mib * 1024 * 1024:
            f += "; it came near the memory limit (%d MiB)" % mem_mib
    if step.cut:
        f += "; compiler output over %d KiB, cut" % output_kib
    return f
