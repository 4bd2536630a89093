"""grading/cellrecord.py: a cell's cell.json, written from its dataclass and read back strictly;
its consumers (the gradebook, --resume, a cell graded again alone, the timing lines bench/ sums)."""
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grading import cellrecord, cli, gradebook, options, runfolder  # noqa: E402
from grading.exits import Exit  # noqa: E402
from two_students import TwoStudents  # noqa: E402


def record(**over):
    d = {"version": cellrecord.VERSION, "student": "Ada", "lesson": "01_naive_transpose", "slice": None, "compiled": "yes",
         "timing": {"compile_s": 1.5}, "result": None, "shared": None, "note": "", "feedback_note": ""}
    d.update(over)
    return d


class Record(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.cell = os.path.join(self.tmp, "0007")
        os.makedirs(self.cell)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def put(self, data):
        with open(os.path.join(self.cell, "cell.json"), "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))

    def test_round_trip(self):
        shared = cellrecord.Shared(cellrecord.Result("yes", "3", "7", finding="x"), {"run_s": 2.25, "share": 3, "gpu": "0"})
        rec = cellrecord.CellRecord("Zo\u00eb \udcff", "02_shared_transpose", 2, "yes", {"compile_s": 3.0, "compile_mib": 120},
                                    cellrecord.Result("yes", "7", "7", "3", "3", "", "4/5", "slow"), shared)
        cellrecord.write(self.cell, rec)
        self.assertEqual(cellrecord.read(self.cell), rec)
        with open(os.path.join(self.cell, "cell.json"), "rb") as f:
            data = json.loads(f.read().decode("ascii"))
        self.assertEqual(list(data)[0], "version")
        self.assertEqual(data["version"], cellrecord.VERSION)
        self.assertEqual(os.listdir(self.cell), ["cell.json"])  # (the temporary file renamed over it)

    def test_none_and_earlier_grader(self):
        self.assertIsNone(cellrecord.read(self.cell))
        for legacy in ("result.txt", "identity.txt"):
            with self.subTest(legacy=legacy):
                with open(os.path.join(self.cell, legacy), "w") as f:
                    f.write("student=Ada\nlesson=01_naive_transpose\n")
                with self.assertRaises(cellrecord.RecordError) as e:
                    cellrecord.read(self.cell)
                self.assertIn("0007", str(e.exception))
                self.assertIn("earlier grader", str(e.exception))
                os.unlink(os.path.join(self.cell, legacy))

    def test_malformed_or_other_version(self):
        bad = {"not JSON": "{", "a list": "[]", "another version": record(version=cellrecord.VERSION + 1), "no version": json.dumps({"student": "x"}),
               "version as a string": record(version="1"), "an extra key": record(extra=1), "a missing key": {
                   k: v for k, v in record().items() if k != "shared"}, "slice a string": record(slice="1"),
               "slice a boolean": record(slice=True), "compiled unknown": record(compiled="maybe"),
               "student a number": record(student=3), "a timing list": record(timing=[1]),
               "a timing value list": record(timing={"run_s": [1]}), "a result field a number": record(result=dict(
                   dataclass_fields(), passed=3)), "a result missing a field": record(result={"compiled": "yes"}),
               "shared without timing": record(shared={"result": dataclass_fields()}), "not UTF-8": b"\xff",
               "over 1 MiB": record(student="x" * (2 << 20))}
        for why, data in bad.items():
            with self.subTest(why=why):
                if isinstance(data, bytes):
                    with open(os.path.join(self.cell, "cell.json"), "wb") as f:
                        f.write(data)
                else:
                    self.put(data)
                with self.assertRaises(cellrecord.RecordError) as e:
                    cellrecord.read(self.cell)
                self.assertIn(os.path.join("0007", "cell.json"), str(e.exception))
        for other in (cellrecord.VERSION - 1, cellrecord.VERSION + 1):  # (1: before the result's speed credit)
            self.put(record(version=other))
            with self.assertRaises(cellrecord.RecordError) as e:
                cellrecord.read(self.cell)
            self.assertIn("version %d; this grader reads version %d" % (other, cellrecord.VERSION), str(e.exception))

    def test_update_needs_a_record(self):
        with self.assertRaises(cellrecord.RecordError):
            cellrecord.update(self.cell, compiled="yes")
        cellrecord.write(self.cell, cellrecord.CellRecord("Ada", "01_naive_transpose"))
        rec = cellrecord.update(self.cell, compiled="no", timing={"compile_s": 1.25})
        self.assertEqual(cellrecord.read(self.cell), rec)
        self.assertEqual((rec.compiled, rec.timing, rec.result), ("no", {"compile_s": 1.25}, None))

    def test_finish_cell_keeps_identity_and_one_line(self):
        cellrecord.write(self.cell, cellrecord.CellRecord("Ada", "01_naive_transpose", 1))
        gradebook.finish_cell(self.cell, "yes", "4", "5", "two\nlines", performance={"performance": "1/2", "short": "s"})
        rec = cellrecord.read(self.cell)
        self.assertEqual((rec.student, rec.slice), ("Ada", 1))
        self.assertEqual(rec.result, cellrecord.Result("yes", "4", "5", "", "", "two\\x0alines", "1/2", "s"))
        self.assertEqual(rec.fields()["slice"], "1")

    def test_timing_lines(self):
        cells = os.path.join(self.tmp, "cells")
        for n, shared in ((1, None), (2, cellrecord.Shared(cellrecord.Result(), {"run_s": 2.5, "share": 3}))):
            d = os.path.join(cells, "%04d" % n)
            os.makedirs(d)
            cellrecord.write(d, cellrecord.CellRecord("Ada", "0%d_x" % n, None, "yes", {"compile_s": 1.0, "run_s": 0.5, "gpu": "1"},
                                                      None, shared))
        os.makedirs(os.path.join(cells, "0003"))  # (a folder without a record: no line)
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(cellrecord.main(["timing", cells, "--names"]), 0)
        self.assertEqual(out.getvalue().splitlines(),
                         ["0001 Ada / 01_x: compile_s=1.0 run_s=0.5 gpu=1",
                          "0002 Ada / 02_x: compile_s=1.0 run_s=0.5 gpu=1 shared_run_s=2.5 shared_share=3"])
        self.put("{")
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            self.assertEqual(cellrecord.main(["timing", self.tmp]), 2)
        self.assertIn("0007", err.getvalue())
        with redirect_stderr(io.StringIO()):
            self.assertEqual(cellrecord.main(["timing", os.path.join(self.tmp, "none")]), 2)
            with self.assertRaises(SystemExit) as e:
                cellrecord.main([])
        self.assertEqual(e.exception.code, 2)


    def test_get(self):
        shared = cellrecord.Shared(cellrecord.Result("yes", "1", "3"), {"share": 3})
        cellrecord.write(self.cell, cellrecord.CellRecord("Ada", "01_x", None, "yes", {"gpu": "1", "run_s": 0.5},
                                                          cellrecord.Result("yes", "3", "3"), shared))
        for name, want in (("compiled", "yes"), ("result.passed", "3"), ("result.finding", ""), ("timing.gpu", "1"),
                           ("timing.run_s", "0.5"), ("shared.timing.share", "3"), ("slice", "null")):
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(cellrecord.main(["get", self.cell, name]), 0)
            self.assertEqual(out.getvalue(), want + "\n", name)
        for name in ("timing.memcheck_s", "result.passed.x", "nothing", "slice.x"):
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(cellrecord.main(["get", self.cell, name]), 1, name)
            self.assertIn("no field " + name, err.getvalue())
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(cellrecord.main(["get", self.tmp, "compiled"]), 2)  # (no record there)
        self.assertIn("no cell.json", err.getvalue())


def dataclass_fields():
    return {k: "" for k in ("compiled", "passed", "total", "course_passed", "course_total", "finding", "performance",
                            "performance_short")}


class Consumers(TwoStudents, unittest.TestCase):
    """The gradebook, --resume and a cell graded again alone, through the record."""

    def test_plan_writes_records(self):
        folder = self.plan()
        for c, student in zip(folder.cells, ("Ada", "Bo")):
            self.assertEqual(cellrecord.read(c.dir), cellrecord.CellRecord(student, "06_bank_conflicts"))

    def test_resume_refuses_a_bad_record(self):
        folder = self.plan()
        with open(os.path.join(folder.cells[1].dir, "cell.json"), "w") as f:
            f.write('{"version": 9}')
        with self.assertRaises(Exit) as e:
            self.plan("--resume")
        self.assertEqual(e.exception.code, 2)
        self.assertIn(os.path.join("0002", "cell.json"), e.exception.message)

    def test_resume_clears_a_stopped_run(self):
        folder = self.plan()
        c0, c1 = folder.cells
        gradebook.finish_cell(c0.dir, "yes", "3", "3", "")
        cellrecord.update(c1.dir, compiled="yes")
        gradebook.finish_cell(c1.dir, "-", finding="not graded: the run was interrupted")
        again = self.plan("--resume")
        self.assertEqual([c.todo for c in again.cells], [False, True])
        rec = cellrecord.read(c1.dir)
        self.assertEqual((rec.compiled, rec.result), ("", None))
        self.assertEqual(cellrecord.read(c0.dir).result.passed, "3")

    def test_below_full_speed_credit_is_graded_again_alone(self):
        # correct, every rule met, but below full speed credit (timed beside other cells): again, alone
        folder = self.plan()
        c0, c1 = folder.cells
        for c, credit, again in ((c0, 1.0, False), (c1, 0.9, True)):
            c.compiled_value = "yes"
            gradebook.finish_cell(c.dir, "yes", "3", "3", "", performance={"performance": "4/4", "speed_credit": credit,
                                                                            "speed_ratio": 0.87, "rules_met": 3, "rules_judged": 3})
            self.assertEqual(cellrecord.read(c.dir).result.speed_credit, "%.4f" % credit)
            self.assertEqual(runfolder.again_alone(c), again)

    def test_graded_again_alone(self):
        folder = self.plan()
        c0, c1 = folder.cells
        for c, passed in ((c0, "3"), (c1, "2")):
            c.compiled_value = "yes"
            c.timing.add("compile_s", 1.234)
            c.timing.add("run_s", 2.0)
            c.timing.add("share", 3)
            c.timing.write(c.dir)
            gradebook.finish_cell(c.dir, "yes", passed, "3", "" if passed == "3" else "2 of 3")
        self.assertFalse(runfolder.again_alone(c0))  # (it passed: graded once, shared)
        self.assertTrue(runfolder.again_alone(c1))
        rec = cellrecord.read(c1.dir)
        self.assertIsNone(rec.result)
        self.assertEqual(rec.timing, {"compile_s": 1.23})
        self.assertEqual(rec.shared, cellrecord.Shared(cellrecord.Result("yes", "2", "3", finding="2 of 3"),
                                                       {"run_s": 2.0, "share": 3}))
        runfolder.finish_not_graded([c0, c1], "")
        self.assertEqual(cellrecord.read(c1.dir).result.finding, "not graded: no worker took it")
        self.assertEqual(cellrecord.read(c0.dir).result.finding, "")
        self.assertIn("compile 1.23 s", runfolder.timing_line(options.parse(["x"]), [c0, c1], 0.0))

    def test_gradebook_from_a_bad_record(self):
        folder = self.plan()
        for c in folder.cells:
            gradebook.finish_cell(c.dir, "yes", "3", "3", "")
        with open(os.path.join(folder.cells[1].dir, "cell.json"), "w") as f:
            f.write(json.dumps(record(version=cellrecord.VERSION + 1)))
        out = os.path.join(self.tmp, "book")
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            rc = cli.main(["--gradebook-from", folder.cells_dir, "--out", out])
        self.assertEqual(rc, 2)
        self.assertIn(os.path.join("0002", "cell.json"), err.getvalue())
        self.assertFalse(os.path.exists(os.path.join(out, "gradebook.csv")))


if __name__ == "__main__":
    unittest.main()
