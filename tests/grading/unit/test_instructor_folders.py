"""The instructor's folders and the rows that describe a folder: --out against SUBMISSIONS, the
course's tree and the course cache (links resolved on both sides); a run killed before it graded;
and the words of a row for a compiler that ran out of memory (not a source line that says so), a
UTF-16 main.cu, a near-miss name of main.cu, the file-size limit, a main.cu the grader may not read,
and feedback files of names with escapes. (No build, no GPU, no sandbox.)"""
import errno
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import compile as compile_  # noqa: E402
from grading import names, options, outdir, plan, run, runfolder, sandbox  # noqa: E402
from grading.exits import Exit, Stop  # noqa: E402
from grading.grader import Grader  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LESSONS = {"01_naive_transpose": 2, "06_bank_conflicts": 2}


class Temp(unittest.TestCase):
    def setUp(self):
        self.tmp = os.path.realpath(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def path(self, *parts, text=None, data=None):
        p = os.path.join(self.tmp, *parts)
        if text is None and data is None:
            os.makedirs(p, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data if data is not None else text.encode())
        return p


class OutPlace(Temp):
    def refused(self, out, subs=None, course="", cache=""):
        with self.assertRaises(Exit) as e:
            outdir.check_place(out, subs, course, cache)
        self.assertEqual(e.exception.code, 2)
        return e.exception.message

    def test_links_resolved_on_both_sides(self):
        subs = self.path("class", "subs")
        self.path("class", "subs", "Ada")
        os.symlink(os.path.join(subs, "Ada"), os.path.join(self.tmp, "into-class"))
        os.symlink(self.tmp, os.path.join(self.tmp, "class", "up"))
        # --out through a link into SUBMISSIONS (was accepted: only SUBMISSIONS' links were resolved)
        self.assertIn("is inside SUBMISSIONS, through a symbolic link", self.refused(os.path.join(self.tmp, "into-class", "feedback"), subs))
        self.assertIn("is inside SUBMISSIONS", self.refused(os.path.join(subs, "out"), subs))
        # SUBMISSIONS inside --out, --out named through a link
        self.assertIn("SUBMISSIONS is inside --out", self.refused(os.path.join(self.tmp, "class", "up", "class"), subs))
        self.assertIn("is inside SUBMISSIONS", self.refused(subs, subs))  # (the same folder)
        outdir.check_place(os.path.join(self.tmp, "out"), subs, "")  # (beside it: accepted)
        outdir.check_place(os.path.join(self.tmp, "class", "subs-out"), subs, "")

    def test_the_course_tree(self):
        course = self.path("course")
        self.path("course", "results", "README.md", text="committed\n")
        os.symlink(os.path.join(course, "results"), os.path.join(self.tmp, "results-link"))
        for out, words in ((course, "its root"), (os.path.join(course, "results"), "under results/"),
                           (os.path.join(self.tmp, "results-link", "h200"), "under results/"), (os.path.join(course, "lessons", "x"), "under lessons/")):
            with self.subTest(out=out):
                self.assertIn("is in the course's own tree (%s)" % words, self.refused(out, None, course))
        for out in (os.path.join(course, "build-grade"), os.path.join(course, "build", "grade"), os.path.join(self.tmp, "elsewhere")):
            outdir.check_place(out, None, course)

    def test_the_course_cache(self):
        cache = self.path("cache")
        self.assertIn("overlaps the course cache", self.refused(cache, None, "", cache))
        self.assertIn("overlaps the course cache", self.refused(os.path.join(cache, "x"), None, "", cache))
        self.assertIn("overlaps the course cache", self.refused(self.tmp, None, "", cache))

    def test_refused_by_the_grader_with_out_as_it_was(self):
        """The whole run (Grader.main, a course of its own): --out at the course's committed results/
        (or its root) is refused, results/ byte for byte as it was; also with --gradebook-from."""
        course = self.path("course")
        shutil.copytree(os.path.join(REPO, "lessons"), os.path.join(course, "lessons"), ignore=lambda d, n: [x for x in n if x != "lessons.txt"])
        results = self.path("course", "results")
        self.path("course", "results", "feedback", "keep.md", text="committed\n")
        subs = self.path("subs", "Ada", "01_naive_transpose")
        self.path("subs", "Ada", "01_naive_transpose", "main.cu", text="int x;\n")
        cells = self.path("cells")
        for out, extra in ((results, [os.path.dirname(os.path.dirname(subs))]), (course, [os.path.dirname(os.path.dirname(subs))]),
                           (results, ["--gradebook-from", cells])):
            with self.subTest(out=out, extra=extra):
                o = options.parse(extra + ["--out", out, "--no-sandbox", "--host-only"])
                err = io.StringIO()
                with self.assertRaises(Exit) as e, redirect_stdout(io.StringIO()), redirect_stderr(err):
                    Grader(o, course).main()
                self.assertEqual(e.exception.code, 2)
                self.assertIn("in the course's own tree", e.exception.message)
                self.assertEqual(sorted(os.listdir(results)), ["feedback"])
                with open(os.path.join(results, "feedback", "keep.md")) as f:
                    self.assertEqual(f.read(), "committed\n")


class KilledRun(Temp):
    def test_a_run_killed_before_it_graded(self):
        """A run set the previous one aside and was killed before it graded: the next run takes that
        previous run as the one to keep, and puts it back if it too ends before grading."""
        subs = self.path("subs", "Ada", "01_naive_transpose")
        self.path("subs", "Ada", "01_naive_transpose", "main.cu", text="int x;\n")
        subs = os.path.dirname(os.path.dirname(subs))
        out = os.path.join(self.tmp, "out")
        o = options.parse([subs, "--out", out, "--no-sandbox", "--host-only", "--seed", "1"])
        runfolder.make_plan(o, out, subs, LESSONS, False, sandbox.UID_FIRST, Stop())
        self.path("out", "gradebook.csv", text="the graded run\n")
        for seed in ("2", "3"):  # (two runs killed before they graded)
            o = options.parse([subs, "--out", out, "--no-sandbox", "--host-only", "--seed", seed])
            runfolder.make_plan(o, out, subs, LESSONS, False, sandbox.UID_FIRST, Stop(), keep_previous=True)
            self.assertFalse(os.path.exists(os.path.join(out, "gradebook.csv")))
        self.assertTrue(runfolder.put_back(out))
        with open(os.path.join(out, "gradebook.csv")) as f:
            self.assertEqual(f.read(), "the graded run\n")
        with open(os.path.join(out, "cells", "seed")) as f:
            self.assertEqual(f.read(), "1\n")
        self.assertFalse(os.path.exists(os.path.join(out, runfolder.ASIDE)))


# What the compilers printed, recorded (nvcc 13.0, GCC 12): a real out-of-memory of EDG under
# RLIMIT_DATA, and GCC's driver stopped by RLIMIT_FSIZE; then what a submission makes them print.
EDG_OOM = (b"/usr/include/c++/12/bits/stl_iterator_base_funcs.h(189): catastrophic error: out of memory\n"
           b"        if (__builtin_constant_p(__n) && __n == 1)\n            ^\n\n"
           b"1 catastrophic error detected in the compilation of \"main.cu\".\nCompilation terminated.\n"
           b"FAILED: CMakeFiles/x.dir/main.cu.o\nninja: build stopped: subcommand failed.\n")
GCC_OOM = b"cc1plus: out of memory allocating 65536 bytes after a total of 1234567 bytes\nninja: build stopped: subcommand failed.\n"
ECHOED = (b"main.cu(4): error: identifier \"out\" is undefined\n    out of memory x;\n    ^\n\n"
          b"main.cu:4:3: error: 'out' does not name a type\n    4 |   out of memory x;\n      |   ^~~\n"
          b"main.cu(5): remark #20200-D: #pragma message: \"cc1plus: out of memory allocating 4096 bytes\"\n"
          b"  #pragma message(\"cc1plus: out of memory allocating 4096 bytes\")\n"
          b"main.cu:5:66: note: '#pragma message: cc1plus: out of memory allocating 4096 bytes'\n")
FSIZE = (b"gcc: internal compiler error: File size limit exceeded signal terminated program cc1plus\n"
         b"Please submit a full bug report, with preprocessed source (by using -freport-bug).\n"
         b"FAILED: CMakeFiles/x.dir/main.cu.o\nninja: build stopped: subcommand failed.\n")


class CompileRows(Temp):
    def finding(self, log, source=b"int x;\n", step=None):
        box = self.path("box")
        self.path("box", "src", "main.cu", data=source)
        path = self.path("build.log", data=log)
        return compile_.finding(step or run.Step(rc=1), path, box, 1024, 8192, 1024)

    def test_out_of_memory_is_the_compilers_own_words(self):
        self.assertIn("the compiler reported running out of memory (every compile's memory limit: 8192 MiB", self.finding(EDG_OOM))
        self.assertIn("running out of memory", self.finding(GCC_OOM))
        f = self.finding(ECHOED)  # (a source line that says so, echoed; a #pragma message)
        self.assertNotIn("running out of memory", f)
        self.assertTrue(f.startswith("does not compile; the compiler's first error: \u00abmain.cu(4): error: identifier"), f)

    def test_utf16_names_its_encoding(self):
        text = "int x = 1;\n#error no\n"
        for data, words in (("\ufeff" + text).encode("utf-16-le"), "main.cu is UTF-16 (little-endian) text, by its byte-order mark"), \
                           (("\ufeff" + text).encode("utf-16-be"), "main.cu is UTF-16 (big-endian) text"), \
                           (text.encode("utf-16-le"), "UTF-16 (little-endian) without a byte-order mark?"):
            with self.subTest(words=words):
                f = self.finding(b"main.cu(1): error: unrecognized token\n" * 3, data, run.Step(rc=1, cut=5000))
                self.assertIn(words, f)
                self.assertTrue(f.startswith("does not compile (main.cu "), f)
                self.assertTrue(f.endswith("compiler output over 1024 KiB, cut"), f)
        self.assertNotIn("UTF", self.finding(b"main.cu(1): error: x\n", b"\xef\xbb\xbfint x;\n"))  # (UTF-8, with its mark: read)

    def test_the_file_size_limit_is_named(self):
        f = self.finding(FSIZE)
        self.assertIn("cc1plus stopped at the file-size limit (1024 MiB per file, --file-mib)", f)
        self.assertIn("File size limit exceeded", f)


class PlanRows(Temp):
    def scan(self):
        return {(c.shown_student, c.shown_lesson): c for c in plan.scan(self.path("subs"), LESSONS)}

    def test_near_miss_names_of_main_cu(self):
        self.path("subs", "Ada", "01_naive_transpose", "Main.cu", text="x")
        self.path("subs", "Bo", "01_naive_transpose", "main.cu.txt", text="x")
        self.path("subs", "Bo", "01_naive_transpose", "notes.txt", text="x")
        self.path("subs", "Cy", "01_naive_transpose", "notes.txt", text="x")
        self.path("subs", "Di", "01_naive_transpose")
        cells = self.scan()
        self.assertEqual(cells["Ada", "01_naive_transpose"].finding,
                         "no main.cu in 01_naive_transpose/ (it holds Main.cu: the file must be named exactly main.cu)")
        self.assertIn("(it holds main.cu.txt: ", cells["Bo", "01_naive_transpose"].finding)
        self.assertEqual(cells["Cy", "01_naive_transpose"].finding, "no main.cu in 01_naive_transpose/ (it holds 1 other entry)")
        self.assertEqual(cells["Di", "01_naive_transpose"].finding, "no main.cu in 01_naive_transpose/ (the folder is empty)")

    def test_permission_denied_is_not_a_link(self):
        self.path("subs", "Ada", "01_naive_transpose", "main.cu", text="int x;\n")
        parts = (b"Ada", b"01_naive_transpose", b"main.cu")
        real_open = os.open

        def denied(path, flags, *a, **k):
            if path == b"main.cu":
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return real_open(path, flags, *a, **k)
        with mock.patch.object(plan.os, "open", denied), self.assertRaises(plan.SourceError) as e:
            plan.read_source(self.path("subs"), parts, 1 << 20)
        self.assertIn("main.cu cannot be read: permission denied to the grader", str(e.exception))
        self.assertNotIn("link", str(e.exception))
        os.remove(os.path.join(self.tmp, "subs", "Ada", "01_naive_transpose", "main.cu"))
        os.symlink("/etc/hostname", os.path.join(self.tmp, "subs", "Ada", "01_naive_transpose", "main.cu"))
        with self.assertRaises(plan.SourceError) as e:
            plan.read_source(self.path("subs"), parts, 1 << 20)
        self.assertIn("main.cu cannot be opened without following a link", str(e.exception))


class FeedbackNames(unittest.TestCase):
    def test_an_escaped_name_is_never_another_literal_name(self):
        """Bob with a BEL in his name is shown "Bob\\x07"; Bob who typed a backslash, "Bob\\\\x07": the
        first one's feedback file is not "Bob\\x07.md", the second one's literal name."""
        control, typed = names.display_name(b"Bob\x07"), names.display_name(b"Bob\\x07")
        self.assertEqual((control, typed), ("Bob\\x07", "Bob\\\\x07"))
        files = names.feedback_file_names([control, typed])
        self.assertNotEqual(files[control], "Bob\\x07.md")
        self.assertNotIn(files[control], ("Bob\\x07.md", "Bob\\\\x07.md"))
        self.assertEqual(len(set(files.values())), 2)
        for f in files.values():
            self.assertRegex(f, r"^Bob_+x07~[0-9a-f]{12}\.md$")
        self.assertEqual(names.feedback_file_name("Bob x07"), "Bob x07.md")  # (nothing escaped: the name itself)


if __name__ == "__main__":
    unittest.main()
