"""Names never look alike: two different folder names are shown differently in every output of the
grader (the console's labels, the records, gradebook.csv and .md, scores.csv, the feedback files'
names and titles), for Unicode normalisation (NFC and NFD "José"), TR39 confusables (Cyrillic "А"
and Latin "A", "m" and "rn"), invisible and blank characters (U+3164, a no-break space, a zero-width
joiner) and spaces at the ends ("Bob " and "Bob")."""
import os
import random
import re
import shutil
import sys
import tempfile
import unicodedata
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cellrecord, gradebook, names, plan, runfolder  # noqa: E402

LESSONS = {"01_naive_transpose": 2, "02_shared_transpose": 1, "06_bank_conflicts": 2}
NFC, NFD = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")
# Pairs of names that a reader takes for each other (each pair: two different folder names).
ALIKE = [
    (NFC, NFD),                       # Unicode normalisation
    ("Ada", "\u0410da"),              # Cyrillic A (TR39)
    ("\u0391da", "\u0410da"),         # Greek and Cyrillic A
    ("m", "rn"),                      # TR39 maps m to rn
    ("Ian", "lan"),                   # capital I and small l
    ("Bob", "Bob "),                  # a trailing space
    ("Bob", " Bob"),                  # a leading space
    ("Bob", "Bob\u3164"),             # HANGUL FILLER, which renders as nothing
    ("Bob Lee", "Bob\u00a0Lee"),      # a no-break space
    ("Bob", "B\u200dob"),             # a zero-width joiner
    ("Bob", "Bob\ufe0f"),             # a variation selector
    ("Bob", "Bob\u2800"),             # BRAILLE PATTERN BLANK
    ("Ada Lovelace", "Ada  Lovelace"),  # two spaces (Markdown shows one)
    ("full", "\uff46\uff55\uff4c\uff4c"),  # full-width letters (NFKC)
]


def shown(raws):
    """What the plan shows for each raw name (display_name, then class_labels)."""
    first = {r: names.display_name(r.encode()) for r in raws}
    labels = names.class_labels(first.values())
    return {r: labels[first[r]] for r in raws}


class Data(unittest.TestCase):
    def test_the_unicode_data_is_there_with_its_notice(self):
        with open(names.DATA, encoding="utf-8") as f:
            head = f.read(6000)
        self.assertIn("COPYRIGHT AND PERMISSION NOTICE", head)
        self.assertIn("Unicode Security Mechanisms for UTS #39", head)
        self.assertIn("modified copy", head)
        confusable, ignorable = names.tables()
        self.assertGreater(len(confusable), 6000)
        self.assertEqual(confusable["\u0410"], "A")
        self.assertEqual(confusable["m"], "rn")
        self.assertEqual(confusable["0"], "O")
        self.assertNotIn("A", confusable)
        for c in "\u3164\u200d\u00ad\ufe0f":
            self.assertIn(ord(c), ignorable)

    def test_every_ignorable_character_is_escaped(self):
        # names.py's own list of blank characters (visible() never reads the data file) covers
        # every Default_Ignorable_Code_Point that is not escaped as invisible already
        for o in sorted(names.tables()[1]):
            ch = chr(o)
            self.assertNotEqual(names.visible(ch), ch, "U+%04X" % o)

    def test_missing_data_is_a_clear_error(self):
        keep = names.DATA
        try:
            names.DATA = os.path.join(tempfile.gettempdir(), "no-such-unicode-data.txt")
            names.tables.cache_clear()
            with self.assertRaisesRegex(names.DataError, "Unicode data .* cannot be read"):
                names.look_key("x")
        finally:
            names.DATA = keep
            names.tables.cache_clear()


class LookKey(unittest.TestCase):
    def test_alike_pairs_share_a_key(self):
        for a, b in ALIKE:
            self.assertEqual(names.look_key(a), names.look_key(b), (a, b))

    def test_different_names_do_not(self):
        for a, b in [("Ada", "Adb"), ("Jose", NFC), ("Bob", "Rob"), ("rn", "rm"), ("Ada", "ada")]:
            self.assertNotEqual(names.look_key(a), names.look_key(b), (a, b))


class Labels(unittest.TestCase):
    def test_each_pair_is_shown_apart(self):
        for a, b in ALIKE:
            s = shown([a, b])
            self.assertNotEqual(names.look_key(s[a]), names.look_key(s[b]), (a, b, s))
            for x in (a, b):
                self.assertTrue(s[x].isprintable() and not s[x].startswith(" ") and not s[x].endswith(" "), s[x])

    def test_the_marks_say_which_is_which(self):
        s = shown([NFC, NFD])
        self.assertEqual(s[NFC], NFC + " [U+00E9]")
        self.assertEqual(s[NFD], NFD + " [U+0065 U+0301]")
        s = shown(["Ada", "\u0410da"])
        self.assertEqual((s["Ada"], s["\u0410da"]), ("Ada", "\u0410da [U+0410]"))
        s = shown(["m", "rn"])
        self.assertEqual((s["m"], s["rn"]), ("m [U+006D]", "rn"))
        s = shown(["Bob", "Bob ", "Bob\u3164", "Bob\u00a0"])
        self.assertEqual(list(s.values()), ["Bob", "Bob\\x20", "Bob\\u3164", "Bob\\u00a0"])

    def test_names_that_look_like_no_other_stay(self):
        plain = ["Ada Lovelace", "O'Brien, Pat", "-Zoë", "Jos\u00e9 Garc\u00eda", "\u674e\u96f7", "Zo\u00eb", "0x1F"]
        self.assertEqual(shown(plain), {n: n for n in plain})

    def test_a_forged_mark_is_no_disguise(self):
        # a student who names a folder like another's mark: "X [U+0425]" (ASCII) beside Cyrillic "Х"
        raws = ["X", "\u0425", "X [U+0425]", "\u0425 [U+0425]"]
        s = shown(raws)
        self.assertEqual(len({names.look_key(v) for v in s.values()}), len(raws), s)
        self.assertEqual(s["X"], "X")

    def test_the_course_lessons_never_change(self):
        entries = ["01_naive_transpose", "0l_naive_transpose", "01_naive_transpose ", "02_shared_transpose", "02_sh\u0430red_transpose"]
        s = names.class_labels((names.display_name(e.encode()) for e in entries), fixed=LESSONS)
        for lesson in LESSONS:
            self.assertEqual(s[lesson], lesson)
        self.assertEqual(s["02_sh\u0430red_transpose"], "02_sh\u0430red_transpose [U+0430]")
        self.assertEqual(len({names.look_key(v) for v in s.values()}), len(s))

    def test_random_classes(self):
        # names drawn from letters that look alike: never two shown alike, and labelling the labels
        # again changes nothing (the gradebook labels the names the plan wrote)
        rnd = random.Random(7)
        alphabet = "aeolmnrIO01 \u0430\u0435\u043e\u0410\u00e9\u0301\u00a0\u3164\u200d"
        for _ in range(20):
            raws = list({"".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 5))) for _ in range(300)})
            s = shown(raws)
            self.assertEqual(len({names.look_key(v) for v in s.values()}), len(raws))
            again = names.class_labels(s.values())
            self.assertEqual([again[v] for v in s.values()], list(s.values()))


class FeedbackFiles(unittest.TestCase):
    def test_apart_on_any_file_system(self):
        students = ["Ada", "ada", "ADA", NFC, NFD + " [U+0065 U+0301]", "a/b", "a_b"]
        files = names.feedback_file_names(students)
        keys = {unicodedata.normalize("NFC", f.casefold()) for f in files.values()}
        self.assertEqual(len(keys), len(students), files)
        self.assertEqual(files["Ada"], "Ada.md")
        for f in files.values():
            self.assertNotIn("/", f)
            self.assertFalse(f.startswith("."))


class EndToEnd(unittest.TestCase):
    """Folders named alike, scanned, labelled as the console shows them, written as records and read
    back into the gradebook, scores.csv and the feedback files: every output keeps them apart."""

    RAWS = sorted({n for pair in ALIKE for n in pair})

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.subs = os.path.join(self.tmp, "subs")
        for n in self.RAWS:
            d = os.path.join(self.subs.encode(), n.encode(), b"06_bank_conflicts")
            os.makedirs(d)
            with open(os.path.join(d, b"main.cu"), "wb") as f:
                f.write(b"int main() { return 0; }\n")
        stray = os.path.join(self.subs.encode(), b"Ada", "06_b\u0430nk_conflicts".encode())  # a lesson folder's lookalike
        os.makedirs(stray)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def assert_apart(self, values, what):
        values = list(values)
        self.assertEqual(len({names.look_key(v) for v in values}), len(values), "%s: %s" % (what, values))

    def test_every_output_keeps_them_apart(self):
        cells = plan.scan(self.subs, LESSONS)
        students = {c.student: c.shown_student for c in cells}
        self.assertEqual(len(students), len(self.RAWS))
        self.assert_apart(students.values(), "the plan's names")
        labels = {runfolder.Cell(i, "", c).label for i, c in enumerate(cells)}
        self.assert_apart(labels, "the console's labels")
        ada = {c.lesson: c.shown_lesson for c in cells if c.student == b"Ada"}
        self.assertEqual(ada[b"06_bank_conflicts"], "06_bank_conflicts")
        self.assertRegex(ada["06_b\u0430nk_conflicts".encode()], r"\[U\+0430\]$")
        out = self.grade(cells)
        self.check_outputs(out, len(self.RAWS))

    def test_records_written_alike_are_shown_apart(self):
        # records that hold the raw names (an older grader's, or made by hand): the gradebook
        # labels them itself
        cells = plan.scan(self.subs, LESSONS)
        for c in cells:
            c.shown_student = c.student.decode()
        self.check_outputs(self.grade(cells), len(self.RAWS))

    def grade(self, cells):
        cells_dir = os.path.join(self.tmp, "cells")
        for i, c in enumerate(cells, 1):
            d = os.path.join(cells_dir, "%04d" % i)
            os.makedirs(d)
            cellrecord.write(d, cellrecord.CellRecord(gradebook.one_line(c.shown_student), gradebook.one_line(c.shown_lesson)))
            gradebook.finish_cell(d, "yes", "3", "3", "", "6", "6")
        out = os.path.join(self.tmp, "out")
        gradebook.write_gradebook(cells_dir, out, LESSONS)
        return out

    def check_outputs(self, out, n):
        def read(name):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                return f.read().splitlines()
        csv_students = {}
        for line in read("gradebook.csv")[1:]:
            m = re.match(r'("(?:[^"]|"")*"|[^,]*),', line)
            csv_students[m.group(1)] = True
        self.assertEqual(len(csv_students), n)
        self.assert_apart(csv_students, "gradebook.csv")
        md_students = {re.match(r"\| (.*?) \| 06_b", line).group(1) for line in read("gradebook.md") if re.match(r"\| .* \| 06_b", line)}
        self.assertEqual(len(md_students), n)
        self.assert_apart(md_students, "gradebook.md")
        self.assertTrue(all(not s.startswith(" ") and not s.endswith(" ") for s in md_students), md_students)
        scores = [re.match(r'("(?:[^"]|"")*"|[^,]*),', line).group(1) for line in read("scores.csv")[1:]]
        self.assertEqual(len(scores), n)
        self.assert_apart(scores, "scores.csv")
        files = os.listdir(os.path.join(out, "feedback"))
        self.assertEqual(len(files), n)
        self.assertEqual(len({unicodedata.normalize("NFC", f.casefold()) for f in files}), n)
        self.assert_apart(files, "the feedback files")
        titles = []
        for f in files:
            with open(os.path.join(out, "feedback", f), encoding="utf-8") as fb:
                titles.append(fb.readline())
        self.assert_apart(titles, "the feedback files' titles")


if __name__ == "__main__":
    unittest.main()
