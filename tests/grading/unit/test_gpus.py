"""grading/gpus.py: what holds a GPU, asked of NVML through ctypes (a stand-in libnvidia-ml built
here from C, with nvml.h's process record), and of nvidia-smi where NVML cannot answer; the wait
for a GPU to be free."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import gpus  # noqa: E402

# Two GPUs; GPU-b is held by two processes (nvml.h: nvmlProcessInfo_t is pid, usedGpuMemory,
# gpuInstanceId, computeInstanceId; NVML_VALUE_NOT_AVAILABLE is all ones).
FAKE_NVML = r"""
#include <string.h>
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId; unsigned int computeInstanceId; } info_t;
static int devs[2] = {0, 1};
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int* n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** h) { if (i > 1) return 2; *h = &devs[i]; return 0; }
int nvmlDeviceGetHandleByUUID(const char* uuid, void** h) {
    if (!strcmp(uuid, "GPU-a")) { *h = &devs[0]; return 0; }
    if (!strcmp(uuid, "GPU-b")) { *h = &devs[1]; return 0; }
    return 6; /* NVML_ERROR_NOT_FOUND */
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned int* count, info_t* infos) {
    if (h == &devs[0]) { *count = 0; return 0; }
    if (*count < 2) { *count = 2; return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */ }
    infos[0].pid = 4242; infos[0].usedGpuMemory = 512ull << 20; infos[0].gpuInstanceId = 0xffffffffu; infos[0].computeInstanceId = 0xffffffffu;
    infos[1].pid = 77; infos[1].usedGpuMemory = ~0ull; infos[1].gpuInstanceId = 0xffffffffu; infos[1].computeInstanceId = 0xffffffffu;
    *count = 2;
    return 0;
}
int nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
    strncpy(name, pid == 4242 ? "/tmp/box/build/01_check" : "atk_escape", length);
    return 0;
}
"""


class Nvml(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise unittest.SkipTest("no C compiler for the stand-in NVML")
        cls.tmp = tempfile.mkdtemp()
        src = os.path.join(cls.tmp, "nvml.c")
        with open(src, "w") as f:
            f.write(FAKE_NVML)
        cls.lib = os.path.join(cls.tmp, "libnvidia-ml.so.1")
        subprocess.run([cc, "-shared", "-fPIC", "-o", cls.lib, src], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_what_holds_each_gpu(self):
        n = gpus.Nvml(self.lib)
        self.assertEqual(n.in_use("GPU-a"), "")
        self.assertEqual(n.in_use("GPU-b"), "4242, /tmp/box/build/01_check, 512 MiB 77, atk_escape, [N/A]")
        self.assertEqual(n.in_use(""), "4242, /tmp/box/build/01_check, 512 MiB 77, atk_escape, [N/A]")  # every GPU
        self.assertIsNone(n.in_use("GPU-unknown"))  # nvidia-smi answers instead

    def test_nvidia_smi_answers_where_nvml_cannot(self):
        smi = "GPU-b, 4242, /tmp/box/build/01_check, 512 MiB\nGPU-a, 99, other, 1 MiB\n"
        with mock.patch.object(gpus, "nvml", gpus.Nvml(os.path.join(self.tmp, "no-such-library.so"))), \
             mock.patch.object(gpus, "smi", return_value=smi) as called:
            self.assertEqual(gpus.in_use("GPU-b"), "4242, /tmp/box/build/01_check, 512 MiB")
            self.assertTrue(called.called)

    def test_the_graders_own_holding_processes_are_not_in_use(self):
        n = gpus.Nvml(self.lib)
        with mock.patch.object(gpus, "held_pids", {4242}):
            self.assertEqual(n.in_use("GPU-b"), "77, atk_escape, [N/A]")
        with mock.patch.object(gpus, "held_pids", {4242, 77}):
            self.assertEqual(n.in_use("GPU-b"), "")
        smi = "GPU-b, 4242, python3, 518 MiB\nGPU-b, 99, other, 1 MiB\n"
        with mock.patch.object(gpus, "nvml", gpus.Nvml(os.path.join(self.tmp, "no-such-library.so"))), \
             mock.patch.object(gpus, "smi", return_value=smi), mock.patch.object(gpus, "held_pids", {4242}):
            self.assertEqual(gpus.in_use("GPU-b"), "99, other, 1 MiB")

    def test_a_judge_beside_a_cell_is_not_in_use_while_it_runs_only(self):
        n = gpus.Nvml(self.lib)
        with mock.patch.object(gpus, "beside_pids", set()):
            told = gpus.beside()
            told(4242)  # the judge of the cell before started (grading/overlap.py)
            self.assertEqual(n.in_use("GPU-b"), "77, atk_escape, [N/A]")
            told(None)  # it ended: its pid, if listed again, is another process's
            self.assertEqual(n.in_use("GPU-b"), "4242, /tmp/box/build/01_check, 512 MiB 77, atk_escape, [N/A]")
            self.assertEqual(gpus.beside_pids, set())

    def test_wait_free_asks_again_soon_then_gives_up(self):
        answers = ["1, p, 1 MiB", "1, p, 1 MiB", ""]
        with mock.patch.object(gpus, "in_use", side_effect=lambda uuid="": answers.pop(0)):
            self.assertEqual(gpus.wait_free("GPU-a", seconds=5), "")
        self.assertEqual(answers, [])
        with mock.patch.object(gpus, "in_use", return_value="1, p, 1 MiB"):
            self.assertEqual(gpus.wait_free("GPU-a", seconds=0.3), "1, p, 1 MiB")


if __name__ == "__main__":
    unittest.main()
