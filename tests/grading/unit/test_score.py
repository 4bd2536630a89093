"""The score in which speed counts (grading/score.py, rubric.speed_credit, grading/speed_thresholds.py):
canned verdicts of every committed rubric's exercises at chosen speed ratios, judged by
grading/evidence.py, recorded by cell_evidence.performance into a cell's record (cell.json) and scored
by the gradebook, with the default weights. No GPU: the static facts are the recorded cuobjdump output of
tests/evidence/recorded/ (the course's solutions and two lesson 02 mutants)."""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, REPO)
from grading import cell_evidence, cellrecord, evidence, gradebook, rubric, score, speed_thresholds  # noqa: E402

RECORDED = os.path.join(REPO, "tests", "evidence", "recorded")
LESSONS = sorted(d for d in os.listdir(os.path.join(REPO, "lessons")) if os.path.isfile(os.path.join(REPO, "lessons", d, "rubric.json")))


def load(lesson):
    return evidence.load_rubric(os.path.join(REPO, "lessons", lesson, "rubric.json"))


def verdict_evidence(rub, ratios):
    """The verdict's evidence list: each speed exercise of RUB at RATIOS.get(exercise, 1.0) of the
    solution's speed (the solution at 0.9 of its ceiling, the submission beside the same ceiling)."""
    out = []
    for rule in rub.get("speed", []):
        r = ratios.get(rule["exercise"], 1.0)
        out.append({"exercise": rule["exercise"], "test_case": "speed: " + rule["exercise"], "kernel": "k", "ceiling": "copy",
                    "solution": {"ms": 1.0, "ceiling_ms": 0.9, "runs": 21, "spread": 0.01},
                    "submission": {"ms": 1.0 / r if r else 1e9, "ceiling_ms": 0.9, "runs": 21, "spread": 0.01}})
    return out


def facts_of(case):
    if not os.path.isdir(os.path.join(RECORDED, case)):
        return None, "static facts not read"
    return evidence.static_facts(dumps=os.path.join(RECORDED, case))


class Cells:
    """Cells graded from canned verdicts, through cell_evidence.performance and cell.json."""

    def __init__(self):
        self.dir = tempfile.mkdtemp()
        self.n = 0

    def close(self):
        shutil.rmtree(self.dir)

    def grade(self, lesson, ratios=None, facts_case=None, performance=True, host_only=False, split=score.DEFAULT_SPLIT,
              evidence_list="canned", ideas=None):
        """The cell's score (0 to 1) and its record's fields."""
        self.n += 1
        d = os.path.join(self.dir, "%04d" % self.n)
        os.makedirs(d)
        cellrecord.write(d, cellrecord.CellRecord("student", lesson))
        rub = load(lesson)
        facts = facts_of(facts_case or lesson[:2] + "_solution")
        o = SimpleNamespace(performance=performance, host_only=host_only)
        rubrics = SimpleNamespace(rubrics={lesson: rub})
        cell = SimpleNamespace(lesson=lesson, static=facts, dir=d)
        ev_list = verdict_evidence(rub, ratios or {}) if evidence_list == "canned" else evidence_list
        perf = cell_evidence.performance(o, rubrics, cell, SimpleNamespace(evidence=ev_list, ideas=ideas or {}))
        gradebook.finish_cell(d, "yes", "5", "5", "", performance=perf)
        rec = cellrecord.read(d).fields()
        return gradebook.cell_score(True, rec, split), rec


class TheCurve(unittest.TestCase):
    def rules(self):
        out = [rule for lesson in LESSONS for rule in load(lesson).get("speed", [])]
        self.assertEqual(len(out), 13)
        return out

    def test_every_rubric_rule_has_a_curve_from_the_data(self):
        for rule in self.rules():
            self.assertIn("full", rule, rule["exercise"])
            self.assertTrue(0.85 <= rule["full"] <= 0.92, rule)
            self.assertEqual(rule["zero"], speed_thresholds.IDEA_ZERO.get(rule["exercise"], 0.4), rule)

    def test_continuous_and_never_decreasing(self):
        for rule in self.rules() + [{"full": 0.9, "zero": 0.4}, {}]:
            full, zero = rule.get("full", rubric.FULL), rule.get("zero", rubric.ZERO)
            step = 1e-4
            prev = rubric.speed_credit(0.0, rule)
            for i in range(1, 25001):  # ratios 0 to 2.5
                c = rubric.speed_credit(i * step, rule)
                self.assertGreaterEqual(c, prev)
                self.assertLessEqual(c - prev, step / (full - zero) + 1e-12)  # no jump anywhere
                prev = c
            self.assertEqual(rubric.speed_credit(full, rule), 1.0)
            self.assertEqual(rubric.speed_credit(zero, rule), 0.0)
            self.assertAlmostEqual(rubric.speed_credit((full + zero) / 2, rule), 0.5)
            self.assertEqual(rubric.speed_credit(1.7, rule), 1.0)
            self.assertAlmostEqual(rubric.speed_credit(full - 1e-9, rule), 1.0, places=6)

    def test_what_is_not_a_ratio_earns_nothing(self):
        for bad in (float("nan"), float("inf"), -1.0, None, "0.95", True):
            self.assertEqual(rubric.speed_credit(bad, {}), 0.0, bad)

    def test_a_bad_curve_is_refused(self):
        good = {"exercise": "02.tiled", "min_ratio": 0.8, "short": "s {ratio}"}
        for bad, word in ((dict(good, full=0.4, zero=0.5), "below"), (dict(good, full=1.2), "full"), (dict(good, zero=-0.1), "zero"),
                          (dict(good, full="0.9"), "full"), (dict(good, full=float("nan")), "full"), (dict(good, zero=0.9), "below")):
            with self.assertRaises(rubric.RubricError) as e:
                rubric.validate_rubric({"speed": [bad]})
            self.assertIn(word, str(e.exception))


class TheIssuesNumbers(unittest.TestCase):
    """With the default weights, for a correct submission of every lesson: the solution 100%, 90% of
    its speed at least 97%, 50% at most 85%, 20% (lesson 01's naive kernel in lesson 02's gap) at most
    70%, each exercise of a lesson in turn."""

    def setUp(self):
        self.cells = Cells()

    def tearDown(self):
        self.cells.close()

    def test_the_solution_scores_all_of_it(self):
        for lesson in LESSONS:
            for noise in (1.0, 0.97, 1.04):  # the solution against itself, as measured (0.966 at worst)
                ex = {r["exercise"]: noise for r in load(lesson)["speed"]}
                s, rec = self.cells.grade(lesson, ex)
                self.assertEqual(s, 1.0, (lesson, noise, rec))
                self.assertFalse(gradebook.performance_short(rec), rec)

    def test_each_exercise_at_each_speed(self):
        for lesson in LESSONS:
            for rule in load(lesson)["speed"]:
                for ratio, ok in ((0.9, lambda s: s >= 0.97), (0.5, lambda s: s <= 0.85), (0.2, lambda s: s <= 0.70),
                                  (0.65, lambda s: s < 0.85), (0.05, lambda s: s <= 0.55)):
                    s, rec = self.cells.grade(lesson, {rule["exercise"]: ratio})
                    self.assertTrue(ok(s), "%s at %.2f: %.3f (%s)" % (rule["exercise"], ratio, s, rec))
                    self.assertEqual(rec["speed_ratio"], "%.4f" % ratio)
                    self.assertEqual(gradebook.performance_short(rec), ratio < rule["full"], rec)

    def test_lesson_02s_mutants_with_their_own_static_facts(self):
        # lesson 01's naive transpose in 02's tiled gap: 18% of the solution's speed, no shared memory
        s, rec = self.cells.grade("02_shared_transpose", {"02.tiled": 0.18}, "02_no_shared")
        self.assertLessEqual(s, 0.70, rec)
        self.assertEqual(rec["rules"], "0/4")
        # the padding removed: 56%, and the tile is 32 x 32
        s, rec = self.cells.grade("02_shared_transpose", {"02.tiled": 0.56}, "02_no_padding")
        self.assertLess(s, 0.85, rec)
        self.assertEqual(rec["rules"], "3/4")
        self.assertIn("02.tiled: correct, but 56%", rec["performance_short"])

    def test_the_slowest_exercise_sets_the_lessons_credit(self):
        one, _ = self.cells.grade("03_dynamic_shared", {"03.tile": 0.62})
        both, rec = self.cells.grade("03_dynamic_shared", {"03.tile": 0.62, "03.records": 0.8})
        self.assertEqual(one, both)
        self.assertTrue(rec["performance_short"].startswith("03.tile: "), rec)
        worse, _ = self.cells.grade("03_dynamic_shared", {"03.tile": 0.62, "03.records": 0.5})
        self.assertLess(worse, one)
        self.assertLess(one, 0.85)

    def test_monotonic_in_the_ratio_through_the_whole_grader(self):
        prev = -1.0
        for i in range(0, 121, 3):
            s, _ = self.cells.grade("02_shared_transpose", {"02.tiled": max(i / 100, 0.01)})
            self.assertGreaterEqual(s, prev)
            prev = s
        self.assertEqual(prev, 1.0)

    def test_a_forged_or_missing_time_earns_no_speed_credit(self):
        forged = verdict_evidence(load("02_shared_transpose"), {})
        forged[0]["submission"] = {"ms": 0.01, "ceiling_ms": 0.9}  # faster than half its ceiling
        s, rec = self.cells.grade("02_shared_transpose", evidence_list=forged)
        self.assertEqual((rec["speed_credit"], rec["speed_ratio"]), ("0.0000", ""))
        self.assertAlmostEqual(s, 0.55)  # 50% correctness + 5% for the static rules met
        self.assertIn("implausible", rec["performance_short"])
        missing = verdict_evidence(load("02_shared_transpose"), {})
        missing[0]["submission"] = None
        s, rec = self.cells.grade("02_shared_transpose", evidence_list=missing)
        self.assertAlmostEqual(s, 0.55)

    def test_a_tree_with_another_order_of_additions_loses_its_speed_credit(self):
        """Lesson 04's interleaved tree at the solution's speed (an H200 cannot time the difference):
        its failed `idea: 04.tree` leaves 50% correctness + 5% for the static rule met."""
        s, rec = self.cells.grade("04_reduction", {"04.tree": 1.0}, ideas={"idea: 04.tree": "other pairs"})
        self.assertEqual(rec["speed_credit"], "0.0000")
        self.assertAlmostEqual(s, 0.55)
        self.assertIn("04.tree: no speed credit: idea: 04.tree: other pairs", rec["performance_short"])
        s, _ = self.cells.grade("04_reduction", {"04.tree": 1.0}, ideas={"idea: 04.tree": ""})
        self.assertEqual(s, 1.0)

    def test_too_fast_for_the_slower_pattern_earns_nothing(self):
        s, rec = self.cells.grade("01_naive_transpose", {"01.strided_writes": 1.9})
        self.assertEqual(rec["speed_credit"], "0.0000")
        self.assertLessEqual(s, 0.55)


class CommittedGpuCells(unittest.TestCase):
    """The speed evidence of cells graded on an H100 (results/h100/evidence/), scored again by the
    current rubrics and default weights: the solution in every lesson (cost/on: three students'
    six lessons, the course's own code) 100%; lesson 02's correct-but-slow mutants (grade-mutants)
    below 70% and 85%."""
    EV = os.path.join(REPO, "results", "h100", "evidence")

    @staticmethod
    def rescore(lesson, speed_evidence, old_rows):
        result = evidence.judge(load(lesson), speed_evidence, None)
        static = [r for r in old_rows if r["kind"] == "static" and r["status"] != evidence.NOT_MEASURED]
        rec = score.record_values({"speed_credit": result["speed_credit"], "speed_ratio": result["speed_ratio"],
                                   "rules_met": sum(r["status"] == evidence.MET for r in static), "rules_judged": len(static)})
        return score.cell_score(True, rec), rec

    def test_the_solution_graded_as_a_submission(self):
        lessons = {lesson[:2]: lesson for lesson in LESSONS}
        n = 0
        for name in sorted(os.listdir(os.path.join(self.EV, "cost", "on", "evidence"))):
            with open(os.path.join(self.EV, "cost", "on", "evidence", name), encoding="utf-8") as f:
                old = json.load(f)
            speed = [{"exercise": r["exercise"], "submission": {"ms": r["ms"], "ceiling_ms": r["ceiling_ms"]},
                      "solution": {"ms": r["solution_ms"], "ceiling_ms": r["solution_ceiling_ms"]}}
                     for r in old["rules"] if r["kind"] == "speed"]
            s, rec = self.rescore(lessons[speed[0]["exercise"][:2]], speed, old["rules"])
            self.assertEqual(s, 1.0, (name, rec))
            n += 1
        self.assertEqual(n, 18)

    def test_lesson_02s_slow_mutants(self):
        want = {"solution": (1.0, 1.0), "redundant-rows": (0.0, 0.85), "no-padding": (0.0, 0.85), "naive-in-tiled": (0.0, 0.70)}
        seen = set()
        cells = os.path.join(self.EV, "grade-mutants", "cells")
        for c in sorted(c for c in os.listdir(cells) if c.isdigit()):
            with open(os.path.join(cells, c, "result.txt"), encoding="utf-8") as f:  # (a cell of that grader)
                student = f.read().split("student=")[1].split("\n")[0]
            with open(os.path.join(cells, c, "evidence.json"), encoding="utf-8") as f:
                old = json.load(f)
            s, rec = self.rescore("02_shared_transpose", evidence.read_verdict_evidence(os.path.join(cells, c, "verdict.json")),
                                  old["rules"])
            low, high = want[student]
            self.assertTrue(low <= s <= high if student == "solution" else s < high, (student, s, rec))
            seen.add(student)
        self.assertEqual(seen, set(want))


class NotMeasured(unittest.TestCase):
    """A cell whose speed was not measured is scored as grading/score.py says: a part with nothing
    judged is left out; with nothing judged at all, all of it."""

    def setUp(self):
        self.cells = Cells()

    def tearDown(self):
        self.cells.close()

    def test_off_and_host_only_score_all_of_a_correct_cell(self):
        for kw in ({"performance": False}, {"host_only": True}):
            s, rec = self.cells.grade("02_shared_transpose", {"02.tiled": 0.2}, **kw)
            self.assertEqual(s, 1.0, kw)
            self.assertEqual((rec["speed_credit"], rec["rules"]), ("", ""))
            self.assertIn(gradebook.performance_column("yes", True, rec), ("off", "not measured"))

    def test_no_gpu_timing_leaves_the_rules_alone(self):
        s, rec = self.cells.grade("02_shared_transpose", evidence_list=None, facts_case="02_no_padding")
        self.assertEqual((rec["speed_credit"], rec["rules"]), ("", "3/4"))
        self.assertAlmostEqual(s, 0.5 + 0.5 * 0.75)
        s, rec = self.cells.grade("02_shared_transpose", evidence_list=None)
        self.assertEqual(s, 1.0)
        self.assertEqual(gradebook.performance_column("yes", True, rec), "rules 4/4")

    def test_no_static_facts_leaves_the_speed_alone(self):
        s, rec = self.cells.grade("02_shared_transpose", {"02.tiled": 0.66}, facts_case="none")
        self.assertEqual(rec["rules"], "")
        credit = rubric.speed_credit(0.66, load("02_shared_transpose")["speed"][0])
        self.assertAlmostEqual(s, 0.5 + 0.5 * credit, places=4)
        self.assertEqual(gradebook.performance_column("yes", True, rec), "speed 66%% (credit %.0f%%)" % (100 * credit))

    def test_nothing_judged_at_all(self):
        s, rec = self.cells.grade("02_shared_transpose", evidence_list=None, facts_case="none")
        self.assertEqual((s, rec["performance"]), (1.0, "not measured"))


class Weights(unittest.TestCase):
    def test_the_split_and_the_record(self):
        rec = {"performance": "3/5", "speed_credit": "0.5000", "speed_ratio": "0.6600", "rules": "2/4"}
        self.assertAlmostEqual(score.performance_credit(rec), 0.9 * 0.5 + 0.1 * 0.5)
        self.assertAlmostEqual(score.cell_score(True, rec), 0.5 + 0.5 * 0.5)
        self.assertEqual(score.cell_score(True, rec, (100, 0)), 1.0)
        self.assertAlmostEqual(score.cell_score(True, rec, (0, 100)), 0.5)
        self.assertEqual(score.cell_score(False, rec), 0.0)
        self.assertEqual(score.performance_words(rec), "speed 66% (credit 50%); rules 2/4")
        for junk in ("nan", "-1", "2", "x", ""):
            self.assertEqual(score.performance_credit(dict(rec, speed_credit=junk)), 0.5, junk)  # rules alone
        # a record with neither part judged: all of it, and its met/judged shown as it is
        self.assertEqual(score.cell_score(True, {"performance": "3/5", "speed_credit": "", "rules": ""}), 1.0)
        self.assertEqual(score.performance_words({"performance": "3/5", "speed_credit": "", "rules": ""}), "3/5")

    def test_record_values(self):
        self.assertEqual(score.record_values({}), {"speed_credit": "", "speed_ratio": "", "rules": ""})
        self.assertEqual(score.record_values({"speed_credit": 1, "speed_ratio": 1.0123456, "rules_met": 3, "rules_judged": 4}),
                         {"speed_credit": "1.0000", "speed_ratio": "1.0123", "rules": "3/4"})
        self.assertEqual(score.record_values({"speed_credit": math.nan})["speed_credit"], "")

    def test_the_gradebook_from_cells_with_another_split(self):
        cells = Cells()
        try:
            cells.grade("02_shared_transpose", {"02.tiled": 0.66})
            out = os.path.join(cells.dir, "out")
            gradebook.write_gradebook(cells.dir, out, {"02_shared_transpose": 2}, split=(80, 20))
            with open(os.path.join(out, "gradebook.csv"), encoding="utf-8", newline="") as f:
                header, row = list(csv.reader(f))[:2]
            credit = rubric.speed_credit(0.66, load("02_shared_transpose")["speed"][0])
            self.assertEqual(row[header.index("score")], "%.0f%%" % (80 + 20 * (0.9 * credit + 0.1)))
        finally:
            cells.close()


class Thresholds(unittest.TestCase):
    def test_the_rule(self):
        self.assertEqual(speed_thresholds.full_of([0.03]), 0.92)  # 1 - 2 x 3% = 0.94, above FULL_HIGH
        self.assertEqual(speed_thresholds.full_of([0.062]), 0.87)  # 1 - 2 x 6.2% = 0.876, rounded down
        self.assertEqual(speed_thresholds.full_of([0.2]), speed_thresholds.FULL_LOW)
        self.assertEqual(speed_thresholds.full_of([]), speed_thresholds.FULL_LOW)  # no data: the generous end
        self.assertEqual(speed_thresholds.full_of([0.01, 0.05]), 0.9)  # the noisiest GPU decides

    def test_rounds_are_read_once_and_thin_groups_left_out(self):
        tmp = tempfile.mkdtemp()
        try:
            res = os.path.join(tmp, "results", "gpuA")
            os.makedirs(res)
            rows = "gpu,exercise,kernel,ms,ceiling,ceiling_ms,runs,spread\n" + "".join(
                "G,02.tiled,k,%s,copy,0.9,21,0.01\n" % ms for ms in ("1.0", "1.02", "0.98"))
            for name in ("a.csv", "b.csv"):  # the same file twice counts once
                with open(os.path.join(res, name), "w") as f:
                    f.write(rows)
            with open(os.path.join(res, "verdict.json"), "w") as f:
                json.dump({"evidence": [{"exercise": "02.tiled", "solution": {"ms": 1.0, "ceiling_ms": 0.9}},
                                        {"exercise": "03.tile", "solution": {"ms": 1.0, "ceiling_ms": 0.9}}]}, f)
            rounds = speed_thresholds.read_rounds(["results/gpuA/*.csv", "results/gpuA/verdict.json"], root=tmp)
            self.assertEqual(len(rounds[("gpuA", "02.tiled")]), 3)  # (the verdict's 1.0 / 0.9 is a round already read)
            rows_ = speed_thresholds.table(rounds, ["02.tiled", "03.tile"])
            self.assertEqual(rows_[0]["groups"]["gpuA"][0], 3)
            self.assertEqual(rows_[1]["groups"], {})  # one round is too thin
            self.assertEqual(rows_[1]["full"], speed_thresholds.FULL_LOW)
            with self.assertRaises(FileNotFoundError):
                speed_thresholds.read_rounds(["results/none/*.csv"], root=tmp)
        finally:
            shutil.rmtree(tmp)

    def test_rewrite_sets_the_numbers_and_keeps_the_rest(self):
        text = ('{\n  "speed": [\n    {"exercise": "02.tiled", "min_ratio": 0.8,\n     "short": "s {ratio}"},\n'
                '    {"exercise": "02.other", "min_ratio": 0.8, "full": 0.5, "zero": 0.1, "max_ratio": 1.5, "short_fast": "f", "short": "s"}\n  ]\n}\n')
        rows = [{"exercise": "02.tiled", "full": 0.91, "zero": 0.4}, {"exercise": "02.other", "full": 0.88, "zero": 0.4}]
        new = speed_thresholds.rewrite(text, rows)
        rules = json.loads(new)["speed"]
        self.assertEqual([(r["full"], r["zero"]) for r in rules], [(0.91, 0.4), (0.88, 0.4)])
        self.assertEqual(rules[1]["max_ratio"], 1.5)
        self.assertEqual(speed_thresholds.rewrite(new, rows), new)
        with self.assertRaises(ValueError):
            speed_thresholds.rewrite('{"speed": [{"min_ratio": 0.8, "exercise": "02.tiled"}]}', rows)

    def test_the_committed_rubrics_hold_what_the_committed_data_gives(self):
        rows = speed_thresholds.table(speed_thresholds.read_rounds(speed_thresholds.SOURCES),
                                      speed_thresholds.speed_exercises(speed_thresholds.rubric_paths()))
        self.assertEqual(speed_thresholds.differences(speed_thresholds.rubric_paths(), rows), [])
        self.assertEqual({r["exercise"]: r["full"] for r in rows if r["full"] != speed_thresholds.FULL_HIGH},
                         {"03.tile": 0.87, "04.tree": 0.91})
        with open(os.path.join(REPO, "results", "h100", "evidence", "speed_thresholds.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), speed_thresholds.render(rows, speed_thresholds.SOURCES))


class IdeaMissedOnTheGpu(unittest.TestCase):
    """The score class's row pointless-2 / 03_dynamic_shared (03.records straight from global memory,
    no shared buffer), graded on an H200 by `make_score_class.sh`: the speed witness's times of its
    cell (witness.log) and its compiled kernel's facts. nvcc 13.0 gives that kernel the same 1 KiB of
    shared memory as the solution's (every kernel of a file that declares `extern __shared__` shows
    the reservation), so the rubric's shared-bytes rule was met and the row scored 92% at 84% speed;
    the stores to shared memory (none: no STS, no LDS, no barrier) see the idea missed."""
    # witness 03.X: the course's kernel ms, copy ms, yours ms
    WITNESS = {"03.tile": (0.114, 0.070, 0.115520), "03.tile_in_flight": (0.085, 0.070, 0.085472),
               "03.records": (0.118, 0.116, 0.140352)}

    def test_its_speed_earns_nothing_and_the_row_scores_below_85(self):
        speed = [{"exercise": ex, "test_case": "speed: " + ex, "kernel": "k", "ceiling": "copy",
                  "submission": {"ms": yours, "ceiling_ms": copy}, "solution": {"ms": course, "ceiling_ms": copy}}
                 for ex, (course, copy, yours) in self.WITNESS.items()]
        facts, problem = evidence.static_facts(dumps=os.path.join(RECORDED, "03_solution"))
        self.assertIsNone(problem)
        name = next(n for n in facts["kernels"] if n.startswith("_Z25reverse_records_in_blocks"))
        self.assertEqual(facts["kernels"][name]["shared"], 1024)  # the pointless kernel's too
        facts["sass"][name] = [i for i in facts["sass"][name] if not i[0].startswith(("STS", "LDS", "BAR"))]
        result = evidence.judge(load("03_dynamic_shared"), speed, facts)
        records = next(r for r in result["rules"] if r["kind"] == "speed" and r["exercise"] == "03.records")
        self.assertAlmostEqual(records["ratio"], 0.118 / 0.140352)  # 84%, as the row showed
        self.assertEqual((result["speed_credit"], result["speed_exercise"]), (0.0, "03.records"))
        self.assertIn("the idea of 03.records", records["words"])
        rec = score.record_values(result)
        self.assertEqual(rec["rules"], "4/6")  # the stores and the barrier short
        self.assertLess(score.cell_score(True, rec), 0.85)
        # the solution's own facts keep full credit at full speed
        good, _ = evidence.static_facts(dumps=os.path.join(RECORDED, "03_solution"))
        fast = [dict(e, submission=e["solution"]) for e in speed]
        self.assertEqual(score.cell_score(True, score.record_values(evidence.judge(load("03_dynamic_shared"), fast, good))), 1.0)


class ScoreClass(unittest.TestCase):
    """scripts/make_score_class.sh: the GPU class it writes, and --check on a gradebook."""
    SCRIPT = os.path.join(REPO, "scripts", "make_score_class.sh")

    def test_the_class_and_the_check(self):
        tmp = tempfile.mkdtemp()
        try:
            cls = os.path.join(tmp, "class")
            r = subprocess.run(["bash", self.SCRIPT, cls], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            cells = sorted(os.path.relpath(os.path.join(d, f), cls) for d, _, fs in os.walk(cls) for f in fs)
            self.assertEqual(len(cells), 36)
            self.assertTrue(all(c.endswith("/main.cu") for c in cells))
            for c in cells:
                student, lesson = c.split("/")[:2]
                with open(os.path.join(REPO, "lessons", lesson, "main.cu"), encoding="utf-8") as f:
                    own = f.read()
                with open(os.path.join(cls, c), encoding="utf-8") as f:
                    theirs = f.read()
                self.assertEqual(own == theirs, student == "solution", c)
            with open(os.path.join(cls, "naive-in-tiled", "03_dynamic_shared", "main.cu"), encoding="utf-8") as f:
                self.assertNotIn("extern __shared__ float tile[];  // blockDim.x rows", f.read().split("transpose_dynamic_tile(")[0])
            # a pointless kernel per lesson: lesson 04's tree with interleaved addressing among them
            self.assertEqual(sorted(c.split("/")[1][:2] for c in cells if c.startswith("pointless/")),
                             ["01", "02", "03", "04", "05", "06"])
            with open(os.path.join(cls, "pointless", "04_reduction", "main.cu"), encoding="utf-8") as f:
                self.assertIn("if (t % (2 * stride) == 0) s[t] += s[t + stride];", f.read())
            r = subprocess.run(["bash", self.SCRIPT, cls], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)  # never into a folder that holds something
            self.assertIn("not empty", r.stderr)
            # --check on a gradebook of those rows: as they must be, then one that is not
            out = os.path.join(tmp, "out")
            os.makedirs(out)
            scores = {"solution": "100%", "near-solution": "98%", "naive-in-tiled": "55%", "naive-in-tiled-2": "55%",
                      "other-coalescing": "55%", "other-coalescing-2": "55%"}
            rows = [[c.split("/")[0], c.split("/")[1], scores.get(c.split("/")[0], "80%")] for c in cells]
            # (bad row, its score, its correctness, exit code): a pointless kernel must stay correct, but
            # where its checks fail it by design (lesson 06's bank model)
            for bad, score, correct, rc in ((None, "", "", 0), ("near-solution", "96%", "passed", 1),
                                            ("naive-in-tiled-2", "96%", "passed", 1), ("pointless-3", "85%", "passed", 1),
                                            ("pointless-3", "0%", "failed", 1), ("pointless", "0%", "failed", 1)):
                with open(os.path.join(out, "gradebook.csv"), "w", newline="", encoding="utf-8") as f:
                    w = csv.writer(f)
                    w.writerow(["student", "lesson", "first failure or sanitizer finding", "correctness", "performance", "score"])
                    for s, lesson, sc in rows:
                        mine = s == bad and (bad != "pointless" or lesson == "04_reduction")
                        if (s, lesson) == ("pointless", "06_bank_conflicts"):  # fails the bank model: allowed
                            w.writerow([s, lesson, "tile column reads: ...", "failed", "", "0%"])
                            continue
                        w.writerow([s, lesson, "", correct if mine else "passed", "", score if mine else sc])
                r = subprocess.run(["bash", self.SCRIPT, "--check", out], capture_output=True, text=True)
                self.assertEqual(r.returncode, rc, r.stdout + r.stderr)
                n_bad = sum(1 for st, lesson, _ in rows if st == bad and (bad != "pointless" or lesson == "04_reduction"))
                self.assertIn("36 rows, %d as they must be" % (36 - n_bad), r.stdout)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
