"""The course cache (grading/course_cache.py): an entry named by the course's content and how it is
built, complete entries used as they are, one build at a time per entry, and old entries removed
unless a run holds them. Made-up course trees; nothing is built."""
import fcntl
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import course_cache, grader, plan, runfolder  # noqa: E402

CONFIG = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CUDA_ARCHITECTURES=90"]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Key(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.repo = os.path.join(self.tmp, "course")
        write(os.path.join(self.repo, "CMakeLists.txt"), "project(x)\n")
        write(os.path.join(self.repo, "lessons", "01_a", "main.cu"), "// the solution\n")
        write(os.path.join(self.repo, "harness", "speed.cuh"), "// timing\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def key(self, skip=(), config=CONFIG, lessons=("01_a",)):
        return course_cache.key(self.repo, list(skip), list(config), True, list(lessons))

    def test_a_change_of_any_course_file_or_option_is_another_entry(self):
        k = self.key()
        self.assertEqual(k, self.key())
        write(os.path.join(self.repo, "lessons", "01_a", "main.cu"), "// the solution, changed\n")
        k2 = self.key()
        self.assertNotEqual(k, k2)
        write(os.path.join(self.repo, "harness", "new.hpp"), "")
        k3 = self.key()
        self.assertNotEqual(k2, k3)
        os.rename(os.path.join(self.repo, "harness", "new.hpp"), os.path.join(self.repo, "harness", "other.hpp"))
        self.assertNotEqual(k3, self.key())
        self.assertNotEqual(self.key(), self.key(config=CONFIG + ["-DCMAKE_PREFIX_PATH=/opt/doctest"]))
        self.assertNotEqual(self.key(), self.key(lessons=["01_a", "02_b"]))
        self.assertEqual(self.key(lessons=["02_b", "01_a", "01_a"]), self.key(lessons=["01_a", "02_b"]))

    def test_what_is_not_the_course_is_not_in_the_key(self):
        out, subs, cache = (os.path.join(self.repo, n) for n in ("grades", "submissions", "my-cache"))
        skip = [out, subs, cache]
        k = self.key(skip)
        for d in (out, subs, cache, os.path.join(self.repo, "build"), os.path.join(self.repo, "build-grade-cache"),
                  os.path.join(self.repo, ".git"), os.path.join(self.repo, "grading", "__pycache__")):
            write(os.path.join(d, "f"), "changes every run")
        self.assertEqual(k, self.key(skip))

    def test_a_link_is_named_not_followed(self):
        outside = os.path.join(self.tmp, "outside.txt")
        write(outside, "1")
        os.symlink(outside, os.path.join(self.repo, "link"))
        k = self.key()
        write(outside, "2")
        self.assertEqual(k, self.key())
        os.unlink(os.path.join(self.repo, "link"))
        os.symlink(self.tmp, os.path.join(self.repo, "link"))
        self.assertNotEqual(k, self.key())


class Entries(unittest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.cache)

    def test_built_once_then_used_as_it_is(self):
        e = course_cache.open_entry(self.cache, "k1")
        self.assertFalse(e.complete)
        self.assertIsNotNone(e.build_fd)
        self.assertTrue(os.path.isdir(e.dir))
        course_cache.finish(e, 12.5, ["01_a"])
        self.assertTrue(e.complete)
        self.assertIsNone(e.build_fd)
        again = course_cache.open_entry(self.cache, "k1")
        self.assertTrue(again.complete)
        self.assertIsNone(again.build_fd)
        os.close(e.fd)
        os.close(again.fd)

    def test_a_second_run_waits_for_the_build_and_builds_nothing(self):
        first = course_cache.open_entry(self.cache, "k1")
        got = []
        t = threading.Thread(target=lambda: got.append(course_cache.open_entry(self.cache, "k1")))
        t.start()
        time.sleep(0.8)
        self.assertEqual(got, [])  # it waits while the first run builds
        course_cache.finish(first, 1.0, [])
        t.join(10)
        self.assertEqual(len(got), 1)
        self.assertTrue(got[0].complete)
        self.assertIsNone(got[0].build_fd)
        os.close(first.fd)
        os.close(got[0].fd)

    def test_a_build_that_did_not_finish_is_built_again(self):
        e = course_cache.open_entry(self.cache, "k1")
        os.close(e.build_fd)  # (the run ended without finishing it)
        os.close(e.fd)
        again = course_cache.open_entry(self.cache, "k1")
        self.assertFalse(again.complete)
        self.assertIsNotNone(again.build_fd)
        os.close(again.build_fd)
        os.close(again.fd)

    def test_old_entries_removed_unless_a_run_holds_them(self):
        names = ["old1", "old2", "held", "recent"]
        for i, n in enumerate(names):
            os.makedirs(os.path.join(self.cache, n))
            os.utime(os.path.join(self.cache, n), (1000 + i, 1000 + i))
        held = os.open(os.path.join(self.cache, "held.lock"), os.O_RDONLY | os.O_CREAT)
        fcntl.flock(held, fcntl.LOCK_SH)
        new = course_cache.open_entry(self.cache, "new")
        course_cache.finish(new, 1.0, [])
        left = sorted(n for n in os.listdir(self.cache) if not n.endswith((".lock", ".build")))
        self.assertEqual(left, ["held", "new", "recent"])
        os.close(held)
        os.close(new.fd)


class JudgedLessons(unittest.TestCase):
    """The judges built (and the cache entry named) are those of the lessons a cell builds: a folder
    that is no lesson (the test submissions' 07_extra_credit) is a row, never a target. On an H200
    the attack suite's class asked ninja for '07_extra_credit_check' and graded nothing."""

    def cell(self, number, lesson, source=True):
        planned = plan.PlannedCell(student=b"Lee", lesson=lesson.encode(),
                                   source=(b"Lee", lesson.encode(), b"main.cu") if source else (),
                                   finding="" if source else "not a lesson folder")
        return runfolder.Cell(number=number, dir="/nonexistent", planned=planned)

    def test_a_folder_that_is_no_lesson_builds_no_judge(self):
        cells = [self.cell(1, "03_dynamic_shared"), self.cell(2, "07_extra_credit", source=False),
                 self.cell(3, "01_naive_transpose"), self.cell(4, "03_dynamic_shared")]
        self.assertEqual(grader.judged_lessons(cells), ["01_naive_transpose", "03_dynamic_shared"])

    def test_no_cell_to_build_no_judge(self):
        self.assertEqual(grader.judged_lessons([self.cell(1, "07_extra_credit", source=False)]), [])


if __name__ == "__main__":
    unittest.main()
