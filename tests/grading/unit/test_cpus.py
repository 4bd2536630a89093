"""CPUs of their own for the GPUs' steps (grading/cpus.py): whole cores kept at the end for the GPU
workers, the rest for the compiles, nothing pinned where the compiles would keep less than half;
and a step run on CPUS runs there (run.run_step through taskset)."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cpus, run  # noqa: E402


def smt(n):
    """A machine of N cores with two hardware threads each, CPU i and i + N on one core (Linux's order)."""
    return lambda cpu: "%d,%d" % (cpu % n, cpu % n + n)


class Split(unittest.TestCase):
    def test_two_gpus_on_16_cores_of_two_threads_keep_the_last_four_cores(self):
        self.assertEqual(cpus.split(["0", "1"], 2, 1, set(range(32)), smt(16)), ("12-15,28-31", "0-11,16-27"))

    def test_each_gpu_has_its_own_cores_in_every_run_and_no_run_compiles_there(self):
        # (two runs at once on one machine, one on each GPU: their steps never share a core)
        self.assertEqual(cpus.split(["0"], 2, 1, set(range(32)), smt(16)), ("14-15,30-31", "0-11,16-27"))
        self.assertEqual(cpus.split(["1"], 2, 1, set(range(32)), smt(16)), ("12-13,28-29", "0-11,16-27"))
        self.assertEqual(cpus.split(["0"], 1, 1, set(range(32)), smt(16)), ("14-15,30-31", "0-13,16-29"))

    def test_share_keeps_cpus_for_each_worker(self):
        self.assertEqual(cpus.split(["0"], 1, 2, set(range(32)), smt(16)), ("12-15,28-31", "0-11,16-27"))

    def test_without_hardware_threads_a_core_is_a_cpu(self):
        self.assertEqual(cpus.split(["0", "1"], 2, 1, set(range(32)), lambda cpu: ""), ("24-31", "0-23"))
        self.assertEqual(cpus.split(["0"], 1, 1, set(range(8)), lambda cpu: str(cpu)), ("4-7", "0-3"))

    def test_nothing_pinned_where_the_compiles_would_keep_less_than_half(self):
        self.assertIsNone(cpus.split(["0", "1"], 2, 1, set(range(8)), lambda cpu: ""))
        self.assertIsNone(cpus.split(["0"], 8, 1, set(range(32)), smt(16)))  # (eight GPUs on 16 cores)
        self.assertIsNone(cpus.split(["0"], 1, 1, {0, 1}, smt(1)))
        self.assertIsNone(cpus.split(["0"], 1, 1, {0, 1}, lambda cpu: ""))

    def test_nothing_pinned_for_gpus_it_does_not_know(self):
        self.assertIsNone(cpus.split([], 2, 1, set(range(32)), smt(16)))
        self.assertIsNone(cpus.split(["2"], 2, 1, set(range(32)), smt(16)))
        self.assertIsNone(cpus.split(["GPU-a"], 2, 1, set(range(32)), smt(16)))

    def test_only_the_allowed_cpus_count(self):
        # (a container given CPUs 4-11 and 20-27 of a 16-core machine: 8 cores)
        allowed = set(range(4, 12)) | set(range(20, 28))
        self.assertEqual(cpus.split(["0"], 1, 1, allowed, smt(16)), ("10-11,26-27", "4-9,20-25"))

    def test_a_list_is_written_as_taskset_reads_it(self):
        self.assertEqual(cpus.text([5, 0, 1, 2, 7, 8]), "0-2,5,7-8")
        self.assertEqual(cpus.text([3]), "3")

    def test_the_line_of_run_info_names_both_sets(self):
        self.assertIn("CPUs 12-15,28-31, kept for them", cpus.info(("12-15,28-31", "0-11,16-27"), 2, 1))
        self.assertIn("not pinned (too few cores to keep 4 logical CPUs for each of the machine's 2 GPU(s)", cpus.info(None, 2, 1))


@unittest.skipUnless(shutil.which("taskset"), "needs taskset (util-linux)")
class Pinned(unittest.TestCase):
    def test_a_step_on_cpus_runs_there_and_one_without_runs_anywhere(self):
        mine = sorted(os.sched_getaffinity(0))
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        log = os.path.join(tmp, "step.log")
        probe = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]
        step = run.run_step(probe, log, 30, 4096, cpus=str(mine[-1]))
        self.assertEqual(step.rc, 0)
        with open(log) as f:
            self.assertEqual(f.read().strip(), str([mine[-1]]))
        run.run_step(probe, log, 30, 4096)
        with open(log) as f:
            self.assertEqual(f.read().strip(), str(mine))


if __name__ == "__main__":
    unittest.main()
