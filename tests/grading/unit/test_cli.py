"""The command line, weights and --resume's plan checks (no build, no GPU, no sandbox)."""
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grading import (box, cell_evidence, cellrecord, cli, evidence, gradebook, judge, options, run, sandbox, slurm, static_evidence)
from grading.cell_grade import SKIP_SPEED  # noqa: E402
from grading.exits import Exit  # noqa: E402
from grading.findings import memcheck_subset_finding  # noqa: E402
from two_students import LESSONS, TwoStudents  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main(*args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(list(args))
    return rc, out.getvalue(), err.getvalue()


class CommandLine(unittest.TestCase):
    def test_bad_options_exit_2(self):
        for args in (["--timeout", "0", "x"], ["--timeout"], ["--seed", "4294967296", "x"], ["--gpus", "0,", "x"],
                     ["--slice", "2/2", "--resume", "x"], ["--slice", "0/2", "x"], ["--frobnicate"], ["a", "b"],
                     ["--", "a", "b"], ["--share", "0", "x"], ["--mem-mib", "-1", "x"], ["--submit", "x"],
                     ["--slurm", "--gpus", "0", "x"], ["--slurm", "--resume", "x"], ["--weights", "/nonexistent", "x"]):
            with self.subTest(args=args):
                rc, out, err = main(*args)
                self.assertEqual(rc, 2)
                self.assertTrue(err.startswith("grade.sh: "), err)

    def test_help(self):
        rc, out, err = main("--help")
        self.assertEqual(rc, 0)
        self.assertIn("usage: scripts/grade.sh SUBMISSIONS", out)

    def test_options_parse(self):
        o = options.parse(["--timeout", "30", "--sanitize", "-DX=1", "--mem-mib", "2048", "--", "-subs"])
        self.assertEqual((o.timeout, o.sanitize, o.mem_mib, o.submissions), (30, True, 2048, "-subs"))
        self.assertEqual(o.passed_on, ["--timeout", "30", "--sanitize", "-DX=1", "--mem-mib", "2048"])

    def test_control_bytes_in_an_error_are_visible(self):
        rc, out, err = main("--bogus\x1b[2J")
        self.assertEqual(rc, 2)
        self.assertNotIn("\x1b", err)


class Weights(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.path)

    def weights(self, text):
        with open(self.path, "w") as f:
            f.write(text)
        return gradebook.read_weights(self.path, LESSONS)

    def test_good(self):
        self.assertEqual(self.weights("# c\n01_naive_transpose 2\n\n02_shared_transpose 0.5\n"),
                         {"01_naive_transpose": "2", "02_shared_transpose": "0.5"})

    def test_bad(self):
        for text in ("99_none 1\n", "01_naive_transpose two\n", "01_naive_transpose -1\n", "01_naive_transpose 1 2\n",
                     "01_naive_transpose\n", "=cmd() 1\n"):
            with self.subTest(text=text):
                with self.assertRaises(gradebook.WeightsError):
                    self.weights(text)

    def test_scores(self):
        tmp = tempfile.mkdtemp()
        try:
            for i, (lesson, passed) in enumerate([("01_naive_transpose", "5"), ("02_shared_transpose", "2")], 1):
                d = os.path.join(tmp, "cells", "%04d" % i)
                os.makedirs(d)
                cellrecord.write(d, cellrecord.CellRecord("Ada", lesson))
                gradebook.finish_cell(d, "yes", passed, "5", "" if passed == "5" else "x", "3", "3")
            w = self.weights("01_naive_transpose 2\n06_bank_conflicts 0\n")
            status, md, err = gradebook.write_gradebook(os.path.join(tmp, "cells"), os.path.join(tmp, "out"), LESSONS, w)
            self.assertEqual(status, 1)
            with open(os.path.join(tmp, "out", "scores.csv")) as f:
                row = f.read().splitlines()[1]
            self.assertTrue(row.startswith("Ada,2,3,passed: 01_naive_transpose; not passed: 02_shared_transpose; details"), row)
        finally:
            shutil.rmtree(tmp)


class Evidence(unittest.TestCase):
    """--weights C,P, --no-memcheck and --no-performance; a cell's score; the memcheck subset's
    words; the static facts read by cuobjdump (a stand-in that prints recorded output)."""

    def test_split_and_switches_parse(self):
        o = options.parse(["x"])
        self.assertEqual((o.split, o.memcheck, o.performance), ((50, 50), True, True))
        o = options.parse(["--weights", "70,30", "--no-memcheck", "--no-performance", "x"])
        self.assertEqual((o.split, o.split_given, o.memcheck, o.performance), ((70, 30), "70,30", False, False))
        self.assertEqual(o.passed_on, ["--no-memcheck", "--no-performance"])
        for bad in ("70,20", "80", "80,", ",", "a,b", "101,-1", "80,20,0", "80;20"):
            with self.subTest(weights=bad):
                rc, out, err = main("--weights", bad, "x")
                self.assertEqual(rc, 2)
                self.assertIn("--weights", err)

    def test_a_cells_performance(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        o = options.parse(["x"])
        cell = type("FakeCell", (), {})()
        cell.dir, cell.lesson = tmp, "04_reduction"
        rubrics = cell_evidence.load_rubrics(REPO, [cell.lesson])
        cell.static = evidence.static_facts(dumps=os.path.join(REPO, "tests", "evidence", "recorded", "04_no_fence"))
        grade = judge.Grade(passed=3, total=3)
        grade.evidence = [{"exercise": "04.tree", "submission": {"ms": 1.0, "ceiling_ms": 0.9}, "solution": {"ms": 1.0, "ceiling_ms": 1.0}},
                          {"exercise": "04.shuffle", "submission": None, "solution": {"ms": 1.0, "ceiling_ms": 1.0}},
                          {"exercise": "04.last_block", "submission": {"ms": 0.1, "ceiling_ms": 1.0}, "solution": {"ms": 1.0, "ceiling_ms": 1.0}}]
        perf = cell_evidence.performance(o, rubrics, cell, grade)
        # speed: tree met (0.9), shuffle not recorded, last_block implausible; static: the tree's shared bytes met
        self.assertEqual(perf["performance"], "2/4")
        self.assertTrue(perf["short"].startswith("04.last_block: implausible"), perf["short"])  # shown before the plain shortfall
        self.assertEqual(len(perf["contracts_broken"]), 1)  # the missing fence
        with open(os.path.join(tmp, "evidence.json")) as f:
            self.assertEqual(len(json.load(f)["rules"]), 3 + 3)
        o.performance = False
        self.assertEqual(cell_evidence.performance(o, rubrics, cell, grade), {"performance": "off"})
        o.performance, o.host_only = True, True
        self.assertEqual(cell_evidence.performance(o, rubrics, cell, grade)["performance"], "not measured")
        o.host_only = False
        cell.lesson = "99_none"
        self.assertEqual(cell_evidence.performance(o, rubrics, cell, grade)["performance"], "not measured")

    def test_the_slurm_gradebook_job_keeps_the_split(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        slurm.write(tmp, "/c/grade.sh", ["subs"], 2, 1, "", "", "/o/cells", "/o", "", "70,30")
        with open(os.path.join(tmp, "gradebook.sbatch")) as f:
            self.assertIn("--gradebook-from /o/cells --out /o --weights 70,30", f.read())

    def test_speed_test_cases_are_left_out_without_performance(self):
        self.assertIn(SKIP_SPEED, judge.command("j", False, "t", 1, "", "v", [SKIP_SPEED]))
        self.assertEqual(judge.command("j", True, "t", 1, "", "v"), ["j", "--host", "--judge", "t", "--seed", "1", "--verdict", "v"])

    def test_cell_score(self):
        self.assertEqual(gradebook.cell_score(False, {"performance": "5/5"}), 0.0)
        self.assertEqual(gradebook.cell_score(True, {}), 1.0)
        for perf in ("off", "not measured", "0/0", "", "junk"):
            self.assertEqual(gradebook.cell_score(True, {"performance": perf}), 1.0)
        # the rules alone (no speed judged) take all of the performance share
        self.assertAlmostEqual(gradebook.cell_score(True, {"performance": "1/4", "rules": "1/4"}, (80, 20)), 0.85)
        self.assertAlmostEqual(gradebook.cell_score(True, {"performance": "1/4", "rules": "1/4"}), 0.625)  # the default, 50,50
        self.assertAlmostEqual(gradebook.cell_score(True, {"rules": "0/4"}, (60, 40)), 0.6)
        self.assertAlmostEqual(gradebook.cell_score(True, {"rules": "9/4"}), 1.0)  # never above all of it
        # the speed credit, 9/10 of the performance share
        self.assertAlmostEqual(gradebook.cell_score(True, {"speed_credit": "0.5", "rules": "4/4"}), 0.5 + 0.5 * (0.45 + 0.1))
        self.assertTrue(gradebook.performance_short({"performance": "3/4"}))
        self.assertTrue(gradebook.performance_short({"performance": "4/4", "speed_credit": "0.9900"}))
        self.assertFalse(gradebook.performance_short({"performance": "4/4", "speed_credit": "1.0000"}))
        self.assertFalse(gradebook.performance_short({"performance": "4/4"}))
        self.assertFalse(gradebook.performance_short({"performance": "not measured"}))

    def test_the_memcheck_subsets_words(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        log = os.path.join(tmp, "memcheck-small.log")
        with open(log, "w") as f:
            f.write("========= Invalid __global__ read of size 4 bytes\n=========     at void k<(int)32>(const float *, int)+0x1a0\n"
                    "========= ERROR SUMMARY: 3 errors\n")
        found = memcheck_subset_finding(run.Step(rc=99), log, 600)
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("out-of-bounds or invalid memory access (memcheck on the small shapes: 3 errors"), found)
        self.assertIn("Invalid __global__ read", found[0])
        self.assertEqual(memcheck_subset_finding(run.Step(rc=0), log, 600), [])
        self.assertEqual(memcheck_subset_finding(run.Step(rc=1), log, 600), [])  # a failed check is the judge's to say
        self.assertIn("timed out", memcheck_subset_finding(run.Step(rc=124, timed_out=True), log, 600)[0])

    def grader_with_fake_cuobjdump(self, script):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        tool = os.path.join(tmp, "cuobjdump")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(tool, 0o755)
        g = box.Box(o=options.parse(["x", "--no-sandbox"]), cfg=sandbox.Config(no_sandbox=True), as_root=False, uid_base=0)
        g.rubrics = cell_evidence.Rubrics(cuobjdump=tool)
        cell = type("FakeCell", (), {})()
        cell.dir, cell.number, cell.lesson = os.path.join(tmp, "cell"), 1, ""
        os.makedirs(cell.dir)
        return g, cell

    @staticmethod
    def static_facts(g, cell, binary, cap=cell_evidence.STATIC_CAP):
        return cell_evidence.static_facts(g, cell, binary, g.rubrics, cap)

    def test_static_facts_from_cuobjdump(self):
        rec = os.path.join(REPO, "tests", "evidence", "recorded", "02_solution")
        g, cell = self.grader_with_fake_cuobjdump(
            'case $1 in --dump-resource-usage) k=resource;; -sass) k=sass;; -ptx) k=ptx;; esac\n'
            'exec python3 -c "import lzma,sys; sys.stdout.write(lzma.open(sys.argv[1], \'rt\').read())" "%s/$k.txt.xz"\n' % rec)
        facts, why = self.static_facts(g, cell, "/bin/true")
        self.assertIsNone(why)
        self.assertEqual(facts["arch"], "sm_90")
        self.assertTrue(any(k["name"].startswith("void transpose_tiled<33>") for k in facts["kernels"].values()))
        self.assertTrue(os.path.isfile(os.path.join(cell.dir, "static.json")))
        self.assertFalse(os.path.exists(os.path.join(cell.dir, "static-sass.log")))

    def test_static_facts_list_only_what_the_rubric_reads(self):
        """The resource usage, then the PTX only for shuffle-mask rules and the machine code only of
        the kernels a sass: rule matches (cuobjdump -sass -fun): the same facts for the rubric."""
        script = ('echo "$@" >> "%s/calls.txt"\n'
                  'case $1 in --dump-resource-usage) k=resource;; -sass) k=sass;; -ptx) k=ptx;; esac\n'
                  'exec python3 -c "import lzma,sys; sys.stdout.write(lzma.open(sys.argv[1], \'rt\').read())" "%s/$k.txt.xz"\n')
        # (the recorded binary has one cubin: lesson 02's two kernels are disassembled with it whole)
        for lesson, listings in (("02_shared_transpose", ["--dump-resource-usage", "-sass"]),
                                 ("04_reduction", ["--dump-resource-usage", "-ptx", "-sass"]),
                                 ("06_bank_conflicts", ["--dump-resource-usage"]), (None, ["--dump-resource-usage", "-ptx", "-sass"])):
            with self.subTest(lesson=lesson):
                rec = os.path.join(REPO, "tests", "evidence", "recorded", (lesson or "02")[:2] + "_solution")
                g, cell = self.grader_with_fake_cuobjdump("")
                with open(g.rubrics.cuobjdump, "w") as f:
                    f.write("#!/bin/sh\n" + script % (cell.dir, rec))
                if lesson:
                    cell.lesson = lesson
                g.rubrics = cell_evidence.load_rubrics(REPO, [cell.lesson] if lesson else [])
                g.rubrics.cuobjdump = os.path.join(os.path.dirname(cell.dir), "cuobjdump")
                facts, why = self.static_facts(g, cell, "/bin/true")
                self.assertIsNone(why)
                with open(os.path.join(cell.dir, "calls.txt")) as f:
                    calls = [line.split() for line in f]
                self.assertEqual([" ".join(c[:2]) if c[0] == "-sass" and c[1] == "-fun" else c[0] for c in calls], listings)
                if lesson:
                    rubric = evidence.load_rubric(os.path.join(REPO, "lessons", lesson, "rubric.json"))
                    full, _ = evidence.static_facts(dumps=rec)
                    self.assertEqual(static_evidence.judge(rubric, facts), static_evidence.judge(rubric, full))

    def test_static_facts_that_cannot_be_read_are_the_cells(self):
        for script, words in (("exit 3\n", "short: cuobjdump --dump-resource-usage could not read"),
                              ("exit 127\n", "cuobjdump not found"),
                              ("echo nothing\n", "short: cuobjdump found no kernel")):
            with self.subTest(words=words):
                g, cell = self.grader_with_fake_cuobjdump(script)
                facts, why = self.static_facts(g, cell, "/bin/true")
                self.assertIsNone(facts)
                self.assertTrue(why.startswith(words), why)
        g, cell = self.grader_with_fake_cuobjdump("head -c 3000000 /dev/zero\n")
        facts, why = self.static_facts(g, cell, "/bin/true", cap=1 << 20)
        self.assertTrue(why.startswith("short: cuobjdump --dump-resource-usage printed over 1 MiB"), why)


class Resume(TwoStudents, unittest.TestCase):
    """--resume checks the plan before grading anything (no sandbox: --no-sandbox)."""

    def test_seed_kept_and_checked(self):
        g = self.plan("--seed", "42")
        self.assertEqual([c.label for c in g.cells], ["Ada / 06_bank_conflicts", "Bo / 06_bank_conflicts"])
        self.assertEqual(self.plan("--resume").o.seed, 42)
        with self.assertRaises(Exit) as e:
            self.plan("--resume", "--seed", "43")
        self.assertEqual(e.exception.code, 2)
        self.assertIn("graded with --seed 42", e.exception.message)

    def test_options_that_change_a_grade(self):
        self.plan("--timeout", "30")
        for extra in (["--timeout", "31"], ["--mem-mib", "100"], ["--max-files", "5"]):
            with self.assertRaises(Exit) as e:
                self.plan("--resume", "--timeout", "30", *extra) if extra[0] != "--timeout" else self.plan("--resume", *extra)
            self.assertIn("options that change a grade differ", e.exception.message)

    def test_graded_cells_are_kept(self):
        g = self.plan()
        gradebook.finish_cell(g.cells[0].dir, "yes", "3", "3", "")
        g2 = self.plan("--resume")
        self.assertEqual([c.todo for c in g2.cells], [False, True])
        self.assertEqual(g2.nskipped, 1)

    def test_changed_submissions_are_refused(self):
        self.plan()
        os.rename(os.path.join(self.subs, "Bo"), os.path.join(self.subs, "Ba"))
        with self.assertRaises(Exit) as e:
            self.plan("--resume")
        self.assertIn("SUBMISSIONS changed since the first run", e.exception.message)

    def test_nothing_to_resume(self):
        with self.assertRaises(Exit) as e:
            self.plan("--resume")
        self.assertEqual(e.exception.code, 2)

    def test_a_folder_not_made_by_the_grader(self):
        os.makedirs(os.path.join(self.out, "cells"))
        with self.assertRaises(Exit) as e:
            self.plan()
        self.assertIn("was not made by", e.exception.message)


if __name__ == "__main__":
    unittest.main()
