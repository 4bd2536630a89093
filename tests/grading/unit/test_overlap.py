"""grading/overlap.py: a GPU's worker runs each cell's judge beside the next cell's run, and nothing
else beside anything: a cell's memcheck, witness and result come after its judge and before the next
cell's run; a verdict that is not a full pass is judged again, alone; a GPU found not the grader's
leaves the pending cell not graded. Stand-in steps (start_cell, judge_once, end_cell): no GPU."""
import os
import sys
import threading
import time
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import cell_grade, gpus, judge, overlap, scheduler  # noqa: E402


def cell(name, compiled=True):
    c = types.SimpleNamespace(name=name, label=name, compiled=threading.Event(), dir="/nonexistent/" + name)
    if compiled:
        c.compiled.set()
    return c


def grade(passed=3, total=3):
    return judge.Grade(passed=passed, total=total)


class Steps:
    """Stand-ins for a cell's steps that log what runs when; a judge takes JUDGE_S seconds."""

    def __init__(self, verdicts=None, stop_at=None, judge_s=0.2, run_s=0.3):
        self.log = []
        self.lock = threading.Lock()
        self.verdicts = verdicts or {}  # cell name -> [Judged, ...] given in turn
        self.stop_at = stop_at or {}    # cell name -> stop reason its start gives
        self.judge_s, self.run_s = judge_s, run_s
        self.running = set()            # steps running now
        self.overlaps = []              # (step, beside) pairs seen

    def _step(self, what, seconds):
        with self.lock:
            self.overlaps += [(what, other) for other in self.running]
            self.running.add(what)
            self.log.append("begin " + what)
        time.sleep(seconds)
        with self.lock:
            self.running.discard(what)
            self.log.append("end " + what)

    def start_cell(self, g, c, gpu, share):
        self._step("run " + c.name, self.run_s)
        r = cell_grade.CellRun(c, gpu, share)
        r.stop = self.stop_at.get(c.name)
        return r, r.stop

    def judge_once(self, g, r, started=None):
        self._step("judge " + r.cell.name, self.judge_s)
        given = self.verdicts.get(r.cell.name)
        return given.pop(0) if given else cell_grade.Judged(grade=grade(), seconds=self.judge_s)

    def apply_judge(self, r, out):
        r.grade = out.grade

    def layer_judge(self, g, r):
        self.apply_judge(r, self.judge_once(g, r))

    def end_cell(self, g, r):
        self._step("rest " + r.cell.name, 0.05)  # memcheck, witness, evidence, the result
        return r.stop

    def patches(self):
        return [mock.patch.object(overlap, n, getattr(self, n)) for n in
                ("start_cell", "judge_once", "apply_judge", "layer_judge", "end_cell")]


def run_worker(steps, cells, compile_done=True):
    g = types.SimpleNamespace(compile_done=threading.Event(), stop_reasons={})
    if compile_done:
        g.compile_done.set()
    ready = scheduler.Ready(g, cells)
    errors = []
    ps = steps.patches()
    for p in ps:
        p.start()
    try:
        stop = overlap.worker(g, ("0", "GPU-0", "0"), ready, lambda c, e: errors.append((c.name, e)))
    finally:
        for p in ps:
            p.stop()
    return stop, errors


class Worker(unittest.TestCase):
    def test_each_judge_runs_beside_the_next_run_and_nothing_else_overlaps(self):
        s = Steps()
        stop, errors = run_worker(s, [cell("c%d" % i) for i in range(4)])
        self.assertIsNone(stop)
        self.assertEqual(errors, [])
        ends = [e for e in s.log if e.startswith("end rest")]
        self.assertEqual(ends, ["end rest c%d" % i for i in range(4)])  # every cell finished once, in order
        for what, beside in s.overlaps:  # only a judge and a run, of two cells one after the other
            pair = sorted([what, beside])
            self.assertTrue(pair[0].startswith("judge c") and pair[1].startswith("run c"), pair)
            self.assertEqual(int(pair[1][-1]), int(pair[0][-1]) + 1, pair)
        self.assertEqual(len(s.overlaps), 3)  # c0's judge beside c1's run, ..., c2's beside c3's
        for i in range(3):  # a cell's rest after its judge, before the run after next
            self.assertLess(s.log.index("end judge c%d" % i), s.log.index("begin rest c%d" % i))
            self.assertLess(s.log.index("end rest c%d" % i), s.log.index("begin run c%d" % (i + 2)) if i + 2 < 4 else len(s.log))

    def test_a_verdict_short_of_a_full_pass_is_judged_again_alone(self):
        failed = cell_grade.Judged(grade=grade(2, 3), seconds=0.2)
        again = cell_grade.Judged(grade=grade(2, 3), seconds=0.2)
        s = Steps(verdicts={"c0": [failed, again]})
        run_worker(s, [cell("c0"), cell("c1")])
        judges = [e for e in s.log if e == "begin judge c0"]
        self.assertEqual(len(judges), 2)
        second = [i for i, e in enumerate(s.log) if e == "begin judge c0"][1]
        self.assertGreater(second, s.log.index("end run c1"))  # after the run beside the first, alone
        self.assertNotIn(("judge c0", "run c1"), [(a, b) for a, b in s.overlaps if s.log.index("begin " + a) > s.log.index("end run c1")])

    def test_a_gpu_found_busy_leaves_the_pending_cell_not_graded(self):
        s = Steps(stop_at={"c1": "the GPU was in use after the cell of c1"})
        stop, _ = run_worker(s, [cell("c0"), cell("c1"), cell("c2")])
        self.assertEqual(stop, "the GPU was in use after the cell of c1")
        self.assertNotIn("begin rest c0", s.log)   # c0's memcheck and witness never ran beside a stranger
        self.assertIn("end judge c0", s.log)       # (its judge was joined)
        self.assertIn("end rest c1", s.log)        # c1 itself finished as before, with its finding
        self.assertNotIn("begin run c2", s.log)

    def test_a_compiling_that_stopped_still_finishes_the_pending_cell(self):
        s = Steps()
        never_built = cell("c1", compiled=False)
        with mock.patch.object(overlap, "start_cell", lambda g, c, gpu, share: (None, "the compiling stopped") if c is never_built
                               else s.start_cell(g, c, gpu, share)):
            ps = [p for p in s.patches() if p.attribute != "start_cell"]
            for p in ps:
                p.start()
            try:
                g = types.SimpleNamespace(compile_done=threading.Event(), stop_reasons={})
                g.compile_done.set()
                stop = overlap.worker(g, None, scheduler.Ready(g, [cell("c0"), never_built]), lambda c, e: None)
            finally:
                for p in ps:
                    p.stop()
        self.assertEqual(stop, "the compiling stopped")
        self.assertIn("end rest c0", s.log)

    def test_with_nothing_compiled_to_run_the_pending_cell_is_finished_at_once(self):
        s = Steps()
        late = cell("c1", compiled=False)
        g = types.SimpleNamespace(compile_done=threading.Event(), stop_reasons={})
        ready = scheduler.Ready(g, [cell("c0"), late])

        def compile_late():
            time.sleep(1.0)
            late.compiled.set()
            g.compile_done.set()
            ready.tell()
        t = threading.Thread(target=compile_late)
        ps = s.patches()
        for p in ps:
            p.start()
        try:
            t.start()
            overlap.worker(g, None, ready, lambda c, e: None)
        finally:
            t.join()
            for p in ps:
                p.stop()
        self.assertLess(s.log.index("end rest c0"), s.log.index("begin run c1"))  # not held back by c1's compile

    def test_a_grader_error_in_one_cell_is_said_there_and_the_others_go_on(self):
        s = Steps()
        plain = s.end_cell

        def end_cell(g, r):
            if r.cell.name == "c0":
                raise RuntimeError("boom")
            return plain(g, r)
        with mock.patch.object(s, "end_cell", end_cell):
            stop, errors = run_worker(s, [cell("c0"), cell("c1")])
        self.assertIsNone(stop)
        self.assertEqual([n for n, _ in errors], ["c0"])
        self.assertIn("end rest c1", s.log)


class Judged(unittest.TestCase):
    def test_only_a_full_pass_is_taken_from_a_judge_beside_another_run(self):
        self.assertTrue(cell_grade.Judged(grade=grade()).passed())
        self.assertFalse(cell_grade.Judged(grade=grade(2, 3)).passed())
        self.assertFalse(cell_grade.Judged(grade=grade(0, 0)).passed())
        self.assertFalse(cell_grade.Judged().passed())  # it did not finish
        self.assertFalse(cell_grade.Judged(grade=grade(), findings=["the judge did not finish"]).passed())
        g = grade()
        g.missing = 1
        self.assertFalse(cell_grade.Judged(grade=g).passed())
        g = grade()
        g.course_failures = ["a course test case"]
        self.assertFalse(cell_grade.Judged(grade=g).passed())

    def test_the_judge_is_left_out_of_the_gpu_checks_only_while_it_runs(self):
        with mock.patch.object(gpus, "beside_pids", set()):
            told = gpus.beside()
            told(123)
            self.assertTrue(gpus.ours(123))
            told(None)
            self.assertFalse(gpus.ours(123))


if __name__ == "__main__":
    unittest.main()
