"""grading/cmdline.py and the command lines of the grading package's tools, read by argparse with
each tool's own grammar kept: what each accepts, and the words and exit code of what each refuses."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
from grading import cmdline, evidence, lessons, mutants, mutation_report, pipeline, regions, static_evidence, ub_lint  # noqa: E402

RUBRIC = os.path.join(ROOT, "lessons", "02_shared_transpose", "rubric.json")
RECORDED = os.path.join(ROOT, "tests", "evidence", "recorded")
TABLE = os.path.join(ROOT, "tests", "exercises", "table_mixed.txt")


def run(tool, *args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = tool.main([tool.__name__.split(".")[-1] + ".py", *args])
    return rc, out.getvalue(), err.getvalue()


class Marked(unittest.TestCase):
    def test_values_and_operands_whatever_they_look_like(self):
        self.assertEqual(cmdline.marked(["cmd", "-x", "--opt", "--", "--", "--flag", "cmd"], commands=("cmd",),
                                        flags=("--flag",), valued=("--opt",)),
                         ["cmd", ":-x", "--opt", ":--", ":--", "--flag", ":cmd"])

    def test_help_and_unknown_in_order(self):
        dash = lambda a: a.startswith("-")  # noqa: E731
        with self.assertRaises(cmdline.Help):
            cmdline.marked(["a", "-h", "--bogus"], helps=("-h",), unknown=dash)
        with self.assertRaises(cmdline.Unknown) as e:
            cmdline.marked(["a", "--bogus", "-h"], helps=("-h",), unknown=dash)
        self.assertEqual(e.exception.arg, "--bogus")
        with self.assertRaises(cmdline.Unknown) as e:
            cmdline.marked(["a", "--opt"], valued=("--opt",))  # (a valued option with nothing after it)
        self.assertEqual(e.exception.arg, "--opt")

    def test_parser_refuses_without_exiting(self):
        p = cmdline.Parser("t")
        p.add_argument("--opt", type=cmdline.value)
        p.add_argument("operand", type=cmdline.value)
        self.assertEqual(p.parse_args(cmdline.marked(["--opt", "-v", "-w"], valued=("--opt",))).operand, "-w")
        a = p.parse_args(cmdline.marked(["--opt=x"], valued=("--opt",)))  # (no --option=value: an operand)
        self.assertEqual((a.opt, a.operand), (None, "--opt=x"))
        for tokens in (["--op", ":x", ":y"], [":y", ":z"], ["y"], ["-h", ":y"], ["--opt", "x", ":y"]):
            with self.subTest(tokens=tokens):
                with self.assertRaises(cmdline.Refused):
                    p.parse_args(tokens)


class Tools(unittest.TestCase):
    def test_pipeline(self):
        rc, out, _ = run(pipeline, "table", TABLE)
        self.assertEqual((rc, out.splitlines()[-1]), (1, "1/6 solved"))
        for args in ((), ("table",), ("table", "a", "b"), ("-h",), ("tabl", TABLE), ("--table", TABLE)):
            with self.subTest(args=args):
                self.assertEqual(run(pipeline, *args), (2, "", "usage: python3 -m grading.pipeline table FILE\n"))
        rc, _, err = run(pipeline, "table", "/no/such/table")
        self.assertEqual(rc, 2)
        self.assertIn("/no/such/table: No such file or directory", err)

    def test_lessons(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(run(lessons, "cmake", os.path.join(ROOT, "lessons", "lessons.txt"), d)[0], 0)
            self.assertTrue(os.path.isfile(os.path.join(d, "course_lessons.hpp")))
            for args in ((), ("cmake",), ("cmake", "a"), ("cmake", "a", "b", "c"), ("make", "a", "b"), ("-h",)):
                with self.subTest(args=args):
                    rc, out, err = run(lessons, *args)
                    self.assertEqual((rc, out), (2, ""))
                    self.assertIn("python3 -m grading.lessons cmake LESSONS_TXT OUT_DIR", err)

    def test_regions(self):
        rc, out, _ = run(regions, "ids", os.path.join(ROOT, "lessons", "02_shared_transpose", "main.cu"))
        self.assertEqual((rc, out), (0, "02.tiled\n"))
        src = os.path.join(ROOT, "lessons", "02_shared_transpose", "main.cu")
        here = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            try:  # --where names the file in errors; only right after "exercise": elsewhere it is an operand
                self.assertEqual(run(regions, "exercise", "--where", "NAME", src, "a.cu")[0], 0)
                self.assertEqual(run(regions, "exercise", src, "--where", "hints.txt")[0], 0)
                self.assertEqual(sorted(os.listdir(d)), ["--where", "a.cu", "hints.txt"])  # (OUT named --where)
            finally:
                os.chdir(here)
        for args in ((), ("ids",), ("ids", "a", "b"), ("exercise", "--where", "W", "a"), ("check", "x"), ("frob",)):
            with self.subTest(args=args):
                rc, out, err = run(regions, *args)
                self.assertEqual((rc, out), (2, ""))
                self.assertIn("python3 -m grading.regions ids FILE", err)
        rc, _, err = run(regions, "ids", "/no/such/main.cu")
        self.assertEqual(rc, 1)
        self.assertIn("/no/such/main.cu: No such file or directory", err)

    def test_static_evidence(self):
        rc, out, _ = run(static_evidence, "check", RUBRIC, "--dumps", os.path.join(RECORDED, "02_solution"))
        self.assertEqual(rc, 0)
        self.assertIn("static evidence (sm_", out)
        for args in (("facts",), ("facts", "a", "b"), ("check", RUBRIC), ("check", RUBRIC, "b", "c"),
                     ("check", "a", "--dumps", "b", "c"), ("frob",), ("check", RUBRIC, "--dump", "x")):
            with self.subTest(args=args):
                self.assertEqual(run(static_evidence, *args), (2, "", "static_evidence.py: unknown command line (see --help)\n"))
        rc, _, err = run(static_evidence, "check", RUBRIC, "--dumps")  # (BINARY named --dumps, as always)
        self.assertEqual(rc, 2)
        self.assertNotIn("unknown command line", err)

    def test_evidence(self):
        verdict = os.path.join(HERE_FIX, "verdict_02_host.json")
        self.assertEqual(run(evidence, "judge", RUBRIC, verdict, "--strict")[0], 0)
        refused = {("judge", RUBRIC, verdict, "--bogus"): "unexpected argument '--bogus'",
                   ("judge", RUBRIC, verdict, verdict): "unexpected argument '%s'" % verdict,
                   ("judge", RUBRIC, "--lines", verdict, verdict): "unexpected argument '%s'" % verdict,
                   ("judge", RUBRIC, verdict, "--dumps"): "unexpected argument '--dumps'",
                   ("judge", RUBRIC, verdict, "--strict=1"): "unexpected argument '--strict=1'",
                   ("judge", RUBRIC, "--stric"): "unexpected argument '--stric'",
                   ("judge", RUBRIC): "give VERDICT.json (or -) or --lines EVIDENCE.jsonl",
                   ("judge", RUBRIC, verdict, "--binary", "b", "--dumps", "d"): "--binary or --dumps, not both",
                   ("judge",): "unknown command line", ("frob", RUBRIC): "unknown command line"}
        for args, words in refused.items():
            with self.subTest(args=args):
                rc, out, err = run(evidence, *args)
                self.assertEqual((rc, out), (2, ""))
                self.assertIn(words, err)

    def test_mutants(self):
        rc, out, _ = run(mutants, "list", "--lesson", "02", "--lesson", "05", "ignored")
        self.assertEqual(rc, 0)
        self.assertTrue(out and all(line.startswith("02_shared_transpose:") for line in out.splitlines()), out[:200])
        self.assertEqual(run(mutants, "list", "--lesson"), (2, "", "mutants.py: --lesson needs a value (see --help)\n"))
        for args in (("show",), ("show", "a", "b"), ("apply", "a"), ("count", "x"), ("frob",), ("lis",)):
            with self.subTest(args=args):
                self.assertEqual(run(mutants, *args), (2, "", "mutants.py: unknown command line (see --help)\n"))
        rc, _, err = run(mutants, "show", "--diff")  # (an id named --diff: none such)
        self.assertEqual(rc, 2)
        self.assertIn("--diff", err)

    def test_mutation_report(self):
        for args in ((), ("lint",), ("lint", "a", "b"), ("report", "a"), ("write", "a", "b"), ("-h",), ("frob",)):
            with self.subTest(args=args):
                rc, out, err = run(mutation_report, *args)
                self.assertEqual((rc, out), (2, ""))
                self.assertIn("mutation_report.py report STATE OUT IDS", err)
        rc, _, err = run(mutation_report, "report", "a", "b", "c", "d", "soon", "2", "1", "0", "e")
        self.assertEqual(rc, 1)
        self.assertIn("mutation_report.py: invalid literal", err)

    def test_ub_lint(self):
        src = os.path.join(ROOT, "lessons", "01_naive_transpose", "main.cu")
        rc, out, _ = run(ub_lint, src, "--show", "--common", os.path.join(ROOT, "common"))
        self.assertEqual(rc, 0)
        self.assertIn("#line", out)
        usage = "usage: ub_lint.py MAIN.CU [--json] [--common DIR] [--gxx PROGRAM] [--timeout S] [--show]\n"
        for args in ((), ("a.cu", "b.cu"), ("--json", "--timeout", "soon", "a.cu"), ("--timeout", "-5", "a.cu")):
            with self.subTest(args=args):
                self.assertEqual(run(ub_lint, *args), (2, "", usage))
        for args, name in ((("a.cu", "--bogus", "-h"), "--bogus"), (("a.cu", "--common"), "--common"), (("-",), "-"),
                           (("--json=1", "a.cu"), "--json=1"), (("--tim", "5", "a.cu"), "--tim")):
            with self.subTest(args=args):
                self.assertEqual(run(ub_lint, *args), (2, "", "ub_lint.py: unknown option %s (see --help)\n" % name))
        rc, out, _ = run(ub_lint, "a.cu", "-h", "--bogus")
        self.assertEqual(rc, 0)
        self.assertIn("undefined behaviour in a lesson's device code", out)


HERE_FIX = os.path.join(ROOT, "tests", "grading", "unit", "fixtures")

if __name__ == "__main__":
    unittest.main()
