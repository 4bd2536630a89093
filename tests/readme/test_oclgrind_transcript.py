"""The Oclgrind transcript the OpenCL page quotes (results/cpu/oclgrind_racy.txt) names lines of
lessons/02_shared_transpose/opencl/transpose.cl: each named line must still be that line, so an
edit of the kernel file that moves them fails here until the transcript is recorded again
(results/cpu/README.md has the command)."""
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRANSCRIPT = os.path.join(ROOT, "results", "cpu", "oclgrind_racy.txt")
KERNEL = os.path.join(ROOT, "lessons", "02_shared_transpose", "opencl", "transpose.cl")


class OclgrindTranscript(unittest.TestCase):
    def test_named_lines_are_the_kernel_files_lines(self):
        with open(TRANSCRIPT, encoding="utf-8") as f:
            transcript = f.read()
        with open(KERNEL, encoding="utf-8") as f:
            kernel = f.read().split("\n")
        named = re.findall(r"At line (\d+) \(column \d+\) of input\.cl:\n\s*(.+)", transcript)
        self.assertEqual(len(named), 2, "the transcript names the two racing accesses")
        for number, code in named:
            self.assertEqual(kernel[int(number) - 1].strip(), code.strip(),
                             f"transpose.cl:{number} is no longer the line Oclgrind named: record the transcript again")


if __name__ == "__main__":
    unittest.main()
