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


if __name__ == "__main__":
    unittest.main()
