"""grading/mutation_report.py: scripts/mutation_run.sh's bookkeeping, on canned inputs (no GPU)."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
from grading import mutants  # noqa: E402
from grading import mutation_report as mr  # noqa: E402

GPU = "NVIDIA H100 80GB HBM3"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def line(exercise, ms, ceiling_ms, gpu=GPU):
    return json.dumps({"exercise": exercise, "kernel": "k", "ms": ms, "ceiling": "copy", "ceiling_ms": ceiling_ms,
                       "runs": 21, "spread": 0.01, "gpu": gpu, "shape": "8192x4096"}) + "\n"


class Write(unittest.TestCase):
    def test_sources_targets_and_regions(self):
        ids = ["02_shared_transpose:02.tiled+3:redundant_rows:0", "04_reduction:04.tree+0:stub:0", "01_naive_transpose:01.strided_writes+0:other_coalescing:0"]
        by_id = {m[0]: m for m in mutants.all_mutants()}
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "src")
            os.makedirs(src)
            with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
                f.write("project(x)\n")
            with open(os.path.join(d, "ids.txt"), "w") as f:
                f.write("\n".join(ids) + "\n")
            mr.write_mutants(ROOT, src, os.path.join(d, "ids.txt"))
            for k, mid in enumerate(ids):
                _, _, number, old, new = by_id[mid]
                lesson = mid.split(":")[0]
                with open(os.path.join(src, "mutants", "mut%03d" % k, "main.cu"), encoding="utf-8") as f:
                    self.assertEqual(f.read(), mutants.apply(mutants.read_lesson(lesson), number, new, old))
            with open(os.path.join(src, "mutants", "regions.txt")) as f:
                self.assertEqual(f.read().split(), ["02.tiled", "04.tree", "01.strided_writes"])
            targets = read(os.path.join(src, "mutants", "targets.cmake"))
            self.assertIn("add_lesson(04_reduction SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/mutants/mut001/main.cu NAME mut001 "
                          "LIBRARIES ${course_libraries_04_reduction} EXCLUDE_FROM_ALL)", targets)
            self.assertIn("add_dependencies(mut002_ready mut002_check)", targets)
            self.assertTrue(read(os.path.join(src, "CMakeLists.txt")).endswith("include(${CMAKE_CURRENT_SOURCE_DIR}/mutants/targets.cmake)\n"))
            with open(os.path.join(d, "ids.txt"), "w") as f:
                f.write("02_shared_transpose:02.tiled+1:nothing:0\n")
            self.assertEqual(mr.main(["mutation_report.py", "write", ROOT, src, os.path.join(d, "ids.txt")]), 1)


class Speed(unittest.TestCase):
    def judge(self, mutant_lines, solution_rounds):
        """grading/evidence.py's verdict on a mutant's lines against solution rounds, through mutation_report."""
        with tempfile.TemporaryDirectory() as d:
            csv_path = os.path.join(d, "solution.csv")
            for i, rnd in enumerate(solution_rounds):
                p = os.path.join(d, "round%d.jsonl" % i)
                write(p, "".join(rnd) + "not json\n")
                mr.solution_rows(p, csv_path, GPU)
            rows = list(csv.reader(io.StringIO(read(csv_path))))
            self.assertEqual(rows[0], mr.SOLUTION_COLUMNS)
            self.assertEqual(len(rows), 1 + sum(len(r) for r in solution_rounds))
            p = os.path.join(d, "mutant.jsonl")
            write(p, "".join(mutant_lines))
            judged = os.path.join(d, "judged.json")
            with open(judged, "w") as f:
                subprocess.run([sys.executable, "-m", "grading.evidence", "judge",
                                os.path.join(ROOT, "lessons", "02_shared_transpose", "rubric.json"),
                                "--lines", p, "--solutions", csv_path], stdout=f, check=False, cwd=ROOT)
            return mr.speed_words(judged)

    def test_slow_met_and_unknown(self):
        rounds = [[line("02.tiled", 0.310, 0.300)], [line("02.tiled", 0.320, 0.300)], [line("02.tiled", 0.300, 0.300)]]
        # solution fractions 0.968, 0.9375, 1.0: median 0.968. A mutant at 0.300/0.700 = 0.4286: ratio 0.44.
        words = self.judge([line("02.tiled", 0.700, 0.300)], rounds)
        self.assertTrue(words.startswith("SHORT 02.tiled: correct, but 44% of the solution's speed"), words)
        self.assertTrue(words.endswith("[02.tiled=0.44]"), words)
        self.assertEqual(self.judge([line("02.tiled", 0.310, 0.300)], rounds), "met [02.tiled=1.00]")
        words = self.judge([line("02.tiled", 0.310, 0.300, gpu="another GPU")], rounds)
        self.assertTrue(words.startswith("not measured: no recorded solution figure for another GPU"), words)

    def test_no_verdict(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "empty.json")
            write(p, "")
            self.assertEqual(mr.speed_words(p), "not judged (grading/evidence.py gave no verdict)")


class Lint(unittest.TestCase):
    def test_lint_words(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "lint.txt")
            write(p, "g++ noise\n" + json.dumps({"status": "ub", "why": "", "findings": [
                {"line": 130, "flag": "-Waggressive-loop-optimizations", "message": "iteration 4 invokes\nundefined behavior"}]}) + "\n")
            self.assertEqual(mr.lint_words(p), "UB main.cu:130: iteration 4 invokes undefined behavior [-Waggressive-loop-optimizations]")
            write(p, json.dumps({"status": "clean", "findings": [], "why": ""}))
            self.assertEqual(mr.lint_words(p), "clean")
            write(p, json.dumps({"status": "not applicable", "findings": [], "why": "no g++ on this machine"}))
            self.assertEqual(mr.lint_words(p), "not applicable: no g++ on this machine")
            write(p, "Traceback ...\n")
            self.assertTrue(mr.lint_words(p).startswith("not applicable"))


class Report(unittest.TestCase):
    CASES = [  # id, the layers' outcomes (missing: "-"), expected caught_by
        ("01_naive_transpose:01.strided_reads+3:off_by_one:0", {"compile": "FAILED"}, "compile"),
        ("01_naive_transpose:01.strided_reads+3:off_by_one:1", {"compile": "ok", "host": "ok", "gpu": "FAILED", "static": "ok"}, "gpu"),
        ("02_shared_transpose:02.tiled+5:off_by_one:1", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "ERROR"}, "memcheck"),
        ("02_shared_transpose:02.tiled+1:no_padding:0", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "clean",
                                                 "speed": "SHORT 02.tiled: correct, but 60% [02.tiled=0.60]", "static": "SHORT x"}, "speed"),
        ("02_shared_transpose:02.tiled+3:wrong_stride:0", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "clean",
                                                   "speed": "met [02.tiled=0.95]", "static": "SHORT the tile"}, "static"),
        ("04_reduction:04.shuffle+2:half_mask:0", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "clean",
                                         "speed": "met [04.shuffle=1.00]", "static": "ok"}, "survived"),
        ("04_reduction:04.tree+0:stub:0", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "not run (deadline)"}, "unfinished"),
        ("04_reduction:04.shuffle+0:stub:0", {"compile": "not run (deadline)"}, "unfinished"),
        ("03_dynamic_shared:03.tile_in_flight+4:off_by_one:0", {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "clean",
                                                "speed": "met [03.tile_in_flight=1.01]", "static": "ok"}, "survived"),
        ("03_dynamic_shared:03.tile_in_flight+7:off_by_one:0", {"compile": "ok", "lint": "UB main.cu:130: iteration 4 invokes undefined behavior",
                                                "host": "ok", "gpu": "passed", "memcheck": "clean",
                                                "speed": "met [03.tile_in_flight=1.01]", "static": "ok"}, "lint"),
        ("05_tiled_matmul:05.register_tiled+66:off_by_one:1", {"compile": "ok", "lint": "not applicable: g++ cannot compile it", "host": "ok",
                                              "gpu": "passed", "memcheck": "clean", "speed": "met [05.register_tiled=1.00]",
                                              "static": "ok"}, "survived"),
    ]

    def test_caught_by_csv_and_summary(self):
        with tempfile.TemporaryDirectory() as d:
            state, out = os.path.join(d, "state"), os.path.join(d, "out")
            os.makedirs(state)
            os.makedirs(out)
            for k, (mid, layers, _) in enumerate(self.CASES):
                for layer, value in layers.items():
                    write(os.path.join(state, "mut%03d.%s" % (k, layer)), value + "\n")
            write(os.path.join(d, "ids.txt"), "\n".join(c[0] for c in self.CASES) + "\n")
            write(os.path.join(d, "equivalent.txt"), "# comment\n03_dynamic_shared:03.tile_in_flight+4:off_by_one:0: because\n")
            write(os.path.join(d, "problems.txt"), "lesson 06_bank_conflicts: caught by static (SHORT y)\n")
            write(os.path.join(out, "solution.csv"), 
                "gpu,exercise,kernel,ms,ceiling,ceiling_ms,runs,spread\n" + "".join(
                    "%s,02.tiled,k,%s,copy,0.300,21,0.01\n" % (GPU, ms) for ms in ("0.300", "0.310", "0.320")))
            text = mr.report(state, out, os.path.join(d, "ids.txt"), os.path.join(d, "equivalent.txt"), 300, 470, True, False,
                             os.path.join(d, "problems.txt"))
            rows = list(csv.DictReader(io.StringIO(read(os.path.join(out, "mutants.csv")))))
            self.assertEqual([r["caught_by"] for r in rows], [c[2] for c in self.CASES])
            self.assertEqual([r["equivalent"] for r in rows], [""] * 8 + ["yes", "", ""])
            self.assertEqual(rows[3]["speed"], "SHORT 02.tiled: correct, but 60% [02.tiled=0.60]")
            self.assertEqual(rows[0]["host"], "-")
            self.assertEqual(rows[9]["lint"], "UB main.cu:130: iteration 4 invokes undefined behavior")
            # counted: the 8 finished non-equivalent ones; caught: 6 of them (the lint one of those; a
            # lint that was not applicable catches nothing).
            self.assertIn("caught under default grading: 6 of 8 non-equivalent mutants that finished (75.0%)", text)
            self.assertIn("  lint               1\n", text)
            self.assertIn("  05_tiled_matmul:05.register_tiled+66:off_by_one:1: survived;", text)
            self.assertIn("THE COURSE'S OWN CODE: lesson 06_bank_conflicts: caught by static (SHORT y)", text)
            self.assertIn("  speed              1\n", text)
            self.assertIn("exercise stubs caught: 0 of 2\n  NOT CAUGHT: 04_reduction:04.tree+0:stub:0 (unfinished)", text)
            self.assertIn("unfinished (the deadline came first): 2, from 04_reduction:04.tree+0:stub:0 on", text)
            self.assertIn("  04_reduction:04.shuffle+2:half_mask:0: survived;", text)
            self.assertNotIn("03_dynamic_shared:03.tile_in_flight+4:off_by_one:0: survived", text)
            # fractions 1.0, 0.9677, 0.9375: median 0.9677, ratios 1.033 .. 0.969: spread 6.5%.
            self.assertIn("02.tiled             rounds  3  ceiling fraction median 0.968  ratio min 0.969 max 1.033  spread 6.5%", text)
            self.assertEqual(read(os.path.join(out, "summary.txt")), text)
            self.assertNotIn("MEMCHECK LAYER OFF", text)
            text = mr.report(state, out, os.path.join(d, "ids.txt"), os.path.join(d, "equivalent.txt"), 300, 0, False, False,
                             os.path.join(d, "problems.txt"))
            self.assertIn("MEMCHECK LAYER OFF", text)

    def test_a_failed_speed_case_is_a_failed_gpu_check(self):
        # (05's dropped barrier in the double-buffered loop on the H100: every other GPU check passed,
        # and the speed case's own verification of the timed output at its large size failed)
        o = {"compile": "ok", "host": "ok", "gpu": "passed", "memcheck": "clean", "speed": "FAILED", "static": "ok"}
        self.assertEqual(mr.caught_by(o, True), "gpu")
        self.assertEqual(mr.caught_by(dict(o, speed="timeout"), True), "gpu")
        self.assertEqual(mr.caught_by(dict(o, speed="SHORT 05.tiled: correct, but 14%"), True), "speed")

    def test_no_gpu_and_bad_command_lines(self):
        self.assertEqual(mr.caught_by({"compile": "ok", "host": "ok", "gpu": "skipped", "memcheck": "-", "speed": "-", "static": "ok"}, True),
                         "survived (no GPU)")
        err = io.StringIO()
        real, sys.stderr = sys.stderr, err
        try:
            self.assertEqual(mr.main(["mutation_report.py", "frobnicate"]), 2)
        finally:
            sys.stderr = real


if __name__ == "__main__":
    unittest.main()
