"""Unit tests of scripts/quote_results.py, on a small made-up repository in a scratch folder:
it fills in figures and blocks, --check reports a README made to disagree (with a diff and exit 1),
and a figure that cannot be traced is an error that names its file and line.

    python3 -m unittest discover -s tests/readme -v
"""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import quote_results as qr  # noqa: E402

CSV = textwrap.dedent("""\
    lesson,gpu,problem,kernel,ms,rate,unit,percent_of_ceiling,check
    01_demo,"GPU A (sm_90, CUDA 13.0)","8192 x 8192 transpose",cudaMemcpy device-to-device,0.133456,4022.83,GB/s,100,-
    01_demo,"GPU A (sm_90, CUDA 13.0)","8192 x 8192 transpose","slow, one float",0.9938,540.207,GB/s,13.4285,ok
    01_demo,"GPU A (sm_90, CUDA 13.0)","8192 x 8192 transpose",fast,0.1355,3962.97,GB/s,97.85,ok
    02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 67108864 floats",CPU loop,56.2,4.77617,GB/s,0.124064,-
    02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 67108864 floats",cub,0.0697,3849.75,GB/s,100,-
    02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 67108864 floats",mine,0.0671,3999.34,GB/s,103.886,ok
    02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 1048576 floats",cub,0.01,354.728,GB/s,100,-
    02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 1048576 floats",mine,0.01,477.494,GB/s,134.608,ok
    """)

LOG = textwrap.dedent("""\
    === 01_demo ===
    GPU 0: GPU A

    8192 x 8192 transpose
      kernel                  ms        GB/s    % ceiling  check
      cudaMemcpy          0.1335      4022.8      100.0%*  -
      slow, one float     0.9938       540.2        13.4%  ok
      (* the ceiling, measured in this run)

    latency
      DRAM, random       1 GiB   65536        665.1     336.0      23.2  ok
    === 02_sum ===
      DRAM, random       1 GiB   65536        999.9     999.9      99.9  ok
    """)

NCU = textwrap.dedent("""\
    === lessons/01_demo/ncu.sh ===
      copy_kernel(const float *, float *, int, int) (256, 1024, 1)x(32, 8, 1), Context 1
        dram__bytes_read.sum                                  Mbyte       268.46
        gpu__time_duration.sum                                   us       212.86
      copy_kernel(const float *, float *, int, int) (256, 1024, 1)x(32, 8, 1), Context 1
        dram__bytes_read.sum                                  Mbyte       270.00
    """)


class Repo:
    """A scratch repository with results/gpua/ and a README."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="quote_results_test_")
        os.makedirs(os.path.join(self.root, "results", "gpua"))
        os.makedirs(os.path.join(self.root, "lessons", "01_demo"))
        os.makedirs(os.path.join(self.root, "lessons", "02_sum"))
        self.write("results/gpua/results.csv", CSV)
        self.write("results/gpua/lessons.txt", LOG)
        self.write("results/gpua/ncu.txt", NCU)

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def run(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = qr.main(["--root", self.root, *args])
        return rc, out.getvalue(), err.getvalue()

    def close(self):
        shutil.rmtree(self.root)


def marker(expr, value="?"):
    return f"<!-- q: {expr} -->{value}<!-- /q -->"


class QuoteResultsTest(unittest.TestCase):
    def setUp(self):
        self.repo = Repo()

    def tearDown(self):
        self.repo.close()

    def fill(self, text):
        self.repo.write("README.md", text)
        rc, out, err = self.repo.run()
        return rc, self.repo.read("README.md"), err

    def test_fills_inline_figures_from_the_csv(self):
        rc, text, err = self.fill("slow: " + marker('pct("gpua", "01", "slow, one float")') + ", "
                                  + marker('rate("gpua", "01_demo", "fast")') + " GB/s in "
                                  + marker('ms("gpua", "01", "fast", d=4)') + " ms\n")
        self.assertEqual(rc, 0, err)
        self.assertIn('-->13.4%<!-- /q -->', text)
        self.assertIn('-->3963.0<!-- /q --> GB/s', text)
        self.assertIn('-->0.1355<!-- /q --> ms', text)

    def test_a_marker_may_not_hold_two_dashes(self):
        # cmark-gfm (GitHub) reads a comment holding "--" as text: the marker spells them \x2d.
        rc, text, err = self.fill("x " + marker('grep("gpua/log.txt", r"^run (--x) ([0-9]+)")', "1") + "\n")
        self.assertEqual(rc, 1)
        self.assertIn("holds '--'", err)

    def test_rounds_half_up_as_the_csv_writes_it(self):
        # 97.85 is stored as a double just below 97.85; the lesson printed 97.9, and so must we.
        rc, text, err = self.fill(marker('pct("gpua", "01", "fast")') + "\n")
        self.assertEqual(rc, 0, err)
        self.assertIn('-->97.9%<!-- /q -->', text)

    def test_problem_picks_one_of_several_runs(self):
        rc, text, err = self.fill(marker('pct("gpua", "02", "mine", problem="1048576")') + "\n")
        self.assertEqual(rc, 0, err)
        self.assertIn('-->134.6%<!-- /q -->', text)

    def test_a_row_in_two_problems_without_problem_is_an_error(self):
        rc, text, err = self.fill("x\n" + marker('pct("gpua", "02", "mine")', "103.9%") + "\n")
        self.assertEqual(rc, 1)
        self.assertIn("README.md:2:", err)
        self.assertIn("give problem=", err)
        self.assertIn("103.9%", text)  # left as it was

    def test_raw_grep_and_ncu_read_the_console_output(self):
        rc, text, err = self.fill(
            marker('raw("gpua/lessons.txt", "01_demo", "DRAM, random", 4)') + " ns; "
            + marker('grep("gpua/lessons.txt", r"slow, one float +[0-9.]+ +([0-9.]+)")') + " GB/s; "
            + marker('ncu("gpua/ncu.txt", "lessons/01_demo/ncu.sh", "copy_kernel", "dram__bytes_read.sum", nth=2)')
            + " MB\n")
        self.assertEqual(rc, 0, err)
        self.assertIn('-->336.0<!-- /q --> ns', text)  # from 01_demo's section, not 02_sum's
        self.assertIn('-->540.2<!-- /q --> GB/s', text)
        self.assertIn('-->270.00<!-- /q --> MB', text)

    def test_ncu_unit_is_the_word_before_the_value(self):
        src = qr.Sources(self.repo.root)
        args = ("gpua/ncu.txt", "lessons/01_demo/ncu.sh", "copy_kernel")
        self.assertEqual(src.ncu_unit(*args, "dram__bytes_read.sum"), "Mbyte")
        self.assertEqual(src.ncu_unit(*args, "gpu__time_duration.sum"), "us")
        self.assertEqual(src.ncu(*args, "dram__bytes_read.sum", nth=2).text, "270.00")
        with self.assertRaisesRegex(qr.QuoteError, "has no metric sm__cycles"):
            src.ncu_unit(*args, "sm__cycles")

    def test_total_and_count_add_up_a_log(self):
        rc, text, err = self.fill(marker('f(total("gpua/lessons.txt", r"^  DRAM, random +1 GiB +[0-9]+ +([0-9.]+)"), ".1f")')
                                  + " " + marker('count("gpua/lessons.txt", r"DRAM, random")') + "\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("-->1665.0<!-- /q --> ", text)  # 665.1 + 999.9
        self.assertIn("-->2<!-- /q -->", text)

    def test_arithmetic_needs_a_format(self):
        expr = 'pct("gpua", "01", "fast") - pct("gpua", "01", "slow, one float")'
        rc, text, err = self.fill(marker(f'f({expr}, ".1f")') + "\n")
        self.assertEqual(rc, 0, err)
        self.assertIn('-->84.4<!-- /q -->', text)
        rc, text, err = self.fill(marker(expr) + "\n")
        self.assertEqual(rc, 1)
        self.assertIn("say how to print it", err)

    def test_blocks_copy_console_output(self):
        rc, text, err = self.fill(
            "before\n<!-- q-begin: text(\"gpua/lessons.txt\", \"01_demo\", \"8192 x 8192\", \"(* the ceiling\") -->\n"
            "stale\n<!-- q-end -->\nafter\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("```\n8192 x 8192 transpose\n", text)
        self.assertIn("  (* the ceiling, measured in this run)\n```\n<!-- q-end -->\nafter\n", text)
        self.assertNotIn("stale", text)

    def test_summary_follows_the_rows_that_exist(self):
        readme = "<!-- q-begin: summary(\"gpua\") -->\n<!-- q-end -->\n"
        rc, text, err = self.fill(readme)
        self.assertEqual(rc, 0, err)
        self.assertIn("| 01_demo | ceiling: cudaMemcpy device-to-device | 4022.8 GB/s |", text)
        self.assertIn("|  | slowest: slow, one float | 13.4% |", text)
        self.assertIn("|  | step: mine | 103.9% |", text)
        self.assertNotIn("CPU loop", text)
        # A new run with a new row and without an old one: the block follows.
        self.repo.write("results/gpua/results.csv", "".join(
            line.replace("fast,0.1355", "faster,0.1300") for line in CSV.splitlines(True)
            if not line.startswith('02_sum,"GPU A (sm_90, CUDA 13.0)","sum of 67108864 floats",mine')))
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("+|  | fastest: faster | 97.9% |", out)
        rc, out, err = self.repo.run()
        self.assertEqual(rc, 0, err)
        self.assertNotIn("103.9%", self.repo.read("README.md"))
        self.assertIn("|  | step: mine | 134.6% |", self.repo.read("README.md"))  # 02_sum's first problem is now 2^20

    def test_a_link_around_a_span_is_anchored_at_its_lines(self):
        self.repo.write("lessons/01_demo/main.cu", "// demo\nint f() {\n  return 1;\n}\n")
        link = "[lines " + marker('span("lessons/01_demo/main.cu", "^int f")') + "](lessons/01_demo/main.cu)"
        rc, text, err = self.fill("See " + link + " and [the notes](notes.md).\n")
        self.assertEqual(rc, 0, err)
        self.assertIn("-->2\u20134<!-- /q -->](lessons/01_demo/main.cu#L2-L4)", text)
        self.assertIn("[the notes](notes.md)", text)  # only source files get a line anchor
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 0, err)
        # The code moves: the figure and the anchor are both stale, and --check says so.
        self.repo.write("lessons/01_demo/main.cu", "// demo\n// more\nint f() {\n  return 1;\n}\n")
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("main.cu#L3-L5)", out)

    def test_check_reports_a_readme_made_to_disagree(self):
        good = "slow: " + marker('pct("gpua", "01", "slow, one float")') + "\n"
        rc, text, err = self.fill(good)
        self.assertEqual(rc, 0, err)
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 0, err)
        self.assertIn("1 markers agree", out)
        self.repo.write("README.md", text.replace("13.4%", "14.0%"))
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("-slow: <!-- q: pct(\"gpua\", \"01\", \"slow, one float\") -->14.0%<!-- /q -->", out)
        self.assertIn("+slow: <!-- q: pct(\"gpua\", \"01\", \"slow, one float\") -->13.4%<!-- /q -->", out)
        self.assertIn("disagree", err)
        self.assertIn("14.0%", self.repo.read("README.md"))  # --check changes nothing

    def test_untraceable_figures_are_errors(self):
        cases = {
            'pct("gpua", "01", "no such kernel")': "has no row 'no such kernel'",
            'pct("gpub", "01", "fast")': "results/gpub/results.csv does not exist",
            'raw("gpua/lessons.txt", "03_none", "x")': "no section '=== 03_none ==='",
            'raw("gpua/lessons.txt", "01_demo", "nothing here")': "0 lines start with 'nothing here'",
            'ncu("gpua/ncu.txt", "lessons/01_demo/ncu.sh", "copy_kernel", "sm__cycles")': "has no metric sm__cycles",
            'open("/etc/passwd")': "not allowed in a marker",
            'pct("gpua", "../..", "x")': "no rows of lesson ../..",
            'grep("../README.md", "x")': "not a file under results/",
        }
        for expr, message in cases.items():
            with self.subTest(expr=expr):
                rc, text, err = self.fill(marker(expr, "1.0%") + "\n")
                self.assertEqual(rc, 1)
                self.assertIn("README.md:1:", err)
                self.assertIn(message, err)
                self.assertIn("-->1.0%<!-- /q -->", text)

    def test_untraced_lists_figures_outside_markers(self):
        self.repo.write("README.md", "traced " + marker('pct("gpua", "01", "fast")', "97.9%")
                        + ", not traced 41.5% and 1668.8 GB/s, `3.5 ms` is code\n```\n12.5 ms\n```\n")
        rc, out, err = self.repo.run("--untraced")
        self.assertEqual(rc, 0, err)
        self.assertIn("README.md:1: 41.5%", out)
        self.assertIn("README.md:1: 1668.8 GB/s", out)
        self.assertNotIn("97.9", out)
        self.assertNotIn("3.5 ms", out)
        self.assertNotIn("12.5", out)
        self.assertIn("2 figure(s) without a marker", out)

    def test_untraced_fails_on_a_readme_with_an_untraced_figure(self):
        traced = ("traced " + marker('pct("gpua", "01", "fast")', "97.9%")
                  + ", asked for <!-- not measured: the issue's target -->1.8x<!-- /not measured -->\n")
        self.repo.write("README.md", traced)
        rc, out, err = self.repo.run("--untraced-fails")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("0 figure(s) without a marker", out)
        self.repo.write("README.md", traced + "and a copy that ran at 4050.0 GB/s\n")
        rc, out, err = self.repo.run("--untraced-fails")
        self.assertEqual(rc, 1)
        self.assertIn("README.md:2: 4050.0 GB/s", out)
        self.assertIn("1 figure(s) without a marker", out)
        self.assertIn("not measured", err)
        rc, out, err = self.repo.run("--untraced")  # only lists
        self.assertEqual(rc, 0, err)

    def test_not_measured_needs_a_reason_and_its_end(self):
        rc, text, err = self.fill("a <!-- not measured: -->1.8x<!-- /not measured --> target\n")
        self.assertEqual(rc, 1)
        self.assertIn("README.md:1: '<!-- not measured: REASON -->' needs its reason", err)
        rc, text, err = self.fill("a <!-- not measured: a target -->1.8x target\n")
        self.assertEqual(rc, 1)
        self.assertIn("without its '<!-- /not measured -->'", err)
        self.repo.write("README.md", "a <!-- not measured: a target -->1.8x<!-- /not measured --> target\n")
        rc, out, err = self.repo.run("--list")
        self.assertEqual(rc, 0, err)
        self.assertIn("README.md:1: not measured (a target): 1.8x", out)

    def test_unbalanced_markers_are_errors(self):
        rc, text, err = self.fill("<!-- q-begin: summary(\"gpua\") -->\nno end\n")
        self.assertEqual(rc, 1)
        self.assertIn("without '<!-- q-end -->'", err)
        rc, text, err = self.fill("<!-- q: pct(\"gpua\", \"01\", \"fast\") -->97.9%\n")
        self.assertEqual(rc, 1)
        self.assertIn("without its '<!-- /q -->'", err)

    # ---- named figures: the marker says a name, the file's closing q-names block its expression
    def names(self, *definitions):
        return "\n<!-- q-names: where each figure above comes from\n" + "".join(d + "\n" for d in definitions) + "-->\n"

    def test_a_named_figure_resolves_from_the_block_at_the_end(self):
        page = ("slow: " + marker("slow_pct") + ", fast: " + marker("fast_rate") + " GB/s, slow again "
                + marker("slow_pct") + "\n" + self.names('slow_pct = pct("gpua", "01", "slow, one float")',
                                                       'fast_rate = rate("gpua", "01_demo", "fast")'))
        rc, text, err = self.fill(page)
        self.assertEqual(rc, 0, err)
        self.assertEqual(text.split("\n")[0], "slow: <!-- q: slow_pct -->13.4%<!-- /q -->, fast: <!-- q: fast_rate -->"
                         "3963.0<!-- /q --> GB/s, slow again <!-- q: slow_pct -->13.4%<!-- /q -->")
        self.assertTrue(text.endswith(self.names('slow_pct = pct("gpua", "01", "slow, one float")',
                                                 'fast_rate = rate("gpua", "01_demo", "fast")')))  # left as it was
        rc, out, err = self.repo.run("--check")
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("3 markers agree", out)
        rc, out, err = self.repo.run("--list")
        self.assertEqual(rc, 0, err)
        self.assertIn('README.md:1: slow_pct = pct("gpua", "01", "slow, one float") -> 13.4%', out)
        self.assertIn('README.md:1: fast_rate = rate("gpua", "01_demo", "fast") -> 3963.0', out)
        # The definition changes: --check reports the figure, not the block.
        self.repo.write("README.md", text.replace('"slow, one float")', '"fast")'))
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("+slow: <!-- q: slow_pct -->97.9%<!-- /q -->", out)

    def test_a_name_no_block_defines_is_an_error(self):
        rc, text, err = self.fill("x\nslow: " + marker("slow_pct", "13.4%") + " and " + marker("slo_pct", "1.0%") + "\n"
                                  + self.names('slow_pct = pct("gpua", "01", "slow, one float")'))
        self.assertEqual(rc, 1)
        self.assertIn("README.md:2: 'slo_pct' is not defined in this file's q-names block", err)
        self.assertIn("-->1.0%<!-- /q -->", text)  # left as it was
        rc, text, err = self.fill("slow: " + marker("slow_pct", "13.4%") + "\n")  # no block at all
        self.assertEqual(rc, 1)
        self.assertIn("README.md:1: 'slow_pct' is not defined", err)

    def test_a_name_defined_twice_is_an_error(self):
        rc, text, err = self.fill("slow: " + marker("slow_pct") + "\n" + self.names(
            'slow_pct = pct("gpua", "01", "slow, one float")', 'slow_pct = pct("gpua", "01", "fast")'))
        self.assertEqual(rc, 1)
        self.assertIn("README.md:5: 'slow_pct' is defined twice (first at line 4)", err)

    def test_a_name_no_marker_uses_is_an_error(self):
        rc, text, err = self.fill("slow: " + marker("slow_pct") + "\n" + self.names(
            'slow_pct = pct("gpua", "01", "slow, one float")', 'fast_pct = pct("gpua", "01", "fast")'))
        self.assertEqual(rc, 1)
        self.assertIn("README.md:5: 'fast_pct' is defined in the q-names block, but no marker uses it", err)
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("fast_pct", err)

    def test_a_malformed_block_is_an_error(self):
        define = 'slow_pct = pct("gpua", "01", "slow, one float")'
        use = "slow: " + marker("slow_pct") + "\n"
        cases = {
            use + self.names(define) + "\nmore text\n": "README.md:7: text after the q-names block",
            use + self.names(define, "slow_pct: 13.4") : "README.md:5: not a definition in the q-names block",
            use + self.names(define, 'Fast = pct("gpua", "01", "fast")'): "README.md:5: 'Fast' is not a name",
            use + self.names(define, 'a_name_far_too_long_x = pct("gpua", "01", "fast")'): "at most 18 characters",
            use + self.names(define, 'dashes = grep("gpua/lessons.txt", r"(--x)")'): "README.md:5: a definition that holds '--'",
            use + self.names(define).rstrip("\n").rsplit("\n", 1)[0] + "\n": "README.md:3: a '<!-- q-names' block without its closing",
            use + self.names(define).lstrip("\n"): "README.md:2: put a blank line before the q-names block",
        }
        for page, message in cases.items():
            with self.subTest(message=message):
                rc, text, err = self.fill(page)
                self.assertEqual(rc, 1, err)
                self.assertIn(message, err)

    def test_a_named_span_anchors_its_link(self):
        self.repo.write("lessons/01_demo/main.cu", "// demo\nint f() {\n  return 1;\n}\n")
        page = ("See [lines " + marker("span_f") + "](lessons/01_demo/main.cu) and [the count " + marker("n_dram")
                + "](lessons/01_demo/main.cu).\n"
                + self.names('span_f = span("lessons/01_demo/main.cu", "^int f")',
                             'n_dram = count("gpua/lessons.txt", r"DRAM, random")'))
        rc, text, err = self.fill(page)
        self.assertEqual(rc, 0, err)
        self.assertIn("[lines <!-- q: span_f -->2\u20134<!-- /q -->](lessons/01_demo/main.cu#L2-L4)", text)
        # A named figure that is not a span leaves its link as it was.
        self.assertIn("[the count <!-- q: n_dram -->2<!-- /q -->](lessons/01_demo/main.cu)", text)
        self.repo.write("lessons/01_demo/main.cu", "// demo\n// more\nint f() {\n  return 1;\n}\n")
        rc, out, err = self.repo.run("--check")
        self.assertEqual(rc, 1)
        self.assertIn("+See [lines <!-- q: span_f -->3\u20135<!-- /q -->](lessons/01_demo/main.cu#L3-L5)", out)

    def test_a_named_block_and_the_definitions_are_no_figures(self):
        page = ("<!-- q-begin: slow_rows -->\n<!-- q-end -->\nfast " + marker("fast_pct", "97.9%") + "\n"
                + self.names('slow_rows = text("gpua/lessons.txt", "01_demo", "slow, one float", "slow, one float")',
                             'fast_pct = f(pct("gpua", "01", "fast") * 1.0, ".1f") # not 12.5 ms'))
        self.repo.write("README.md", page)
        rc, out, err = self.repo.run("--untraced-fails")  # "12.5 ms" in the block is an expression's text
        self.assertEqual(rc, 0, out + err)
        rc, text, err = self.fill(page.replace(" # not 12.5 ms", ""))
        self.assertEqual(rc, 0, err)
        self.assertIn("<!-- q-begin: slow_rows -->\n```\n  slow, one float     0.9938       540.2        13.4%  ok\n"
                      "```\n<!-- q-end -->", text)
        rc, out, err = self.repo.run("--list")
        self.assertIn('README.md:1: slow_rows = text("gpua/lessons.txt", "01_demo", "slow, one float", "slow, one float") -> 3 lines', out)


def lesson_output(lesson, problem, runs, ceiling=0):
    """A lesson's CSV rows and console table for (kernel, ms, rate) runs given as the doubles the
    lesson measured, written as the lesson writes them (common/host.cpp): the CSV with the stream's
    6 significant digits, the console with %.4f, %.1f and %.1f%%."""
    top = runs[ceiling][2]
    width = max(6, max(len(k) for k, _, _ in runs))
    rows, table = [], [f"=== {lesson} ===", "", problem,
                       "  %-*s  %10s  %10s  %11s  %s" % (width, "kernel", "ms", "GB/s", "% ceiling", "check")]
    for i, (kernel, ms, rate) in enumerate(runs):
        pct = 100.0 * rate / top
        rows.append(f'{lesson},"GPU A (sm_90, CUDA 13.0)",{problem},{kernel},{ms:g},{rate:g},GB/s,{pct:g},ok\n')
        table.append("  %-*s  %10.4f  %10.1f  %11s  %s" % (width, kernel, ms, rate, "%.1f%%%s" % (pct, "*" if i == ceiling else ""),
                                                          "ok (rel err 1.0e-07)"))
    table.append("  (* the ceiling, measured in this run)")
    return "".join(rows), "\n".join(table) + "\n"


# The H200's lesson 06 and the H100's lesson 01 as measured: the CSV keeps 1622.95 and 2887.15 (six
# significant digits), the console printed 1622.9 and 2887.1; 2494.75 printed 2494.8.
HALVES = [("cudaMemcpy device-to-device", 0.18602, 2887.1499996),
          ("tiled 32x32 unpadded", 0.3308, 1622.9499981),
          ("tiled 32x33 padded", 0.2152, 2494.7500032),
          ("copy one float", 5.51, 97.8500001),
          ("slow", 184.98761, 1139.09)]  # 39.4538...% of the ceiling: prints 39.5%, to 0 decimals 39


class NoDoubleRounding(unittest.TestCase):
    """A figure quoted from the CSV shows what the lesson printed for it, at the same decimals, even
    where the CSV's own text lies on a half (1622.95): one page never shows 1622.9 in its console
    block and 1623.0 in its text."""

    def setUp(self):
        self.repo = Repo()
        rows, table = lesson_output("06_demo", "8192 x 8192 fp32 transpose", HALVES)
        self.repo.write("results/gpua/results.csv", CSV + rows)
        self.repo.write("results/gpua/lessons.txt", LOG + table)
        os.makedirs(os.path.join(self.repo.root, "lessons", "06_demo"))

    def tearDown(self):
        self.repo.close()

    def fill(self, text):
        self.repo.write("README.md", text)
        rc, out, err = self.repo.run()
        self.assertEqual(rc, 0, err)
        return self.repo.read("README.md")

    def test_a_figure_on_a_half_shows_what_the_console_printed(self):
        text = self.fill("<!-- q-begin: rows(\"gpua/lessons.txt\", \"06_demo\", [\"tiled 32x32 unpadded\"]) -->\n"
                         "<!-- q-end -->\n"
                         "it reaches " + marker('rate("gpua", "06", "tiled 32x32 unpadded")') + " GB/s, "
                         "padded " + marker('rate("gpua", "06", "tiled 32x33 padded")') + " GB/s, the copy "
                         + marker('rate("gpua", "06", "cudaMemcpy device-to-device")') + " GB/s\n")
        self.assertIn("1622.9        56.2%", text)  # the console's line, copied
        self.assertIn("-->1622.9<!-- /q --> GB/s", text)  # not 1623.0, rounded from the CSV's 1622.95
        self.assertIn("-->2494.8<!-- /q --> GB/s", text)  # 2494.75 printed 2494.8: a half goes either way
        self.assertIn("-->2887.1<!-- /q --> GB/s", text)  # not 2887.2

    def test_smallest_largest_f_and_rounded_keep_the_printed_figure(self):
        text = self.fill(marker('smallest(rate("gpua", "06", "cudaMemcpy device-to-device"), rate("gpua", "06", "tiled 32x33 padded"))')
                         + " " + marker('f(rate("gpua", "06", "copy one float"), ".1f")')  # the float is 97.8499...
                         + " " + marker('rate("gpua", "06", "copy one float")')
                         + " " + marker('rounded(pct("gpua", "06", "slow"), 0)')
                         + " " + marker('rounded(rate("gpua", "06", "cudaMemcpy device-to-device"), 0)') + "\n")
        self.assertEqual(text, "".join(marker(e, v) + s for e, v, s in [
            ('smallest(rate("gpua", "06", "cudaMemcpy device-to-device"), rate("gpua", "06", "tiled 32x33 padded"))', "2494.8", " "),
            ('f(rate("gpua", "06", "copy one float"), ".1f")', "97.9", " "),
            ('rate("gpua", "06", "copy one float")', "97.9", " "),
            ('rounded(pct("gpua", "06", "slow"), 0)', "39", " "),
            ('rounded(rate("gpua", "06", "cudaMemcpy device-to-device"), 0)', "2887", "\n")]))

    def test_rounded_starts_from_the_csv_not_from_the_shown_figure(self):
        # 39.4538% shows as 39.5%; to 0 decimals it is 39, where rounding the shown 39.5 gives 40.
        text = self.fill(marker('pct("gpua", "06", "slow")') + " " + marker('rounded(pct("gpua", "06", "slow"), 0)') + "\n")
        self.assertIn("-->39.5%<!-- /q --> ", text)
        self.assertIn("-->39<!-- /q -->", text)

    def test_ms_to_the_consoles_decimals_takes_the_consoles_text(self):
        # The CSV keeps 184.988 (six digits); the console printed 184.9876: four decimals come from there.
        text = self.fill(marker('ms("gpua", "06", "slow", d=4)') + " " + marker('ms("gpua", "06", "slow", d=1)') + "\n")
        self.assertIn("-->184.9876<!-- /q --> ", text)
        self.assertIn("-->185.0<!-- /q -->", text)

    def test_summary_shows_what_the_console_printed(self):
        text = self.fill("<!-- q-begin: summary(\"gpua\") -->\n<!-- q-end -->\n")
        self.assertIn("| 06_demo | ceiling: cudaMemcpy device-to-device | 2887.1 GB/s |", text)

    def test_without_the_consoles_line_a_half_rounds_up(self):
        self.repo.write("results/gpua/lessons.txt", LOG)  # no table of 06_demo
        self.assertIn("-->1623.0<!-- /q -->", self.fill(marker('rate("gpua", "06", "tiled 32x32 unpadded")') + "\n"))
        # A console line that is not this CSV's (another run's: 1500.0) is not used.
        rows, table = lesson_output("06_demo", "8192 x 8192 fp32 transpose",
                                    [r if r[0] != "tiled 32x32 unpadded" else (r[0], 0.3308, 1500.0) for r in HALVES])
        self.repo.write("results/gpua/lessons.txt", LOG + table)
        self.assertIn("-->1623.0<!-- /q -->", self.fill(marker('rate("gpua", "06", "tiled 32x32 unpadded")') + "\n"))

    def test_every_figure_matches_the_console_at_its_decimals(self):
        import random
        rng = random.Random(32)
        runs = [("ceiling", 0.2, 3000.0 + rng.random())]
        for i in range(300):
            # Half of them a hair off a half at the console's decimals, where the CSV's text is on it.
            rate = rng.randint(1, 4000) + (0.05 + rng.choice([-1, 1]) * rng.random() * 4e-7 if i % 2 else rng.random())
            ms = rng.randint(0, 200) + (0.00005 + rng.choice([-1, 1]) * rng.random() * 4e-10 if i % 3 else rng.random())
            runs.append((f"kernel {i}", ms, rate))
        rows, table = lesson_output("06_demo", "a sweep", runs)
        self.repo.write("results/gpua/results.csv", CSV + rows)
        self.repo.write("results/gpua/lessons.txt", LOG + table)
        sources = qr.Sources(self.repo.root)
        halves = 0
        for kernel, ms, rate in runs:
            console = next(line for line in table.split("\n") if line.startswith(f"  {kernel}  "))
            printed = console.split()[len(kernel.split()):len(kernel.split()) + 3]
            halves += sources.row("gpua", "06", kernel)["rate"].endswith("5") and rate > 1000
            with self.subTest(kernel=kernel, ms=ms, rate=rate):
                self.assertEqual(sources.ms("gpua", "06", kernel, d=4).text, printed[0])
                self.assertEqual(sources.rate("gpua", "06", kernel).text, printed[1])
                self.assertEqual(sources.pct("gpua", "06", kernel).text, printed[2].rstrip("*"))
        self.assertGreater(halves, 100)  # the test does test the halves

    def test_to_decimals(self):
        self.assertEqual(qr.to_decimals(["1622.95", "1622.9"], 1), "1622.9")
        self.assertEqual(qr.to_decimals(["1622.95"], 1), "1623.0")  # nothing else known: half up
        self.assertEqual(qr.to_decimals(["1622.94", "1622.9"], 1), "1622.9")
        self.assertEqual(qr.to_decimals(["39.4538", "39.5"], 0), "39")
        self.assertEqual(qr.to_decimals(["12.25", "12.2"], 1), "12.2")  # an exact half printed half-even
        self.assertTrue(qr.on_half("2887.15", 1))
        self.assertFalse(qr.on_half("2887.15", 2))
        self.assertFalse(qr.on_half("2887.151", 1))


if __name__ == "__main__":
    unittest.main()
