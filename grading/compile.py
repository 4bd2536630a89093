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
# How a compiler says, in its own words, that an allocation failed (under RLIMIT_DATA, every compile's
# hard memory limit, it stops itself so): each a whole line, never indented (a compiler's echo of a
# source line is: EDG's by two spaces, GCC's behind a "NN |" gutter). EDG (cudafe++, cicc):
# "FILE(N): catastrophic error: out of memory"; GCC's programs and binutils: "cc1plus: out of memory
# allocating N bytes ..."; ptxas: "ptxas fatal   : Memory allocation failure"; a C++ runtime's
# std::bad_alloc; gnulib's xalloc_die: "... memory exhausted".
_OUT_OF_MEMORY = re.compile(
    rb"^(?:\S.*\([0-9]+\): catastrophic error: out of memory"
    rb"|(?:\S*/)?(?:cc1plus|cc1|cicc|cudafe\+\+|ptxas|nvlink|fatbinary|ld(?:\.[a-z]+)?|collect2|as|lto1|c\+\+|g\+\+|gcc)"
    rb"(?: fatal)? *: (?:out of memory allocating [0-9]+ bytes.*|(?:virtual )?memory exhausted.*|Memory allocation failure.*)"
    rb"|terminate called after throwing an instance of 'std::bad_alloc'"
    rb"|(?:virtual )?memory exhausted(?:: Cannot allocate memory)?)\s*$")
# What GCC's driver (nvcc's host compiler too) says when the file-size limit (RLIMIT_FSIZE, --file-mib)
# stopped one of its programs: "gcc: internal compiler error: File size limit exceeded signal
# terminated program as".
_FILE_LIMIT = re.compile(rb"^\S+: (?:internal compiler error|fatal error): File size limit exceeded signal terminated program (\S+)\s*$")
# A consequence of another failure, never a diagnostic of the submission's code.
_CONSEQUENCE = re.compile(rb"^collect2: error: ld returned [0-9]+ exit status")

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


def _log_lines(log_path):
    try:
        with open(log_path, "rb") as f:
            return f.read(8 << 20).splitlines()
    except OSError:
        return []


def out_of_memory_line(log_path):
    """The build log's line in which a compiler says, in its own words, that it ran out of memory,
    or None. Only when nothing else explains the failure: no error of the submission's code is
    reported (a line of source the compiler echoes, #error, #pragma message, #line, can hold any words)."""
    lines = _log_lines(log_path)
    oom = next((l for l in lines if _OUT_OF_MEMORY.match(l)), None)
    if oom is None or any(_ERROR.search(l) and not _CONSEQUENCE.match(l) for l in lines):
        return None
    return oom


def file_limit_line(log_path):
    """The build log's line in which the compiler's driver says that the file-size limit stopped one
    of its programs (signal 25, SIGXFSZ), or None."""
    return next((l for l in _log_lines(log_path) if _FILE_LIMIT.match(l)), None)


def encoding_note(box):
    """What the box's main.cu is, when it is not text the compilers read (UTF-8): a UTF-16 or
    UTF-32 file by its byte-order mark, or one with NUL bytes; "" otherwise."""
    try:
        with open(os.path.join(box, "src", "main.cu"), "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return ""
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
                      (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)")):
        if data.startswith(bom):
            return "main.cu is %s text, by its byte-order mark; the compilers read UTF-8 (save it as UTF-8)" % name
    nul = data.count(b"\0")
    if nul:
        guess = ""
        if nul * 3 >= len(data):  # (ASCII text in UTF-16 is half NUL bytes)
            even = data[0::2].count(b"\0")
            guess = ", UTF-16 (%s-endian) without a byte-order mark?" % ("big" if even > nul - even else "little")
        return "main.cu holds %d NUL bytes in %d (not text%s); the compilers read UTF-8 (save it as UTF-8)" % (nul, len(data), guess)
    return ""


def last_line(log_path):
    try:
        with open(log_path, "rb") as f:
            lines = [l for l in f.read(8 << 20).splitlines() if l.strip()]
    except OSError:
        return b""
    return lines[-1] if lines else b""


def finding(step, log_path, box, output_kib, mem_mib, file_mib=0):
    """Why a build did not give a runner (STEP: run.Step of the build)."""
    if not step.started:
        with open(log_path, "rb") as f:
            first = f.readline(300)
        return "the sandbox refused to start the compiler: " + visible(first.decode("utf-8", "replace").strip())
    oom, fsize = out_of_memory_line(log_path), file_limit_line(log_path)
    if step.mem_killed:
        f = "the build went over the memory limit (%d MiB) and was stopped" % mem_mib
    elif step.timed_out:
        f = "the build timed out after %d s" % BUILD_LIMIT_S
    elif fsize is not None:
        m = _FILE_LIMIT.match(fsize)
        f = ("does not compile: %s stopped at the file-size limit (%s per file, --file-mib): it wrote a file that large "
             "(e.g. an object holding a huge .incbin or table); the compiler's words: %s"
             % (visible(m.group(1).decode("utf-8", "replace")) if m else "a compiler program",
                "%d MiB" % file_mib if file_mib else "the limit", quote_output(fsize.decode("utf-8", "surrogateescape"))))
    elif oom is not None:
        f = ("does not compile: the compiler reported running out of memory (every compile's memory limit: %d MiB, "
             "--mem-mib): %s" % (mem_mib, quote_output(oom.decode("utf-8", "surrogateescape"))))
    else:
        err = first_error(log_path, box)
        if err is not None:
            f = "does not compile; the compiler's first error: " + quote_output(err.decode("utf-8", "surrogateescape"))
        else:
            f = ("does not compile: the build ended with exit code %d; its last line: %s"
                 % (step.rc, quote_output(last_line(log_path).decode("utf-8", "surrogateescape"))))
        if mem_mib and step.peak_rss > 0.9 * mem_mib * 1024 * 1024:
            f += "; it came near the memory limit (%d MiB)" % mem_mib
    note = encoding_note(box)
    if note:
        f = f.replace("does not compile", "does not compile (%s)" % note, 1) if f.startswith("does not compile") else f + "; " + note
    if step.cut:
        f += "; compiler output over %d KiB, cut" % output_kib
    return f
