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
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Collection, Iterable, Sequence

PAGE = os.sysconf("SC_PAGE_SIZE")
_registry: set = set()  # every step running now: killed when the grader is interrupted or dies
_registry_lock = threading.Lock()
_STATUS_FIELDS = re.compile(rb"^(PPid|Uid|VmRSS|State|Threads):\s+(\S+)", re.M)
WATCH_S = 0.2  # how often the watchdog reads the memory and processes of every step running


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
    still run (a main thread that exited alone) has more than one thread and stays in the table.
    (One os.read and one regular expression a process: the grader reads this table five times a
    second while up to --jobs compiles and the GPUs' steps run, so its cost is the grader's.)"""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open("/proc/%s/status" % name, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            text = os.read(fd, 4096)
        except OSError:
            continue
        finally:
            os.close(fd)
        v = dict(_STATUS_FIELDS.findall(text))
        if v.get(b"State") in (b"Z", b"X") and int(v.get(b"Threads", b"1")) <= 1:
            continue
        if b"PPid" in v and b"Uid" in v:
            table[int(name)] = (int(v[b"PPid"]), int(v[b"Uid"]), int(v.get(b"VmRSS", b"0")) * 1024)
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


def chown_tree(top: str, uid: int, gid: int) -> None:
    """TOP and everything under it owned by UID:GID (links themselves, never followed)."""
    for root, _dirs, names in os.walk(top):
        os.lchown(root, uid, gid)
        for n in names:
            os.lchown(os.path.join(root, n), uid, gid)


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
           cwd: str | None, status: bool, nice: int, cpus: str = "") -> tuple[subprocess.Popen | None, int | None]:
    """Popen of CMD (None when it cannot start: said in LOG_PATH, res.rc 127) and the read end of
    the status pipe (with STATUS); at NICE, on the CPUs of CPUS (a taskset list; '': any)."""
    status_r: int | None = None
    status_w: int | None = None
    fds = list(pass_fds)
    if status:
        status_r, status_w = os.pipe()
        fds.append(status_w)
        cmd = [str(status_w) if a == "{status_fd}" else a for a in cmd]
    if nice:
        cmd = ["nice", "-n", str(nice)] + list(cmd)
    if cpus:
        cmd = ["taskset", "-c", cpus] + list(cmd)
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


@dataclass(eq=False)
class _Watched:
    """One step the watchdog reads: killed above MEM_BYTES (0: no limit) or at DEADLINE."""
    p: subprocess.Popen
    res: Step
    deadline: float
    mem_bytes: int
    uid: int | None
    count_procs: bool
    killed: bool = False
    kill_user: bool = True  # killed with every process of its user (else its own tree: Box.side_by_side)


def _read(w: _Watched, table: dict[int, tuple[int, int, int]] | None, now: float) -> None:
    """One reading of step W in TABLE (None: nothing to read); killed above its memory or past its deadline."""
    res = w.res
    if table is not None:
        pids = set(tree(table, w.p.pid))
        if w.uid is not None:
            pids.update(q for q, (_, u, _) in table.items() if u == w.uid)
        rss = sum(table[q][2] for q in pids if q in table)
        res.peak_rss = max(res.peak_rss, rss)
        if w.count_procs:
            n = len(pids) if w.uid is None else sum(1 for q in pids if table[q][1] == w.uid)
            res.max_procs = max(res.max_procs, n)
        if w.mem_bytes and rss > w.mem_bytes:
            res.mem_killed = w.killed = True
            _kill_step(w.p, w.uid if w.kill_user else None)
            return
    if now > w.deadline:
        res.timed_out = w.killed = True
        _kill_step(w.p, w.uid if w.kill_user else None)


class _Watchdog:
    """The one thread that reads /proc for every step running now, every WATCH_S: one process
    table a reading, however many steps run (a thread of its own for each step read the table for
    each, and --jobs compiles doing so kept the grader's one interpreter busy enough to delay the
    GPUs' steps: the end of each was seen late). A step's own thread only waits for it to end."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.watched: list[_Watched] = []
        self.thread: threading.Thread | None = None

    def add(self, w: _Watched) -> None:
        with self.cond:
            self.watched.append(w)
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="watchdog", daemon=True)
                self.thread.start()
            self.cond.notify()

    def discard(self, w: _Watched) -> None:
        with self.cond:
            if w in self.watched:
                self.watched.remove(w)

    def _loop(self) -> None:
        while True:
            with self.cond:
                while not self.watched:
                    self.cond.wait()
                steps = list(self.watched)
            try:
                table = process_table() if any(w.mem_bytes or w.count_procs for w in steps) else None
            except OSError:
                table = None
            now = time.monotonic()
            with self.cond:  # (a step that ended meanwhile is not read: its pid may be another's)
                for w in steps:
                    if w in self.watched and not w.killed:
                        try:
                            _read(w, table, now)
                        except Exception:  # (one step's reading never stops the others')
                            pass
            time.sleep(WATCH_S)


_watchdog = _Watchdog()


def _wait(p: subprocess.Popen) -> int:
    """P's exit code once it ended: in the main thread in naps (a signal may be delivered to any
    thread, and only the main thread runs its handler), elsewhere at once."""
    if threading.current_thread() is not threading.main_thread():
        return p.wait()
    while True:
        try:
            return p.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue


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
             cwd: str | None = None, status: bool = False, nice: int = 0, cpus: str = "",
             started: Callable[[int | None], None] | None = None, kill_user: bool = True) -> Step:
    """Runs CMD (stdin /dev/null; stdout and stderr to LOG_PATH, cut at CAP_BYTES), killed after
    LIMIT_S seconds (rc 124) or above MEM_BYTES of resident memory (0: no limit). UID: the cell's
    user, whose processes are counted, measured and killed with it. STATUS: CMD is a sandbox
    command line whose --json-status-fd is the last of PASS_FDS... (see sandbox.command): set
    started from it. STARTED: told the process id once it started, and None once it ended (the
    grader's own step beside a cell's: grading/gpus.py does not count it as holding the GPU).
    KILL_USER: a step past its limits is killed with every process of UID (else with its own tree)."""
    res = Step()
    t0 = time.monotonic()
    p, status_r = _start(cmd, log_path, res, pass_fds, env, cwd, status, nice, cpus)
    if p is None:
        return res
    if started is not None:
        started(p.pid)
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
    w = _Watched(p, res, t0 + limit_s, mem_bytes, uid, count_procs, kill_user=kill_user)
    try:
        _watchdog.add(w)
        rc = _wait(p)
    finally:
        _watchdog.discard(w)
        with _registry_lock:
            _registry.discard(p)
        if started is not None:
            started(None)
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
