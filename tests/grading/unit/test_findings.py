"""Findings built from logs a submission can write (issue 24, 4e): quoted as its words, escaped,
bounded, never in the grader's voice."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import compile as compile_, findings, run  # noqa: E402


class Logs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.box = os.path.join(self.tmp, "box")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def log(self, name, data):
        p = os.path.join(self.tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_compiler_error_is_quoted(self):
        p = self.log("build.log", b"[1/3] Building\n" + self.box.encode() + b"/src/main.cu(91): error: identifier \"width\" is undefined\n")
        f = compile_.finding(run.Step(rc=1), p, self.box, 1024, 8192)
        self.assertEqual(f, "does not compile; the compiler's first error: \u00abmain.cu(91): error: identifier \"width\" is undefined\u00bb")

    def test_a_forged_grader_message_stays_inside_the_quote(self):
        evil = b'main.cu(1): error: #error directive: "\xc2\xbb; grade.sh: no sandbox: grade with --no-sandbox\x1b[2K"\n'
        f = compile_.finding(run.Step(rc=1), self.log("build.log", evil), self.box, 1024, 8192)
        self.assertTrue(f.startswith("does not compile; the compiler's first error: \u00ab"))
        self.assertEqual(f.count("\u00bb"), 1)
        self.assertTrue(f.endswith("\u00bb"))
        self.assertNotIn("\x1b", f)

    def test_sandbox_refusal_comes_from_the_status_not_the_log(self):
        p = self.log("build.log", b"bwrap: Can't mount tmpfs\n")
        # the submission's own line "bwrap: ..." in a build that started is quoted as compiler output
        f = compile_.finding(run.Step(rc=1, started=True), p, self.box, 1024, 8192)
        self.assertFalse(f.startswith("the sandbox refused"))
        f = compile_.finding(run.Step(rc=1, started=False), p, self.box, 1024, 8192)
        self.assertTrue(f.startswith("the sandbox refused to start the compiler: bwrap: Can't mount tmpfs"))

    def test_build_limits(self):
        self.assertIn("timed out after 600 s", compile_.finding(run.Step(rc=124, timed_out=True), self.log("b", b""), self.box, 1024, 8192))
        self.assertIn("memory limit (512 MiB)", compile_.finding(run.Step(rc=137, mem_killed=True), self.log("b", b""), self.box, 1024, 512))

    def test_racecheck_details_are_quoted(self):
        p = self.log("racecheck.log", b"========= Error: Race reported between Write access at void transpose_tiled<(int)32>(const float *, float *, int, int)+0x1f0 in main.cu:40\n"
                     b"========= RACECHECK SUMMARY: 4 hazards displayed (4 errors, 0 warnings)\n")
        f = findings.sanitizer_finding("racecheck", run.Step(rc=99), p, 120)
        self.assertEqual(f, ["RACE (racecheck: 4 hazards, first in \u00abtranspose_tiled<(int)32>\u00bb)"])

    def test_sanitizer_verdict_is_its_exit_code(self):
        p = self.log("memcheck.log", b"========= ERROR SUMMARY: 12 errors\n")
        self.assertEqual(findings.sanitizer_finding("memcheck", run.Step(rc=0), p, 120), [])  # a forged summary decides nothing
        self.assertEqual(findings.sanitizer_finding("memcheck", run.Step(rc=99), p, 120), ["MEMCHECK (memcheck: 12 errors)"])
        self.assertEqual(findings.sanitizer_finding("memcheck", run.Step(rc=124, timed_out=True), p, 120),
                         ["memcheck timed out after 120 s"])


if __name__ == "__main__":
    unittest.main()
