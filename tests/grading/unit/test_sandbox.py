"""The sandbox's command line (no bubblewrap needed: the list is checked, not run)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import sandbox  # noqa: E402


def cfg(**kw):
    base = dict(ro_dirs=["/usr", "/bin", "/etc"], links={"/bin": "usr/bin"},
                dev_nodes=["/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm"],
                hide=["/course", "/subs", "/out"], view="/out/course-view", prebuilt="/out/prebuilt",
                env={"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0,1"})
    base.update(kw)
    return sandbox.Config(**base)


def pairs(cmd, flag):
    return [tuple(cmd[i + 1:i + 3]) for i, a in enumerate(cmd) if a == flag]


class CommandLine(unittest.TestCase):
    def test_as_root_a_user_of_its_own_and_limits(self):
        c = sandbox.command(cfg(), "run", "/out/cells/0001/box", uid=100001)
        self.assertEqual(c[:4], ["prlimit", "--core=0", "--fsize=%d" % (1024 << 20), "--nproc=64"])
        i = c.index("setpriv")
        self.assertEqual(c[i:i + 4], ["setpriv", "--reuid=100001", "--regid=100001", "--clear-groups"])
        self.assertLess(i, c.index("bwrap"))
        for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
            self.assertIn(flag, c)
        self.assertEqual(c[-1], "--")

    def test_not_root_the_process_limit_adds_what_the_user_runs(self):
        c = sandbox.command(cfg(as_root=False), "run", "/box", nproc_base=40)
        self.assertIn("--nproc=104", c)
        self.assertNotIn("setpriv", c)

    def test_box_writable_only_while_compiling(self):
        self.assertIn(("/box", "/box"), pairs(sandbox.command(cfg(), "compile", "/box", uid=100001), "--bind"))
        run = sandbox.command(cfg(), "run", "/box", uid=100001)
        self.assertNotIn(("/box", "/box"), pairs(run, "--bind"))
        self.assertIn(("/box", "/box"), pairs(run, "--ro-bind"))

    def test_course_submissions_and_output_hidden_and_read_only(self):
        c = sandbox.command(cfg(), "run", "/box", uid=100001)
        tmpfs = [c[i + 1] for i, a in enumerate(c) if a == "--tmpfs"]
        for d in ("/course", "/subs", "/out", "/tmp", "/dev/shm"):
            self.assertIn(d, tmpfs)
        ro = [c[i + 1] for i, a in enumerate(c) if a == "--remount-ro"]
        for d in ("/course", "/subs", "/out", "/", "/dev"):
            self.assertIn(d, ro)
        # the view and prebuilt are shown after /out is hidden (bubblewrap applies in order)
        self.assertLess(c.index("/out"), c.index("/out/course-view"))
        self.assertIn(("usr/bin", "/bin"), pairs(c, "--symlink"))

    def test_scratch_is_capped(self):
        c = sandbox.command(cfg(scratch_mib=16), "run", "/box", uid=100001)
        sizes = [c[i + 1] for i, a in enumerate(c) if a == "--size"]
        self.assertEqual(sizes, [str(16 << 20)] * 2)

    def test_gpu_nodes_and_visible_devices(self):
        c = sandbox.command(cfg(), "run", "/box", uid=100001, gpu_uuid="GPU-b", gpu_minor="1")
        devs = [c[i + 1] for i, a in enumerate(c) if a == "--dev-bind"]
        self.assertEqual(devs, ["/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm"])
        self.assertIn(("CUDA_VISIBLE_DEVICES", "GPU-b"), pairs(c, "--setenv"))
        self.assertNotIn(("CUDA_VISIBLE_DEVICES", "0,1"), pairs(c, "--setenv"))
        c = sandbox.command(cfg(), "run", "/box", uid=100001)
        self.assertEqual(len([a for a in c if a == "--dev-bind"]), 4)
        self.assertIn(("CUDA_VISIBLE_DEVICES", "0,1"), pairs(c, "--setenv"))

    def test_gpu_required_unless_host_only(self):
        self.assertIn(("COURSE_REQUIRE_GPU", "1"), pairs(sandbox.command(cfg(), "run", "/b", uid=100001), "--setenv"))
        self.assertNotIn("COURSE_REQUIRE_GPU", sandbox.command(cfg(host_only=True), "run", "/b", uid=100001))

    def test_one_work_queue_per_context_unless_host_only(self):
        self.assertIn(("CUDA_DEVICE_MAX_CONNECTIONS", "1"), pairs(sandbox.command(cfg(), "run", "/b", uid=100001), "--setenv"))
        self.assertNotIn("CUDA_DEVICE_MAX_CONNECTIONS", sandbox.command(cfg(host_only=True), "run", "/b", uid=100001))

    def test_hidden_shapes_and_status_fd(self):
        c = sandbox.command(cfg(hidden="/secret/h.txt"), "run", "/b", uid=100001, status_fd=7)
        self.assertIn(("/secret/h.txt", "/hidden-shapes.txt"), pairs(c, "--ro-bind"))
        self.assertEqual(c[c.index("--json-status-fd") + 1], "7")

    def test_no_sandbox(self):
        self.assertEqual(sandbox.command(cfg(no_sandbox=True), "run", "/b"), [])
        self.assertEqual(sandbox.command(cfg(no_sandbox=True), "run", "/b", gpu_uuid="GPU-a"),
                         ["env", "CUDA_VISIBLE_DEVICES=GPU-a", "CUDA_DEVICE_MAX_CONNECTIONS=1"])
        self.assertEqual(sandbox.command(cfg(no_sandbox=True, host_only=True), "run", "/b", gpu_uuid="GPU-a"),
                         ["env", "CUDA_VISIBLE_DEVICES=GPU-a"])

    def test_data_limit(self):
        self.assertIn("--data=%d" % (512 << 20), sandbox.command(cfg(), "run", "/b", uid=100001, data_mib=512))
        self.assertFalse(any(a.startswith("--data") for a in sandbox.command(cfg(), "run", "/b", uid=100001)))


class Uids(unittest.TestCase):
    def test_cell_uids_stay_in_their_slot(self):
        base = sandbox.UID_FIRST + sandbox.SLOT_SIZE * 3
        self.assertEqual(sandbox.cell_uid(base, 1), base + 1)
        self.assertEqual(sandbox.cell_uid(base, sandbox.SLOT_SIZE - 1), base + sandbox.SLOT_SIZE - 1)
        for bad in (0, sandbox.SLOT_SIZE, sandbox.SLOT_SIZE + 5, 10000 * 3):
            with self.assertRaises(ValueError):
                sandbox.cell_uid(base, bad)

    def test_hide_list_shortest_first_no_repeats(self):
        self.assertEqual(sandbox.hide_list(["/a/b/c", "/a", "/root", "/a"]), ["/a", "/root", "/a/b/c"])

    def test_prefix_dirs(self):
        d = os.path.dirname(os.path.abspath(__file__))
        self.assertEqual(sandbox.prefix_dirs(["-DCMAKE_PREFIX_PATH=%s;/nonexistent" % d, "-DX=1"]), [os.path.realpath(d)])


if __name__ == "__main__":
    unittest.main()
