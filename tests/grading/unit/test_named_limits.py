"""A step the grader stops at a limit says so in its row, with the limit (host-only: real steps that
allocate past a small memory limit or sleep past a small time limit, no GPU, no sandbox): the run,
a sanitizer and the memcheck subset, a compile whose compiler ran out of memory under RLIMIT_DATA
(every compile's hard limit), and the lint, whose stop is written into the cell's lint.log."""
import os
import shutil
import sys
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import box, cell_build, findings, options, run, sandbox  # noqa: E402
from grading import compile as compile_  # noqa: E402

# Touches 200 MiB (every page written), then waits: the watchdog, reading every 0.2 s, sees it.
HOG = [sys.executable, "-c", "import time; x = b'x' * (200 << 20); time.sleep(30)"]
SLEEPER = [sys.executable, "-c", "import time; time.sleep(30)"]


class NamedLimits(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.o = options.parse(["x", "--no-sandbox", "--mem-mib", "64", "--timeout", "1"])

    def step(self, cmd, name="run", limit=20.0, mem_mib=64):
        return run.run_step(cmd, os.path.join(self.tmp, name + ".log"), limit, 1 << 20, mem_bytes=mem_mib << 20)

    def test_a_run_stopped_at_the_memory_limit(self):
        s = self.step(HOG)
        self.assertTrue(s.mem_killed)
        self.assertLess(s.seconds, 20)
        self.assertIn("run went over the memory limit (64 MiB) and was stopped", findings.run_finding(self.o, self.tmp, "run", s, 1))

    def test_a_run_stopped_at_the_time_limit(self):
        s = self.step(SLEEPER, limit=1)
        self.assertTrue(s.timed_out)
        self.assertEqual(findings.run_finding(self.o, self.tmp, "run", s, 1)[0], "run timed out after 1 s")

    def test_a_sanitizer_stopped_at_a_limit_is_a_finding(self):
        s = self.step(HOG, "memcheck-small")
        log = os.path.join(self.tmp, "memcheck-small.log")
        self.assertEqual(findings.memcheck_subset_finding(s, log, 600, 64),
                         ["memcheck on the small shapes went over the memory limit (64 MiB) and was stopped"])
        self.assertEqual(findings.sanitizer_finding("racecheck", s, log, 600, 64),
                         ["racecheck went over the memory limit (64 MiB) and was stopped"])
        s = self.step(SLEEPER, "racecheck", limit=1)
        self.assertEqual(findings.sanitizer_finding("racecheck", s, log, 1, 64), ["racecheck timed out after 1 s"])

    @unittest.skipIf(shutil.which("g++") is None or shutil.which("prlimit") is None, "needs g++ and prlimit")
    def test_a_compiler_out_of_memory_under_rlimit_data(self):
        """`#include "/dev/zero"`: GCC asks for more than the limit at once, and stops itself; the
        watchdog sees nothing, and the build log's last line is ninja's FAILED. The row says the
        compiler ran out of memory, with the limit."""
        src = os.path.join(self.tmp, "main.cu")
        with open(src, "w") as f:
            f.write('#include "/dev/zero"\n')
        box_dir = os.path.join(self.tmp, "box")
        cmd = ["prlimit", "--data=%d" % (256 << 20), "--", "bash", "-c",
               'g++ -x c++ -c "$1" -o /dev/null; rc=$?; echo "FAILED: check.cu.o"; exit $rc', "compile", src]
        s = run.run_step(cmd, os.path.join(self.tmp, "build.log"), 60, 1 << 20, mem_bytes=1024 << 20)
        self.assertNotEqual(s.rc, 0)
        self.assertFalse(s.mem_killed)
        f = compile_.finding(s, os.path.join(self.tmp, "build.log"), box_dir, 1024, 256)
        self.assertTrue(f.startswith("does not compile: the compiler reported running out of memory (every compile's memory "
                                     "limit: 256 MiB, --mem-mib): \u00ab"), f)
        self.assertIn("out of memory", f)

    def test_the_words_of_a_diagnostic_are_not_an_out_of_memory(self):
        log = os.path.join(self.tmp, "build.log")
        with open(log, "wb") as f:
            f.write(b"main.cu:1:2: error: #error out of memory\nFAILED: check.cu.o\n")
        f = compile_.finding(run.Step(rc=1), log, os.path.join(self.tmp, "box"), 1024, 8192)
        self.assertTrue(f.startswith("does not compile; the compiler's first error: \u00abmain.cu:1:2: error: #error out of memory"), f)

    def lint(self, fake_lint, limit=90):
        """cell_build.run_lint with FAKE_LINT in place of grading/ub_lint.py, without a sandbox."""
        view = os.path.join(self.tmp, "view")
        os.makedirs(os.path.join(view, "grading"))
        with open(os.path.join(view, "grading", "ub_lint.py"), "w") as f:
            f.write(fake_lint)
        cell_dir = os.path.join(self.tmp, "cell")
        os.makedirs(cell_dir)
        g = SimpleNamespace(o=self.o, course=SimpleNamespace(view=view),
                            box=box.Box(o=self.o, cfg=sandbox.Config(no_sandbox=True), as_root=False, uid_base=0))
        cell = SimpleNamespace(dir=cell_dir, number=1)
        with mock.patch.object(cell_build, "LINT_LIMIT_S", limit):
            found = cell_build.run_lint(g, cell, os.path.join(self.tmp, "box"))
        with open(os.path.join(cell_dir, "lint.log")) as f:
            return found, f.read()

    def test_the_lint_stopped_at_the_memory_limit_says_so_in_lint_log(self):
        found, log = self.lint("print('g++ -O3 ...', flush=True)\nimport time\nx = b'x' * (200 << 20)\ntime.sleep(30)\n")
        self.assertEqual(found, "not applicable (the lint was stopped: memory limit 64 MiB (--mem-mib))")
        self.assertTrue(log.startswith("g++ -O3 ...\n"), log)  # what it printed stays
        self.assertIn("grader: the lint (g++ on the device code) was stopped: memory limit 64 MiB (--mem-mib)", log)

    def test_the_lint_stopped_at_its_time_limit_says_so_in_lint_log(self):
        found, log = self.lint("import time\ntime.sleep(30)\n", limit=1)
        self.assertEqual(found, "not applicable (the lint was stopped: time limit 1 s)")
        self.assertIn("grader: the lint (g++ on the device code) was stopped: time limit 1 s", log)

    def test_a_lint_that_ends_by_itself_is_read_as_before(self):
        found, log = self.lint('print(\'{"status": "clean", "findings": [], "why": ""}\')\n')
        self.assertIsNone(found)
        self.assertNotIn("grader:", log)


if __name__ == "__main__":
    unittest.main()
