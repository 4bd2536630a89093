"""grading/counters.py: Nsight Compute's counters judged by the lessons' rubrics, and the fallbacks.

No GPU here, so no counter is read: the ncu output these tests parse is HANDWRITTEN, not recorded
(tests/evidence/handwritten_ncu/). It follows ncu's documented --csv layout (the details page:
one quoted row per launch and metric, header "ID","Process ID",...,"Metric Name","Metric Unit",
"Metric Value", numbers with thousands separators) and the kernel names ncu 2025.3 printed for
these kernels on an H100 (results/h100/ncu.txt), with values chosen from the lessons' sector and bank
models: they test the parsing and the judging, and say nothing about what a GPU measures.

What IS recorded: the XML that lesson 06's check printed (doctest --reporters=xml, host test cases
only) for the course's layouts and for a PaddedTile with its padding removed
(tests/evidence/recorded/counters/), and cuobjdump's output of lesson 02's and 06's builds
(tests/evidence/recorded/NN_*/, see the README there): the fallbacks are tested on those.
"""
import contextlib
import io
import json
import lzma
import os
import re
import shutil
import stat
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
from grading import counters  # noqa: E402

HAND = os.path.join(ROOT, "tests", "evidence", "handwritten_ncu")
RECORDED = os.path.join(ROOT, "tests", "evidence", "recorded")


def lesson_dir(n):
    return os.path.join(ROOT, "lessons", [d for d in os.listdir(os.path.join(ROOT, "lessons")) if d.startswith(n + "_")][0])


def rubric_path(n):
    return os.path.join(lesson_dir(n), "rubric.json")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def judged(lesson, csv_name):
    rubric, rules = counters.load_rules(rubric_path(lesson))
    launches = counters.parse_csv(read(os.path.join(HAND, csv_name)))
    return counters.judge_counters(rules, counters.per_kernel(launches), counters.arch_of(launches))


def status_of(rows):
    """{(exercise, kernel without parameters, label): status}."""
    return {(r["exercise"], counters.static_evidence.short_name(r["kernel"]), r["label"]): r["status"] for r in rows}


class TempDir(unittest.TestCase):
    def tmp(self):
        d = tempfile.mkdtemp(prefix="counters_test_")
        self.addCleanup(shutil.rmtree, d)
        return d

    def script(self, folder, name, body):
        """An executable Python script standing in for ncu, cuobjdump or a check binary."""
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!" + sys.executable + "\n" + body)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path


class ParsingTest(unittest.TestCase):
    def test_only_the_csv_table_is_read_and_numbers_lose_their_separators(self):
        launches = counters.parse_csv(read(os.path.join(HAND, "02_solution.csv")))
        self.assertEqual([l["id"] for l in launches], [0, 1, 2, 3])
        self.assertEqual(launches[2]["kernel"], "void transpose_tiled<33>(const float *, float *, int, int)")
        self.assertEqual(launches[0]["metrics"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], 8448.0)
        self.assertEqual(len(launches[0]["metrics"]), 8)
        self.assertEqual(counters.arch_of(launches), "sm_90")

    def test_program_output_between_rows_is_skipped(self):
        text = read(os.path.join(HAND, "02_solution.csv")).splitlines()
        header = next(i for i, l in enumerate(text) if l.startswith('"ID"'))
        text.insert(header + 3, "[doctest] a line the program printed late")
        text.insert(header + 5, '"a quoted line", "with the wrong number of fields"')
        self.assertEqual(counters.per_kernel(counters.parse_csv("\n".join(text))),
                         counters.per_kernel(counters.parse_csv(read(os.path.join(HAND, "02_solution.csv")))))

    def test_no_table_is_no_launch(self):
        self.assertEqual(counters.parse_csv(read(os.path.join(HAND, "no_gpu.txt"))), [])
        self.assertEqual(counters.parse_csv(""), [])

    def test_values(self):
        self.assertEqual(counters.parse_value("8,388,608", "sector"), 8388608.0)
        self.assertEqual(counters.parse_value("2.5", "Msector"), 2.5e6)
        self.assertEqual(counters.parse_value("1.5", "Kinst"), 1500.0)
        self.assertEqual(counters.parse_value("44.80", "%"), 44.8)
        self.assertIsNone(counters.parse_value("n/a"))
        self.assertIsNone(counters.parse_value(""))

    def test_sums_over_launches_per_kernel(self):
        kernels = counters.per_kernel(counters.parse_csv(read(os.path.join(HAND, "02_solution.csv"))))
        k33 = kernels["void transpose_tiled<33>(const float *, float *, int, int)"]
        self.assertEqual(k33["launches"], 2)
        self.assertEqual(k33["metrics"]["smsp__inst_executed_op_shared_ld.sum"], 8448 + 16896)

    def test_doctest_filter_turns_commas_into_wildcards(self):
        name = "every transpose matches the CPU reference on awkward shapes, output poisoned first"
        self.assertEqual(counters.doctest_filter(name),
                         "every transpose matches the CPU reference on awkward shapes* output poisoned first")
        self.assertNotIn(",", counters.doctest_filter("a, b, c?"))


class JudgingTest(unittest.TestCase):
    W_LD, W_ST = "shared-load wavefronts per instruction", "shared-store wavefronts per instruction"
    G_LD, G_ST = "global-load sectors per request", "global-store sectors per request"

    def test_the_padded_tile_meets_every_rule(self):
        rows = judged("02", "02_solution.csv")
        self.assertEqual(len(rows), 4)
        self.assertEqual({r["status"] for r in rows}, {"ok"}, rows)

    def test_an_unpadded_tile_falls_short_on_the_shared_loads_only_with_its_number_in_the_words(self):
        rows = judged("02", "02_no_padding.csv")
        short = [r for r in rows if r["status"] == "short"]
        self.assertEqual([r["label"] for r in short], [self.W_LD])
        self.assertIn("more than 4 wavefronts", short[0]["words"])
        self.assertEqual(short[0]["yours"], 31.6)
        self.assertIn("lesson 06", short[0]["words"])

    def test_no_shared_memory_is_not_measured_there_and_short_on_the_strided_side(self):
        s = status_of(judged("02", "02_no_shared.csv"))
        k = "void transpose_tiled<33>"
        self.assertEqual(s[("02.tiled", k, self.W_LD)], "not measured")
        self.assertEqual(s[("02.tiled", k, self.W_ST)], "not measured")
        self.assertEqual(s[("02.tiled", k, self.G_LD)], "short")
        self.assertEqual(s[("02.tiled", k, self.G_ST)], "ok")

    def test_lesson_06_names_match_with_or_without_the_space_between_closing_brackets(self):
        s = status_of(judged("06", "06_solution.csv"))
        self.assertEqual(set(s.values()), {"ok"})
        self.assertEqual({e for e, _, _ in s}, {"06.padded", "06.swizzled"})
        s = status_of(judged("06", "06_bad_swizzle.csv"))
        self.assertEqual(s[("06.swizzled", "void transpose_tiled<SwizzledTile<32>>", self.W_LD)], "short")
        self.assertEqual(s[("06.padded", "void transpose_tiled<PaddedTile<32>>", self.W_LD)], "ok")
        # the unpadded variant is the lesson's bad example: no rule may judge it
        self.assertFalse(any("Unpadded" in k for _, k, _ in s))

    def test_a_kernel_never_launched_is_missing(self):
        rows = judged("01", "02_solution.csv")  # lesson 01's rules on lesson 02's output
        self.assertEqual({r["status"] for r in rows}, {"missing"})
        self.assertIn("no launch of a kernel matching", rows[0]["words"])


class EvidenceAgreesTest(unittest.TestCase):
    """grading/evidence.py (the grader) judges the same rules on the --values this tool writes."""

    def test_same_verdicts(self):
        from grading import evidence
        for lesson, csv_name in (("02", "02_solution.csv"), ("02", "02_no_padding.csv"), ("02", "02_no_shared.csv"),
                                 ("06", "06_bad_swizzle.csv")):
            with self.subTest(csv=csv_name):
                launches = counters.parse_csv(read(os.path.join(HAND, csv_name)))
                result = counters.finish({"rubric": "", "about": "", "runs": [], "counters": {}, "kernels": {}, "rows": []},
                                         counters.load_rules(rubric_path(lesson))[1], {}, launches, None)
                mine = {}
                for r in result["rows"]:
                    key = (r["exercise"], r["label"])
                    mine[key] = "short" if "short" in (mine.get(key), r["status"]) else r["status"]
                rubric = evidence.load_rubric(rubric_path(lesson))
                theirs = evidence.judge_counters(rubric, evidence.read_counters(json.loads(json.dumps(result["values"]))))
                self.assertEqual(len(theirs), len(rubric["counters"]))
                for rule, row in zip(rubric["counters"], theirs):
                    want = {"ok": "met", "short": "short", "not measured": "not measured"}[mine[(rule["exercise"], counters.label(rule))]]
                    self.assertEqual(row["status"].replace("_", " "), want, (rule["exercise"], counters.label(rule), row))


class RubricTest(unittest.TestCase):
    """The counters rules of every lesson: well formed, on every exercise whose lesson is about its
    counters, with metric names the lessons' own ncu scripts already use on the H100 and H200."""

    def metrics_the_course_uses(self):
        names = set()
        for folder in os.listdir(os.path.join(ROOT, "lessons")):
            d = os.path.join(ROOT, "lessons", folder)
            for f in os.listdir(d) if os.path.isdir(d) else []:
                if f.startswith("ncu") and f.endswith((".sh", ".py")):
                    names |= set(re.findall(r"[a-z0-9]+__[a-z0-9_]+\.[a-z0-9_.]+", read(os.path.join(d, f))))
        return names

    def test_every_rule_loads_and_uses_known_metrics(self):
        known = self.metrics_the_course_uses()
        self.assertIn("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", known)
        for n in ("01", "02", "03", "05", "06"):
            with self.subTest(lesson=n):
                _, rules = counters.load_rules(rubric_path(n))
                self.assertTrue(rules)
                for r in rules:
                    self.assertIn(r["metric"], known)
                    self.assertIn(r["per"], known)
                    self.assertIn(r["exercise"].split(".")[0], n)
                    # the test case named must exist in that lesson's check
                    self.assertIn('GPU_TEST_CASE("%s")' % r["test_case"], read(os.path.join(lesson_dir(n), "check.cu")))
                    # the kernel a rule judges is launched by the name ncu filters on
                    # (on whichever name ncu matches: the function's, or the demangled one with its
                    # template arguments and parameters; never a longer kernel name that starts alike)
                    base = re.match(r"\^(?:void )?(\w+)", r["kernel"]).group(1)
                    for name in (base, base + "<33>", "void %s<PaddedTile<32>>(const float *, float *, int, int)" % base,
                                 "%s(const float *, float *, int, int)" % base):
                        self.assertTrue(re.search(r["launch"], name), (r["launch"], name))
                    self.assertFalse(re.search(r["launch"], base + "_padded_float4"))
                    self.assertFalse(re.search(r["launch"], "void " + base + "_source_mapping(const float *)"))

    def test_the_exercises_about_counters_all_have_rules(self):
        exercises = set()
        for n in ("01", "02", "03", "05", "06"):
            exercises |= {r["exercise"] for r in counters.load_rules(rubric_path(n))[1]}
        self.assertEqual(exercises, {"01.strided_reads", "01.strided_writes", "02.tiled", "03.tile", "03.tile_in_flight",
                                     "05.tiled", "05.register_tiled", "06.padded", "06.swizzled"})

    def test_every_recorded_solution_value_has_its_measurement_committed(self):
        # `counters.py record` names the folder of the raw output in the note; without one, no value
        for n in ("01", "02", "03", "05", "06"):
            rubric, rules = counters.load_rules(rubric_path(n))
            for r in rules:
                if "solution" not in r:
                    continue
                folders = re.findall(r"raw ncu output in (\S+?)\.?(?:\s|$)", rubric["recorded"])
                self.assertTrue(folders, f"lesson {n}: a solution value with no measurement named in \"recorded\"")
                measured = set()
                for folder in folders:
                    path = os.path.join(ROOT, folder, "result.json")
                    if os.path.exists(path):
                        with open(path) as f:
                            measured |= {row["yours"] for row in json.load(f)["rows"]}
                for value in r["solution"].values():
                    self.assertIn(value, measured, f"lesson {n}, {r['exercise']}: {value} is in no committed result")

    def test_malformed_rules_are_refused_with_the_reason(self):
        good = {"exercise": "x", "kernel": "k", "launch": "k", "test_case": "t", "metric": "a__b.sum", "per": None,
                "op": "<=", "value": 1, "short": "s"}
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for rule, words in ((dict(good, op="=<"), "op"), (dict(good, metric="not a metric"), "metric"),
                            ({k: v for k, v in good.items() if k != "test_case"}, "test_case"),
                            (dict(good, kernel="("), "kernel pattern"), (dict(good, fallback="guess"), "fallback")):
            with self.subTest(words=words):
                p = os.path.join(d, "r.json")
                with open(p, "w") as f:
                    json.dump({"rules": [], "counters": [rule]}, f)
                with self.assertRaises(counters.CountersError) as e:
                    counters.load_rules(p)
                self.assertIn(words, str(e.exception))


class DiagnosisTest(unittest.TestCase):
    def test_why_counters_are_missing(self):
        self.assertIn("ERR_NVGPUCTRPERM", counters.diagnose(read(os.path.join(HAND, "ERR_NVGPUCTRPERM.txt")), 0))
        self.assertIn("only root", counters.diagnose(read(os.path.join(HAND, "ERR_NVGPUCTRPERM.txt")), 0))
        self.assertTrue(counters.diagnose(read(os.path.join(HAND, "no_gpu.txt")), 77).startswith("no GPU: SKIPPED"))
        self.assertIn("time limit of 5 s", counters.diagnose("", None, True, 5))
        self.assertIsNone(counters.diagnose(read(os.path.join(HAND, "02_solution.csv")), 0))
        self.assertIsNone(counters.diagnose(read(os.path.join(HAND, "02_solution.csv")), 1))  # a failed check still has counters


class MeasureTest(TempDir):
    """measure() end to end, with scripts standing in for ncu, the check and cuobjdump."""

    def fake_ncu(self, folder, output, rc=0):
        """An ncu that records its command line and prints `output`."""
        log = os.path.join(folder, "ncu_args.json")
        return self.script(folder, "ncu", f"""import json, sys
with open({log!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
sys.stdout.write(open({output!r}).read())
sys.exit({rc})
"""), log

    def check_binary(self, folder, xml=None):
        """A check binary that prints recorded doctest XML for --reporters=xml."""
        body = "import sys\n"
        if xml:
            body += f"if '--reporters=xml' in sys.argv: sys.stdout.write(open({xml!r}).read())\n"
        return self.script(folder, "02_check", body)

    def test_the_command_line_and_the_judgement(self):
        d = self.tmp()
        ncu, log = self.fake_ncu(d, os.path.join(HAND, "02_no_padding.csv"))
        result = counters.measure(self.check_binary(d), rubric_path("02"), ncu=ncu, save=os.path.join(d, "raw"))
        self.assertTrue(result["counters"]["read"])
        self.assertEqual(result["counters"]["arch"], "sm_90")
        with open(log) as f:
            calls = [json.loads(l) for l in f]
        self.assertEqual(len(calls), 1)  # every rule of lesson 02 names the same test case: one ncu run
        args = calls[0]
        self.assertEqual(args[:2], ["--csv", "--clock-control"])
        self.assertEqual(args[args.index("--print-kernel-base") + 1], "demangled")
        self.assertEqual(args[args.index("--kernel-name") + 1], "regex:(^| )transpose_tiled(<|[(]|$)")
        metrics = args[args.index("--metrics") + 1].split(",")
        self.assertEqual(len(metrics), 8)
        binary = args.index(os.path.join(d, "02_check"))
        self.assertEqual(args[binary + 1:binary + 3], ["--gpu", "--small"])
        self.assertEqual(args[binary + 3], "--test-case=every transpose matches the CPU reference on awkward shapes* output poisoned first")
        self.assertEqual([r["status"] for r in result["rows"]], ["short", "ok", "ok", "ok"])
        self.assertTrue(os.path.exists(os.path.join(d, "raw", "ncu_1.txt")))
        out = io.StringIO()
        counters.report(result, out)
        self.assertIn("[short] 02.tiled", out.getvalue())

    def test_full_leaves_out_small(self):
        d = self.tmp()
        ncu, log = self.fake_ncu(d, os.path.join(HAND, "02_solution.csv"))
        counters.measure(self.check_binary(d), rubric_path("02"), ncu=ncu, small=False)
        with open(log) as f:
            self.assertNotIn("--small", json.loads(f.readline()))

    def test_no_ncu_falls_back_to_the_static_shared_bytes(self):
        d = self.tmp()
        # cuobjdump's output recorded from lesson 02 with the tile unpadded (tests/evidence/recorded)
        folder = os.path.join(RECORDED, "02_no_padding")
        cuobjdump = self.script(d, "cuobjdump", f"""import lzma, sys
kind = {{"--dump-resource-usage": "resource", "-sass": "sass", "-ptx": "ptx"}}[sys.argv[1]]
sys.stdout.write(lzma.open({folder!r} + "/" + kind + ".txt.xz", "rt").read())
""")
        old = os.environ.get("CUOBJDUMP")
        os.environ["CUOBJDUMP"] = cuobjdump
        self.addCleanup(lambda: os.environ.__setitem__("CUOBJDUMP", old) if old else os.environ.pop("CUOBJDUMP", None))
        result = counters.measure(self.check_binary(d), rubric_path("02"), ncu=os.path.join(d, "no_such_ncu"))
        if counters.find_ncu(os.path.join(d, "no_such_ncu")) is not None:
            self.skipTest("an ncu is installed here: this test needs a machine without one")
        self.assertFalse(result["counters"]["read"])
        self.assertIn("no Nsight Compute", result["counters"]["reason"])
        static = [r for r in result["rows"] if r["source"] == "static facts"]
        self.assertTrue(static)
        self.assertIn("short", {r["status"] for r in static})  # 5120 bytes where the solution has 5248
        self.assertTrue(any(r["yours"] == 5120 and r["solution"] == 5248 for r in static))
        # the global-access rules have no stand-in: not measured, and why
        plain = [r for r in result["rows"] if r["source"] is None]
        self.assertEqual({r["status"] for r in plain}, {"not measured"})
        out = io.StringIO()
        counters.report(result, out)
        self.assertIn("counters not read: no Nsight Compute", out.getvalue())

    def test_no_permission_falls_back_to_the_bank_model_on_the_students_layout(self):
        d = self.tmp()
        ncu, _ = self.fake_ncu(d, os.path.join(HAND, "ERR_NVGPUCTRPERM.txt"))
        xml = os.path.join(RECORDED, "counters", "06_no_padding_model.xml")
        result = counters.measure(self.check_binary(d, xml), rubric_path("06"), ncu=ncu)
        self.assertFalse(result["counters"]["read"])
        self.assertIn("ERR_NVGPUCTRPERM", result["counters"]["reason"])
        by_exercise = {}
        for r in result["rows"]:
            self.assertEqual(r["source"], "bank model")
            by_exercise.setdefault(r["exercise"], set()).add(r["status"])
        self.assertEqual(by_exercise, {"06.padded": {"short"}, "06.swizzled": {"ok"}})
        padded = next(r for r in result["rows"] if r["exercise"] == "06.padded")
        self.assertIn("32 == 1", padded["words"])  # what the model computed for the column read

    def test_the_course_layouts_pass_the_model(self):
        d = self.tmp()
        ncu, _ = self.fake_ncu(d, os.path.join(HAND, "no_gpu.txt"), rc=77)
        xml = os.path.join(RECORDED, "counters", "06_solution_model.xml")
        result = counters.measure(self.check_binary(d, xml), rubric_path("06"), ncu=ncu)
        self.assertTrue(result["counters"]["reason"].startswith("no GPU"))
        self.assertEqual({r["status"] for r in result["rows"]}, {"ok"})

    def test_a_model_that_prints_nothing_is_not_measured(self):
        d = self.tmp()
        ncu, _ = self.fake_ncu(d, os.path.join(HAND, "no_gpu.txt"), rc=77)
        result = counters.measure(self.check_binary(d), rubric_path("06"), ncu=ncu)
        self.assertEqual({r["status"] for r in result["rows"]}, {"not measured"})
        self.assertIn("no XML", result["rows"][0]["words"])

    def test_the_time_limit_stops_ncu_and_its_children(self):
        d = self.tmp()
        pidfile = os.path.join(d, "child.pid")
        ncu = self.script(d, "ncu", f"""import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({pidfile!r}, "w").write(str(child.pid))
time.sleep(60)
""")
        result = counters.measure(self.check_binary(d), rubric_path("01"), ncu=ncu, timeout=2)
        self.assertIn("time limit of 2 s", result["counters"]["reason"])
        with open(pidfile) as f:
            child = int(f.read())
        for _ in range(50):  # the killed child is reaped by init; give it a moment
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            import time
            time.sleep(0.1)
        else:
            self.fail("the child of ncu survived the time limit")

    def test_bad_input_is_a_message_and_exit_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(counters.main(["measure", "/no/such/check", "--rubric", rubric_path("02")]), 2)
        self.assertIn("no executable check", err.getvalue())
        d = self.tmp()
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(counters.main(["measure", self.check_binary(d), "--rubric", os.path.join(d, "none.json")]), 2)
        self.assertIn("cannot read the rubric", err.getvalue())

    def test_record_writes_measured_values_and_nothing_else(self):
        d = self.tmp()
        rubric = os.path.join(d, "rubric.json")
        shutil.copy(rubric_path("02"), rubric)
        before = read(rubric)
        ncu, _ = self.fake_ncu(d, os.path.join(HAND, "02_solution.csv"))
        result = counters.measure(self.check_binary(d), rubric, ncu=ncu)
        self.assertEqual(counters.record(result, rubric, "results/x/counters/02", "Some GPU"), 4)
        after = read(rubric)
        changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
        self.assertEqual(len(before.splitlines()), len(after.splitlines()))
        self.assertEqual(len(changed), 5)  # the note and the four counters rules
        self.assertIn("measured on Some GPU by scripts/counters_run.sh, raw ncu output in results/x/counters/02.",
                      changed[0][1])
        self.assertNotIn(counters.NOT_RECORDED, after)
        _, rules = counters.load_rules(rubric)
        self.assertEqual([r["solution"] for r in rules], [{"sm_90": 1.06}, {"sm_90": 1.02}, {"sm_90": 4.5}, {"sm_90": 4.4}])
        # the static rules and the speed list are untouched
        self.assertEqual(json.loads(before)["rules"], json.loads(after)["rules"])
        self.assertEqual(json.loads(before).get("speed"), json.loads(after).get("speed"))

    def test_record_refuses_a_result_without_counters(self):
        d = self.tmp()
        ncu, _ = self.fake_ncu(d, os.path.join(HAND, "ERR_NVGPUCTRPERM.txt"))
        rubric = os.path.join(d, "rubric.json")
        shutil.copy(rubric_path("06"), rubric)
        result = counters.measure(self.check_binary(d), rubric, ncu=ncu)
        with self.assertRaises(counters.CountersError):
            counters.record(result, rubric, "results/x", None)
        self.assertEqual(read(rubric), read(rubric_path("06")))

    def test_json_output_and_the_judge_command(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = counters.main(["judge", "--rubric", rubric_path("06"), "--csv", os.path.join(HAND, "06_bad_swizzle.csv"), "--json"])
        self.assertEqual(rc, 0)
        result = json.loads(out.getvalue())
        self.assertTrue(result["counters"]["read"])
        self.assertEqual(sorted({r["exercise"] for r in result["rows"] if r["status"] == "short"}), ["06.swizzled"])


if __name__ == "__main__":
    unittest.main()
