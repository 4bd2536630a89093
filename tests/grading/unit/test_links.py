"""Hard links in a class folder (grading/links.py): a main.cu that is also a classmate's is graded and
both rows name the other; a class folder made with `cp -al` or a deduplicating tool is graded; a
hard link to the course's own files, or to a file not every user may read, is never read."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import gradebook, options, plan, runfolder, sandbox  # noqa: E402
from grading.exits import Stop  # noqa: E402

LESSONS = {"01_naive_transpose": 2, "02_shared_transpose": 2}
SRC = b"__global__ void k() {}\n"


class Links(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.course = os.path.join(self.tmp, "course")
        self.subs = os.path.join(self.tmp, "subs")
        os.makedirs(os.path.join(self.course, "lessons", "02_shared_transpose"))
        self.solution = os.path.join(self.course, "lessons", "02_shared_transpose", "main.cu")
        with open(self.solution, "wb") as f:
            f.write(b"// the course's solution\n")

    def put(self, student, lesson="02_shared_transpose", data=SRC, root=None):
        path = os.path.join(root or self.subs, student, lesson, "main.cu")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def link(self, target, student, lesson="02_shared_transpose"):
        path = os.path.join(self.subs, student, lesson, "main.cu")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.link(target, path)
        return path

    def rows(self, subs=None):
        cells = plan.scan(subs or self.subs, LESSONS, plan.Limits(), self.course)
        return {(c.student.decode(), c.lesson.decode()): c for c in cells}

    def test_a_file_two_students_hand_in_is_graded_and_both_rows_name_the_other(self):
        ada = self.put("Ada")
        self.link(ada, "Bob")
        self.put("Cy")
        rows = self.rows()
        a, b, c = rows[("Ada", "02_shared_transpose")], rows[("Bob", "02_shared_transpose")], rows[("Cy", "02_shared_transpose")]
        self.assertTrue(a.source and b.source)
        self.assertEqual((a.finding, b.finding), ("", ""))
        self.assertIn("the same file as Bob/02_shared_transpose/main.cu", a.note)
        self.assertIn("the same file as Ada/02_shared_transpose/main.cu", b.note)
        self.assertNotIn("elsewhere", a.note)
        for r in (a, b):  # the student's own feedback names no classmate
            self.assertIn("the same file as another main.cu handed in", r.feedback_note)
            self.assertNotIn("Ada", r.feedback_note)
            self.assertNotIn("Bob", r.feedback_note)
        self.assertEqual((c.note, c.feedback_note), ("", ""))
        # the copy into the cell reads the planned file, not a file put in its place since
        self.assertEqual(plan.read_source(self.subs, b.source, 1 << 20, b.inode), SRC)
        bob = os.path.join(self.subs, "Bob", "02_shared_transpose", "main.cu")
        os.unlink(bob)
        os.link(self.solution, bob)
        with self.assertRaises(plan.SourceError):
            plan.read_source(self.subs, b.source, 1 << 20, b.inode)
        with self.assertRaises(plan.SourceError):  # (and without the plan's inode, never a file with other names)
            plan.read_source(self.subs, b.source, 1 << 20)

    def test_three_names_and_a_name_elsewhere(self):
        ada = self.put("Ada")
        for s in ("Bob", "Cy", "Dee", "Eve"):
            self.link(ada, s)
        os.link(ada, os.path.join(self.tmp, "backup.cu"))
        rows = self.rows()
        a = rows[("Ada", "02_shared_transpose")]
        self.assertTrue(a.source)
        self.assertIn("Bob/02_shared_transpose/main.cu, Cy/02_shared_transpose/main.cu, Dee/02_shared_transpose/main.cu and 1 more", a.note)
        self.assertIn("and 1 other name elsewhere", a.note)
        self.assertIn("the same file as 4 other main.cu handed in", a.feedback_note)
        self.assertIn("Ada/02_shared_transpose/main.cu", rows[("Eve", "02_shared_transpose")].note)

    def test_a_class_folder_made_with_cp_al_or_a_dedup_tool_is_graded(self):
        orig = os.path.join(self.tmp, "inbox")
        for s in ("Ada", "Bob", "Cy"):
            for lesson in LESSONS:
                self.put(s, lesson, data=b"// %s %s\n" % (s.encode(), lesson.encode()), root=orig)
        # a deduplicating tool made two identical files of Bob and Cy one file
        same = os.path.join(orig, "Cy", "01_naive_transpose", "main.cu")
        os.unlink(same)
        os.link(os.path.join(orig, "Bob", "01_naive_transpose", "main.cu"), same)
        subprocess.run(["cp", "-al", orig, self.subs], check=True)
        rows = self.rows()
        self.assertEqual(len(rows), 6)
        for key, r in rows.items():
            with self.subTest(cell=key):
                self.assertTrue(r.source)
                self.assertEqual(r.finding, "")
                self.assertRegex(r.note, r"[0-9] other names? elsewhere")
        self.assertIn("the same file as Cy/01_naive_transpose/main.cu, and 2 other names elsewhere",
                      rows[("Bob", "01_naive_transpose")].note)

    def test_a_hard_link_to_the_course_is_never_read(self):
        self.link(self.solution, "Eve")
        self.link(self.solution, "Mallory")  # (two students, and the course's own name)
        for s in ("Eve", "Mallory"):
            r = self.rows()[(s, "02_shared_transpose")]
            self.assertEqual(r.source, ())
            self.assertIn("the course's own lessons/02_shared_transpose/main.cu under another name", r.finding)

    def test_a_file_not_every_user_may_read_is_never_read(self):
        secret = os.path.join(self.tmp, "secret.cu")
        with open(secret, "wb") as f:
            f.write(b"// only its owner reads this\n")
        os.chmod(secret, 0o600)
        self.link(secret, "Eve")
        r = self.rows()[("Eve", "02_shared_transpose")]
        self.assertEqual(r.source, ())
        self.assertIn("1 other name elsewhere (hard links) and not every user may read it", r.finding)
        os.chmod(secret, 0o644)  # readable by everyone: nothing the student could not read anyway
        r = self.rows()[("Eve", "02_shared_transpose")]
        self.assertTrue(r.source)
        self.assertIn("main.cu has 1 other name elsewhere", r.note)

    def test_submissions_inside_the_course_are_not_course_files(self):
        subs = os.path.join(self.course, "submissions")
        ada = self.put("Ada", root=subs)
        os.makedirs(os.path.join(subs, "Bob", "02_shared_transpose"))
        os.link(ada, os.path.join(subs, "Bob", "02_shared_transpose", "main.cu"))
        r = self.rows(subs)[("Bob", "02_shared_transpose")]
        self.assertTrue(r.source)
        self.assertIn("Ada/02_shared_transpose/main.cu", r.note)

    def test_the_note_is_in_the_gradebook_and_the_feedback(self):
        ada = self.put("Ada")
        self.link(ada, "Bob")
        out = os.path.join(self.tmp, "out")
        o = options.parse([self.subs, "--out", out, "--no-sandbox", "--host-only"])
        folder = runfolder.make_plan(o, out, os.path.realpath(self.subs), LESSONS, False, sandbox.UID_FIRST, Stop(), self.course)
        self.assertEqual([c.todo for c in folder.cells], [True, True])
        for c in folder.cells:
            gradebook.finish_cell(c.dir, "yes", "3", "3", "")
        status, md, err = gradebook.write_gradebook(folder.cells_dir, out, LESSONS)
        self.assertEqual(status, 0)  # the note is not a finding: both cells pass
        with open(os.path.join(out, "gradebook.csv")) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].endswith(",note"), lines[0])
        self.assertTrue(lines[1].startswith("Ada,02_shared_transpose,yes,3,3,,,,passed,"), lines[1])
        self.assertTrue(lines[1].endswith(",the same file as Bob/02_shared_transpose/main.cu (hard links: one file under several names)"),
                        lines[1])
        self.assertIn("the same file as Ada/02_shared_transpose/main.cu", lines[2])
        self.assertIn("| the same file as Bob/02_shared_transpose/main.cu (hard links: one file under several names) |", md)
        with open(os.path.join(out, "feedback", "Bob.md")) as f:
            feedback = f.read()
        self.assertIn("| the same file as another main.cu handed in (hard links: one file under several names) |", feedback)
        self.assertNotIn("Ada", feedback)


if __name__ == "__main__":
    unittest.main()
