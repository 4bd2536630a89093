"""The command line, weights and --resume's plan checks (no build, no GPU, no sandbox)."""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from grading import cli, gradebook  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LESSONS = {"01_naive_transpose": 2, "02_shared_transpose": 2, "06_bank_conflicts": 2}


def main(*args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(list(args))
    return rc, out.getvalue(), err.getvalue()


class CommandLine(unittest.TestCase):
    def test_bad_options_exit_2(self):
        for args in (["--timeout", "0", "x"], ["--timeout"], ["--seed", "4294967296", "x"], ["--gpus", "0,", "x"],
                     ["--slice", "2/2", "--resume", "x"], ["--slice", "0/2", "x"], ["--frobnicate"], ["a", "b"],
                     ["--", "a", "b"], ["--share", "0", "x"], ["--mem-mib", "-1", "x"], ["--submit", "x"],
                     ["--slurm", "--gpus", "0", "x"], ["--slurm", "--resume", "x"], ["--weights", "/nonexistent", "x"]):
            with self.subTest(args=args):
                rc, out, err = main(*args)
                self.assertEqual(rc, 2)
                self.assertTrue(err.startswith("grade.sh: "), err)

    def test_help(self):
        rc, out, err = main("--help")
        self.assertEqual(rc, 0)
        self.assertIn("usage: scripts/grade.sh SUBMISSIONS", out)

    def test_options_parse(self):
        o = cli.parse(["--timeout", "30", "--sanitize", "-DX=1", "--mem-mib", "2048", "--", "-subs"])
        self.assertEqual((o.timeout, o.sanitize, o.mem_mib, o.submissions), (30, True, 2048, "-subs"))
        self.assertEqual(o.passed_on, ["--timeout", "30", "--sanitize", "-DX=1", "--mem-mib", "2048"])

    def test_control_bytes_in_an_error_are_visible(self):
        rc, out, err = main("--bogus\x1b[2J")
        self.assertEqual(rc, 2)
        self.assertNotIn("\x1b", err)


class Weights(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.path)

    def weights(self, text):
        with open(self.path, "w") as f:
            f.write(text)
        return gradebook.read_weights(self.path, LESSONS)

    def test_good(self):
        self.assertEqual(self.weights("# c\n01_naive_transpose 2\n\n02_shared_transpose 0.5\n"),
                         {"01_naive_transpose": "2", "02_shared_transpose": "0.5"})

    def test_bad(self):
        for text in ("99_none 1\n", "01_naive_transpose two\n", "01_naive_transpose -1\n", "01_naive_transpose 1 2\n",
                     "01_naive_transpose\n", "=cmd() 1\n"):
            with self.subTest(text=text):
                with self.assertRaises(gradebook.WeightsError):
                    self.weights(text)

    def test_scores(self):
        tmp = tempfile.mkdtemp()
        try:
            for i, (lesson, passed) in enumerate([("01_naive_transpose", "5"), ("02_shared_transpose", "2")], 1):
                d = os.path.join(tmp, "cells", "%04d" % i)
                os.makedirs(d)
                with open(os.path.join(d, "identity.txt"), "w") as f:
                    f.write(gradebook.identity_text("Ada", lesson))
                gradebook.finish_cell(d, "yes", passed, "5", "" if passed == "5" else "x", "3", "3")
            w = self.weights("01_naive_transpose 2\n06_bank_conflicts 0\n")
            status, md, err = gradebook.write_gradebook(os.path.join(tmp, "cells"), os.path.join(tmp, "out"), LESSONS, w)
            self.assertEqual(status, 1)
            with open(os.path.join(tmp, "out", "scores.csv")) as f:
                row = f.read().splitlines()[1]
            self.assertTrue(row.startswith("Ada,2,3,passed: 01_naive_transpose; not passed: 02_shared_transpose; details"), row)
        finally:
            shutil.rmtree(tmp)


class Resume(unittest.TestCase):
    """--resume checks the plan before grading anything (no sandbox: --no-sandbox)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.subs = os.path.join(self.tmp, "subs")
        for s in ("Ada", "Bo"):
            os.makedirs(os.path.join(self.subs, s, "06_bank_conflicts"))
            with open(os.path.join(self.subs, s, "06_bank_conflicts", "main.cu"), "w") as f:
                f.write("int x;\n")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def plan(self, *extra):
        o = cli.parse([self.subs, "--out", self.out, "--no-sandbox", "--host-only"] + list(extra))
        g = cli.Grader(o, REPO)
        g.lessons, g.out, g.submissions = LESSONS, self.out, os.path.realpath(self.subs)
        g.make_plan()
        return g

    def test_seed_kept_and_checked(self):
        g = self.plan("--seed", "42")
        self.assertEqual([c.label for c in g.cells], ["Ada / 06_bank_conflicts", "Bo / 06_bank_conflicts"])
        self.assertEqual(self.plan("--resume").o.seed, 42)
        with self.assertRaises(cli.Exit) as e:
            self.plan("--resume", "--seed", "43")
        self.assertEqual(e.exception.code, 2)
        self.assertIn("graded with --seed 42", e.exception.message)

    def test_options_that_change_a_grade(self):
        self.plan("--timeout", "30")
        for extra in (["--timeout", "31"], ["--mem-mib", "100"], ["--max-files", "5"]):
            with self.assertRaises(cli.Exit) as e:
                self.plan("--resume", "--timeout", "30", *extra) if extra[0] != "--timeout" else self.plan("--resume", *extra)
            self.assertIn("options that change a grade differ", e.exception.message)

    def test_graded_cells_are_kept(self):
        g = self.plan()
        gradebook.finish_cell(g.cells[0].dir, "yes", "3", "3", "")
        g2 = self.plan("--resume")
        self.assertEqual([c.todo for c in g2.cells], [False, True])
        self.assertEqual(g2.nskipped, 1)

    def test_changed_submissions_are_refused(self):
        self.plan()
        os.rename(os.path.join(self.subs, "Bo"), os.path.join(self.subs, "Ba"))
        with self.assertRaises(cli.Exit) as e:
            self.plan("--resume")
        self.assertIn("SUBMISSIONS changed since the first run", e.exception.message)

    def test_nothing_to_resume(self):
        with self.assertRaises(cli.Exit) as e:
            self.plan("--resume")
        self.assertEqual(e.exception.code, 2)

    def test_a_folder_not_made_by_the_grader(self):
        os.makedirs(os.path.join(self.out, "cells"))
        with self.assertRaises(cli.Exit) as e:
            self.plan()
        self.assertIn("was not made by", e.exception.message)


if __name__ == "__main__":
    unittest.main()
