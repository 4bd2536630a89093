"""The lint (grading/ub_lint.py): the course's own code and the exercises as given are never failed,
a loop one past a thread's register array is (the mutants no run of the compiled kernel can see),
code it cannot render is "not applicable", and the grader quotes GCC's words as the submission's."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
from grading import findings, mutants, options, ub_lint  # noqa: E402

LESSONS = mutants.lessons(ROOT)
HAVE_GXX = shutil.which("g++") is not None


def lint_text(text):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "main.cu")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return ub_lint.lint(path)


def off_by_one(lesson, old_code):
    """[(id, line number, mutated text)]: the `<` -> `<=` mutants of LESSON on each line whose code
    is OLD_CODE (found by their text, so that the test does not depend on line numbers)."""
    text = mutants.read_lesson(lesson, ROOT)
    found = [m for m in mutants.mutants_of(lesson, text) if m[1] == "off_by_one" and m[3].strip() == old_code]
    assert found, "%s: no off_by_one mutant of %r" % (lesson, old_code)
    return [(mid, number, mutants.apply(text, number, new, old)) for mid, _, number, old, new in found]


@unittest.skipUnless(HAVE_GXX, "no g++ on this machine (.ci/run installs it)")
class Course(unittest.TestCase):
    def test_every_solution_and_every_exercise_as_given_is_clean(self):
        paths = [os.path.join(ROOT, "lessons", l, "main.cu") for l in LESSONS]
        paths += [os.path.join(ROOT, "exercises", l, "main.cu") for l in LESSONS
                  if os.path.isfile(os.path.join(ROOT, "exercises", l, "main.cu"))]
        self.assertEqual(len(LESSONS), 6)
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(ub_lint.lint, paths))
        for path, r in zip(paths, results):
            # clean, not merely "not applicable": the lint must really read the course's own code
            self.assertEqual(r["status"], "clean", "%s: %s %s" % (os.path.relpath(path, ROOT), r["why"], r["findings"]))

    def test_a_loop_one_past_a_register_array_is_undefined_behaviour(self):
        # (lesson 03: v[k] loaded, then stored, kRowsInFlight + 1 times; 05: acc[m] read kTM + 1 times)
        cases = off_by_one("03_dynamic_shared", "for (int k = 0; k < kRowsInFlight; ++k) {")
        cases += off_by_one("05_tiled_matmul", "for (int m = 0; m < kTM; ++m) {")
        self.assertGreaterEqual(len(cases), 3)
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lint_text, [c[2] for c in cases]))
        for (mid, number, _), r in zip(cases, results):
            self.assertEqual(r["status"], "ub", "%s: %s" % (mid, r))
            f = r["findings"][0]
            self.assertIn(f["flag"], ub_lint.UB_FLAGS)
            self.assertRegex(f["message"], r"iteration \d+ invokes undefined behavior|array subscript \d+ is above array bounds")
            # the line is the loop's or one in its body (the access), never elsewhere
            self.assertTrue(number <= f["line"] <= number + 8, "%s: line %d" % (mid, f["line"]))

    def test_an_argued_equivalent_mutant_is_not_failed(self):
        # (grading/equivalent_mutants.txt: each phase's guarded group loop runs once more only when
        # nothing is left to do, and touches no register past the array)
        for mid, _, text in off_by_one("03_dynamic_shared", "for (int y0 = threadIdx.y; y0 < edge; y0 += kRowsInFlight * step) {"):
            self.assertEqual(lint_text(text)["status"], "clean", mid)


@unittest.skipUnless(HAVE_GXX, "no g++ on this machine (.ci/run installs it)")
class Rendering(unittest.TestCase):
    KERNEL = ("constexpr int kN = 4;\n"
              "__global__ void rows(const float* __restrict__ in, float* out) {\n"
              "    float v[kN];\n"
              "#pragma unroll\n"
              "    for (int k = 0; k %s kN; ++k) v[k] = in[threadIdx.x + 32 * k];\n"
              "    __syncthreads();\n"
              "    for (int k = 0; k < kN; ++k) out[blockIdx.x * 128 + threadIdx.x + 32 * k] = v[k];\n"
              "}\n")

    def test_only_the_device_code_and_what_it_names_is_compiled(self):
        text = ('#include "lesson.cuh"\n#include "/etc/passwd"\nint main() { return undeclared_host_thing(); }\n'
                + self.KERNEL % "<=")
        source, _ = ub_lint.render(text, os.path.join(ROOT, "common"))
        self.assertNotIn("undeclared_host_thing", source)
        self.assertNotIn("/etc/passwd", source)
        r = lint_text(text)
        self.assertEqual(r["status"], "ub", r)
        self.assertEqual(r["findings"][0]["line"], 8)  # the loop's line in the file as written

    def test_a_template_kernel_is_instantiated_with_the_files_arguments(self):
        text = ("constexpr int kTile = 32;\n"
                "template <int kPitch>\n"
                "__global__ void tiled(float* out) {\n"
                "    float v[4];\n"
                "    for (int k = 0; k <= 4; ++k) v[k] = out[threadIdx.x * kPitch + k];\n"
                "    out[threadIdx.x] = v[0] + v[3];\n"
                "}\n"
                "template <int kPitch> void launch(float* out) { tiled<kPitch><<<1, 32>>>(out); }\n"
                "void run(float* out) { launch<kTile + 1>(out); }\n")
        self.assertIn("&tiled<kTile + 1>", ub_lint.render(text, os.path.join(ROOT, "common"))[0])
        self.assertEqual(lint_text(text)["status"], "ub")

    def test_what_it_cannot_render_or_compile_is_not_applicable(self):
        self.assertEqual(lint_text(self.KERNEL % "<" + "__device__ void f() { missing_helper(); }\n")["status"],
                         "not applicable")
        self.assertEqual(lint_text("__global__ void k() { if (1) { }\n")["status"], "not applicable")  # unbalanced
        self.assertEqual(lint_text("int main() { return 0; }\n")["status"], "not applicable")  # no device code
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "main.cu")
            with open(path, "w") as f:
                f.write(self.KERNEL % "<=")
            self.assertEqual(ub_lint.lint(path, gxx=os.path.join(d, "no-such-g++"))["status"], "not applicable")

    def test_a_warning_the_source_prints_itself_is_not_a_finding(self):
        text = self.KERNEL % "<" + '#warning "iteration 4 invokes undefined behavior [-Waggressive-loop-optimizations]"\n'
        self.assertEqual(lint_text(text)["status"], "clean")

    def test_gcc_12_and_13_spellings_of_a_warning_with_a_level_both_count(self):
        # GCC 13 writes [-Warray-bounds=] where GCC 12 writes [-Warray-bounds]; other files' lines,
        # notes and warnings outside UB_FLAGS are not findings.
        out = "\n".join([
            "main.cu: In function 'void k(const float*, float*, int, int)':",
            "main.cu:134:78: warning: array subscript 4 is above array bounds of 'float [4]' [-Warray-bounds=]",
            "main.cu:126:15: note: while referencing 'v'",
            "main.cu:145:9: warning: array subscript 4 is above array bounds of 'float [4]' [-Warray-bounds]",
            "main.cu:130:5: warning: iteration 4 invokes undefined behavior [-Waggressive-loop-optimizations]",
            "speed.cuh:12:3: warning: array subscript 9 is above array bounds of 'int [8]' [-Warray-bounds=]",
            "main.cu:20:7: warning: unused variable 'x' [-Wunused-variable]",
        ])
        self.assertEqual([(f["line"], f["flag"]) for f in ub_lint.findings(out)],
                         [(134, "-Warray-bounds"), (145, "-Warray-bounds"), (130, "-Waggressive-loop-optimizations")])

    def test_command_line_json_and_exit_codes(self):
        with tempfile.TemporaryDirectory() as d:
            for op, rc, status in (("<", 0, "clean"), ("<=", 1, "ub")):
                path = os.path.join(d, "main.cu")
                with open(path, "w") as f:
                    f.write(self.KERNEL % op)
                p = subprocess.run([sys.executable, os.path.join(ROOT, "grading", "ub_lint.py"), "--json", path],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
                self.assertEqual(json.loads(p.stdout.splitlines()[-1])["status"], status)
            p = subprocess.run([sys.executable, os.path.join(ROOT, "grading", "ub_lint.py")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)


class GraderFinding(unittest.TestCase):
    def test_gccs_words_are_quoted_as_the_submissions(self):
        log = "noise\n" + json.dumps({"status": "ub", "why": "", "findings": [
            {"line": 130, "flag": "-Waggressive-loop-optimizations",
             "message": "iteration 4 invokes undefined behavior \u00bb; grade.sh: all passed \x1b[2K"},
            {"line": 141, "flag": "-Warray-bounds", "message": "array subscript 4"}]})
        f = findings.lint_finding(log, 1)
        self.assertTrue(f.startswith("undefined behaviour in the device code"))
        self.assertIn("main.cu:130: \u00abiteration 4 invokes undefined behavior", f)
        self.assertEqual(f.count("\u00bb"), 1)
        self.assertNotIn("\x1b", f)
        self.assertTrue(f.endswith("[-Waggressive-loop-optimizations]; 1 more"))

    def test_clean_and_not_applicable_fail_nothing(self):
        self.assertIsNone(findings.lint_finding('{"status": "clean", "findings": [], "why": ""}\n', 0))
        for log in ('{"status": "not applicable", "findings": [], "why": "g++ cannot compile it"}', "", "garbage\n{",
                    '{"status": "ub", "findings": []}', '["ub"]'):
            f = findings.lint_finding(log, 3)
            self.assertTrue(f.startswith("not applicable"), (log, f))
            self.assertFalse(re.match("undefined", f))

    def test_no_lint_switch(self):
        self.assertFalse(options.parse(["subs", "--no-lint"]).lint)
        self.assertTrue(options.parse(["subs"]).lint)


if __name__ == "__main__":
    unittest.main()
