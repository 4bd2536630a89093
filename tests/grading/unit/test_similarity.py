"""similarity.csv (grading/similarity.py): a renamed copy of a classmate's exercise code is found;
two independent correct solutions of lesson 02's tiled transpose, written differently, are not;
the threshold holds both with a margin. Each submission is the exercise as handed out with its
TODO block filled in, as a student hands it in. (fixtures/similarity/: the two other solutions of
02.tiled; the independent one passes lesson 02's GPU checks: check_on_gpu.sh there.)"""
import csv
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cellrecord, cli, gradebook, regions, similarity  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "similarity")
LESSON = "02_shared_transpose"


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def course_solution(region="02.tiled"):
    with open(os.path.join(REPO, "lessons", LESSON, "main.cu")) as f:
        text = f.read()
    r = next(r for r in regions.parse(text) if r.id == region)
    return "\n".join(text.split("\n")[r.begin + 1:r.end])


def submission(code, keep_todo=False):
    """The exercise as handed out, its TODO block replaced by CODE (or CODE after it: KEEP_TODO)."""
    lay = similarity.layout(REPO, LESSON)
    start, end = lay.blocks["02.tiled"]
    lines = lay.lines[:start] + (lay.lines[start:end] if keep_todo else []) + code.rstrip("\n").split("\n") + lay.lines[end:]
    return "\n".join(lines)


# A near copy: the renamed copy with one condition's order swapped and two declarations apart and
# in the other order (so that the placeholders of the names they introduce change places too).
NEAR = (fixture("02.tiled.renamed.cu").replace("if (gr < rows && gc < cols)", "if (gc < cols && gr < rows)")
        .replace("const int orow = base_c + i, ocol = base_r + threadIdx.x;", "const int ocol = base_r + threadIdx.x;\n"
                 "        const int orow = base_c + i;"))


class Tokens(unittest.TestCase):
    def test_names_comments_and_whitespace_set_aside(self):
        a = similarity.tokens("int total = 0; // sum\nfor (int i = 0; i < n; ++i) total += v[i];")
        b = similarity.tokens("int acc=0;\n\n/* the sum */ for(int k=0;k<count;++k)\n    acc+=data[k];")
        self.assertEqual(a, b)
        self.assertEqual(a[:4], ["int", "$1", "=", "0"])

    def test_words_of_cuda_and_members_xyzw_stay(self):
        t = similarity.tokens('const int c = blockIdx.x * blockDim.x + threadIdx.x; __syncthreads(); s.w = "hi";')
        for word in ("blockIdx", "blockDim", "threadIdx", "__syncthreads", "x", "w"):
            self.assertIn(word, t)
        self.assertNotIn("c", t)
        self.assertEqual(similarity.tokens("p.xy = q->z;"), ["$1", ".", "$2", "=", "$3", "->", "z", ";"])
        self.assertIn('"', t)  # a string literal is one token, whatever it says

    def test_a_different_order_of_first_use_is_different_code(self):
        self.assertNotEqual(similarity.tokens("a = b;"), similarity.tokens("a = a;"))


class Pairs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.cells = os.path.join(self.tmp, "cells")
        self.n = 0

    def cell(self, student, text, lesson=LESSON):
        self.n += 1
        d = os.path.join(self.cells, "%04d" % self.n)
        os.makedirs(os.path.join(d, "box", "src"))
        cellrecord.write(d, cellrecord.CellRecord(student, lesson))
        with open(os.path.join(d, "box", "src", "main.cu"), "w") as f:
            f.write(text)

    def class_of_six(self):
        with open(os.path.join(REPO, "lessons", LESSON, "main.cu")) as f:
            lesson_file = f.read()
        self.cell("Ada", submission(course_solution()))
        self.cell("Bob", submission(fixture("02.tiled.renamed.cu"), keep_todo=True))
        self.cell("Cy", submission(fixture("02.tiled.independent.cu")))
        self.cell("Dee", submission(NEAR))
        self.cell("Eve", submission(""))       # the stub left as handed out (no code of hers)
        self.cell("Fay", submission(""))
        self.cell("Gus", lesson_file)          # the lesson's own file, markers and all

    def rows(self):
        n = similarity.write(self.cells, self.tmp, REPO)
        with open(os.path.join(self.tmp, "similarity.csv"), newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], similarity.HEADER)
        self.assertEqual(len(rows) - 1, n)
        return {(r[1], r[2]): r for r in rows[1:]}

    def test_the_code_in_place_of_the_todo_block(self):
        lay = similarity.layout(REPO, LESSON)
        code = similarity.exercise_code(lay, submission(fixture("02.tiled.independent.cu")))
        self.assertEqual(similarity.tokens(code["02.tiled"]), similarity.tokens(fixture("02.tiled.independent.cu")))
        self.assertEqual(similarity.exercise_code(lay, submission("")), {})

    def test_a_renamed_copy_is_found_and_independent_solutions_are_not(self):
        self.class_of_six()
        rows = self.rows()
        self.assertEqual(rows[("Ada", "Bob")][:4], [LESSON, "Ada", "Bob", "1.00"])
        self.assertEqual(rows[("Ada", "Bob")][5:], ["3", "02.tiled"])  # Ada, Bob and Gus: the same code
        self.assertIn(("Ada", "Gus"), rows)
        self.assertGreaterEqual(float(rows[("Ada", "Dee")][3]), similarity.THRESHOLD + 0.05)
        self.assertEqual(rows[("Ada", "Dee")][5:], ["", ""])  # nearly the same: not the same tokens
        for pair in rows:
            self.assertNotIn("Cy", pair)
            self.assertNotIn("Eve", pair)  # a stub left as handed out is no code
        self.assertEqual(set(rows), {("Ada", "Bob"), ("Ada", "Gus"), ("Bob", "Gus"), ("Ada", "Dee"), ("Bob", "Dee"), ("Dee", "Gus")})

    def test_the_threshold_holds_both_with_a_margin(self):
        t = similarity.tokens
        course, independent = t(course_solution()), t(fixture("02.tiled.independent.cu"))
        self.assertEqual(similarity.score(course, t(fixture("02.tiled.renamed.cu"))), 1.0)
        self.assertGreaterEqual(similarity.score(course, t(NEAR)), similarity.THRESHOLD + 0.05)
        self.assertLessEqual(similarity.score(course, independent), similarity.THRESHOLD - 0.3)
        self.assertLessEqual(similarity.score(t(fixture("02.tiled.renamed.cu")), independent), similarity.THRESHOLD - 0.3)

    def test_lessons_apart_and_unreadable_cells_left_out(self):
        self.cell("Ada", submission(course_solution()))
        self.cell("Bob", submission(course_solution()), lesson="99_not_a_lesson")
        self.n += 1
        os.makedirs(os.path.join(self.cells, "0003"))  # a cell never graded: no box
        self.cell("Cy", "")
        os.symlink(os.path.join(self.cells, "0001", "box", "src", "main.cu"), os.path.join(self.cells, "0004", "box", "src", "x"))
        os.replace(os.path.join(self.cells, "0004", "box", "src", "x"), os.path.join(self.cells, "0004", "box", "src", "main.cu"))
        self.assertEqual(self.rows(), {})  # (Cy's main.cu is a link to Ada's: never read)

    def test_written_with_gradebook_from(self):
        self.class_of_six()
        for c in os.listdir(self.cells):
            gradebook.finish_cell(os.path.join(self.cells, c), "yes", "3", "3", "")
        out = os.path.join(self.tmp, "out")
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            rc = cli.main(["--gradebook-from", self.cells, "--out", out])
        self.assertEqual(rc, 0)  # it changes no grade
        with open(os.path.join(out, "similarity.csv")) as f:
            self.assertIn("02_shared_transpose,Ada,Bob,1.00,", f.read())


if __name__ == "__main__":
    unittest.main()
