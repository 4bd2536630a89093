"""bench/two_gpus.sh and its report (bench/two_gpus_report.py), without a GPU: the report on
made-up runs, and the script's refusal on a machine with fewer than two GPUs."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REPORT = os.path.join(ROOT, "bench", "two_gpus_report.py")
SCRIPT = os.path.join(ROOT, "bench", "two_gpus.sh")
HEADER = ("student,lesson,compiled,checks passed,checks total,first failure or sanitizer finding,course test cases passed,"
          "course test cases total,correctness,performance,score,first performance shortfall\n")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_run(d, name, wall, cells, course, start=1000.0, first="2026-01-01T00:00:20Z", last="2026-01-01T00:01:00Z"):
    run = os.path.join(d, name)
    write(os.path.join(run, "wall.txt"), "%s\n" % wall)
    write(os.path.join(run, "start.txt"), "%s\n" % start)
    write(os.path.join(run, "run-info.txt"), course + "\n")
    write(os.path.join(run, "progress.log"), "2026-01-01T00:00:05Z grading 2 cells on x\n%s [1/2] a\n%s [2/2] b\n" % (first, last))
    write(os.path.join(run, "timing.txt"), "".join("%04d s%d / l: %s\n" % (i + 1, i, c[0]) for i, c in enumerate(cells)))
    write(os.path.join(run, "gradebook.csv"), HEADER + "".join("s%d,l,yes,5,5,,1,1,%s,2/2,100%%,\n" % (i, c[1]) for i, c in enumerate(cells)))


class Report(unittest.TestCase):
    def test_all_gpus_of_a_larger_machine(self):
        epoch = 1767225600.0
        with tempfile.TemporaryDirectory() as d:
            course = "The course and its judges came from the course cache (/c/x), ready in 1.00 s."
            make_run(d, "warm", 90, [("run_s=3 gpu=0", "passed")], course, start=epoch)
            make_run(d, "one", 100, [("run_s=3 gpu=0", "passed"), ("run_s=3 gpu=0", "passed")], course, start=epoch)
            make_run(d, "two", 50, [("run_s=3 gpu=0", "passed"), ("run_s=3 gpu=1", "passed")], course, start=epoch)
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
            self.assertNotIn("all the machine's GPUs", out)  # a two-GPU machine: no such run
            make_run(d, "all", 25, [("run_s=3 gpu=0", "passed"), ("run_s=3 gpu=3", "passed")], course, start=epoch)
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
        self.assertRegex(out, r"all the machine's GPUs \(--gpus 0,\.\.\.\) +25\.0 +288 ")
        self.assertIn("speed-up on all 2 GPUs against one, both warm: 4.00x (2 of 2 cells passed)", out)

    def test_speed_up_busy_time_and_agreement(self):
        epoch = 1767225600.0  # 2026-01-01T00:00:00Z
        with tempfile.TemporaryDirectory() as d:
            make_run(d, "warm", 90, [("compile_s=10 run_s=3 judge_s=1 gpu=0", "passed")],
                     "The course and its judges were built once, in 40.00 s.", start=epoch, first="2026-01-01T00:00:50Z")
            make_run(d, "one", 100, [("compile_s=10 lint_s=1 run_s=3 judge_s=1 memcheck_s=1 gpu=0", "passed"),
                                     ("compile_s=12 run_s=4 judge_s=1 gpu=0", "passed")],
                     "The course and its judges came from the course cache (/c/x), ready in 1.50 s.", start=epoch)
            make_run(d, "two", 50, [("compile_s=10 run_s=3 judge_s=2 gpu=0", "passed"), ("compile_s=12 run_s=4 judge_s=1 gpu=1", "not passed")],
                     "The course and its judges came from the course cache (/c/x), ready in 1.40 s.", start=epoch)
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
        self.assertIn("speed-up, both runs warm (the course from the cache): 2.00x", out)
        # the cold start's first result came 30 s later (50 s against 20 s): (100 + 30) / (50 + 30)
        self.assertIn("(+30.0 s each: the cold start's first result came that much later): 1.62x", out)
        self.assertIn("one GPU: GPU 0 10.0 s; two GPUs: GPU 0 5.0 s, GPU 1 5.0 s; the GPUs' own ratio 2.00x", out)
        self.assertIn("built, 40.0 s", out)
        self.assertIn("from the cache, 1.5 s", out)
        self.assertRegex(out, r"compile_s +22\.0 +22\.0")
        self.assertIn("1 of 2 rows agree on correctness", out)
        # the GPUs could begin at 5 s; the last result at 60 s: 55 s, less 10 s busy (one GPU)
        self.assertIn("one GPU (--gpus 0): the GPUs could begin 5 s after the start and gave the last result 55 s later; each GPU idle "
                      "in that span (the span less its busy time; stamps to the second): GPU 0 45 s", out)
        self.assertRegex(out, r"one GPU \(--gpus 0\) +100\.0 +72 +20\.0 s +5\.00 s")  # 2 cells in 100 s; median of 5 and 5

    def test_the_pace_after_the_first_result_and_a_class_of_200(self):
        epoch = 1767225600.0  # 2026-01-01T00:00:00Z
        course = "The course and its judges came from the course cache (/c/x), ready in 1.00 s."
        cells = [("run_s=3 gpu=0", "passed"), ("run_s=3 gpu=0", "passed")]
        with tempfile.TemporaryDirectory() as d:
            make_run(d, "warm", 90, cells, course, start=epoch)
            make_run(d, "one", 100, cells, course, start=epoch)  # first result at 20 s, last at 60 s
            make_run(d, "two", 50, cells, course, start=epoch, last="2026-01-01T00:00:40Z")  # last at 40 s
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
            # one cell in 40 s against one in 20 s; 1,199 cells after the first: 20 s + 1199 x 40 s, 20 s + 1199 x 20 s
            self.assertIn("one GPU 90 cells/h, two GPUs 180 cells/h: 2.00x; at those paces a class of 200 students (1200 cells) "
                          "takes 800 min on one GPU and 400 min on two", out)
            make_run(d, "two", 50, cells, course, start=epoch, last="2026-01-01T00:00:20Z")  # both results in one second
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
            self.assertNotIn("after the first result", out)

    def test_a_judge_beside_the_next_run_is_not_counted_busy(self):
        with tempfile.TemporaryDirectory() as d:
            course = "The course and its judges came from the course cache (/c/x), ready in 1.50 s."
            make_run(d, "warm", 90, [("run_s=3 judge_s=1 gpu=0", "passed")], course, start=1767225600.0)
            # cell 1's judge ran 1.5 of its 2 s beside cell 2's run; cell 2's, 0 s (judged last, alone)
            make_run(d, "one", 100, [("run_s=3 judge_s=2 judge_beside_s=1.5 witness_s=1 gpu=0", "passed"),
                                     ("run_s=3 judge_s=2 judge_beside_s=0 witness_s=1 gpu=0", "passed")], course, start=1767225600.0)
            make_run(d, "two", 50, [("run_s=3 judge_s=2 witness_s=1 gpu=0", "passed"), ("run_s=3 judge_s=2 witness_s=1 gpu=1", "passed")],
                     course, start=1767225600.0)
            out = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE, check=True, text=True).stdout
        self.assertIn("one GPU: GPU 0 10.5 s; two GPUs: GPU 0 6.0 s, GPU 1 6.0 s", out)  # 4.5 + 6 on one GPU
        self.assertRegex(out, r"one GPU \(--gpus 0\) +100\.0 +72 +20\.0 s +5\.25 s")  # median of 4.5 and 6
        self.assertRegex(out, r"judge_beside_s +1\.5 +0\.0")


class Script(unittest.TestCase):
    def test_refuses_with_fewer_than_two_gpus(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "bin", "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: Pretend GPU (UUID: GPU-0)'\n")
            os.chmod(os.path.join(d, "bin", "nvidia-smi"), 0o755)
            env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
            p = subprocess.run(["bash", SCRIPT, os.path.join(d, "out")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            self.assertEqual(p.returncode, 3, p.stdout)
            self.assertIn("this machine has 1 GPU(s)", p.stdout)
            self.assertIn("needs a machine with at least two", p.stdout)
            self.assertFalse(os.path.exists(os.path.join(d, "out")))

    def test_refuses_the_options_it_sets_itself(self):
        p = subprocess.run(["bash", SCRIPT, "/nonexistent/out", "--gpus", "all"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("--gpus is set by the script itself", p.stdout)


if __name__ == "__main__":
    unittest.main()
