"""The course cache: the course and its judges, built once for each content of the course and kept
for the next run (grade.sh --course-cache DIR; by default build-grade-cache in the course's folder).

An entry is named by a hash of what its build reads: every file of the course (but for its
top-level build and hidden folders, __pycache__, --out, the submissions and the cache itself, and
without following a link), the course's path, the cmake options, the tools that build it
(cmake, ninja, nvcc, c++, g++ and python3 as found on PATH: path, size, time; what the cells'
configured template, grading/cell_template.py, found), the environment that picks a compiler,
and the GPUs' compute capability when --arch is not given (the configure builds for the
GPU it finds). Change any of those and the next run builds a new entry.

An entry is built whole (common/, the judges of the lessons the class hands in, prebuilt/ and
course-view/; the lessons are part of its name) and marked `complete` once its judges built; no
run writes into a complete entry again. A run holds its
entry's lock shared while it grades, so an entry is never removed under a run; one run at a time
builds an entry (another run of the same course waits for it, then uses it); once a run has
built one, entries that no run holds are removed but the newest KEEP.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass

from . import gpus as gpus_
from .exits import ME

KEEP = 2  # entries kept: the one just built and the one before it
TOOLS = ("cmake", "ninja", "nvcc", "c++", "g++", "cc", "gcc", "python3")
ENV = ("CC", "CXX", "CUDACXX", "CUDAHOSTCXX", "CUDAARCHS", "CUDA_PATH", "CUDA_HOME")
COMPLETE = "complete"


@dataclass
class Entry:
    """This run's entry of the cache: DIR, its lock (held shared while the run grades) and, while
    this run builds it, the build lock (held alone)."""
    dir: str
    fd: int
    build_fd: int | None = None
    complete: bool = False


def _tree(h: hashlib._Hash, repo: str, skip: set[str]) -> None:
    """Every file under REPO (names, link targets and contents) into H, in a fixed order."""
    for root, dirs, files in os.walk(repo):
        if root == repo:
            dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and os.path.realpath(os.path.join(root, d)) not in skip)
        rel = os.path.relpath(root, repo).encode("utf-8", "surrogateescape")
        for d in dirs:
            if os.path.islink(os.path.join(root, d)):
                h.update(b"L" + rel + b"/" + d.encode("utf-8", "surrogateescape") + b"\0" + os.fsencode(os.readlink(os.path.join(root, d))) + b"\0")
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in sorted(files):
            path = os.path.join(root, name)
            h.update(b"F" + rel + b"/" + name.encode("utf-8", "surrogateescape") + b"\0")
            try:
                if os.path.islink(path):
                    h.update(b"->" + os.fsencode(os.readlink(path)))
                else:
                    with open(path, "rb") as f:
                        while True:
                            chunk = f.read(1 << 20)
                            if not chunk:
                                break
                            h.update(chunk)
            except OSError as e:
                h.update(b"unreadable: %d" % (e.errno or 0))
            h.update(b"\0")


def _tools() -> list[str]:
    """Each build tool found on PATH: its real path, size and modification time."""
    out = []
    for tool in TOOLS:
        p = shutil.which(tool)
        if p is None:
            out.append("%s: none" % tool)
            continue
        real = os.path.realpath(p)
        st = os.stat(real)
        out.append("%s: %s %d %d" % (tool, real, st.st_size, st.st_mtime_ns))
    return out


def key(repo: str, skip: list[str], config: list[str], arch_given: bool, lessons: list[str]) -> str:
    """The name of the entry that a build of the course at REPO with CONFIG and the judges of
    LESSONS would make (SKIP: the folders under REPO that are not the course: --out, the
    submissions, the cache)."""
    h = hashlib.sha256()
    inputs = {"repo": os.path.realpath(repo), "config": config, "tools": _tools(), "lessons": sorted(set(lessons)),
              "env": {v: os.environ.get(v, "") for v in ENV},
              "gpus": "" if arch_given else (gpus_.smi("--query-gpu=compute_cap", "--format=csv,noheader") or "none")}
    h.update(json.dumps(inputs, sort_keys=True).encode())
    _tree(h, os.path.realpath(repo), {os.path.realpath(p) for p in skip if p})
    return h.hexdigest()[:24]


def _lock(fd: int, op: int, waiting: str) -> None:
    """flock(FD, OP), waited for in naps (a signal reaches the grader meanwhile); WAITING said once
    when another run holds it."""
    said = False
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not said:
                print("%s: %s" % (ME, waiting), flush=True)
                said = True
            time.sleep(0.5)


def _open_lock(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)


def open_entry(cache: str, name: str) -> Entry:
    """The entry NAME of CACHE, held for this run: complete, or to be built by this run (its build
    lock held). Raises OSError when the cache cannot be used (made, locked)."""
    os.makedirs(cache, mode=0o755, exist_ok=True)
    path = os.path.join(cache, name)
    fd = _open_lock(path + ".lock")
    _lock(fd, fcntl.LOCK_SH, "waiting for the course cache (another grade.sh is removing an old entry)")
    entry = Entry(dir=path, fd=fd)
    if os.path.isfile(os.path.join(path, COMPLETE)):
        entry.complete = True
        try:
            os.utime(path)  # (used now: the newest are kept)
        except OSError:
            pass
        return entry
    entry.build_fd = _open_lock(path + ".build")
    _lock(entry.build_fd, fcntl.LOCK_EX, "waiting for another grade.sh that builds the same course into %s" % path)
    if os.path.isfile(os.path.join(path, COMPLETE)):  # (built by that run meanwhile)
        os.close(entry.build_fd)
        entry.build_fd, entry.complete = None, True
        return entry
    os.makedirs(path, mode=0o755, exist_ok=True)
    os.chmod(path, 0o755)
    return entry


def finish(entry: Entry, seconds: float, lessons: list[str]) -> None:
    """ENTRY built: marked complete (never written again), its build lock let go, and the older
    entries that no run holds removed, but the newest KEEP."""
    stamp = os.path.join(entry.dir, COMPLETE)
    with open(stamp + ".tmp", "w") as f:
        json.dump({"built_s": round(seconds, 2), "lessons": sorted(lessons),
                   "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f)
        f.write("\n")
    os.replace(stamp + ".tmp", stamp)
    entry.complete = True
    if entry.build_fd is not None:
        os.close(entry.build_fd)
        entry.build_fd = None
    try:
        prune(os.path.dirname(entry.dir), entry.dir)
    except OSError as e:
        print("%s: could not remove an old entry of the course cache (%s)" % (ME, e), file=sys.stderr)


def prune(cache: str, keep: str) -> list[str]:
    """Removes the entries of CACHE but KEEP and the newest others (KEEP - 1 of them) that no run
    holds; returns those removed. Lock files stay (empty): removing one a run is opening would let
    two runs build one entry at once."""
    entries = [os.path.join(cache, n) for n in os.listdir(cache)
               if os.path.isdir(os.path.join(cache, n)) and os.path.join(cache, n) != keep]
    entries.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
    removed = []
    for path in entries[KEEP - 1:]:
        fd = _open_lock(path + ".lock")
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a run grades with it (or builds it)
            shutil.rmtree(path)
            removed.append(path)
        finally:
            os.close(fd)
    return removed
