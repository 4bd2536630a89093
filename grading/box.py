"""A cell's sandboxed steps: the sandbox every cell shares (sandbox.Config), what an empty one
costs to start, and Box.run, which runs one command of a cell in its sandbox under the cell's
limits, as the cell's own user when the grader runs as root."""
from __future__ import annotations

import os
import statistics
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import run, sandbox
from .exits import Stop
from .names import visible
from .options import Options


@dataclass
class Box:
    """The sandbox of every cell of this run."""
    o: Options
    cfg: sandbox.Config
    as_root: bool
    uid_base: int                 # the slot's first user id (sandbox.Slot)
    data_limit_runs: bool = False  # RLIMIT_DATA on the runs too (course_build.probe_data_limit)
    hidden_arg: list[str] = field(default_factory=list)  # --hidden-shapes as a check sees it
    sandbox_s: float = 0.0        # what an empty sandbox costs to start (median of 3)
    cpus: tuple[str, str] | None = None  # (the GPUs' steps' CPUs, the compiles' CPUs): grading/cpus.py
    together: dict[int, int] = field(default_factory=dict)  # cell number -> depth of side_by_side now
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cell_uid(self, number: int) -> int | None:
        """The user id of cell NUMBER (None: the grader's own)."""
        return sandbox.cell_uid(self.uid_base, number) if self.as_root and not self.o.no_sandbox else None

    def step_cpus(self, cpu_work: bool) -> str:
        """The CPUs of a step (taskset list; '': any): CPU_WORK (a compile, its lint or static facts)
        or a GPU's step."""
        return "" if self.cpus is None else self.cpus[1] if cpu_work else self.cpus[0]

    def nproc_base(self) -> int:
        """Processes the grader's user runs already (they count against a cell's process limit)."""
        if self.as_root:
            return 0
        return len(run.uid_processes({os.getuid()}))

    @contextmanager
    def side_by_side(self, number: int) -> Iterator[None]:
        """Inside it, the steps of cell NUMBER may run side by side (from threads of the caller): the
        cell's user's processes are killed before the first and after the last, not around each step
        (Box.run), and a step past its limits is killed with its own process tree, not with its
        siblings. Only for the course's own tools on the cell's files (the lint, nvcc -E, cuobjdump),
        never for a step that runs the submission's code. Nests."""
        uid = self.cell_uid(number)
        with self.lock:
            first = self.together.get(number, 0) == 0
            self.together[number] = self.together.get(number, 0) + 1
        if first and uid is not None:
            run.kill_uid(uid)
        try:
            yield
        finally:
            with self.lock:
                self.together[number] -= 1
                last = self.together[number] == 0
                if last:
                    del self.together[number]
            if last and uid is not None:
                run.kill_uid(uid)

    def run_side_by_side(self, number: int, parts: list[Callable[[], None]]) -> None:
        """Each of PARTS (the course's own tools on cell NUMBER's files) in a thread of its own, side
        by side in the cell's sandbox (side_by_side); returns when all have ended. A part's exception
        is raised here once all have ended (the first, in the order of PARTS), as one after another
        would have raised it."""
        raised: list[BaseException | None] = [None] * len(parts)

        def run(i: int) -> None:
            try:
                parts[i]()
            except BaseException as e:  # (raised again below, in the caller's thread)
                raised[i] = e

        with self.side_by_side(number):
            threads = [threading.Thread(target=run, args=(i,), name="cell-%d-part-%d" % (number, i), daemon=True)
                       for i in range(1, len(parts))]
            for t in threads:
                t.start()
            run(0)
            for t in threads:
                t.join()
        first = next((e for e in raised if e is not None), None)
        if first is not None:
            raise first

    def run(self, cell_dir: str, number: int, name: str, limit: int, role: str, cmd: list[str], gpu: tuple | None,
            fd3: int | None = None, cap: int | None = None, judge: str = "", background: bool = False) -> run.Step:
        """Runs CMD in the cell's sandbox: DIR/NAME.log (cut at --output-kib, or CAP bytes), DIR/NAME.cut.
        FD3: a descriptor the command gets as its fd 3 (the transcript), and no other. JUDGE: the
        course's own check, shown in the sandbox at sandbox.WITNESS_JUDGE (the speed witness). A
        compile, and a BACKGROUND step (the CPU work beside a compile: its lint, its static facts),
        runs at nice 10, below the GPUs' steps, which wait for no compile; with cpus set, each on
        its own CPUs."""
        o = self.o
        uid = self.cell_uid(number)
        with self.lock:
            alone = number not in self.together
        if uid is not None and alone:
            run.kill_uid(uid)  # never two runs of one user (but side by side: Box.side_by_side)
        data = o.mem_mib if role == "compile" or (name == "run" and self.data_limit_runs) else 0
        prefix = sandbox.command(self.cfg, role, os.path.join(cell_dir, "box"), uid=uid, gpu_uuid=gpu[1] if gpu else "",
                                 gpu_minor=gpu[2] if gpu else "", nproc_base=self.nproc_base(),
                                 status_fd=None if o.no_sandbox else "{status_fd}", data_mib=data, judge=judge)
        full = prefix + cmd
        if fd3 is not None:
            full = run.with_fd3(fd3, full)
        step = run.run_step(full, os.path.join(cell_dir, name + ".log"), limit, cap or o.output_kib * 1024,
                            mem_bytes=o.mem_mib << 20, uid=uid, count_procs=not o.no_sandbox,
                            pass_fds=() if fd3 is None else (fd3,),
                            status=not o.no_sandbox, nice=10 if role == "compile" or background else 0,
                            cpus=self.step_cpus(role == "compile" or background), kill_user=alone)
        with open(os.path.join(cell_dir, name + ".cut"), "w") as f:
            f.write("%d\n" % step.cut)
        if uid is not None and alone:
            run.kill_uid(uid)
        return step

    def probe(self, prebuilt: str, cells_dir: str, stop: Stop) -> None:
        """What the sandbox itself costs: an empty command in it, timed (3 times)."""
        times = []
        for _ in range(3):
            cmd = sandbox.command(self.cfg, "run", prebuilt, uid=self.uid_base, nproc_base=self.nproc_base(),
                                  status_fd="{status_fd}") + ["true"]
            log = os.path.join(cells_dir, ".sandbox-probe.log")
            step = run.run_step(cmd, log, 60, 65536, status=True)
            if step.rc != 0:
                with open(log, "rb") as f:
                    why = f.readline(300).decode("utf-8", "replace").strip()
                stop.die(3, "no sandbox: a cell's sandbox cannot start (%s); every folder above --out and the course cache must be open to other users (chmod o+x), as a cell runs as a user of its own (nothing graded)" % visible(why))
            times.append(step.seconds)
        self.sandbox_s = statistics.median(times)


def setup(o: Options, repo: str, submissions: str, out: str, view: str, prebuilt: str, cuobjdump: str | None,
          as_root: bool, uid_base: int, cache: str = "") -> Box:
    """The sandbox every cell shares: the system read-only, the course view and the prebuilt
    libraries, the GPU nodes; the course, the submissions, --out and the course cache (whose
    judges are the course's own code) hidden."""
    ro, links = sandbox.system_dirs()
    cfg = sandbox.Config(
        no_sandbox=o.no_sandbox, as_root=as_root, host_only=o.host_only, file_mib=o.file_mib,
        scratch_mib=o.scratch_mib, procs=o.procs, ro_dirs=ro, links=links,
        dev_nodes=sorted(os.path.join("/dev", n) for n in os.listdir("/dev") if n.startswith("nvidia")),
        hide=sandbox.hide_list([repo, submissions, out, "/root", "/home"] + ([cache] if cache else [])),
        view=view, prebuilt=prebuilt, extra_ro=sandbox.prefix_dirs(o.cmake_defs),
        hidden=o.hidden, env={v: os.environ[v] for v in sandbox.PASSENV if os.environ.get(v)})
    box = Box(o=o, cfg=cfg, as_root=as_root, uid_base=uid_base)
    if o.hidden:
        box.hidden_arg = ["--hidden-shapes", o.hidden if o.no_sandbox else "/hidden-shapes.txt"]
    if cuobjdump:  # (a CUDA toolkit outside PATH: its folder must be seen in the sandbox)
        cfg.ro_dirs, cfg.links = sandbox.system_dirs(paths=[cuobjdump])
    return box
