"""A run that is refused before grading (a bad command line, too many cells, no student folder, a
--resume that does not match) leaves the previous --out as it was: its cells, gradebook, scores and
feedback, byte for byte. (grade.sh --host-only --no-sandbox: no GPU, no sandbox, nothing built.)"""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cellrecord, cli, gradebook, options, runfolder, sandbox  # noqa: E402
from grading.exits import Stop  # noqa: E402

LESSONS = {"01_naive_transpose": 2, "06_bank_conflicts": 2}


def snapshot(top):
    """{path under TOP: (mode, bytes or None for a folder)} of everything under TOP."""
    out = {}
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            data = None
            if n in files:
                with open(p, "rb") as f:
                    data = f.read()
            out[os.path.relpath(p, top)] = (st.st_mode, data)
    return out


@unittest.skipIf(shutil.which("cmake") is None or shutil.which("prlimit") is None, "grade.sh's preflight needs cmake and prlimit")
class RefusedRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.subs = os.path.join(self.tmp, "subs")
        for s in ("Ada", "Bo"):
            for lesson in LESSONS:
                os.makedirs(os.path.join(self.subs, s, lesson))
                with open(os.path.join(self.subs, s, lesson, "main.cu"), "w") as f:
                    f.write("int x;\n")
        self.out = os.path.join(self.tmp, "out")
        # the previous run: four cells graded, the gradebook and its exports written
        o = options.parse([self.subs, "--out", self.out, "--no-sandbox", "--host-only", "--seed", "7"])
        folder = runfolder.make_plan(o, self.out, os.path.realpath(self.subs), LESSONS, False, sandbox.UID_FIRST, Stop())
        for c in folder.cells:
            os.makedirs(os.path.join(c.dir, "box", "src"))
            with open(os.path.join(c.dir, "box", "src", "main.cu"), "w") as f:
                f.write("int x;\n")
            # (the first cell's worker stopped: --resume would grade it again)
            gradebook.finish_cell(c.dir, "yes", "3", "3", "not graded: no worker took it" if c.number == 1 else "")
        with open(os.path.join(self.out, "progress.log"), "w") as f:
            f.write("the previous run's progress\n")
        status, _, _ = gradebook.write_gradebook(folder.cells_dir, self.out, LESSONS)
        self.assertEqual(status, 1)
        self.before = snapshot(self.out)
        self.assertIn(os.path.join("feedback", "Ada.md"), self.before)
        self.assertIn(os.path.join("cells", "0004", "cell.json"), self.before)

    def grade(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = cli.main(list(args) + ["--out", self.out, "--no-sandbox", "--host-only"])
        return rc, err.getvalue()

    def assert_refused_untouched(self, rc, err, words):
        self.assertEqual(rc, 2, err)
        self.assertIn(words, err)
        self.assertEqual(snapshot(self.out), self.before)

    def test_too_many_cells(self):
        with mock.patch.object(sandbox, "SLOT_SIZE", 4):  # (a slot holds 9999 cells: four are too many here)
            rc, err = self.grade(self.subs)
        self.assert_refused_untouched(rc, err, "SUBMISSIONS makes 4 cells, more than one run grades (3")

    def test_bad_options(self):
        for args, words in (([self.subs, "--timeout", "0"], "--timeout needs"),
                            ([self.subs, "--weights", "70,20"], "--weights C,P needs"),
                            ([os.path.join(self.tmp, "missing")], "is not a folder")):
            with self.subTest(args=args):
                rc, err = self.grade(*args)
                self.assert_refused_untouched(rc, err, words)

    def test_no_student_folder(self):
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        rc, err = self.grade(empty)
        self.assert_refused_untouched(rc, err, "holds no student folders")

    def test_a_resume_that_does_not_match(self):
        """(cell 0001 would be graded again: nothing of it is removed before the refusal)"""
        rc, err = self.grade(self.subs, "--resume", "--timeout", "30")
        self.assert_refused_untouched(rc, err, "options that change a grade differ")
        rc, err = self.grade(self.subs, "--resume", "--seed", "8")
        self.assert_refused_untouched(rc, err, "graded with --seed 7")
        os.rename(os.path.join(self.subs, "Bo"), os.path.join(self.subs, "Ba"))
        rc, err = self.grade(self.subs, "--resume")
        self.assert_refused_untouched(rc, err, "SUBMISSIONS changed since the first run (cell 0003 was 'Bo/01_naive_transpose'")

    def test_a_run_that_is_not_refused_starts_afresh(self):
        """(the snapshot sees a new run: the comparisons above can fail)"""
        o = options.parse([self.subs, "--out", self.out, "--no-sandbox", "--host-only"])
        runfolder.make_plan(o, self.out, os.path.realpath(self.subs), LESSONS, False, sandbox.UID_FIRST, Stop())
        after = snapshot(self.out)
        self.assertNotEqual(after, self.before)
        self.assertNotIn("gradebook.csv", after)
        self.assertIsNone(cellrecord.read(os.path.join(self.out, "cells", "0004")).result)


if __name__ == "__main__":
    unittest.main()
