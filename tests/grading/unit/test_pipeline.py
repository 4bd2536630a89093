"""grading/pipeline.py: the one pass rule, as the grader, exercises.sh and the mutation run see it;
exercises.sh's table is the pipeline's, and without python3 the script says it needs Python 3."""
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)

from grading import pipeline  # noqa: E402
from grading.pipeline import Exercise, exercise_status  # noqa: E402


class GraderRule(unittest.TestCase):
    def test_passed(self):
        self.assertTrue(pipeline.grader_passed("yes", "3", "3", ""))
        for args in (("no", "3", "3", ""), ("-", "3", "3", ""), ("yes", "2", "3", ""), ("yes", "0", "0", ""),
                     ("yes", "3", "3", "undefined behaviour: x"), ("yes", "", "", ""), ("yes", "3", "3 ", ""),
                     ("yes", "\u00b3", "\u00b3", ""), ("yes", "3", "03", "")):
            self.assertFalse(pipeline.grader_passed(*args), args)

    def test_passed_so_far(self):
        self.assertTrue(pipeline.grader_passed_so_far([], 2, 2))
        self.assertTrue(pipeline.grader_passed_so_far([], 0, 0))  # (the judge's own finding covers total 0)
        self.assertFalse(pipeline.grader_passed_so_far(["timed out"], 2, 2))
        self.assertFalse(pipeline.grader_passed_so_far([], 1, 2))
        self.assertFalse(pipeline.grader_passed_so_far([], None, None))

    def test_plans(self):
        self.assertEqual(pipeline.PLANS["grader"].layers, pipeline.LAYERS)
        self.assertNotIn("sanitizers", pipeline.PLANS["mutation"].layers)
        self.assertNotIn("memcheck", pipeline.PLANS["exercises"].layers)


class ExerciseRule(unittest.TestCase):
    def test_solved(self):
        self.assertEqual(exercise_status(Exercise("01_x", "ok", "ok", "passed")), ("solved", True))
        self.assertEqual(exercise_status(Exercise("01_x", "ok", "ok", "passed", "ok", "ok")), ("solved", True))

    def test_not_solved(self):
        cases = {("ok", "ok", "passed", "-", "FAILED"): "not yet (undefined behaviour)",
                 ("ok", "ok", "passed", "FAILED", "FAILED"): "not yet (undefined behaviour)",
                 ("ok", "ok", "passed", "FAILED", "-"): "not yet (static evidence)",
                 ("ok", "FAILED", "passed", "-", "-"): "passed",
                 ("ok", "ok", "failed", "-", "-"): "not yet",
                 ("ok", "ok", "timeout", "-", "-"): "not yet (time limit)",
                 ("ok", "ok", "skipped", "-", "-"): "skipped: no GPU",
                 ("FAILED", "-", "-", "-", "-"): "-"}
        for fields, shown in cases.items():
            self.assertEqual(exercise_status(Exercise("01_x", *fields)), (shown, False), fields)

    def test_read_like_bash(self):
        got = pipeline.read_exercises("# c\n\n  a ok ok passed ok ok extra words\nb\tok\tok passed\nlast ok ok passed")
        self.assertEqual([e.name for e in got], ["a", "b"])  # the line without a newline: bash's read drops it
        self.assertEqual(got[0].lint, "ok extra words")
        self.assertEqual(got[1].static, "-")


def table(script_root, results, env=None):
    p = subprocess.run(["bash", os.path.join(script_root, "scripts", "exercises.sh"), "--table-from", results],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return p.stdout.decode(), p.returncode


class TableFromPipeline(unittest.TestCase):
    """exercises.sh's table is grading/pipeline.py's: the same text and exit code, on the canned
    tables and on random ones."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def same(self, results):
        with open(results, encoding="utf-8") as f:
            want, all_solved = pipeline.exercise_table(pipeline.read_exercises(f.read()))
        got = table(ROOT, results)
        self.assertEqual(got, (want, 0 if all_solved else 1), results)
        return got

    def test_canned(self):
        inputs = [f for f in glob.glob(os.path.join(ROOT, "tests", "exercises", "table_*.txt")) if not f.endswith(".expected.txt")]
        self.assertTrue(inputs)
        for f in inputs:
            text, rc = self.same(f)
            with open(f[:-4] + ".expected.txt", encoding="utf-8") as e:
                self.assertEqual(text, e.read(), f)
            self.assertEqual(rc, 0 if "all_solved" in f else 1, f)

    def test_random(self):
        rng = random.Random(33)
        words = {"compiles": ["ok", "FAILED"], "host": ["ok", "FAILED", "-"],
                 "gpu": ["passed", "failed", "timeout", "skipped", "-", "odd"], "static": ["ok", "FAILED", "-", ""],
                 "lint": ["ok", "FAILED", "-", ""]}
        for k in range(4):
            lines = []
            for i in range(rng.randint(0, 5)):
                row = ["%02d_ex" % i] + [rng.choice(words[w]) for w in ("compiles", "host", "gpu", "static", "lint")]
                lines.append(rng.choice([" ", "\t", "  "]).join(row).rstrip())
            if rng.random() < 0.3:
                lines.insert(0, "# a comment")
            path = os.path.join(self.tmp, "r%d.txt" % k)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + ("\n" if lines else ""))
            self.same(path)


class NoPython(unittest.TestCase):
    """Without python3 on PATH, or without the course's grading/pipeline.py, exercises.sh prints no
    table of its own: one line on stderr that it needs Python 3, exit 2, before anything is built."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for folder in ("/usr/local/bin", "/usr/bin", "/bin"):  # every tool but Python
            for name in os.listdir(folder) if os.path.isdir(folder) else []:
                if not name.startswith("python") and not os.path.lexists(os.path.join(self.bin, name)):
                    os.symlink(os.path.join(folder, name), os.path.join(self.bin, name))
        self.env = dict(os.environ, PATH=self.bin)
        self.results = os.path.join(ROOT, "tests", "exercises", "table_all_solved.txt")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_script(self, root, *args, env=None):
        return subprocess.run(["bash", os.path.join(root, "scripts", "exercises.sh")] + list(args), cwd=self.tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or self.env)

    def assert_needs_python(self, p):
        err = p.stderr.decode().splitlines()
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(err), 1, err)
        self.assertIn("needs Python 3", err[0])
        self.assertEqual(p.stdout, b"")

    def test_no_python3(self):
        self.assertNotEqual(subprocess.run(["bash", "-c", "command -v python3"], env=self.env).returncode, 0)
        for args in (["--table-from", self.results], ["status"], ["check", "01"], ["--build", "b", "watch", "01"]):
            with self.subTest(args=args):
                self.assert_needs_python(self.run_script(ROOT, *args))
        self.assertFalse(os.path.exists(os.path.join(ROOT, "b")))

    def test_no_pipeline(self):
        tree = os.path.join(self.tmp, "tree")
        os.makedirs(os.path.join(tree, "scripts"))
        os.makedirs(os.path.join(tree, "exercises", "01_x"))
        shutil.copy(os.path.join(ROOT, "scripts", "exercises.sh"), os.path.join(tree, "scripts"))
        self.assert_needs_python(self.run_script(tree, "--table-from", self.results, env=dict(os.environ)))
        self.assert_needs_python(self.run_script(tree, "check", "01", env=dict(os.environ)))
        self.assertFalse(os.path.exists(os.path.join(tree, "build-exercises")))


class MutationRule(unittest.TestCase):
    def outcomes(self, **kw):
        o = {layer: "-" for layer in pipeline.MUTATION_LAYERS}
        o.update(kw)
        return o

    def test_first_layer_catches(self):
        self.assertEqual(pipeline.caught_by(self.outcomes(compile="FAILED"), True), "compile")
        self.assertEqual(pipeline.caught_by(self.outcomes(compile="ok", lint="UB main.cu:3: x", host="FAILED"), True), "lint")
        self.assertEqual(pipeline.caught_by(self.outcomes(compile="ok", host="ok", gpu="passed", memcheck="clean",
                                                          speed="FAILED"), True), "gpu")
        self.assertEqual(pipeline.caught_by(self.outcomes(compile="ok", host="ok", gpu="passed", memcheck="clean",
                                                          speed="met [a=1.00]", static="CONTRACT x"), True), "static")

    def test_survived_and_unfinished(self):
        done = self.outcomes(compile="ok", lint="clean", host="ok", gpu="passed", memcheck="clean", speed="met", static="ok")
        self.assertEqual(pipeline.caught_by(done, True), "survived")
        self.assertEqual(pipeline.caught_by(dict(done, memcheck="-"), True), "unfinished")
        self.assertEqual(pipeline.caught_by(dict(done, memcheck="-"), False), "survived")
        self.assertEqual(pipeline.caught_by(dict(done, static="not run (deadline)"), True), "unfinished")
        self.assertEqual(pipeline.caught_by(self.outcomes(compile="ok", host="ok", gpu="skipped"), True), "survived (no GPU)")


if __name__ == "__main__":
    unittest.main()
