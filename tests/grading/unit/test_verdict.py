"""Reading the judge's verdict (interface.md) and the rule built on it (issue 24, point 3)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import judge  # noqa: E402


def case(name, asked, passed, skipped=False, gpu=False, failure=None, missing=0, inconsistent=0):
    return {"name": name, "gpu": gpu, "skipped": skipped, "passed": passed, "asked": asked,
            "submitted": asked - missing - inconsistent, "missing": missing, "inconsistent": inconsistent,
            "failure": failure}


def verdict(cases, missing=0, inconsistent=0, **over):
    v = {"format": 1, "complete": True, "lesson": "02_shared_transpose", "seed": 12345, "missing": missing,
         "inconsistent": inconsistent, "test_cases": cases}
    v.update(over)
    return v


class Reading(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.path)

    def write(self, v):
        with open(self.path, "w" if isinstance(v, str) else "wb") as f:
            f.write(v if isinstance(v, str) else json.dumps(v).encode())

    def read(self, v):
        self.write(v)
        return judge.read_verdict(self.path, "02_shared_transpose", 12345)

    def test_counted_and_course_cases_apart(self):
        g = self.read(verdict([case("cpu ref", 0, True), case("bank model", 0, True), case("tiled", 3, True, gpu=True),
                               case("aligned", 2, False, gpu=True, failure="FAIL: got 1, expected 2"),
                               case("gpu skipped", 4, False, skipped=True, gpu=True)]))
        self.assertEqual((g.passed, g.total, g.course_passed, g.course_total), (1, 2, 2, 2))
        self.assertEqual(g.first_failure, "aligned: FAIL: got 1, expected 2")

    def test_an_idea_case_is_neither_counted_nor_the_courses_own(self):
        """`idea: <id>` test cases go to the performance evidence (the rubric's "idea_test_case"):
        failed, they fail no correctness and name no first failure."""
        g = self.read(verdict([case("tiled", 3, True, gpu=True), case("idea: 04.tree", 1, False, gpu=True, failure="other pairs"),
                               case("idea: 04.other", 1, True, gpu=True), case("idea: skipped", 1, False, skipped=True)]))
        self.assertEqual((g.passed, g.total, g.course_passed, g.course_total, g.first_failure), (1, 1, 0, 0, ""))
        self.assertEqual(g.ideas, {"idea: 04.tree": "other pairs", "idea: 04.other": ""})
        self.assertEqual(judge.findings(g, 0, []), [])

    def test_not_a_verdict(self):
        for bad in ["", "{", "[]", json.dumps(verdict([], complete=False)), json.dumps(verdict([], format=2)),
                    json.dumps({k: v for k, v in verdict([]).items() if k != "complete"}),
                    json.dumps(verdict([], lesson="01_naive_transpose")), json.dumps(verdict([], seed=1)),
                    json.dumps(verdict([{"name": "x"}])), json.dumps(verdict([case("x", -1, True)])),
                    json.dumps(verdict([case("x", 1, "yes")])), json.dumps(verdict("none")),
                    json.dumps(verdict([case("x", 1, True)], missing="2")),
                    json.dumps(verdict([dict(case("x", 1, True), failure=3)])),
                    json.dumps(verdict([case("x", True, True)]))]:
            with self.subTest(bad=bad[:60]):
                with self.assertRaises(judge.VerdictError):
                    self.read(bad)

    def test_missing_file(self):
        with self.assertRaises(judge.VerdictError):
            judge.read_verdict(self.path + ".none")

    def test_oversized(self):
        self.write(json.dumps(verdict([case("x" * 1000, 1, True)] * 5000)))
        with self.assertRaises(judge.VerdictError):
            judge.read_verdict(self.path)

    def test_long_failure_is_cut(self):
        g = self.read(verdict([case("x", 1, False, failure="y" * 5000)]))
        self.assertLessEqual(len(g.first_failure), 410)


class Findings(unittest.TestCase):
    def grade(self, cases, **kw):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            json.dump(verdict(cases, **kw), f)
        try:
            return judge.read_verdict(path)
        finally:
            os.unlink(path)

    def test_forged_when_the_run_exited_0(self):
        g = self.grade([case("x", 3, False, missing=3)], missing=3)
        f = judge.findings(g, 0, [])
        self.assertTrue(f[0].startswith("forged or cut short: the run exited 0, but 3 value(s)"))

    def test_stopped_early_otherwise(self):
        g = self.grade([case("x", 3, False, missing=3)], missing=3)
        self.assertTrue(judge.findings(g, 139, [])[0].startswith("the run stopped early (exit 139): 3 value(s)"))
        # a run already said to have timed out is not said to have stopped early as well
        self.assertFalse(any("stopped early" in f for f in judge.findings(g, 124, ["run timed out after 20 s"])))

    def test_inconsistent(self):
        g = self.grade([case("x", 2, False, inconsistent=1)], inconsistent=1)
        self.assertIn("inconsistent output: 1 recorded value(s) of the wrong type or size", judge.findings(g, 0, []))

    def test_points_for_nothing(self):
        # a submission that records nothing: the course's own tests pass, nothing counts
        g = self.grade([case("cpu", 0, True), case("model", 0, True), case("gpu", 5, False, missing=5)], missing=5)
        self.assertEqual((g.passed, g.total), (0, 1))
        g = self.grade([case("cpu", 0, True), case("model", 0, True)])
        self.assertEqual((g.passed, g.total, g.course_passed), (0, 0, 2))
        self.assertEqual(judge.findings(g, 0, []),
                         ["no test case judged a value of the submission (2 of 2 of the course's own test cases passed, not counted)"])

    def test_a_course_test_that_fails_is_the_graders_error(self):
        g = self.grade([case("cpu ref", 0, False, failure="boom"), case("x", 1, True)])
        f = judge.findings(g, 0, [])
        self.assertEqual(len(f), 1)
        self.assertTrue(f[0].startswith("grader error, not the student's: the course's own test case(s) failed: cpu ref"))

    def test_all_passed_no_finding(self):
        g = self.grade([case("cpu", 0, True), case("x", 1, True)])
        self.assertEqual(judge.findings(g, 0, []), [])

    def test_command_line(self):
        self.assertEqual(judge.command("/c/02_check", True, "/t.bin", 7, "", "/v.json"),
                         ["/c/02_check", "--host", "--judge", "/t.bin", "--seed", "7", "--verdict", "/v.json"])
        self.assertEqual(judge.command("/c/02_check", False, "/t.bin", 7, "/h.txt", "/v.json"),
                         ["/c/02_check", "--judge", "/t.bin", "--seed", "7", "--hidden-shapes", "/h.txt", "--verdict", "/v.json"])


if __name__ == "__main__":
    unittest.main()
