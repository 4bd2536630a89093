"""bench/cost_table.py: the cost table evidence_cost.sh prints, on made-up timing files."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TABLE = os.path.join(ROOT, "bench", "cost_table.py")


class CostTable(unittest.TestCase):
    def table(self, off, on):
        with tempfile.TemporaryDirectory() as d:
            for mode, lines in (("off", off), ("on", on)):
                os.makedirs(os.path.join(d, mode))
                with open(os.path.join(d, mode, "timing.txt"), "w") as f:
                    f.write("".join("%04d s / l: %s\n" % (i + 1, line) for i, line in enumerate(lines)))
            out = subprocess.run([sys.executable, TABLE, d], stdout=subprocess.PIPE, check=True, text=True).stdout
        return {l[:29].strip(): l[29:].split() for l in out.splitlines()[2:]}

    def test_medians_and_ratios(self):
        t = self.table(["compile_s=10 lint_s=1 run_s=2 judge_s=1", "compile_s=30 lint_s=3 run_s=4 judge_s=3"],
                       ["compile_s=20 lint_s=2 static_s=1 run_s=3 judge_s=2 memcheck_s=1",
                        "compile_s=20 lint_s=2 static_s=1 run_s=3 judge_s=2 memcheck_s=1"])
        self.assertEqual(t["compile_s"], ["20.00", "20.00"])
        self.assertEqual(t["static_s"], ["-", "1.00"])           # never measured off
        self.assertEqual(t["checks on the GPU"][:2], ["5.00", "6.00"])  # median of 3 and 7; 6
        self.assertEqual(t["checks on the GPU"][-1], "1.20x")
        self.assertEqual(t["compile, lint, static, checks"][:2], ["27.00", "29.00"])  # median of 14, 40
        self.assertEqual(t["the same, off without lint"][:2], ["25.00", "29.00"])    # median of 13, 37


if __name__ == "__main__":
    unittest.main()
