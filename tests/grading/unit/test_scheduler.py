"""The scheduler's hand-out of cells to the GPUs' workers: a worker takes the first cell, in order,
whose compile has ended, so a GPU never waits for one cell's compile while another's is ready;
once the compiling stopped it takes the first left (grade_cell then says why it was never built).
Stand-in cells and a stand-in grade_cell: no compiler, no GPU."""
import os
import sys
import threading
import time
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import scheduler  # noqa: E402


def cell(name, compiled=False):
    c = types.SimpleNamespace(name=name, compiled=threading.Event())
    if compiled:
        c.compiled.set()
    return c


def grading(ngpus=0):
    # (--host-only: one cell after another through grade_cell; test_overlap.py has the GPU's worker)
    return types.SimpleNamespace(compile_done=threading.Event(), stop_reasons={}, o=types.SimpleNamespace(host_only=True),
                                 gpus=[(str(i), "GPU-%d" % i, str(i)) for i in range(ngpus)])


class Ready(unittest.TestCase):
    def test_the_first_compiled_cell_not_the_first_cell(self):
        g = grading()
        a, b, c = cell("a"), cell("b", True), cell("c", True)
        ready = scheduler.Ready(g, [a, b, c])
        self.assertIs(ready.take(), b)
        self.assertIs(ready.take(), c)
        a.compiled.set()
        self.assertIs(ready.take(), a)
        self.assertIsNone(ready.take())

    def test_a_waiting_worker_takes_a_cell_as_soon_as_its_compile_ends(self):
        g = grading()
        a, b = cell("a"), cell("b")
        ready = scheduler.Ready(g, [a, b])
        got = []
        t = threading.Thread(target=lambda: got.append(ready.take()), daemon=True)
        t.start()
        time.sleep(0.2)
        self.assertEqual(got, [])  # nothing compiled yet: it waits
        b.compiled.set()
        ready.tell()
        t.join(5)
        self.assertEqual(got, [b])

    def test_after_the_compiling_stopped_the_first_left_even_if_never_built(self):
        g = grading()
        a, b = cell("a"), cell("b")
        ready = scheduler.Ready(g, [a, b])
        g.compile_done.set()
        ready.tell()
        self.assertIs(ready.take(), a)


    def test_any_compiled_says_whether_take_would_give_a_cell_now(self):
        g = grading()
        a, b = cell("a"), cell("b")
        ready = scheduler.Ready(g, [a, b])
        self.assertFalse(ready.any_compiled())
        b.compiled.set()
        self.assertTrue(ready.any_compiled())
        self.assertIs(ready.take(), b)
        self.assertFalse(ready.any_compiled())
        g.compile_done.set()  # the compiling stopped: the first left is given
        self.assertTrue(ready.any_compiled())
        self.assertIs(ready.take(), a)
        self.assertFalse(ready.any_compiled())  # none left

    def test_the_worker_that_waited_longest_is_served_first(self):
        g = grading()
        cells = [cell("a"), cell("b")]
        ready = scheduler.Ready(g, cells)
        got = []

        def take(who):
            got.append((who, ready.take()))

        first = threading.Thread(target=take, args=("first",), daemon=True)
        first.start()
        time.sleep(0.2)
        second = threading.Thread(target=take, args=("second",), daemon=True)
        second.start()
        time.sleep(0.2)
        cells[1].compiled.set()
        ready.tell()
        first.join(5)
        self.assertEqual(got, [("first", cells[1])])
        cells[0].compiled.set()
        ready.tell()
        second.join(5)
        self.assertEqual(got[1], ("second", cells[0]))


class Workers(unittest.TestCase):
    def test_a_slow_compile_holds_no_gpu_and_both_gpus_grade(self):
        g = grading(ngpus=2)
        cells = [cell("slow")] + [cell("c%d" % i, True) for i in range(6)]
        ready = scheduler.Ready(g, cells)
        graded = []
        lock = threading.Lock()

        def grade_cell(g_, c, gpu, share):
            self.assertTrue(c.compiled.is_set())
            with lock:
                graded.append((c.name, gpu[0]))
            time.sleep(0.1)
            return None

        def compile_slow():
            time.sleep(0.5)
            cells[0].compiled.set()
            g.compile_done.set()
            ready.tell()

        with mock.patch.object(scheduler, "grade_cell", grade_cell):
            t = threading.Thread(target=compile_slow)
            t.start()
            scheduler.run_workers(g, ready, 1)
            t.join()
        names = [n for n, _ in graded]
        self.assertEqual(sorted(names), sorted(c.name for c in cells))
        self.assertEqual(names[-1], "slow")  # the ready cells went first, in order
        self.assertEqual({gpu for _, gpu in graded}, {"0", "1"})

    def test_cells_compiled_one_by_one_go_to_both_gpus_in_turn(self):
        # one compile at a time, each slower than a cell's checks: a GPU that is free takes the next
        # cell in turn with the other, not whichever thread wakes first
        g = grading(ngpus=2)
        cells = [cell("c%d" % i) for i in range(6)]
        ready = scheduler.Ready(g, cells)
        graded = []

        def compile_all():
            for c in cells:
                time.sleep(0.15)
                c.compiled.set()
                ready.tell()
            g.compile_done.set()
            ready.tell()

        def grade_cell(g_, c, gpu, share):
            graded.append(gpu[0])
            return None

        with mock.patch.object(scheduler, "grade_cell", grade_cell):
            t = threading.Thread(target=compile_all)
            t.start()
            scheduler.run_workers(g, ready, 1)
            t.join()
        self.assertEqual(len(graded), 6)
        self.assertTrue(all(a != b for a, b in zip(graded, graded[1:])), graded)  # in turn

    def test_a_worker_whose_gpu_is_lost_stops_and_says_why(self):
        g = grading(ngpus=1)
        cells = [cell("c%d" % i, True) for i in range(3)]
        g.compile_done.set()
        with mock.patch.object(scheduler, "grade_cell", lambda g_, c, gpu, share: "held by another program"):
            scheduler.run_workers(g, scheduler.Ready(g, cells), 1)
        self.assertEqual(g.stop_reasons, {0: "held by another program"})


if __name__ == "__main__":
    unittest.main()
