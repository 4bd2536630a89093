"""Where --out may be, checked before anything is written to it or removed from it.

--out is refused (exit 2) when it overlaps SUBMISSIONS by any path (one inside the other, or the
same folder), when it lies in the course's tree (but a build* folder at the course's top, such as
the default build-grade: committed files would be overwritten), or when it overlaps the course
cache (whose pruning removes every folder but its newest entries). Symbolic links are resolved on
both sides, and each folder above --out is also compared by (st_dev, st_ino), so that a bind mount
or a folder reached under two names is one folder.

As root with the sandbox, the cells' users must reach --out and the course cache (search every
folder above them) and read the --hidden-shapes file: checked as one of them, before --out is
touched, each refusal naming what a cell cannot reach and why.
"""
from __future__ import annotations

import os
import stat
import subprocess

from .exits import usage_error
from .names import visible

Ids = tuple[int, int]


def _id(path: str) -> Ids | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _chain(path: str) -> list[tuple[str, Ids | None]]:
    """PATH (links resolved) and every folder above it, deepest first, each with its (st_dev,
    st_ino) (None: not there yet)."""
    p = os.path.realpath(path)
    out = [(p, _id(p))]
    while p != os.path.dirname(p):
        p = os.path.dirname(p)
        out.append((p, _id(p)))
    return out


def below(path: str, folder: str) -> str | None:
    """Whether PATH is FOLDER or lies inside it, links resolved on both sides: None if not, else the
    first name under FOLDER on the way to PATH ("" for FOLDER itself)."""
    real, fid = os.path.realpath(folder), _id(folder)
    chain = _chain(path)
    for i, (p, pid) in enumerate(chain):
        if p == real or (fid is not None and pid == fid):
            return "" if i == 0 else os.path.basename(chain[i - 1][0])
    return None


def overlap(a: str, b: str) -> bool:
    """Whether folders A and B share any path: the same, or one inside the other."""
    return below(a, b) is not None or below(b, a) is not None


def check_place(out: str, submissions: str | None, course: str, cache: str = "") -> None:
    """--out OUT against SUBMISSIONS, the course's tree COURSE and the course cache CACHE (each '' or
    None: not checked): refused (exit 2) before anything is written."""
    shown = visible(out)
    if submissions:
        if below(out, submissions) is not None:
            usage_error("--out %s is inside SUBMISSIONS%s (a sandbox would see it, and the next run would grade it as a student)"
                        % (shown, "" if (os.path.abspath(out) + "/").startswith(os.path.abspath(submissions) + "/") else ", through a symbolic link or a mount"))
        if below(submissions, out) is not None:
            usage_error("SUBMISSIONS is inside --out %s%s (a new run clears --out's gradebook, feedback and cells: a student folder of that name would be lost)"
                        % (shown, "" if (os.path.abspath(submissions) + "/").startswith(os.path.abspath(out) + "/") else ", through a symbolic link or a mount"))
    top = below(out, course) if course else None
    if top is not None and not top.startswith("build"):
        usage_error("--out %s is in the course's own tree (%s): the grader would overwrite the course's files; give a folder outside it, or a build* folder at its top (the default: build-grade)"
                    % (shown, "its root" if top == "" else "under %s/" % visible(top)))
    if cache and overlap(out, cache):
        usage_error("--out %s overlaps the course cache %s (the cache removes every folder but its newest entries); give another --out"
                    % (shown, visible(cache)))


def _as_cell(uid: int, args: list[str]) -> bool:
    """Whether the test (test ARGS) holds for the cells' user UID."""
    p = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "test"] + args,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def _deepest(path: str, itself: bool = True) -> str:
    """The deepest folder of PATH (links resolved) that is there (ITSELF False: above PATH)."""
    return next(p for p, pid in _chain(path)[0 if itself else 1:] if pid is not None)


def _mode(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError as e:
        return e.strerror or "cannot be read"
    return "mode %s, owner uid %d" % (stat.filemode(st.st_mode), st.st_uid)


def _first_closed(uid: int, folder: str) -> str:
    """The first folder, from / down to FOLDER, that the cells' user UID cannot search ('' if none)."""
    return next((p for p, _ in reversed(_chain(folder)) if not _as_cell(uid, ["-x", p])), "")


def check_cells_reach(uid: int, out: str, cache: str, hidden: str) -> None:
    """As root with the sandbox, before --out is touched: the cells' user UID (one of them) can
    search the folders above OUT (OUT itself is opened when the run starts) and the course cache
    CACHE ('': none), and read HIDDEN ('': none). Exit 2 naming the first that it cannot, and why."""
    for what, folder in (("--out", _deepest(out, itself=False)), ("the course cache", _deepest(cache) if cache else "")):
        closed = _first_closed(uid, folder) if folder and not _as_cell(uid, ["-x", folder]) else ""
        if closed:
            usage_error("a cell cannot reach %s %s: the folder %s (%s) is closed to other users, and a cell runs as a user of its own (uid %d); "
                        "open it (chmod o+x), or give another folder (nothing graded)"
                        % (what, visible(out if what == "--out" else cache), visible(closed), _mode(closed), uid))
    if hidden and not _as_cell(uid, ["-r", hidden]):
        closed = _first_closed(uid, os.path.dirname(os.path.realpath(hidden)))
        why = ("the folder %s above it is closed to other users (%s)" % (visible(closed), _mode(closed)) if closed
               else "the file is not readable by other users (%s)" % _mode(hidden))
        usage_error("--hidden-shapes %s cannot be read by a cell: each cell's runner reads it in its sandbox as a user of its own (uid %d), and %s; "
                    "make it readable by others (chmod o+r, and o+x on the folders above it), or give a copy that is (nothing graded)"
                    % (visible(hidden), uid, why))
