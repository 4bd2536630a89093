"""Running one step of a cell (a build, the runner, a sanitizer, the judge) under its limits.

What a step prints goes to LOG, cut at --output-kib (the rest counted, a finding); it ends at its
time limit; a watchdog reads the resident memory of the step's processes (the process tree under
it, and as root every process of the cell's user) every 0.2 s and kills them all above the memory
limit (--mem-mib): RLIMIT_AS breaks the CUDA runtime, a cgroup is not delegated on every machine
(nor on every Slurm node), and /proc is. The same reading counts the step's processes.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Collection, Iterable, Sequence

PAGE = os.sysconf("SC_PAGE_SIZE")
_registry: set = set()  # every step running now: killed when the grader is interrupted or dies
_registry_lock = threading.Lock()


@dataclass
class Step:
    rc: int = 0
    timed_out: bool = False
    mem_killed: bool = False
    cut: int = 0                  # bytes of output over the cap, not kept
    max_procs: int = 0
    peak_rss: int = 0             # bytes
    started: bool = True          # bwrap reported it started the command (False: it refused)
    seconds: float = 0.0


def process_table() -> dict[int, tuple[int, int, int]]:
    """{pid: (ppid, real uid, resident bytes)} of every process, from /proc/PID/status (whose owner
    is root for a process that changed its user, so the Uid line is read). A zombie that is wholly
    dead (state Z, one thread: itself) is left out: it runs nothing and holds nothing, and it stays
    until its parent reaps it, which for a sandbox's exited bwrap (reparented to PID 1) took about a
    second; waiting for it cost every sandboxed step that much. A zombie leader whose other threads
    still run (a main thread that exited alone) has more than one thread and stays in the table."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/status" % name, "rb") as f:
                text = f.read(4096)
        except OSError:
            continue
        ppid = uid = None
        rss = 0
        dead = False
        threads = 1
        for line in text.split(b"\n"):
            if line.startswith(b"PPid:"):
                ppid = int(line.split()[1])
            elif line.startswith(b"Uid:"):
                uid = int(line.split()[1])
            elif line.startswith(b"VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith(b"State:"):
                dead = line.split()[1:2] in ([b"Z"], [b"X"])
            elif line.startswith(b"Threads:"):
                threads = int(line.split()[1])
        if dead and threads <= 1:
            continue
        if ppid is not None and uid is not None:
            table[int(name)] = (ppid, uid, rss)
    return table


def tree(table: dict[int, tuple[int, int, int]], root: int) -> list[int]:
    """ROOT and every process under it."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        if p in table:
            out.append(p)
        todo.extend(children.get(p, ()))
    return out


def uid_processes(uids: Collection[int], table: dict[int, tuple[int, int, int]] | None = None) -> list[int]:
    """The processes of the users UIDS."""
    table = process_table() if table is None else table
    return [p for p, (_, uid, _) in table.items() if uid in uids]


def kill_pids(pids: Iterable[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def kill_uid(uid: int, wait_s: float = 10.0) -> bool:
    """Kills every process of UID (a cell's user) and waits until none is left (a big tmpfs takes a
    while to go). Returns True when none is left."""
    end = time.monotonic() + wait_s
    while True:
        left = uid_processes({uid})
        if not left:
            return True
        kill_pids(left)
        if time.monotonic() > end:
            return False
        time.sleep(0.2)


def kill_everything() -> None:
    """Every step running now, with what it started (its process group and tree)."""
    with _registry_lock:
        procs = list(_registry)
    table = process_table()
    for p in procs:
        pids = tree(table, p.pid)
        try:
            os.killpg(p.pid, signal.SIGSTOP)
        except OSError:
            pass
        kill_pids(pids)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass


def spawn_logged(cmd: list[str], log_path: str, env: dict[str, str] | None = None, append: bool = False) -> subprocess.Popen:
    """A trusted step (a build of the course, its judges), started in a session of its own with its
    output to LOG_PATH (appended with APPEND); killed with the run (kill_everything). End it with
    wait_logged."""
    with open(log_path, "ab" if append else "wb") as f:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
    with _registry_lock:
        _registry.add(p)
    return p


def wait_logged(p: subprocess.Popen) -> int:
    """The exit code of a step spawn_logged started, once it ended (waited for in short naps, so
    that a signal reaches the grader meanwhile)."""
    while True:
        try:
            rc = p.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    with _registry_lock:
        _registry.discard(p)
    return rc


def _pump(src: IO[bytes], log_path: str, cap: int, result: Step) -> None:
    kept = 0
    with open(log_path, "wb") as log:
        while True:
            chunk = src.read1(1 << 16) if hasattr(src, "read1") else src.read(1 << 16)
            if not chunk:
                break
            room = cap - kept
            if room > 0:
                log.write(chunk[:room])
                kept += min(room, len(chunk))
            if len(chunk) > room:
                result.cut += len(chunk) - max(room, 0)
    src.close()


def with_fd3(fd: int, cmd: list[str]) -> list[str]:
    """CMD run with descriptor FD as its fd 3 (and FD itself closed): bash moves it (dash takes
    one-digit descriptors only), then becomes CMD. Pass FD in pass_fds."""
    if fd == 3:
        return list(cmd)
    return ["bash", "-c", 'exec 3>&%d %d>&-; exec "$@"' % (fd, fd), "fd3"] + list(cmd)


def _start(cmd: list[str], log_path: str, res: Step, pass_fds: Sequence[int], env: dict[str, str] | None,
           cwd: str | None, status: bool, nice: int) -> tuple[subprocess.Popen | None, int | None]:
    """Popen of CMD (None when it cannot start: said in LOG_PATH, res.rc 127) and the read end of
    the status pipe (with STATUS)."""
    status_r: int | None = None
    status_w: int | None = None
    fds = list(pass_fds)
    if status:
        status_r, status_w = os.pipe()
        fds.append(status_w)
        cmd = [str(status_w) if a == "{status_fd}" else a for a in cmd]
    if nice:
        cmd = ["nice", "-n", str(nice)] + list(cmd)
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             pass_fds=fds, env=env, cwd=cwd, start_new_session=True)
    except OSError as e:
        with open(log_path, "w") as f:
            f.write("grader: cannot start %s: %s\n" % (cmd[0], e.strerror))
        res.rc, res.started = 127, False
        if status_w is not None and status_r is not None:
            os.close(status_w)
            os.close(status_r)
        return None, None
    with _registry_lock:
        _registry.add(p)
    if status_w is not None:
        os.close(status_w)
    return p, status_r


def _watch(p: subprocess.Popen, res: Step, deadline: float, mem_bytes: int, uid: int | None, count_procs: bool) -> None:
    """Until P ends: its memory and processes read (killed above MEM_BYTES), killed at DEADLINE."""
    nap = 0.005
    while p.poll() is None:
        if mem_bytes or count_procs:
            table = process_table()
            pids = set(tree(table, p.pid))
            if uid is not None:
                pids.update(q for q, (_, u, _) in table.items() if u == uid)
            rss = sum(table[q][2] for q in pids if q in table)
            res.peak_rss = max(res.peak_rss, rss)
            if count_procs:
                n = len(pids) if uid is None else sum(1 for q in pids if table[q][1] == uid)
                res.max_procs = max(res.max_procs, n)
            if mem_bytes and rss > mem_bytes:
                res.mem_killed = True
                _kill_step(p, uid)
                break
        if time.monotonic() > deadline:
            res.timed_out = True
            _kill_step(p, uid)
            break
        try:  # (returns as soon as the step ends: no step waits out a nap)
            p.wait(timeout=nap)
        except subprocess.TimeoutExpired:
            pass
        nap = min(0.2, nap * 2)


def _exited(status_data: list[bytes]) -> bool:
    """Whether bwrap's status lines say the command it started ended ("exit-code")."""
    text = b"".join(status_data).decode("utf-8", "replace")
    exited = False
    for line in text.splitlines():
        try:
            if "exit-code" in json.loads(line):
                exited = True
        except ValueError:
            pass
    return exited


def run_step(cmd: list[str], log_path: str, limit_s: float, cap_bytes: int, mem_bytes: int = 0, uid: int | None = None,
             count_procs: bool = False, pass_fds: Sequence[int] = (), env: dict[str, str] | None = None,
             cwd: str | None = None, status: bool = False, nice: int = 0) -> Step:
    """Runs CMD (stdin /dev/null; stdout and stderr to LOG_PATH, cut at CAP_BYTES), killed after
    LIMIT_S seconds (rc 124) or above MEM_BYTES of resident memory (0: no limit). UID: the cell's
    user, whose processes are counted, measured and killed with it. STATUS: CMD is a sandbox
    command line whose --json-status-fd is the last of PASS_FDS... (see sandbox.command): set
    started from it."""
    res = Step()
    t0 = time.monotonic()
    p, status_r = _start(cmd, log_path, res, pass_fds, env, cwd, status, nice)
    if p is None:
        return res
    status_data = []
    st_thread = None
    if status_r is not None:
        def read_status() -> None:
            with os.fdopen(status_r, "rb") as f:
                status_data.append(f.read(1 << 16))
        st_thread = threading.Thread(target=read_status, daemon=True)
        st_thread.start()
    pump = threading.Thread(target=_pump, args=(p.stdout, log_path, cap_bytes, res), daemon=True)
    pump.start()
    try:
        _watch(p, res, t0 + limit_s, mem_bytes, uid, count_procs)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_step(p, uid)
            rc = p.wait()
    finally:
        with _registry_lock:
            _registry.discard(p)
    pump.join(timeout=30)
    if st_thread is not None:
        st_thread.join(timeout=10)
    res.seconds = time.monotonic() - t0
    res.rc = 124 if res.timed_out else (-rc + 128 if rc < 0 else rc)
    if status:
        # bwrap writes "exit-code" when the command it started ended; a sandbox that could not
        # set itself up never writes it (nor one killed at its limits, which says so itself)
        res.started = _exited(status_data) or res.timed_out or res.mem_killed or res.rc >= 128
    return res


def _kill_step(p: subprocess.Popen, uid: int | None) -> None:
    pids = tree(process_table(), p.pid)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    kill_pids(pids)
    if uid is not None:
        kill_pids(uid_processes({uid}))
