"""A run that is refused before grading (a bad command line, too many cells, no student folder, a
--resume that does not match, a bad --out, no GPU or sandbox, a GPU in use with --share, a course
that does not build) leaves the previous --out as it was: its cells, gradebook, scores and
feedback, byte for byte.
(grade.sh --host-only --no-sandbox unless a case needs otherwise: no GPU, no sandbox, nothing built;
a refusal that stops the process (Stop.die) is caught where it would exit.)"""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cellrecord, cli, course_build, exits, gpus, gradebook, grader, options, preflight, runfolder, sandbox  # noqa: E402
from grading.exits import Stop  # noqa: E402

LESSONS = {"01_naive_transpose": 2, "06_bank_conflicts": 2}


class Died(Exception):
    """Where Stop.die would end the process: its exit code."""


def died(code):
    raise Died(code)


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

    def grade(self, *args, out=None, mode=("--no-sandbox", "--host-only")):
        """grade.sh ARGS --out OUT (self.out) MODE: its exit code and what it said on stderr."""
        o, err = io.StringIO(), io.StringIO()
        with redirect_stdout(o), redirect_stderr(err), mock.patch.object(exits.os, "_exit", side_effect=died):
            try:
                rc = cli.main(list(args) + ["--out", out or self.out] + list(mode))
            except Died as e:
                rc = e.args[0]
        return rc, err.getvalue()

    def assert_refused_untouched(self, rc, err, words, code=2):
        self.assertEqual(rc, code, err)
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

    def test_every_refusal_of_the_command_line(self):
        """Each refusal before the plan (exit 2), with --out named as given."""
        weights = os.path.join(self.tmp, "w.txt")
        with open(weights, "w") as f:
            f.write("99_none 1\n")
        hidden = os.path.join(self.tmp, "hidden.txt")
        with open(hidden, "w") as f:
            f.write("99_none 1 2\n")
        for args, words in (([self.subs, "--frobnicate"], "unknown option"), ([self.subs, "other"], "one SUBMISSIONS folder"),
                            ([self.subs, "--slice", "0/2"], "--slice grades a slice"), ([self.subs, "--submit"], "go with --slurm"),
                            ([self.subs, "--hidden-shapes", os.path.join(self.tmp, "none.txt")], "--hidden-shapes needs a readable file"),
                            ([self.subs, "--hidden-shapes", hidden], "--hidden-shapes " + hidden), ([self.subs, "--weights", weights], "99_none"),
                            ([], "no SUBMISSIONS folder given"), ([self.subs, "--gradebook-from", self.subs], "give no SUBMISSIONS"),
                            (["--gradebook-from", os.path.join(self.tmp, "none")], "is not a folder"),
                            ([self.subs, "--share", "2"], "--share needs root and the sandbox"),
                            ([self.subs, "--course-cache", self.out], "overlaps the course cache"),
                            ([os.path.join(self.out, "feedback")], "SUBMISSIONS is inside --out")):
            with self.subTest(args=args):
                rc, err = self.grade(*args)
                self.assert_refused_untouched(rc, err, words)

    def test_out_and_submissions_through_links(self):
        """--out named through a link to a folder that holds SUBMISSIONS, or is inside it: refused
        (links resolved on both sides), the folder behind the link as it was."""
        link = os.path.join(self.tmp, "out-link")
        os.symlink(self.out, link)
        rc, err = self.grade(os.path.join(self.out, "feedback"), out=link)
        self.assert_refused_untouched(rc, err, "SUBMISSIONS is inside --out")
        inner = os.path.join(self.out, "cells", "0001")  # (SUBMISSIONS holds --out: through a link to it)
        os.symlink(inner, os.path.join(self.tmp, "in-link"))
        class_link = os.path.join(self.tmp, "class-link")
        os.symlink(self.out, class_link)
        before = snapshot(self.out)
        rc, err = self.grade(class_link, out=os.path.join(self.tmp, "in-link"))
        self.assertEqual((rc, snapshot(self.out)), (2, before), err)
        self.assertIn("is inside SUBMISSIONS, through a symbolic link", err)

    def test_no_gpu_no_sandbox_no_tools(self):
        """Each refusal of the preflight (a process that stops: exit 3 or 1)."""
        real_which = shutil.which
        for missing, mode, words, code in (("nvidia-smi", ["--no-sandbox"], "no usable GPU: nvidia-smi not found", 3),
                                           ("bwrap", ["--host-only"], "no sandbox: bubblewrap (bwrap) not found", 3),
                                           ("cmake", ["--host-only", "--no-sandbox"], "'cmake' not found", 1),
                                           ("compute-sanitizer", ["--host-only", "--no-sandbox", "--sanitize"], "--sanitize needs compute-sanitizer", 1)):
            with self.subTest(missing=missing), mock.patch.object(preflight.shutil, "which", lambda t, m=missing: None if t == m else real_which(t)):
                rc, err = self.grade(self.subs, mode=mode)
                self.assert_refused_untouched(rc, err, words, code)
        with mock.patch.object(preflight, "_bwrap_starts", return_value=(1, "bwrap: No permissions to create new namespace")):
            rc, err = self.grade(self.subs, mode=["--host-only"])
        self.assert_refused_untouched(rc, err, "no sandbox: bubblewrap cannot create its namespaces", 3)

    def test_refusals_after_the_plan_put_the_previous_run_back(self):
        """A new run that stops before it grades (the course does not build, CUDA does not start on
        the GPU, the sandbox probe fails, a grader error): what it wrote goes, the previous run's
        files come back. (course_build.build stands in for each.)"""
        def die(o, repo, work, lessons, stop, entry=None):
            self.assertTrue(os.path.isdir(os.path.join(self.out, runfolder.ASIDE)))  # (set aside, not removed)
            stop.die(3, "no usable GPU: nvidia-smi lists one, but the CUDA runtime says no (nothing graded)")
        with mock.patch.object(course_build, "build", die):
            rc, err = self.grade(self.subs, "--no-course-cache")
        self.assert_refused_untouched(rc, err, "the CUDA runtime says", 3)
        with mock.patch.object(course_build, "build", side_effect=RuntimeError("a grader error")), self.assertRaises(RuntimeError):
            self.grade(self.subs, "--no-course-cache")
        self.assertEqual(snapshot(self.out), self.before)

    def test_a_busy_gpu_with_share(self):
        """--share 2 on a GPU another program uses: refused (exit 3) before the previous run's files
        go. (Root, the sandbox, the GPU and the course stand in: the check that the GPU is free is
        the last before grading starts.)"""
        def prepare(g, folder, todo):
            self.assertTrue(os.path.isdir(os.path.join(self.out, runfolder.ASIDE)))  # (set aside, not removed)
            return SimpleNamespace(o=g.o, gpus=g.gpus)
        with mock.patch.object(preflight, "check_gpu", return_value=[("0", "GPU-0000")]), \
                mock.patch.object(preflight, "check_sandbox", return_value="none"), \
                mock.patch.object(grader.Grader, "prepare", prepare), \
                mock.patch.object(gpus, "wait_free", return_value="pid 4242, 900 MiB"):
            rc, err = self.grade(self.subs, "--share", "2", "--jobs", "1", mode=["--no-sandbox"])
        self.assert_refused_untouched(rc, err, "the GPU 0 is in use by another program (pid 4242, 900 MiB); --share needs it free", 3)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("bwrap"), "cells run as users of their own as root only")
    def test_what_a_cells_user_cannot_reach(self):
        """As root with the sandbox: a --hidden-shapes file, or a folder above --out, that a cell's
        user cannot reach is refused before --out is touched, with the file and why."""
        os.chmod(self.tmp, 0o755)
        closed = os.path.join(self.tmp, "root-only")
        os.mkdir(closed, 0o700)
        hidden = os.path.join(closed, "shapes.txt")
        with open(hidden, "w") as f:
            f.write("01_naive_transpose 64 64\n")
        with mock.patch.object(preflight, "check_gpu", return_value=[]):
            rc, err = self.grade(self.subs, "--hidden-shapes", hidden, mode=["--host-only"])
            self.assert_refused_untouched(rc, err, "--hidden-shapes %s cannot be read by a cell" % hidden)
            self.assertIn("the folder %s above it is closed to other users (mode drwx------" % closed, err)
            os.chmod(closed, 0o755)
            os.chmod(hidden, 0o600)
            rc, err = self.grade(self.subs, "--hidden-shapes", hidden, mode=["--host-only"])
            self.assert_refused_untouched(rc, err, "the file is not readable by other users (mode -rw-------")
            os.chmod(self.tmp, 0o700)
            rc, err = self.grade(self.subs, mode=["--host-only"])
            self.assert_refused_untouched(rc, err, "a cell cannot reach --out %s: the folder %s (mode drwx------" % (self.out, self.tmp))

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
