"""A cell's CPU steps after its compile side by side (grading/box.py Box.side_by_side,
Box.run_side_by_side): the cell's user is killed around the group, never between
two of its steps; a step past its limits is killed with its own tree, not with its siblings; the
parts really run at the same time; and every step outside the group is still bracketed by kills."""
import os
import sys
import tempfile
import threading
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import box as box_, options, run, sandbox  # noqa: E402


def _box():
    """A box that runs as root with a user per cell (cell_uid is not None), its steps stubbed."""
    b = box_.Box(o=options.parse(["x"]), cfg=sandbox.Config(no_sandbox=False), as_root=True, uid_base=50000)
    return b


class SideBySide(unittest.TestCase):
    def setUp(self):
        self.kills = []
        self.steps = []
        self.dir = tempfile.mkdtemp()
        p1 = mock.patch.object(run, "kill_uid", side_effect=lambda uid, *a, **k: self.kills.append(("kill", uid)))
        p2 = mock.patch.object(run, "run_step", side_effect=self._step)
        p3 = mock.patch.object(sandbox, "command", return_value=["true"])
        for p in (p1, p2, p3):
            p.start()
            self.addCleanup(p.stop)

    def _step(self, cmd, log, limit, cap, **kw):
        self.kills.append(("step", kw.get("kill_user")))
        return run.Step()

    def test_alone_a_step_is_bracketed_by_kills_of_its_user(self):
        b = _box()
        uid = b.cell_uid(3)
        self.assertIsNotNone(uid)
        b.run(self.dir, 3, "lint", 10, "run", ["true"], None)
        self.assertEqual(self.kills, [("kill", uid), ("step", True), ("kill", uid)])

    def test_side_by_side_kills_around_the_group_only_and_nests(self):
        b = _box()
        uid = b.cell_uid(3)
        with b.side_by_side(3):
            b.run(self.dir, 3, "a", 10, "run", ["true"], None)
            with b.side_by_side(3):  # (shortcuts.check inside the cell's group)
                b.run(self.dir, 3, "b", 10, "run", ["true"], None)
            b.run(self.dir, 3, "c", 10, "run", ["true"], None)
            b.run(self.dir, 4, "other cell", 10, "run", ["true"], None)  # another cell: as before
        self.assertEqual(self.kills, [("kill", uid), ("step", False), ("step", False), ("step", False),
                                      ("kill", b.cell_uid(4)), ("step", True), ("kill", b.cell_uid(4)),
                                      ("kill", uid)])
        self.assertEqual(b.together, {})
        self.kills.clear()
        b.run(self.dir, 3, "after", 10, "run", ["true"], None)  # (after the group: bracketed again)
        self.assertEqual(self.kills, [("kill", uid), ("step", True), ("kill", uid)])

    def test_the_group_ends_even_when_a_part_raises(self):
        b = _box()
        with self.assertRaises(ValueError):
            with b.side_by_side(3):
                raise ValueError("x")
        self.assertEqual(b.together, {})
        self.assertEqual(self.kills[-1], ("kill", b.cell_uid(3)))

    def test_parts_run_at_the_same_time(self):
        b = _box()
        meet = threading.Barrier(3, timeout=10)  # (one after another, the first part would wait forever)
        done = []

        def part(i):
            return lambda: (meet.wait(), done.append(i))
        b.run_side_by_side(3, [part(0), part(1), part(2)])
        self.assertEqual(sorted(done), [0, 1, 2])
        self.assertFalse(meet.broken)


    def test_a_part_that_raises_is_raised_once_all_have_ended(self):
        b = _box()
        ended = []

        def boom():
            raise OSError("the part's log could not be written")
        with self.assertRaises(OSError):  # (in a thread of its own it would only be printed, and the cell graded)
            b.run_side_by_side(3, [lambda: ended.append(0), boom, lambda: ended.append(2)])
        self.assertEqual(sorted(ended), [0, 2])
        self.assertEqual(b.together, {})


class OwnTree(unittest.TestCase):
    """A step past its time limit, side by side: its own process tree is killed, its user's other
    processes (a sibling step) are not; alone, the user's processes are killed with it."""

    def _timed_out(self, kill_user):
        fd, log = tempfile.mkstemp()
        os.close(fd)
        self.addCleanup(os.unlink, log)
        with mock.patch.object(run, "uid_processes", return_value=[424242]) as users, \
                mock.patch.object(run, "kill_pids") as killed:
            s = run.run_step([sys.executable, "-c", "import time; time.sleep(30)"], log, 0.5, 4096, uid=12345,
                             kill_user=kill_user)
        self.assertTrue(s.timed_out)
        return users.called, [c.args[0] for c in killed.call_args_list]

    def test_side_by_side_kills_its_own_tree_only(self):
        asked, killed = self._timed_out(False)
        self.assertFalse(asked)
        self.assertNotIn([424242], [list(k) for k in killed])

    def test_alone_kills_the_users_processes_too(self):
        asked, killed = self._timed_out(True)
        self.assertTrue(asked)
        self.assertIn([424242], [list(k) for k in killed])


if __name__ == "__main__":
    unittest.main()
