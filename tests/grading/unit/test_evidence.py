"""grading/evidence.py: the speed ratio and its plausibility bounds, rubrics with speed, static and
counters rules, hostile evidence values, the student's loop (evidence lines beside recorded
solution figures) and the command line. No GPU, no cuobjdump: static facts come from the recorded
cuobjdump output of tests/evidence/recorded/."""
import copy
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, REPO)
from grading import evidence as ev  # noqa: E402

FIX = os.path.join(HERE, "fixtures")
RECORDED = os.path.join(REPO, "tests", "evidence", "recorded")
# Every exercise region of the course (grading/README.md: one speed rule each).
EXERCISES = {"01": ["01.strided_reads", "01.strided_writes"], "02": ["02.tiled"],
             "03": ["03.tile", "03.tile_in_flight", "03.records"], "04": ["04.tree", "04.shuffle", "04.last_block"],
             "05": ["05.tiled", "05.register_tiled"], "06": ["06.padded", "06.swizzled"]}


def lesson_rubric(nn):
    folder = [d for d in os.listdir(os.path.join(REPO, "lessons")) if d.startswith(nn + "_")][0]
    return os.path.join(REPO, "lessons", folder, "rubric.json")


def entry(sub=None, sol=None, exercise="02.tiled"):
    e = {"exercise": exercise, "test_case": "speed: " + exercise, "kernel": "k", "ceiling": "copy", "shape": "8192x8192",
         "submission": {"ms": 0.318, "ceiling_ms": 0.301, "runs": 21, "spread": 0.012},
         "solution": {"ms": 0.309, "ceiling_ms": 0.300, "runs": 21, "spread": 0.010}}
    if sub is not None:
        e["submission"] = sub
    if sol is not None:
        e["solution"] = sol
    return e


SPEED_ONLY = {"speed": [{"exercise": "02.tiled", "min_ratio": 0.8, "short": "correct, but {ratio} of the solution's speed"}]}


def speed_row(evidence, rubric=SPEED_ONLY):
    result = ev.judge(rubric, evidence)
    rows = [r for r in result["rules"] if r["kind"] == "speed"]
    assert len(rows) == 1
    return rows[0], result


class SpeedRatio(unittest.TestCase):
    def test_the_ratio_normalizes_each_side_by_its_own_ceiling(self):
        row, result = speed_row([entry()])
        want = (0.301 / 0.318) / (0.300 / 0.309)
        self.assertAlmostEqual(row["ratio"], want)
        self.assertEqual(row["status"], ev.MET)
        self.assertEqual((result["met"], result["short"], result["fraction"]), (1, 0, 1.0))
        self.assertEqual(ev.summary(result), "1/1")
        # a slower clock in the runner's process (both of its times 1.5x) changes nothing
        row2, _ = speed_row([entry(sub={"ms": 0.318 * 1.5, "ceiling_ms": 0.301 * 1.5})])
        self.assertAlmostEqual(row2["ratio"], want)

    def test_slow_is_short_in_the_rubrics_words_with_the_ratio(self):
        row, result = speed_row([entry(sub={"ms": 0.600, "ceiling_ms": 0.301})])
        ratio = (0.301 / 0.600) / (0.300 / 0.309)
        self.assertEqual(row["status"], ev.SHORT)
        self.assertFalse(row["implausible"])
        self.assertEqual(row["words"], "correct, but %.0f%% of the solution's speed" % (100 * ratio))
        self.assertEqual(result["first_short"], "02.tiled: " + row["words"])
        self.assertEqual((result["fraction"], ev.summary(result)), (0.0, "0/1"))

    def test_the_threshold_itself_is_met(self):
        # ratio exactly min_ratio: sub fraction = 0.8 x the solution's
        row, _ = speed_row([entry(sub={"ms": 1.25, "ceiling_ms": 1.0}, sol={"ms": 1.0, "ceiling_ms": 1.0})])
        self.assertAlmostEqual(row["ratio"], 0.8)
        self.assertEqual(row["status"], ev.MET)

    def test_faster_than_half_the_ceiling_is_implausible(self):
        row, result = speed_row([entry(sub={"ms": 0.149, "ceiling_ms": 0.300})])
        self.assertEqual(row["status"], ev.SHORT)
        self.assertTrue(row["implausible"])
        self.assertIn("under half its ceiling", row["words"])
        self.assertEqual(len(result["implausible"]), 1)
        rubric = dict(SPEED_ONLY, speed=[dict(SPEED_ONLY["speed"][0], exercise="02.a"), dict(SPEED_ONLY["speed"][0], exercise="02.b")])
        both = ev.judge(rubric, [entry(exercise="02.a", sub={"ms": 9.0, "ceiling_ms": 0.3}), entry(exercise="02.b", sub={"ms": 0.01, "ceiling_ms": 0.3})])
        self.assertTrue(both["first_short"].startswith("02.b: implausible"), both["first_short"])  # shown before a plain shortfall
        row, _ = speed_row([entry(sub={"ms": 0.151, "ceiling_ms": 0.300}, sol={"ms": 0.151, "ceiling_ms": 0.300})])
        self.assertEqual(row["status"], ev.MET)  # just above the bound: believed

    def test_a_ratio_above_two_is_implausible(self):
        row, _ = speed_row([entry(sub={"ms": 0.16, "ceiling_ms": 0.301}, sol={"ms": 0.6, "ceiling_ms": 0.3})])
        self.assertEqual(row["status"], ev.SHORT)
        self.assertTrue(row["implausible"])
        self.assertIn("more than 2x", row["words"])
        row, _ = speed_row([entry(sub={"ms": 0.5, "ceiling_ms": 0.5}, sol={"ms": 1.0, "ceiling_ms": 0.5})])
        self.assertAlmostEqual(row["ratio"], 2.0)
        self.assertEqual(row["status"], ev.MET)  # exactly 2: believed

    def test_a_max_ratio_catches_the_faster_pattern_before_plausibility(self):
        # Lesson 01's strided-writes exercise asks for the slow pattern: the H100 mutation run timed a
        # kernel written the other way (strided reads) at 2.16x the solution's speed.
        rubric = {"speed": [{"exercise": "02.tiled", "min_ratio": 0.8, "max_ratio": 1.5, "short": "slow {ratio}",
                             "short_fast": "the other pattern: {ratio}"}]}
        fast = [entry(sub={"ms": 0.2, "ceiling_ms": 0.3}, sol={"ms": 0.432, "ceiling_ms": 0.3})]
        row, _ = speed_row(fast, rubric)
        self.assertEqual(row["status"], ev.SHORT)
        self.assertFalse(row["implausible"])
        self.assertEqual(row["words"], "the other pattern: 216%")
        row, _ = speed_row([entry(sub={"ms": 0.2, "ceiling_ms": 0.3}, sol={"ms": 0.25, "ceiling_ms": 0.3})], rubric)
        self.assertEqual(row["status"], ev.MET)  # 125%: under max_ratio
        row, _ = speed_row(fast)
        self.assertTrue(row["implausible"])  # without max_ratio the same times are implausible
        for bad in (0.5, 3, float("nan"), "1.5"):
            broken = {"speed": [dict(rubric["speed"][0], max_ratio=bad)]}
            with self.subTest(max_ratio=bad), self.assertRaises(ev.RubricError):
                ev.validate_rubric(broken)
        with self.assertRaises(ev.RubricError):
            ev.validate_rubric({"speed": [{k: v for k, v in rubric["speed"][0].items() if k != "short_fast"}]})
        ev.validate_rubric(rubric)
        ev.validate_rubric(ev.load_rubric(lesson_rubric("01")))

    def test_hostile_values_are_short_never_a_crash_or_credit(self):
        hostile = [float("nan"), float("inf"), -float("inf"), -0.3, 0, 0.0, 1e308, 1e-308, "0.3", "fast", True, False,
                   None, [0.3], {"ms": 0.3}, 10 ** 400]
        for bad in hostile:
            for key in ("ms", "ceiling_ms"):
                sub = {"ms": 0.318, "ceiling_ms": 0.301}
                sub[key] = bad
                with self.subTest(key=key, value=repr(bad)[:30]):
                    row, result = speed_row([entry(sub=sub)])
                    self.assertEqual(row["status"], ev.SHORT, row)
                    self.assertTrue(row["ratio"] is None or row["ratio"] < 0.8, row)  # never credited
                    json.dumps(result, allow_nan=False, default=str)  # the JSON the CLI prints stays valid
                    self.assertTrue(all(c.isprintable() for c in row["words"]))
        for sub in ({}, {"ms": 0.3}, {"ceiling_ms": 0.3}, "0.3", 7, [], None):
            with self.subTest(submission=sub):
                row, _ = speed_row([entry(sub=sub) if sub is not None else dict(entry(), submission=None)])
                self.assertEqual(row["status"], ev.SHORT)

    def test_a_missing_submission_record_is_short_not_implausible(self):
        row, _ = speed_row([dict(entry(), submission=None)])
        self.assertEqual(row["status"], ev.SHORT)
        self.assertFalse(row["implausible"])
        self.assertIn("not recorded", row["words"])

    def test_a_bad_solution_figure_is_not_measured_never_held_against_the_student(self):
        for sol in (None, {}, {"ms": float("nan"), "ceiling_ms": 0.3}, {"ms": -1, "ceiling_ms": 0.3}, "x"):
            with self.subTest(solution=sol):
                e = entry()
                e["solution"] = sol
                row, result = speed_row([e])
                self.assertEqual(row["status"], ev.NOT_MEASURED)
                self.assertIsNone(result["fraction"])
                self.assertEqual(ev.summary(result), "not measured")
                self.assertAlmostEqual(row["ceiling_fraction"], 0.301 / 0.318)

    def test_no_evidence_is_not_measured(self):
        for evidence in (None, []):
            row, result = speed_row(evidence)
            self.assertEqual(row["status"], ev.NOT_MEASURED)
            self.assertEqual(ev.summary(result), "not measured")
        row, _ = speed_row([entry(exercise="02.other")])
        self.assertEqual(row["status"], ev.NOT_MEASURED)
        self.assertIn("no speed evidence for 02.tiled", row["words"])

    def test_hostile_evidence_lists_do_not_crash(self):
        for evidence in ("x", 3, {"exercise": "02.tiled"}, [None, 1, "x", {"exercise": 5}, {}], [entry(), entry(sub={"ms": 9, "ceiling_ms": 0.3})]):
            with self.subTest(evidence=repr(evidence)[:40]):
                result = ev.judge(SPEED_ONLY, evidence)
                self.assertEqual(len(result["rules"]), 1)
        # the first entry of an exercise is the one judged
        row, _ = speed_row([entry(), entry(sub={"ms": 9, "ceiling_ms": 0.3})])
        self.assertEqual(row["status"], ev.MET)

    def test_control_characters_from_the_evidence_never_reach_the_words(self):
        with open(os.path.join(FIX, "verdict_02_forged.json")) as f:
            evidence = json.load(f)["evidence"]
        row, _ = speed_row(evidence)
        self.assertTrue(row["implausible"])
        self.assertNotIn("\x1b", row["kernel"])


class Rubrics(unittest.TestCase):
    def write(self, rubric):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        p = os.path.join(d, "rubric.json")
        with open(p, "w", encoding="utf-8") as f:
            f.write(rubric if isinstance(rubric, str) else json.dumps(rubric))
        return p

    def test_malformed_rubrics_are_refused_with_the_reason(self):
        good = {"exercise": "02.tiled", "min_ratio": 0.8, "short": "s {ratio}"}
        counter = {"exercise": "02.tiled", "kernel": "k", "metric": "m", "op": "<=", "value": 1, "per": None, "short": "s"}
        for rubric, words in (("{", "cannot read"), ("[]", "JSON object"), ({}, "at least one rule"),
                              ({"speed": "x"}, "must be lists"),
                              ({"speed": [dict(good, min_ratio=0)]}, "min_ratio"),
                              ({"speed": [dict(good, min_ratio="0.8")]}, "min_ratio"),
                              ({"speed": [dict(good, min_ratio=float("nan"))]}, "min_ratio"),
                              ({"speed": [dict(good, min_ratio=3)]}, "min_ratio"),
                              ({"speed": [{k: v for k, v in good.items() if k != "short"}]}, "short"),
                              ({"speed": [{k: v for k, v in good.items() if k != "exercise"}]}, "exercise"),
                              ({"speed": [good, good]}, "second speed rule"),
                              ({"speed": [good], "rules": []}, "non-empty"),
                              ({"counters": [dict(counter, op="=<")]}, "op"),
                              ({"counters": [dict(counter, value="1")]}, "value"),
                              ({"counters": [dict(counter, kernel="(")]}, "kernel pattern"),
                              ({"counters": [dict(counter, per=3)]}, "per")):
            with self.subTest(words=words, rubric=str(rubric)[:60]):
                with self.assertRaises(ev.RubricError) as e:
                    ev.load_rubric(self.write(rubric))
                self.assertIn(words, str(e.exception))

    def test_every_lesson_rubric_loads_and_names_each_exercise_once(self):
        for nn, ids in EXERCISES.items():
            path = lesson_rubric(nn)
            if not os.path.exists(path):
                continue  # lessons 01 and 06 get theirs with their counters
            with self.subTest(lesson=nn):
                rubric = ev.load_rubric(path)
                speed = [r["exercise"] for r in rubric.get("speed", [])]
                if nn in ("02", "03", "04", "05") or speed:
                    self.assertEqual(sorted(speed), sorted(ids))
                for r in rubric.get("speed", []):
                    self.assertIn("{ratio}", r["short"])
                for r in rubric.get("rules", []) + rubric.get("counters", []):
                    if "exercise" in r:
                        self.assertIn(r["exercise"], ids)

    def test_every_exercise_names_the_idea_its_lesson_teaches(self):
        for nn, ids in EXERCISES.items():
            rubric = ev.load_rubric(lesson_rubric(nn))
            ideas = {r["exercise"]: r.get("idea", "") for r in rubric.get("speed", [])}
            with self.subTest(lesson=nn):
                self.assertEqual(sorted(ideas), sorted(ids))
                for ex, idea in ideas.items():
                    self.assertGreater(len(idea.split()), 5, ex)
                    self.assertNotIn("{ratio}", idea, ex)

    def test_an_idea_must_be_words_and_an_idea_rule_must_name_its_exercise(self):
        good = {"exercise": "02.tiled", "min_ratio": 0.8, "short": "s {ratio}"}
        static = {"kernel": "k", "fact": "shared", "op": "==", "value": 0, "short": "s"}
        for rubric in ({"speed": [dict(good, idea="")]}, {"speed": [dict(good, idea=3)]},
                       {"speed": [good], "rules": [dict(static, idea=True)]},
                       {"speed": [good], "rules": [dict(static, exercise="02.tiled", idea="yes")]}):
            with self.subTest(rubric=str(rubric)[:80]):
                with self.assertRaises(ev.RubricError) as e:
                    ev.load_rubric(self.write(rubric))
                self.assertIn("idea", str(e.exception))

    def test_a_rubric_of_speed_rules_only_is_accepted_by_both_readers(self):
        p = self.write(SPEED_ONLY)
        self.assertEqual(ev.load_rubric(p)["speed"][0]["exercise"], "02.tiled")
        self.assertEqual(ev.se.load_rubric(p)["rules"], [])


class Static(unittest.TestCase):
    def facts(self, case):
        f, problem = ev.static_facts(dumps=os.path.join(RECORDED, case))
        self.assertIsNone(problem)
        return f

    def test_the_solution_meets_its_static_rules_and_a_mutant_does_not(self):
        rubric = ev.load_rubric(lesson_rubric("02"))
        good = ev.judge(rubric, [entry()], self.facts("02_solution"))
        self.assertEqual(good["short"], 0, [r for r in good["rules"] if r["status"] != ev.MET])
        self.assertEqual(good["met"], 1 + len(rubric["rules"]))
        bad = ev.judge(rubric, [entry()], self.facts("02_no_shared"))
        self.assertGreater(bad["short"], 0)
        self.assertIn("no shared memory", bad["first_short"])
        self.assertTrue(bad["first_short"].startswith("02.tiled: "))
        self.assertLess(bad["fraction"], 1)

    def test_a_speed_shortfall_names_the_exercises_idea(self):
        rubric = {"speed": [dict(SPEED_ONLY["speed"][0], idea="a padded tile")]}
        row, result = speed_row([entry(sub={"ms": 0.600, "ceiling_ms": 0.301})], rubric)
        self.assertEqual(row["status"], ev.SHORT)
        self.assertTrue(row["words"].endswith("(the idea of 02.tiled: a padded tile)"), row["words"])
        self.assertIn("the idea of 02.tiled", result["first_short"])
        row, _ = speed_row([entry()], rubric)  # met: the idea is not said
        self.assertNotIn("idea", row["words"])

    def test_an_idea_rule_short_takes_the_exercises_speed_credit_away(self):
        """Lesson 03's records without the extern buffer run as fast as the solution: the compiled
        kernel's shared bytes say the idea is missed, and its speed earns nothing."""
        rubric = ev.load_rubric(lesson_rubric("03"))
        fast = [entry(exercise=ex) for ex in EXERCISES["03"]]
        facts = self.facts("03_solution")
        good = ev.judge(rubric, fast, facts)
        self.assertEqual(good["speed_credit"], 1.0)
        records = [r for r in good["rules"] if r["kind"] == "static" and r["exercise"] == "03.records"]
        self.assertEqual([r["status"] for r in records], [ev.MET, ev.MET])
        # a fixed-size __shared__ array; no shared memory at all, as nvcc 13.0 compiles it beside the
        # file's other kernels that declare `extern __shared__`: the same 1 KiB reservation as the
        # solution's, and no store to shared memory (the stores are what see it)
        for shared, stores in ((1024 + 4096, True), (1024, False)):
            bad_facts = copy.deepcopy(facts)
            for name in bad_facts["kernels"]:
                if name.startswith("_Z25reverse_records_in_blocks"):
                    bad_facts["kernels"][name]["shared"] = shared
                    if not stores:
                        bad_facts["sass"][name] = [i for i in bad_facts["sass"][name] if not i[0].startswith(("STS", "LDS"))]
            bad = ev.judge(rubric, fast, bad_facts)
            with self.subTest(shared=shared, stores=stores):
                self.assertEqual(bad["speed_credit"], 0.0)
                self.assertEqual(bad["speed_exercise"], "03.records")
                row = next(r for r in bad["rules"] if r["kind"] == "speed" and r["exercise"] == "03.records")
                self.assertEqual(row["status"], ev.SHORT)
                self.assertIn("extern __shared__", row["words"])
                self.assertIn("the idea of 03.records", row["words"])
                others = [r for r in bad["rules"] if r["kind"] == "speed" and r["exercise"] != "03.records"]
                self.assertEqual([r["credit"] for r in others], [1.0, 1.0])

    def test_a_failed_idea_test_case_takes_the_exercises_speed_credit_away(self):
        """Lesson 04's tree with interleaved addressing runs as fast as the solution on an H200; its
        check's `idea: 04.tree` sees the other order of additions, and the tree's speed earns nothing.
        A passed idea case, or none in the verdict (no GPU run), takes nothing away."""
        rubric = ev.load_rubric(lesson_rubric("04"))
        fast = [entry(exercise=ex) for ex in EXERCISES["04"]]
        for ideas in (None, {}, {"idea: 04.tree": ""}):
            self.assertEqual(ev.judge(rubric, fast, ideas=ideas)["speed_credit"], 1.0)
        bad = ev.judge(rubric, fast, ideas={"idea: 04.tree": "your tree adds other pairs"})
        self.assertEqual((bad["speed_credit"], bad["speed_exercise"]), (0.0, "04.tree"))
        row = next(r for r in bad["rules"] if r["kind"] == "speed" and r["exercise"] == "04.tree")
        self.assertEqual((row["status"], row["idea_case"]), (ev.SHORT, "idea: 04.tree"))
        self.assertIn("no speed credit: idea: 04.tree: your tree adds other pairs", row["words"])
        self.assertIn("the idea of 04.tree: the tree with sequential addressing", row["words"])
        self.assertIn("04.tree", bad["first_short"])
        others = [r["credit"] for r in bad["rules"] if r["kind"] == "speed" and r["exercise"] != "04.tree"]
        self.assertEqual(others, [1.0, 1.0])
        # not measured stays not measured: no speed evidence, nothing to take away
        none = ev.judge(rubric, None, ideas={"idea: 04.tree": "other pairs"})
        self.assertIsNone(none["speed_credit"])
        broken = copy.deepcopy(rubric)
        broken["speed"][0]["idea_test_case"] = "04.tree"
        with self.assertRaises(ev.RubricError):
            ev.validate_rubric(broken)

    def test_a_required_rule_is_a_contract_not_performance(self):
        rubric = ev.load_rubric(lesson_rubric("04"))
        good = ev.judge(rubric, None, self.facts("04_solution"))
        self.assertEqual(good["contracts_broken"], [])
        bad = ev.judge(rubric, None, self.facts("04_no_fence"))
        self.assertEqual(len(bad["contracts_broken"]), 1)
        self.assertIn("__threadfence", bad["contracts_broken"][0])
        self.assertEqual(bad["short"], good["short"])  # a contract is not counted in performance
        self.assertEqual(bad["met"] + bad["short"], 1)  # speed not measured; the one static rule that is not a contract

    def test_no_facts_are_not_measured_unless_the_students_binary_could_not_be_read(self):
        rubric = ev.load_rubric(lesson_rubric("02"))
        r = ev.judge(rubric, None, None, facts_problem="cuobjdump not found")
        self.assertEqual(r["met"] + r["short"], 0)
        self.assertEqual(ev.summary(r), "not measured")
        r = ev.judge(rubric, None, None, facts_problem="short: the compiled kernels could not be read")
        self.assertEqual(r["short"], len(rubric["rules"]))

    def test_listing_only_what_the_rubric_reads_judges_the_same(self):
        """grade.sh lists the PTX only for shuffle-mask rules and the machine code only of the
        kernels a sass: rule matches (static_evidence.listings_needed): each lesson's rules judge
        those facts as they judge the whole listings, the solution's and the mutants'."""
        se = ev.se
        for case in sorted(os.listdir(RECORDED)):
            if not os.path.isfile(os.path.join(RECORDED, case, "resource.txt.xz")):
                continue
            with self.subTest(case=case):
                rubric = ev.load_rubric(lesson_rubric(case[:2]))
                full = self.facts(case)
                names = {m: k["name"] for m, k in full["kernels"].items()}
                ptx, sass_kernels = se.listings_needed(rubric, names)
                self.assertIsNotNone(sass_kernels)
                part = copy.deepcopy(full)
                part["sass"] = {m: full["sass"][m] for m in sass_kernels if m in full["sass"]}
                if not ptx:
                    for k in part["kernels"].values():
                        k["partial_shuffle_masks"] = None
                self.assertEqual(se.judge(rubric, part), se.judge(rubric, full))
                self.assertEqual(ptx, case.startswith("04"))  # only lesson 04 judges shuffle masks
        self.assertEqual(se.listings_needed(None, {"k": "k"}), (True, None))

    def test_machine_code_by_function_only_where_that_starts_nvdisasm_less_often(self):
        se = ev.se
        one, two = "Fatbin elf code:\n", "Fatbin elf code:\nFatbin ptx code:\nFatbin elf code:\n"
        self.assertIsNone(se.sass_options([], two))
        self.assertEqual(se.sass_options(None, two), ["-sass"])
        self.assertEqual(se.sass_options(["_Z1av", "_Z1bv"], two), ["-sass", "-fun", "_Z1av,_Z1bv"])
        self.assertEqual(se.sass_options(["_Z1av", "_Z1bv", "_Z1cv"], two), ["-sass"])
        self.assertEqual(se.sass_options(["_Z1av"], one), ["-sass", "-fun", "_Z1av"])
        self.assertEqual(se.sass_options(["_Z1av", "_Z1bv"], one), ["-sass"])

    def test_results_are_grouped_by_exercise(self):
        rubric = ev.load_rubric(lesson_rubric("05"))
        r = ev.judge(rubric, [entry(exercise="05.tiled")], self.facts("05_solution"))
        self.assertEqual(sorted(r["exercises"]), ["05.register_tiled", "05.tiled"])


class Counters(unittest.TestCase):
    RUBRIC = {"counters": [{"exercise": "06.padded", "kernel": "^padded", "metric": "conflicts", "op": "<=", "value": 0.1,
                            "per": "requests", "short": "bank conflicts"}]}

    def test_off_without_counters_judged_with_them(self):
        self.assertEqual(ev.judge(self.RUBRIC)["rules"], [])
        ok = ev.judge(self.RUBRIC, counters=ev.read_counters({"padded_k": {"conflicts": 0, "requests": 100}}))
        self.assertEqual(ok["met"], 1)
        bad = ev.judge(self.RUBRIC, counters=ev.read_counters([{"kernel": "padded_k", "metric": "conflicts", "value": 3100},
                                                              {"kernel": "padded_k", "metric": "requests", "value": 100}]))
        self.assertEqual((bad["short"], bad["first_short"]), (1, "06.padded: bank conflicts"))
        none = ev.judge(self.RUBRIC, counters=ev.read_counters({"other": {"conflicts": 0}, "padded": {"conflicts": float("nan")}}))
        self.assertEqual(none["not_measured"], 1)
        with self.assertRaises(ev.RubricError):
            ev.read_counters("x")


class Loop(unittest.TestCase):
    def test_evidence_lines_beside_the_recorded_solution(self):
        sols = ev.read_solution_rows([os.path.join(FIX, "solution.csv")])
        line = {"exercise": "02.tiled", "kernel": "transpose_tiled<33>", "ms": 0.318, "ceiling": "copy", "ceiling_ms": 0.301,
                "runs": 21, "spread": 0.012, "gpu": "NVIDIA H100 80GB HBM3", "shape": "8192x8192"}
        evidence = ev.evidence_from_lines([json.dumps(line), "not json", "", json.dumps([1])], sols)
        row, _ = speed_row(evidence)
        median = sorted([0.300 / 0.309, 0.300 / 0.310, 0.300 / 0.900])[1]
        self.assertAlmostEqual(row["ratio"], (0.301 / 0.318) / median)
        other = dict(line, gpu="NVIDIA H200")
        row, result = speed_row(ev.evidence_from_lines([json.dumps(other)], sols))
        self.assertEqual(row["status"], ev.NOT_MEASURED)
        self.assertIn("no recorded solution figure for NVIDIA H200", row["words"])
        self.assertIn("% of the copy's speed", row["words"])


class CommandLine(unittest.TestCase):
    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = ev.main(["evidence.py"] + list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_judge_prints_json_and_show_prints_words(self):
        rubric = lesson_rubric("02")
        rc, out, err = self.run_main("judge", rubric, os.path.join(FIX, "verdict_02_evidence.json"),
                                     "--dumps", os.path.join(RECORDED, "02_solution"))
        self.assertEqual(rc, 0, err)
        result = json.loads(out)
        self.assertEqual(result["short"], 0)
        self.assertEqual(result["met"], 5)
        rc, out, err = self.run_main("show", rubric, os.path.join(FIX, "verdict_02_slow.json"),
                                     "--dumps", os.path.join(RECORDED, "02_no_padding"))
        self.assertEqual(rc, 0, err)  # performance shortfalls are not contracts
        self.assertIn("of the solution's speed on this GPU", out)
        self.assertIn("performance: ", out)
        rc, out, err = self.run_main("show", rubric, os.path.join(FIX, "verdict_02_slow.json"), "--strict")
        self.assertEqual(rc, 1)
        rc, out, err = self.run_main("judge", rubric, os.path.join(FIX, "verdict_02_host.json"))
        self.assertEqual(json.loads(out)["fraction"], None)

    def test_a_broken_contract_exits_1(self):
        rc, out, err = self.run_main("show", lesson_rubric("04"), "-", "--dumps", os.path.join(RECORDED, "04_half_mask"))
        self.assertEqual(rc, 1)
        self.assertIn("contract broken", out)

    def test_loop_lines(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        p = os.path.join(d, "ev.jsonl")
        with open(p, "w") as f:
            f.write(json.dumps({"exercise": "02.tiled", "ms": 0.318, "ceiling": "copy", "ceiling_ms": 0.301,
                                "gpu": "NVIDIA H100 80GB HBM3"}) + "\n")
        rc, out, err = self.run_main("judge", lesson_rubric("02"), "--lines", p, "--solutions", os.path.join(FIX, "solution.csv"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["met"], 1)

    def test_bad_input_exits_2_with_a_message(self):
        for args in ([], ["frobnicate"], ["judge"], ["judge", "/no/rubric.json", "-"], ["judge", lesson_rubric("02")],
                     ["judge", lesson_rubric("02"), "/no/verdict.json"], ["judge", lesson_rubric("02"), "-", "--dumps", "/no/dir"],
                     ["judge", lesson_rubric("02"), "-", "--binary", "b", "--dumps", "d"], ["judge", lesson_rubric("02"), "-", "--bogus"]):
            with self.subTest(args=args):
                rc, out, err = self.run_main(*args)
                self.assertEqual(rc, 2, (out, err))
                if args:
                    self.assertIn("evidence.py: ", err)


if __name__ == "__main__":
    unittest.main()
