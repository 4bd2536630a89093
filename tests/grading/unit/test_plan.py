"""Folder safety (issue 24, 4a, 4b, 4c, 4g): every entry of SUBMISSIONS gets a row, nothing is read
through a link, two folders never become one row, sizes and counts are bounded before a copy."""
import os
import shutil
import socket
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cellrecord, gradebook, plan  # noqa: E402
from grading import compile as compile_  # noqa: E402

LESSONS = {"01_naive_transpose": 2, "06_bank_conflicts": 2}
SRC = b"int main() { return 0; }\n"


class Tree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp().encode()
        self.subs = os.path.join(self.tmp, b"subs")
        os.mkdir(self.subs)
        self.secret = os.path.join(self.tmp, b"solution.cu")
        with open(self.secret, "wb") as f:
            f.write(b"// the course's solution\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def put(self, *parts, data=SRC):
        path = os.path.join(self.subs, *parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def scan(self, **limits):
        return plan.scan(self.subs, LESSONS, plan.Limits(**limits))

    def rows(self, **limits):
        return {(c.student, c.lesson): c for c in self.scan(**limits)}


class Links(Tree):
    def test_main_cu_link_is_a_row_never_followed(self):
        os.makedirs(os.path.join(self.subs, b"Eve", b"06_bank_conflicts"))
        os.symlink(self.secret, os.path.join(self.subs, b"Eve", b"06_bank_conflicts", b"main.cu"))
        c = self.rows()[(b"Eve", b"06_bank_conflicts")]
        self.assertEqual(c.source, ())
        self.assertIn("symbolic link", c.finding)

    def test_lesson_folder_link(self):
        self.put(b"Ada", b"06_bank_conflicts", b"main.cu")
        os.makedirs(os.path.join(self.subs, b"Eve"))
        os.symlink(os.path.join(self.subs, b"Ada", b"06_bank_conflicts"), os.path.join(self.subs, b"Eve", b"06_bank_conflicts"))
        c = self.rows()[(b"Eve", b"06_bank_conflicts")]
        self.assertEqual(c.source, ())
        self.assertIn("the lesson folder is a symbolic link", c.finding)

    def test_student_folder_link_to_a_classmate(self):
        self.put(b"Ada", b"06_bank_conflicts", b"main.cu")
        os.symlink(os.path.join(self.subs, b"Ada"), os.path.join(self.subs, b"Mallory"))
        rows = self.rows()
        self.assertIn("symbolic link", rows[(b"Mallory", b"")].finding)
        self.assertEqual([k for k in rows if k[0] == b"Mallory"], [(b"Mallory", b"")])  # not graded as Ada's
        self.assertTrue(rows[(b"Ada", b"06_bank_conflicts")].source)

    def test_dangling_link_and_link_loop(self):
        os.symlink(b"/nonexistent", os.path.join(self.subs, b"dangling"))
        os.symlink(b"loop", os.path.join(self.subs, b"loop"))
        rows = self.rows()
        self.assertIn("symbolic link", rows[(b"dangling", b"")].finding)
        self.assertIn("symbolic link", rows[(b"loop", b"")].finding)

    def test_hard_link_to_the_course_is_a_row_never_read(self):
        """(tests/grading/unit/test_links.py: hard links between students, and to other files)"""
        os.makedirs(os.path.join(self.subs, b"Eve", b"06_bank_conflicts"))
        os.link(self.secret, os.path.join(self.subs, b"Eve", b"06_bank_conflicts", b"main.cu"))
        c = {(c.student, c.lesson): c for c in plan.scan(self.subs, LESSONS, plan.Limits(), self.tmp.decode())}[
            (b"Eve", b"06_bank_conflicts")]
        self.assertEqual(c.source, ())
        self.assertIn("the course's own solution.cu under another name (a hard link)", c.finding)
        with self.assertRaises(plan.SourceError):
            plan.read_source(self.subs, (b"Eve", b"06_bank_conflicts", b"main.cu"), 1 << 20)

    def test_link_swapped_in_after_the_plan_is_not_read(self):
        path = self.put(b"Ada", b"06_bank_conflicts", b"main.cu")
        c = self.rows()[(b"Ada", b"06_bank_conflicts")]
        self.assertEqual(plan.read_source(self.subs, c.source, 1 << 20), SRC)
        os.unlink(path)
        os.symlink(self.secret, path)
        with self.assertRaises(plan.SourceError):
            plan.read_source(self.subs, c.source, 1 << 20)
        # and a parent folder swapped for a link
        shutil.rmtree(os.path.join(self.subs, b"Ada"))
        os.makedirs(os.path.join(self.tmp, b"elsewhere", b"06_bank_conflicts"))
        with open(os.path.join(self.tmp, b"elsewhere", b"06_bank_conflicts", b"main.cu"), "wb") as f:
            f.write(b"// not in SUBMISSIONS\n")
        os.symlink(os.path.join(self.tmp, b"elsewhere"), os.path.join(self.subs, b"Ada"))
        with self.assertRaises(plan.SourceError):
            plan.read_source(self.subs, c.source, 1 << 20)

    def test_the_copy_in_the_box_is_a_plain_file(self):
        self.put(b"Ada", b"06_bank_conflicts", b"main.cu")
        c = self.rows()[(b"Ada", b"06_bank_conflicts")]
        cell = os.path.join(self.tmp, b"cell").decode()
        os.mkdir(cell)
        box = compile_.prepare_box(cell, self.subs.decode(), c.source, 1 << 20)
        copy = os.path.join(box, "src", "main.cu")
        self.assertFalse(os.path.islink(copy))
        with open(copy, "rb") as f:
            self.assertEqual(f.read(), SRC)


class NotFiles(Tree):
    def test_fifo_and_socket_and_folder_as_main_cu(self):
        os.makedirs(os.path.join(self.subs, b"A", b"06_bank_conflicts"))
        os.mkfifo(os.path.join(self.subs, b"A", b"06_bank_conflicts", b"main.cu"))  # never opened: would block
        os.makedirs(os.path.join(self.subs, b"B", b"06_bank_conflicts", b"main.cu"))
        os.makedirs(os.path.join(self.subs, b"C", b"06_bank_conflicts"))
        s = socket.socket(socket.AF_UNIX)
        s.bind(os.path.join(self.subs, b"C", b"06_bank_conflicts", b"main.cu"))
        rows = self.rows()
        s.close()
        self.assertIn("named pipe", rows[(b"A", b"06_bank_conflicts")].finding)
        self.assertIn("a folder", rows[(b"B", b"06_bank_conflicts")].finding)
        self.assertIn("socket", rows[(b"C", b"06_bank_conflicts")].finding)
        for r in rows.values():
            self.assertEqual(r.source, ())

    def test_a_lesson_name_that_is_a_file(self):
        self.put(b"A", b"06_bank_conflicts")
        self.assertIn("not a folder", self.rows()[(b"A", b"06_bank_conflicts")].finding)

    def test_top_level_file_and_fifo(self):
        self.put(b"notes.txt")
        os.mkfifo(os.path.join(self.subs, b"pipe"))
        rows = self.rows()
        self.assertIn("a file at the top", rows[(b"notes.txt", b"")].finding)
        self.assertIn("named pipe", rows[(b"pipe", b"")].finding)


class EveryEntry(Tree):
    NAMES = [b"-rf", b"--help", b".hidden", b"...", b"a\nb", b"a b", b"a\tb", b"\xff\xfe", b"=1+1", b"\x1b[2J",
             "\u202eevil".encode(), b"x" * 250, b"x" * 249 + b"y", b"back\\slash", b"a\\x0ab"]

    def test_every_name_gets_a_distinct_row(self):
        for n in self.NAMES:
            self.put(n, b"06_bank_conflicts", b"main.cu")
        cells = self.scan()
        self.assertEqual(sorted(c.student for c in cells), sorted(self.NAMES))
        shown = [c.shown_student for c in cells]
        self.assertEqual(len(set(shown)), len(self.NAMES))
        for s in shown:
            self.assertLessEqual(len(s.encode()), 160)
            self.assertTrue(s.isprintable(), s)

    def test_rows_feedback_and_scores_stay_apart(self):
        for n in self.NAMES:
            self.put(n, b"06_bank_conflicts", b"main.cu")
        cells_dir = os.path.join(self.tmp, b"cells").decode()
        for i, c in enumerate(self.scan(), 1):
            d = os.path.join(cells_dir, "%04d" % i)
            os.makedirs(d)
            cellrecord.write(d, cellrecord.CellRecord(gradebook.one_line(c.shown_student), gradebook.one_line(c.shown_lesson)))
            gradebook.finish_cell(d, "yes", "3", "3", "", "6", "6")
        out = os.path.join(self.tmp, b"out").decode()
        status, md, err = gradebook.write_gradebook(cells_dir, out, LESSONS)
        self.assertEqual(status, 0)  # every cell passed (a lesson not submitted fails no cell)
        fb = os.listdir(os.path.join(out, "feedback"))
        self.assertEqual(len(fb), len(self.NAMES))
        with open(os.path.join(out, "scores.csv"), encoding="utf-8") as f:
            self.assertEqual(len(f.read().splitlines()), len(self.NAMES) + 1)
        with open(os.path.join(out, "gradebook.csv"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), len(self.NAMES) + 1)
        for line in lines:
            self.assertFalse(line.startswith(("=", "+", "-", "@")), line)
        self.assertNotIn("\x1b", md)
        self.assertNotIn("\u202e", md)

    def test_empty_student_and_stray_entries(self):
        os.makedirs(os.path.join(self.subs, b"empty"))
        self.put(b"Lee", b"07_extra", b"main.cu")
        os.makedirs(os.path.join(self.subs, b"Lee", b"01_naive_transpose"))
        rows = self.rows()
        self.assertIn("empty submission", rows[(b"empty", b"")].finding)
        self.assertIn("not a lesson folder", rows[(b"Lee", b"07_extra")].finding)
        self.assertIn("no main.cu", rows[(b"Lee", b"01_naive_transpose")].finding)


class Bounds(Tree):
    def test_too_many_entries_is_one_row(self):
        for i in range(30):
            self.put(b"Many", b"f%03d" % i)
        rows = self.rows(max_files=20)
        self.assertEqual([k for k in rows if k[0] == b"Many"], [(b"Many", b"")])
        self.assertIn("more than 20 entries", rows[(b"Many", b"")].finding)

    def test_too_many_files_in_a_lesson_folder(self):
        for i in range(30):
            self.put(b"Many", b"06_bank_conflicts", b"f%03d" % i)
        self.put(b"Many", b"06_bank_conflicts", b"main.cu")
        c = self.rows(max_files=20)[(b"Many", b"06_bank_conflicts")]
        self.assertEqual(c.source, ())
        self.assertIn("more than 20 entries", c.finding)

    def test_a_large_main_cu_is_refused_before_a_copy(self):
        self.put(b"Big", b"06_bank_conflicts", b"main.cu", data=b"x" * 5000)
        c = self.rows(max_source_bytes=4096)[(b"Big", b"06_bank_conflicts")]
        self.assertEqual(c.source, ())
        self.assertIn("over the limit of 4 KiB", c.finding)

    def test_a_main_cu_that_grew_after_the_plan(self):
        path = self.put(b"Big", b"06_bank_conflicts", b"main.cu")
        c = self.rows(max_source_bytes=4096)[(b"Big", b"06_bank_conflicts")]
        with open(path, "ab") as f:
            f.write(b"x" * 10000)
        with self.assertRaises(plan.SourceError):
            plan.read_source(self.subs, c.source, 4096)


if __name__ == "__main__":
    unittest.main()
