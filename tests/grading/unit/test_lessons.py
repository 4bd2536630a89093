"""The one list of lessons (lessons/lessons.txt) and the hidden shapes checked against it."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import lessons  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class List(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def test_the_course_list(self):
        got = lessons.course_lessons(REPO)
        self.assertIn("04_reduction", got)
        self.assertEqual(got["04_reduction"], 1)
        self.assertEqual(got["05_tiled_matmul"], 3)
        for name in got:  # every listed lesson is a folder with its check
            self.assertTrue(os.path.isfile(os.path.join(REPO, "lessons", name, "check.cu")), name)

    def test_comments_and_order(self):
        p = self.write("# c\n\n02_b 2   # rows cols\n01_a 1\n")
        self.assertEqual(list(lessons.read_lessons(p).items()), [("02_b", 2), ("01_a", 1)])

    def test_missing_or_bad_is_an_error(self):
        for text in ("", "# only a comment\n", "01_a\n", "01_a two\n", "01_a 0\n", "a_b 1\n", "01_a 1 2\n", "01_a 1\n01_a 2\n"):
            with self.subTest(text=text):
                with self.assertRaises(lessons.LessonListError):
                    lessons.read_lessons(self.write(text))
        with self.assertRaises(lessons.LessonListError):
            lessons.read_lessons("/nonexistent/lessons.txt")

    def test_one_rule_for_lesson_names(self):
        """The rule CMakeLists.txt applies to lessons/lessons.txt: NN_ then lowercase letters, digits, _."""
        for text in ("01_Naive 1\n", "01_a-b 1\n", "01_ 1\n"):
            with self.subTest(text=text):
                with self.assertRaises(lessons.LessonListError):
                    lessons.read_lessons(self.write(text))
        self.assertEqual(lessons.read_lessons(self.write("01_naive_2 1\n")), {"01_naive_2": 1})


class WhatCMakeAndCxxRead(unittest.TestCase):
    """CMake and the checks' C++ read lessons.txt through this module too: at configure time,
    cmake/course_lessons.cmake runs `python3 -m grading.lessons cmake`, which writes the list for
    CMake and the header for C++. A bad name is refused there with the same message."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, text):
        path = os.path.join(self.dir, "lessons.txt")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_the_files_written(self):
        out = os.path.join(self.dir, "generated")
        self.assertEqual(lessons.main(["lessons.py", "cmake", self.write("02_b 2  # rows cols\n01_a 1\n"), out]), 0)
        with open(os.path.join(out, "course_lessons.cmake")) as f:
            cmake = f.read()
        self.assertIn("set(COURSE_GRADABLE_LESSONS 02_b;01_a)\n", cmake)
        self.assertIn("set(COURSE_HIDDEN_SHAPE_ARITY_02_b 2)\nset(COURSE_HIDDEN_SHAPE_ARITY_01_a 1)\n", cmake)
        with open(os.path.join(out, "course_lessons.hpp")) as f:
            self.assertIn('kGradableLessons[] = {\n    {"02_b", 2},\n    {"01_a", 1},\n};', f.read())

    def test_a_bad_name_is_refused_by_python(self):
        out = os.path.join(self.dir, "generated")
        err = self.run_main(["lessons.py", "cmake", self.write("01_a 1\n02_Bad 2\n"), out])
        self.assertIn("line 2: expected 'NN_name ARITY', got '02_Bad 2'", err)
        self.assertFalse(os.path.exists(out))  # nothing written

    def run_main(self, argv):
        import io
        real, sys.stderr = sys.stderr, io.StringIO()
        try:
            self.assertEqual(lessons.main(argv), 1)
            return sys.stderr.getvalue()
        finally:
            sys.stderr = real

    @unittest.skipIf(shutil.which("cmake") is None, "no cmake on PATH")
    def test_a_bad_name_is_refused_by_the_configure(self):
        script = os.path.join(REPO, "cmake", "course_lessons.cmake")
        out = os.path.join(self.dir, "generated")
        r = subprocess.run(["cmake", "-DLESSONS_FILE=" + self.write("01_a 1\n02_Bad 2\n"), "-DOUT=" + out, "-P", script],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        said = " ".join(r.stderr.split())  # CMake wraps its message's lines
        self.assertIn("grading/lessons.py refused the list of lessons:", said)
        self.assertIn("line 2: expected 'NN_name ARITY', got '02_Bad 2'", said)
        self.assertFalse(os.path.exists(os.path.join(out, "course_lessons.cmake")))
        r = subprocess.run(["cmake", "-DLESSONS_FILE=" + self.write("01_a 1\n02_b 2\n"), "-DOUT=" + out, "-P", script],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("lessons: 01_a;02_b", r.stdout)


class HiddenShapes(unittest.TestCase):
    L = {"04_reduction": 1, "05_tiled_matmul": 3}

    def check(self, text):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            return lessons.check_hidden_shapes(path, self.L)
        finally:
            os.unlink(path)

    def test_good(self):
        self.assertIsNone(self.check("# shapes\n04_reduction 1000003\n05_tiled_matmul 129 65 33  # M N K\n\n"))

    def test_bad(self):
        for text, where in (("04_reduction 1 2\n", "line 1"), ("05_tiled_matmul 1 2\n", "line 1"),
                            ("\n04_reduction 0\n", "line 2"), ("99_none 1\n", "line 1"), ("04_reduction -5\n", "line 1"),
                            ("04_reduction 1e3\n", "line 1")):
            with self.subTest(text=text):
                bad = self.check(text)
                self.assertIsNotNone(bad)
                self.assertTrue(bad.startswith(where), bad)


if __name__ == "__main__":
    unittest.main()
