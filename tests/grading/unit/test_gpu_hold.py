"""grading/gpu_hold.py: the processes that hold each grading GPU open, with a stand-in for the
ctypes script (no GPU here): started with the GPU's UUID, not counted by the checks that a GPU is
free, gone when stopped; a holder that cannot start, or that those checks would still count,
leaves no GPU held and says why."""
import os
import sys
import time
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import gpu_hold, gpus  # noqa: E402

# Says "held" when given one GPU of the two, then waits for stdin to close, as the real script does.
HOLDS = r"""
import os, sys
if os.environ.get("CUDA_VISIBLE_DEVICES") not in ("GPU-a", "GPU-b"):
    sys.exit(4)
sys.stdout.write("held\n"); sys.stdout.flush()
sys.stdin.buffer.read()
"""
FAILS = "import sys; sys.exit(3)"


def alive(pid):
    """Whether PID runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Holder(unittest.TestCase):
    def test_holds_each_gpu_until_stopped_and_is_not_in_use(self):
        h = gpu_hold.Holder(["GPU-a", "GPU-b"], HOLDS)
        with mock.patch.object(gpus, "in_use", side_effect=lambda uuid="": "") as asked:
            self.assertEqual(h.start(), "")
        self.assertEqual([c.args[0] for c in asked.call_args_list], ["GPU-a", "GPU-b"])
        pids = [p.pid for p in h.procs]
        self.assertEqual(len(pids), 2)
        self.assertEqual(gpus.held_pids, set(pids))
        self.assertTrue(all(alive(p) for p in pids))
        h.stop()
        self.assertEqual(gpus.held_pids, set())
        self.assertFalse(any(alive(p) for p in pids))

    def test_a_holder_that_cannot_start_holds_nothing(self):
        h = gpu_hold.Holder(["GPU-a", "GPU-b"], FAILS)
        why = h.start()
        self.assertIn("GPU GPU-a: CUDA did not start in the holding process (exit 3)", why)
        self.assertEqual((h.procs, gpus.held_pids), ([], set()))
        self.assertIn("GPUs not held open between steps (GPU GPU-a: CUDA did not start", gpu_hold.info(h.uuids, why))

    def test_a_holder_the_free_check_still_sees_is_stopped(self):
        # (a container where NVML reports the holder under another process id)
        h = gpu_hold.Holder(["GPU-a", "GPU-b"], HOLDS)
        with mock.patch.object(gpus, "in_use", side_effect=["", "123456, python3, 518 MiB"]):
            why = h.start()
        self.assertEqual(why, "GPU GPU-b: the check that the GPU is free still sees a process (123456, python3, 518 MiB)")
        self.assertEqual((h.procs, gpus.held_pids), ([], set()))

    def test_the_holder_ends_when_the_grader_does(self):
        h = gpu_hold.Holder(["GPU-a"], HOLDS)
        with mock.patch.object(gpus, "in_use", return_value=""):
            self.assertEqual(h.start(), "")
        p = h.procs[0]
        p.stdin.close()  # what the grader's death does to the pipe
        t0 = time.monotonic()
        p.wait(timeout=10)
        self.assertLess(time.monotonic() - t0, 10)
        h.stop()


if __name__ == "__main__":
    unittest.main()
