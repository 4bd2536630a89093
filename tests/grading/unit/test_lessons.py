"""The one list of lessons (lessons/lessons.txt) and the hidden shapes checked against it."""
import os
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
