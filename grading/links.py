"""Hard links in a class folder: which main.cu files with other names (hard links) are graded, and
what their rows say.

A main.cu with other hard links is another name of one file. The plan (plan.py) finds every main.cu
of the class by (st_dev, st_ino); resolve() decides, for each file with more names than the plan
found (other names elsewhere: another folder, a backup, outside the class folder):
- a file of the course (anything in the course's tree, compared by inode): never read, not graded;
- any other file: graded only when every user may read it (mode o+r): a hard link then gives the
  grader nothing its student could not read anyway; otherwise not graded, with a row that says why.
A file whose names are all main.cu files of the class (two students handed in one file, or the
class folder was made with `cp -al` or a deduplicating tool) is graded. Every such row is flagged
(PlannedCell.note) with the other names the class holds, and the count of those elsewhere.
"""
from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plan import PlannedCell

MAX_NAMED = 3  # other names shown in a row's note; the rest counted


def course_files(course_root: str, skip: str) -> dict[tuple[int, int], str]:
    """{(st_dev, st_ino): path under COURSE_ROOT} of the course's regular files that have other
    hard links, never through a symbolic link; the folder SKIP (the class folder) left out."""
    out: dict[tuple[int, int], str] = {}
    try:
        s = os.stat(skip)
        skipped = (s.st_dev, s.st_ino)
    except OSError:
        skipped = (-1, -1)
    todo = [course_root]
    while todo:
        folder = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) != skipped:
                todo.append(e.path)
            elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                out[(st.st_dev, st.st_ino)] = os.path.relpath(e.path, course_root)
    return out


def _name(c: PlannedCell) -> str:
    return "%s/%s/main.cu" % (c.shown_student, c.shown_lesson)


def notes(others: list[PlannedCell], elsewhere: int) -> tuple[str, str]:
    """(the gradebook's note, the student's feedback's note) of a main.cu that is also OTHERS'
    main.cu and has ELSEWHERE more names outside the plan."""
    parts, own = [], []
    if others:
        named = ", ".join(_name(o) for o in others[:MAX_NAMED])
        more = " and %d more" % (len(others) - MAX_NAMED) if len(others) > MAX_NAMED else ""
        parts.append("the same file as %s%s" % (named, more))
        own.append("the same file as %s handed in" % ("another main.cu" if len(others) == 1 else "%d other main.cu" % len(others)))
    if elsewhere:
        where = "%d other name%s elsewhere" % (elsewhere, "" if elsewhere == 1 else "s")
        parts.append(("and " if others else "main.cu has ") + where)
        own.append(("and " if others else "main.cu has ") + where)
    tail = " (hard links: one file under several names)"
    return ", ".join(parts) + tail, ", ".join(own) + tail


def resolve(cells: list[PlannedCell], submissions: str | bytes, course_root: str = "") -> None:
    """Each main.cu of CELLS with other hard links: graded with a note, or a row that says why not
    (its source cleared). COURSE_ROOT: the course's tree (never read through a hard link)."""
    groups: dict[tuple, list[PlannedCell]] = {}
    for c in cells:
        if c.source and c.nlink > 1:
            groups.setdefault(c.inode, []).append(c)
    course: dict[tuple[int, int], str] | None = None
    for inode, group in groups.items():
        elsewhere = max(c.nlink for c in group) - len(group)
        why = ""
        if elsewhere > 0:
            if course is None:
                course = course_files(course_root, os.fsdecode(submissions)) if course_root else {}
            if inode in course:
                why = ("main.cu is the course's own %s under another name (a hard link): not read, not graded"
                       % course[inode])
            elif not group[0].mode & stat.S_IROTH:
                why = ("main.cu has %d other name%s elsewhere (hard links) and not every user may read it: not read, "
                       "not graded (it could be a file its student may not read; copy the class folder without hard "
                       "links, e.g. cp -r)" % (elsewhere, "" if elsewhere == 1 else "s"))
        for c in group:
            if why:
                c.source, c.finding = (), why
            else:
                c.note, c.feedback_note = notes([o for o in group if o is not c], elsewhere)
