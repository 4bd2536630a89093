"""grading/witness.py: the speed witness's lines read as hostile-shaped data, merged into the
verdict's speed evidence (the runner's own times always dropped), judged by grading/evidence.py;
and the sandbox that shows the course's check to the witness step only. No GPU."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, REPO)
from grading import evidence as ev  # noqa: E402
from grading import sandbox, witness  # noqa: E402

RUBRIC = os.path.join(REPO, "lessons", "02_shared_transpose", "rubric.json")
FORGED = {"ms": 0.001, "ceiling_ms": 0.1, "runs": 21, "spread": 0.0}  # what a runner may claim


def verdict_evidence():
    return [{"exercise": "02.tiled", "test_case": "speed: 02.tiled", "kernel": "transpose_tiled<33>", "ceiling": "copy",
             "shape": "8192x4096", "submission": dict(FORGED), "solution": {"ms": 0.10, "ceiling_ms": 0.09, "runs": 21, "spread": 0}}]


def line(**kw):
    base = {"exercise": "02.tiled", "kernel": "transpose_tiled<33>", "ceiling": "copy", "shape": "8192x4096", "gpu": "G",
            "solution_ms": 0.10, "ceiling_ms": 0.09, "submission_ms": 0.20, "runs": 21, "spread": 0.01, "problem": "",
            "wrong_output": False}
    base.update(kw)
    return base


def speed_row(evidence):
    rows = ev.judge(ev.load_rubric(RUBRIC), evidence)["rules"]
    return [r for r in rows if r["kind"] == "speed"][0]


class Merge(unittest.TestCase):
    def test_the_witness_times_replace_the_runners(self):
        merged = witness.merge(verdict_evidence(), {"02.tiled": line()}, "")
        self.assertEqual(merged[0]["submission"]["ms"], 0.20)
        self.assertEqual(merged[0]["solution"]["ms"], 0.10)
        self.assertEqual(merged[0]["submission"]["ceiling_ms"], merged[0]["solution"]["ceiling_ms"])
        row = speed_row(merged)
        self.assertAlmostEqual(row["ratio"], 0.5)  # the course's 0.10 ms against the submission's 0.20 ms
        self.assertEqual(row["status"], "short")

    def test_no_line_no_time_and_short_never_the_runners_claim(self):
        for lines, failed in (({}, ""), ({}, "the witness ended with exit 1 (see witness.log)"),
                              ({"02.tiled": line(submission_ms=None, problem="your compiled code has no kernel X")}, ""),
                              ({"02.tiled": line(problem="your kernel's output is wrong", wrong_output=True)}, ""),
                              ({"02.tiled": line(submission_ms=float("nan"))}, ""),
                              ({"02.tiled": line(submission_ms=-1)}, ""), ({"02.tiled": line(problem=7)}, "")):
            merged = witness.merge(verdict_evidence(), lines, failed)
            self.assertIsNone(merged[0]["submission"], lines)
            row = speed_row(merged)
            self.assertEqual(row["status"], "short", lines)
            self.assertTrue(row["words"].startswith("not timed by the grader"), row["words"])
            self.assertEqual(row["credit"], 0.0)  # no time, no speed credit
            if failed:
                self.assertIn(failed, row["words"])

    def test_an_exercise_left_untimed_takes_the_lessons_speed_credit_to_zero(self):
        # A submission that makes the witness fail on its slow exercise (a kernel that traps or hangs
        # there only) must not be credited with its other exercises' speed.
        rubric = ev.load_rubric(os.path.join(REPO, "lessons", "03_dynamic_shared", "rubric.json"))
        exercises = [r["exercise"] for r in rubric["speed"]]
        self.assertGreater(len(exercises), 1)
        evidence = [{"exercise": x, "kernel": "k", "ceiling": "copy", "submission": dict(FORGED),
                     "solution": {"ms": 0.10, "ceiling_ms": 0.09, "runs": 21, "spread": 0}} for x in exercises]
        fast = {x: line(exercise=x, submission_ms=0.10) for x in exercises}
        self.assertEqual(ev.judge(rubric, witness.merge(evidence, fast, ""))["speed_credit"], 1.0)
        for untimed in exercises:
            lines = {x: v for x, v in fast.items() if x != untimed}
            result = ev.judge(rubric, witness.merge(evidence, lines, ""))
            self.assertEqual(result["speed_credit"], 0.0, untimed)
            self.assertEqual(result["speed_exercise"], untimed)
        failed = ev.judge(rubric, witness.merge(evidence, {}, "the witness ended with exit 1 (see witness.log)"))
        self.assertEqual(failed["speed_credit"], 0.0)

    def test_a_machine_without_the_witness_measures_nothing(self):
        merged = witness.merge(verdict_evidence(), {}, "x", unavailable="no cuobjdump on the grading machine")
        row = speed_row(merged)
        self.assertEqual(row["status"], "not measured")
        self.assertIsNone(merged[0]["submission"])

    def test_evidence_that_is_not_a_list_is_left_alone(self):
        self.assertIsNone(witness.merge(None, {}, ""))


def read_written(name, data: bytes, read):
    """READ(path) of a file NAME holding DATA, in a temporary folder."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(data)
        return read(p)


class Lines(unittest.TestCase):
    def read(self, data: bytes):
        return read_written("w.jsonl", data, witness.read_lines)

    def test_first_line_of_each_exercise_and_junk_skipped(self):
        data = (json.dumps(line()) + "\n" + "not json\n\xff\n".encode("latin-1").decode("latin-1") + "[1,2]\n"
                + json.dumps(line(submission_ms=9.0)) + "\n" + json.dumps(line(exercise="02.other")) + "\n")
        got = self.read(data.encode("latin-1"))
        self.assertEqual(sorted(got), ["02.other", "02.tiled"])
        self.assertEqual(got["02.tiled"]["submission_ms"], 0.20)

    def test_missing_file_is_no_lines(self):
        self.assertEqual(witness.read_lines("/nonexistent/w.jsonl"), {})

    def test_wrong_output_is_a_finding(self):
        lines = {"02.tiled": line(problem="your kernel's output is wrong at the speed case's size", wrong_output=True),
                 "02.other": line(exercise="02.other", problem="no kernel")}
        found = witness.wrong_outputs(lines)
        self.assertEqual(len(found), 1)
        self.assertIn("02.tiled at the speed case's size found a wrong output", found[0])


class Sandbox(unittest.TestCase):
    def cmd(self, judge=""):
        cfg = sandbox.Config(as_root=False, view="/v", prebuilt="/p")
        return sandbox.command(cfg, "run", "/box", judge=judge)

    def test_the_course_check_is_shown_to_the_witness_only(self):
        self.assertNotIn(sandbox.WITNESS_JUDGE, self.cmd())
        c = self.cmd("/out/course/common/02_shared_transpose_check")
        i = c.index(sandbox.WITNESS_JUDGE)
        self.assertEqual(c[i - 2:i + 1], ["--ro-bind", "/out/course/common/02_shared_transpose_check", sandbox.WITNESS_JUDGE])
        last = len(c) - 1 - c[::-1].index("--remount-ro")
        self.assertEqual(c[last + 1], "/")
        self.assertLess(i, last)  # bound before the whole tree is made read-only

    def test_command(self):
        c = witness.command("/course-check", "/box/build/witness", 7)
        self.assertEqual(c[:3], ["/course-check", "--gpu", "--test-case=speed: *"])
        self.assertIn("--time-submission", c)
        self.assertEqual(c[-2:], ["--witness", "/dev/fd/3"])


def elf(symbols):
    """A minimal 64-bit little-endian ELF file with one symbol table: SYMBOLS are (name, STT type,
    defined) triples; an undefined symbol has section index 0, a defined one index 1."""
    strtab = b"\0"
    entries = [b"\0" * 24]
    for name, kind, defined in symbols:
        entries.append(struct.pack("<IBBHQQ", len(strtab), 0x10 | kind, 0, 1 if defined else 0, 0, 0))
        strtab += name.encode() + b"\0"
    symtab = b"".join(entries)
    header_size = 64
    str_off, sym_off = header_size, header_size + len(strtab)
    shoff = sym_off + len(symtab)
    sections = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, str_off, len(strtab), 0, 0, 1, 0),   # SHT_STRTAB
                struct.pack("<IIQQQQIIQQ", 0, 2, 0, 0, sym_off, len(symtab), 1, 1, 8, 24)]  # SHT_SYMTAB, link 1
    header = bytearray(header_size)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, len(sections), 1)
    return bytes(header) + strtab + symtab + b"".join(sections)


class DeviceHeap(unittest.TestCase):
    """A kernel that allocates on the device heap keeps that memory across the witness's reloads of
    its code: its lesson is not timed (witness.extract returns heap_calls' words as the cell's problem)."""

    def calls(self, data: bytes):
        return read_written("check.sm_90.cubin", data, witness.heap_calls)

    def test_allocators_found_and_nothing_else(self):
        FUNC, OBJECT = 2, 1
        self.assertEqual(self.calls(elf([("malloc", FUNC, False), ("free", FUNC, False), ("_Z1kPf", FUNC, True)])), ["malloc"])
        self.assertEqual(self.calls(elf([("__cuda_syscall_aligned_malloc", FUNC, False), ("vprintf", FUNC, False)])),
                         ["__cuda_syscall_aligned_malloc"])
        self.assertEqual(self.calls(elf([("vprintf", FUNC, False), ("__assertfail", FUNC, False), ("_Z1kPf", FUNC, True)])), [])
        self.assertEqual(self.calls(elf([("malloc", FUNC, True)])), [])  # defined here: not the driver's heap
        self.assertEqual(self.calls(elf([("malloc_table", OBJECT, False)])), [])
        self.assertEqual(self.calls(elf([])), [])

    def test_what_is_not_a_cubin_is_unreadable(self):
        good = elf([("malloc", 2, False)])
        for bad in (b"", b"\x7fELF", b"not an elf file at all" * 4, good[:100], good[:-8], b"\x7fELF\x01\x01" + good[6:]):
            self.assertIsNone(self.calls(bad), bad[:16])
        self.assertIsNone(witness.heap_calls("/nonexistent/x.cubin"))

    def test_a_link_is_not_followed(self):
        with tempfile.TemporaryDirectory() as d:
            target = os.path.join(d, "real.cubin")
            with open(target, "wb") as f:
                f.write(elf([]))
            os.symlink(target, os.path.join(d, "link.cubin"))
            self.assertIsNone(witness.heap_calls(os.path.join(d, "link.cubin")))

    def test_extract_names_the_allocator_as_the_cells_problem(self):
        from grading.run import Step

        class Box:  # cuobjdump in the sandbox, as a stand-in that writes the cubins it would
            def __init__(self, cubins):
                self.cubins = cubins

            def run(self, cell_dir, number, name, limit, role, cmd, gpu, cap=0):
                out = cmd[4]
                os.makedirs(out, exist_ok=True)
                for n, data in self.cubins.items():
                    with open(os.path.join(out, n), "wb") as f:
                        f.write(data)
                return Step()

        class Cell:
            dir, number = "", 1

        plain, heap = elf([("vprintf", 2, False)]), elf([("malloc", 2, False), ("free", 2, False)])
        with tempfile.TemporaryDirectory() as d:
            for i, (cubins, expect) in enumerate((({"check.sm_90.cubin": plain, "device.sm_90.cubin": plain}, None),
                                                  ({"check.sm_90.cubin": heap, "device.sm_90.cubin": plain}, "malloc"),
                                                  ({"check.sm_90.cubin": b"junk"}, "could not be read"),
                                                  ({}, "no device code"))):
                got = witness.extract(Box(cubins), Cell(), os.path.join(d, str(i)), "/bin/check", "cuobjdump")
                if expect is None:
                    self.assertIsNone(got)
                else:
                    self.assertIn(expect, got)
            problem = witness.extract(Box({"a.cubin": heap}), Cell(), os.path.join(d, "x"), "b", "c")
        self.assertEqual(speed_row(witness.merge(verdict_evidence(), {}, problem))["credit"], 0.0)

    @unittest.skipUnless(shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"), "no nvcc")
    def test_cubins_nvcc_writes(self):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        kernels = {"heap": "__global__ void k(float* o) { float* p = new float[4]; p[0] = 1; o[0] = p[0]; delete[] p; }",
                   "aligned": "__global__ void k(float* o) { o[0] = __nv_aligned_device_malloc(64, 16) != nullptr; }",
                   "plain": "#include <cstdio>\n__global__ void k(float* o) { o[threadIdx.x] = 1; printf(\"%f\", o[0]); }"}
        with tempfile.TemporaryDirectory() as d:
            found = {}
            for name, code in kernels.items():
                src, cubin = os.path.join(d, name + ".cu"), os.path.join(d, name + ".cubin")
                with open(src, "w") as f:
                    f.write(code + "\n")
                subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", cubin, src], check=True, capture_output=True)
                found[name] = witness.heap_calls(cubin)
        self.assertEqual(found, {"heap": ["malloc"], "aligned": ["__cuda_syscall_aligned_malloc"], "plain": []})


if __name__ == "__main__":
    unittest.main()
