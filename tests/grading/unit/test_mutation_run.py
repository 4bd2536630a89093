"""grading/mutation/: the mutation run's command line, its reading of ninja's log and its check of
the course's own code (no GPU, no compiler; the dry run end to end is tests/evidence/mutation_dry_run.sh)."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from grading.mutation import layers, options, run  # noqa: E402


class CommandLine(unittest.TestCase):
    def test_values(self):
        o = options.parse(["--out", "o", "--lesson", "04", "--lesson", "05", "--deadline", "30", "--jobs", "0",
                           "--solution-every", "0", "--no-lint", "--memcheck", "--", "-DX=1", "--frobnicate"])
        self.assertEqual((o.out, o.lessons, o.deadline, o.jobs, o.every, o.lint, o.memcheck, o.extra),
                         ("o", ["04", "05"], 30, 1, 20, False, True, ["-DX=1", "--frobnicate"]))

    def test_refused(self):
        for argv, words in ((["--deadline", "soon"], "--deadline needs a number, not 'soon'"),
                            (["--jobs"], "--jobs needs a value"), (["--frobnicate"], "unknown argument '--frobnicate'"),
                            (["--deadline", "60"], "--out DIR is needed")):
            with self.assertRaises(options.Refused) as e:
                options.parse(argv)
            self.assertIn(words, str(e.exception))

    def test_help_first(self):
        self.assertTrue(options.parse(["--no-lint", "-h", "--frobnicate"]).help)

    def test_read_in_order(self):
        """argparse reads the arguments in order, as the script did: the first problem is the one said,
        -h after it is not reached, and a value is the next argument whatever it looks like."""
        for argv, words in ((["--deadline", "soon", "-h"], "--deadline needs a number, not 'soon'"),
                            (["--frobnicate", "--deadline", "soon"], "unknown argument '--frobnicate'"),
                            (["--out=o"], "unknown argument '--out=o'"), (["--ou", "o"], "unknown argument '--ou'"),
                            (["--dry-run", "operand"], "unknown argument 'operand'")):
            with self.assertRaises(options.Refused) as e:
                options.parse(argv)
            self.assertIn(words, str(e.exception))
        o = options.parse(["--out", "--dry-run", "--only", "-x", "--work", "--"])
        self.assertEqual((o.out, o.dry, o.only, o.work, o.extra), ("--dry-run", False, ["-x"], "--", []))
        self.assertEqual(options.parse(["--dry-run", "--", "--out"]).extra, ["--out"])


class Logs(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.r = layers.Run(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), self.work, self.work)
        os.makedirs(self.r.logs)
        os.makedirs(self.r.state)

    def tearDown(self):
        shutil.rmtree(self.work)

    def test_split_build_log(self):
        with open(os.path.join(self.r.logs, "mutants.build.txt"), "w") as f:
            f.write("[1/9] Building CUDA object x\nFAILED: CMakeFiles/mut003_check.dir/a.o\nerror: one\nerror: two\n"
                    "[2/9] Building CUDA object y\nFAILED: something else\nnot kept\n")
        run.split_build_log(self.r)
        with open(os.path.join(self.r.logs, "mut003.build.txt")) as f:
            self.assertEqual(f.read(), "FAILED: CMakeFiles/mut003_check.dir/a.o\nerror: one\nerror: two\n")
        self.assertEqual(sorted(os.listdir(self.r.logs)), ["mut003.build.txt", "mutants.build.txt"])

    def test_solution_problems(self):
        for layer, word in (("host", "ok"), ("gpu", "passed"), ("static", "not judged: no cuobjdump")):
            self.r.put("solution.01", layer, word)
        self.assertEqual(layers.solution_problems(self.r, "solution.01"), "")
        self.r.put("solution.01", "lint", "UB main.cu:3: x [-Waggressive-loop-optimizations]")
        self.r.put("solution.01", "memcheck", "ERROR")
        self.r.put("solution.01", "gpu", "FAILED")
        self.assertEqual(layers.solution_problems(self.r, "solution.01"),
                         "lint (UB main.cu:3: x [-Waggressive-loop-optimizations]), GPU checks (FAILED), memcheck (ERROR)")

    def test_deadline(self):
        self.r.deadline, self.r.start = 5, 0
        self.assertTrue(self.r.past_deadline())
        self.assertEqual(self.r.limited(["true"], os.path.join(self.work, "x.txt")), 124)
        self.assertTrue(os.path.isfile(os.path.join(self.work, "x.txt")))


if __name__ == "__main__":
    unittest.main()
