"""The plan: which cells a class's SUBMISSIONS folder holds, read without ever following a link.

SUBMISSIONS holds one folder per student, each holding any subset of NN_name/main.cu. Every entry
of SUBMISSIONS gets at least one row, whatever its name (any bytes); every entry of a student's
folder gets one row: a cell to grade (NN_name/main.cu, a regular file of at most the size limit),
or a finding. Folders are opened with O_NOFOLLOW relative to their parent's descriptor, so a
symbolic link (to the course's solution, a classmate, a root-only file) is reported, never read.

A main.cu with other hard links (other names of the same file) is graded when every other name is
another main.cu of the plan (a classmate's: two students handed in one file, or the class folder
was made with `cp -al`, rsnapshot or a deduplicating tool), and then each of its rows names the
others (PlannedCell.note). A file with names elsewhere is resolved by links.py: a file of the course
is never read; any other file is read only when every user may read it.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from . import links
from .names import class_labels, display_name

O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Limits:
    max_files: int = 100          # entries of a student's folder, and of one of its lesson folders
    max_source_bytes: int = 1 << 20  # one main.cu


@dataclass
class PlannedCell:
    student: bytes                # raw name of the student's folder
    lesson: bytes                 # raw name of the entry in it (b"" for a row of the whole folder)
    source: tuple = ()            # (student, lesson, b"main.cu"): a cell to build; () when finding is set
    finding: str = ""
    student_index: int = 0        # 0-based place of the student among SUBMISSIONS' entries
    inode: tuple = ()             # (st_dev, st_ino) of main.cu, read again at its copy: the same file
    nlink: int = 1                # main.cu's names (hard links) when planned
    mode: int = 0                 # main.cu's st_mode when planned
    note: str = ""                # what the gradebook says beside the row (another name of its file)
    feedback_note: str = ""       # the same, for the student's own feedback (no classmate named)
    shown_student: str = field(init=False)  # display_name, then (scan) names.class_labels among the class
    shown_lesson: str = field(init=False)

    def __post_init__(self) -> None:
        self.shown_student = display_name(self.student)
        self.shown_lesson = display_name(self.lesson) if self.lesson else ""


def kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file or folder"


def _entries(dir_fd: int, limit: int) -> list[bytes]:
    """The names in a folder (bytes, sorted by byte), at most LIMIT + 1 of them read."""
    names = []
    with os.scandir(dir_fd) as it:
        for e in it:
            names.append(os.fsencode(e.name))
            if len(names) > limit:
                break
    return sorted(names)


def scan(submissions: str, lessons: dict[str, int], limits: Limits = Limits(), course_root: str = "") -> list[PlannedCell]:
    """[PlannedCell], in the order of the students' and their entries' names (bytes); main.cu files
    with other hard links resolved (links.resolve; COURSE_ROOT: the course, whose files are never
    read through one)."""
    cells = []
    top = os.open(submissions, O_DIR)
    try:
        students = []
        with os.scandir(top) as it:
            students = sorted(os.fsencode(e.name) for e in it)
        for index, student in enumerate(students):
            cells.extend(_scan_student(top, student, index, lessons, limits))
    finally:
        os.close(top)
    label_cells(cells, lessons)
    links.resolve(cells, submissions, course_root)  # (after the labels: its notes name the cells as shown)
    return cells


def label_cells(cells: list[PlannedCell], lessons: dict[str, int]) -> None:
    """Every shown name made one that looks like no other (names.class_labels): the students' among
    the class, and each student's entries among that student's and the course's lesson names."""
    students = class_labels(c.shown_student for c in cells)
    entries: dict[str, list[PlannedCell]] = {}
    for c in cells:
        entries.setdefault(c.shown_student, []).append(c)
    for group in entries.values():
        shown = class_labels((c.shown_lesson for c in group if c.shown_lesson), fixed=lessons)
        for c in group:
            c.shown_lesson = shown.get(c.shown_lesson, c.shown_lesson)
            c.shown_student = students[c.shown_student]


def _scan_student(top: int, student: bytes, index: int, lessons: dict[str, int], limits: Limits) -> list[PlannedCell]:
    row = lambda lesson, finding, source=(): PlannedCell(student, lesson, source, finding, index)
    try:
        st = os.lstat(student, dir_fd=top)
    except OSError as e:
        return [row(b"", "cannot be read (%s); not graded" % e.strerror)]
    if stat.S_ISLNK(st.st_mode):
        return [row(b"", "a symbolic link, not a student folder: not followed, not graded")]
    if not stat.S_ISDIR(st.st_mode):
        what = "a file at the top of SUBMISSIONS" if stat.S_ISREG(st.st_mode) else kind(st.st_mode)
        return [row(b"", "not a student folder (%s)" % what)]
    try:
        fd = os.open(student, O_DIR, dir_fd=top)
    except OSError as e:
        return [row(b"", "the student folder cannot be opened (%s); not graded" % e.strerror)]
    try:
        names = _entries(fd, limits.max_files)
        if len(names) > limits.max_files:
            return [row(b"", "more than %d entries in the student folder (the limit, --max-files): not graded"
                        % limits.max_files)]
        if not names:
            return [row(b"", "empty submission (no NN_name/main.cu)")]
        out = []
        for name in names:
            out.append(_scan_entry(fd, student, name, index, lessons, limits))
        return out
    finally:
        os.close(fd)


def _scan_entry(sfd: int, student: bytes, name: bytes, index: int, lessons: dict[str, int], limits: Limits) -> PlannedCell:
    row = lambda finding, source=(): PlannedCell(student, name, source, finding, index)
    lesson = name.decode("utf-8", "surrogateescape")
    try:
        st = os.lstat(name, dir_fd=sfd)
    except OSError as e:
        return row("cannot be read (%s); not graded" % e.strerror)
    is_lesson = lesson in lessons
    if stat.S_ISLNK(st.st_mode):
        return row("%s is a symbolic link: not followed, not graded"
                   % ("the lesson folder" if is_lesson else "this entry"))
    if not (stat.S_ISDIR(st.st_mode) and is_lesson):
        if is_lesson:
            return row("the lesson folder is %s, not a folder: not graded" % kind(st.st_mode))
        return row("not a lesson folder (expected NN_name/main.cu, NN_name one of: %s)" % ", ".join(lessons))
    try:
        lfd = os.open(name, O_DIR, dir_fd=sfd)
    except OSError as e:
        return row("the lesson folder cannot be opened (%s); not graded" % e.strerror)
    try:
        entries = _entries(lfd, limits.max_files)
        if len(entries) > limits.max_files:
            return row("more than %d entries in %s/ (the limit, --max-files): not graded" % (limits.max_files, lesson))
        try:
            st = os.lstat(b"main.cu", dir_fd=lfd)
        except FileNotFoundError:
            return row("no main.cu in %s/%s" % (lesson, near_misses(entries)))
        except OSError as e:
            return row("main.cu cannot be read (%s); not graded" % e.strerror)
        if stat.S_ISLNK(st.st_mode):
            return row("main.cu is a symbolic link: not followed, not graded")
        if not stat.S_ISREG(st.st_mode):
            return row("main.cu is %s, not a regular file: not graded" % kind(st.st_mode))
        if st.st_size > limits.max_source_bytes:
            return row("main.cu is %d bytes, over the limit of %d KiB (--max-source-kib): not graded"
                       % (st.st_size, limits.max_source_bytes // 1024))
        cell = row("", (student, name, b"main.cu"))  # (other hard links: links.resolve decides)
        cell.inode, cell.nlink, cell.mode = (st.st_dev, st.st_ino), st.st_nlink, st.st_mode
        return cell
    finally:
        os.close(lfd)


MAX_NEAR = 3  # near misses named in a row; the rest counted


def near_misses(entries: list[bytes]) -> str:
    """What a lesson folder without main.cu holds instead, as a row says it: the names that look
    meant as it (any case of "main", or ending in .cu), e.g. ' (it holds Main.cu: names are
    case-sensitive, the file must be named main.cu)'; else how many other entries, or that it is empty."""
    near = [e for e in entries if b"main" in e.lower() or e.lower().endswith((b".cu", b".cuh", b".cu.txt"))]
    if not near:
        return " (the folder is empty)" if not entries else " (it holds %d other entr%s)" % (len(entries), "y" if len(entries) == 1 else "ies")
    named = ", ".join(display_name(e) for e in near[:MAX_NEAR])
    more = " and %d more" % (len(near) - MAX_NEAR) if len(near) > MAX_NEAR else ""
    return " (it holds %s%s: the file must be named exactly main.cu)" % (named, more)


class SourceError(Exception):
    pass


def read_source(submissions: str, parts: tuple, limit: int, inode: tuple = ()) -> bytes:
    """The bytes of SUBMISSIONS/student/lesson/main.cu, opened one level at a time with O_NOFOLLOW
    (never through a link, even one made after the plan), a regular file of at most LIMIT bytes.
    INODE: the (st_dev, st_ino) the plan found and resolved (the same file, whatever its other hard
    links); without it, a file with other hard links is refused."""
    fds = []
    try:
        fd = os.open(submissions, O_DIR)
        fds.append(fd)
        for p in parts[:-1]:
            fd = os.open(p, O_DIR, dir_fd=fd)
            fds.append(fd)
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as e:
            raise SourceError(_open_error("main.cu", e))
        fds.append(fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("main.cu is %s, not a regular file" % kind(st.st_mode))
        if inode and (st.st_dev, st.st_ino) != tuple(inode):
            raise SourceError("main.cu is not the file planned (it was replaced since)")
        if not inode and st.st_nlink > 1:
            raise SourceError("main.cu has %d hard links" % st.st_nlink)
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        if len(data) > limit:
            raise SourceError("main.cu is over the limit of %d KiB (--max-source-kib)" % (limit // 1024))
        return data
    except OSError as e:
        raise SourceError(_open_error("the submission's folder", e))
    finally:
        for fd in fds:
            os.close(fd)


def _open_error(what: str, e: OSError) -> str:
    """Why WHAT could not be opened: a symbolic link (never followed), the grader not allowed to
    read it, or another reason, each said as what it is."""
    if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return "%s cannot be opened without following a link (%s)" % (what, e.strerror)
    if e.errno in (errno.EACCES, errno.EPERM):
        return "%s cannot be read: permission denied to the grader (%s; its owner must make it readable, e.g. chmod a+r)" % (what, e.strerror)
    return "%s cannot be opened (%s)" % (what, e.strerror)
