"""Running a step under its limits: output cut and counted, time limit, the memory watchdog, process
counting (real processes, a second or two; no sandbox needed)."""
import os
import subprocess
import threading
import time
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import run  # noqa: E402

PY = sys.executable


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


class Step(unittest.TestCase):
    def setUp(self):
        fd, self.log = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.log)

    def test_output_is_cut_and_the_rest_counted(self):
        s = run.run_step([PY, "-c", "import sys; sys.stdout.write('x' * 100000)"], self.log, 30, 4096)
        self.assertEqual(s.rc, 0)
        self.assertEqual(os.path.getsize(self.log), 4096)
        self.assertEqual(s.cut, 100000 - 4096)

    def test_time_limit(self):
        s = run.run_step([PY, "-c", "import time; time.sleep(60)"], self.log, 1, 4096)
        self.assertTrue(s.timed_out)
        self.assertEqual(s.rc, 124)
        self.assertLess(s.seconds, 10)

    def test_time_limit_kills_what_it_started_in_another_session(self):
        code = ("import os, time\n"
                "if os.fork() == 0:\n    os.setsid(); time.sleep(60)\n"
                "time.sleep(60)\n")
        s = run.run_step([PY, "-c", code], self.log, 1, 4096, count_procs=True)
        self.assertTrue(s.timed_out)
        self.assertGreaterEqual(s.max_procs, 2)

    def test_memory_watchdog(self):
        code = "import time\nb = bytearray(400 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(30)\n"
        s = run.run_step([PY, "-c", code], self.log, 60, 4096, mem_bytes=100 << 20)
        self.assertTrue(s.mem_killed)
        self.assertGreater(s.peak_rss, 100 << 20)
        self.assertLess(s.seconds, 20)

    def test_under_the_memory_limit(self):
        s = run.run_step([PY, "-c", "b = bytearray(20 << 20)"], self.log, 60, 4096, mem_bytes=500 << 20)
        self.assertFalse(s.mem_killed)
        self.assertEqual(s.rc, 0)

    def test_crash_is_128_plus_signal(self):
        s = run.run_step([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"], self.log, 30, 4096)
        self.assertEqual(s.rc, 128 + 11)

    def test_only_the_given_fds_are_passed(self):
        r, w = os.pipe()
        try:
            run.run_step([PY, "-c", "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"],
                         self.log, 30, 4096, pass_fds=(w,))
        finally:
            os.close(r)
            os.close(w)
        with open(self.log) as f:
            fds = eval(f.read())
        self.assertIn(w, fds)
        self.assertTrue(all(fd in (0, 1, 2, w) or fd > w for fd in fds if fd != 3), fds)

    def test_fd3_whatever_the_descriptor(self):
        for low in (True, False):
            with self.subTest(fd_is_3=low):
                out = tempfile.NamedTemporaryFile(delete=False)
                out.close()
                saved = None
                if low:  # make the transcript's descriptor 3 itself, as in a process with few open
                    saved = os.dup(3) if _is_open(3) else None
                    fd = os.open(out.name, os.O_WRONLY | os.O_TRUNC)
                    if fd != 3:
                        os.dup2(fd, 3)
                        os.close(fd)
                        fd = 3
                else:
                    fd = os.open(out.name, os.O_WRONLY | os.O_TRUNC)
                    fd2 = os.dup(fd)  # above 3
                    os.close(fd)
                    fd = fd2 if fd2 != 3 else os.dup(fd2)
                try:
                    s = run.run_step(run.with_fd3(fd, ["sh", "-c", "echo recorded >&3"]), self.log, 30, 4096, pass_fds=(fd,))
                finally:
                    os.close(fd)
                    if saved is not None:
                        os.dup2(saved, 3)
                        os.close(saved)
                with open(out.name) as f:
                    got = f.read()
                os.unlink(out.name)
                self.assertEqual((s.rc, got), (0, "recorded\n"))

    def test_a_dead_zombie_is_no_process_but_a_zombie_leader_with_live_threads_is(self):
        # A zombie runs nothing: waiting for its parent to reap it cost each sandboxed step about a
        # second (the exited bwrap, reparented to PID 1). A main thread that exits alone leaves a
        # zombie leader whose other threads still run: that one must still be seen (and killed).
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        try:
            for _ in range(200):
                with open("/proc/%d/status" % pid) as f:
                    if "\tZ" in f.read():
                        break
                time.sleep(0.01)
            self.assertNotIn(pid, run.process_table())
        finally:
            os.waitpid(pid, 0)
        sys_exit = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine)  # exit(2): the calling thread only
        if sys_exit is None:
            self.skipTest("the exit syscall's number on %s is not known here" % os.uname().machine)
        script = ("import ctypes, os, threading, time\n"
                  "threading.Thread(target=lambda: (time.sleep(30), os._exit(0))).start()\n"
                  "ctypes.CDLL(None).syscall(%d, 0)\n" % sys_exit)
        p = subprocess.Popen([sys.executable, "-c", script])
        try:
            for _ in range(200):
                with open("/proc/%d/status" % p.pid) as f:
                    if "\tZ" in f.read():
                        break
                time.sleep(0.01)
            self.assertIn(p.pid, run.process_table())
            self.assertIn(p.pid, run.uid_processes({os.getuid()}))
        finally:
            p.kill()
            p.wait()

    def test_one_reading_of_proc_for_every_step_running(self):
        # --jobs compiles and the GPUs' steps run at once: a reading of /proc for each of them, five
        # times a second, kept the grader's interpreter so busy that a GPU step's end was seen up to
        # a second late. One watchdog reads the table once for all of them.
        calls = []
        real = run.process_table

        def counted():
            calls.append(threading.current_thread().name)
            return real()

        results = {}

        def step(i):
            results[i] = run.run_step(["sleep", "1"], self.log + str(i), 30, 4096, mem_bytes=1 << 30, count_procs=True)

        with mock.patch.object(run, "process_table", counted):
            threads = [threading.Thread(target=step, args=(i,)) for i in range(12)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        for i in range(12):
            os.unlink(self.log + str(i))
        self.assertEqual([r.rc for r in results.values()], [0] * 12)
        self.assertTrue(all(r.max_procs >= 1 for r in results.values()))  # each was read
        # 12 steps of 1 s: about 1 / WATCH_S readings in all (one per step would be 12 times that)
        self.assertLessEqual(len(calls), 3 / run.WATCH_S, calls)
        self.assertEqual(set(calls), {"watchdog"})

    def test_steps_at_once_each_end_at_their_own_limits(self):
        out = {}

        def step(name, cmd, limit, mem):
            out[name] = run.run_step([PY, "-c", cmd], self.log + name, limit, 4096, mem_bytes=mem)

        hog = "import time\nb = bytearray(300 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(30)\n"
        threads = [threading.Thread(target=step, args=("slow", "import time; time.sleep(60)", 1, 0)),
                   threading.Thread(target=step, args=("hog", hog, 60, 100 << 20)),
                   threading.Thread(target=step, args=("quick", "pass", 60, 100 << 20))]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in out:
            os.unlink(self.log + name)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual((out["slow"].timed_out, out["slow"].mem_killed, out["slow"].rc), (True, False, 124))
        self.assertEqual((out["hog"].timed_out, out["hog"].mem_killed), (False, True))
        self.assertEqual((out["quick"].timed_out, out["quick"].mem_killed, out["quick"].rc), (False, False, 0))

    def test_a_program_that_does_not_exist(self):
        s = run.run_step(["/nonexistent/tool"], self.log, 30, 4096)
        self.assertEqual(s.rc, 127)
        self.assertFalse(s.started)


if __name__ == "__main__":
    unittest.main()
