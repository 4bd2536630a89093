"""grading/cell_grade.py: the memcheck subset's time limit. A submission that leaves a sleeping child
behind keeps compute-sanitizer waiting (it waits for every process the checks start): on an H200 the
attack suite's escape.cu held its GPU worker for the whole --sanitize-timeout (600 s) when its run
happened to pass. The limit now follows the cell's own run, never above --sanitize-timeout."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
from grading import cell_grade  # noqa: E402


class MemcheckLimit(unittest.TestCase):
    def test_a_quick_run_gets_the_floor(self):
        self.assertEqual(cell_grade.memcheck_limit(600, 1.3), cell_grade.MEMCHECK_FLOOR_S)
        self.assertLess(cell_grade.memcheck_limit(600, 1.3), 600)

    def test_a_long_run_gets_its_factor(self):
        self.assertEqual(cell_grade.memcheck_limit(600, 10.0), 200)
        self.assertEqual(cell_grade.memcheck_limit(600, 10.01), 201)  # rounded up, never down

    def test_never_above_sanitize_timeout(self):
        self.assertEqual(cell_grade.memcheck_limit(600, 100.0), 600)
        self.assertEqual(cell_grade.memcheck_limit(60, 0.5), 60)

    def test_grows_with_the_run(self):
        limits = [cell_grade.memcheck_limit(600, t / 10) for t in range(0, 400)]
        self.assertEqual(limits, sorted(limits))


if __name__ == "__main__":
    unittest.main()
