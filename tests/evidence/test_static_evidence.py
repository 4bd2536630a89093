"""grading/static_evidence.py on cuobjdump output recorded from real builds (tests/evidence/recorded/).

Each folder there holds what `cuobjdump --dump-resource-usage`, `-sass` and `-ptx` (CUDA 13.2's
cuobjdump) printed for one lesson main.cu compiled by nvcc 13.0 for sm_90 with the course's flags:
NN_solution is the course's own code, the others a one-line mutant of it (mutant.diff, beside).
The course's solutions must meet every rule of their rubric; each mutant must fall short of the
rule written for it, and of no rule written for something else.
"""
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
from grading import static_evidence as se  # noqa: E402

RECORDED = os.path.join(ROOT, "tests", "evidence", "recorded")


def rubric_of(lesson):
    folder = [d for d in os.listdir(os.path.join(ROOT, "lessons")) if d.startswith(lesson + "_")][0]
    return se.load_rubric(os.path.join(ROOT, "lessons", folder, "rubric.json"))


def facts_of(case):
    folder = os.path.join(RECORDED, case)
    return se.facts_from_dumps(*(se.read_recorded(folder, k) for k in ("resource", "sass", "ptx")))


def shortfalls(case):
    """{(kernel without its parameters, fact label)} of every rule the case falls short of."""
    rows = se.judge(rubric_of(case[:2]), facts_of(case))
    return {(se.short_name(r["kernel"]), r["label"]) for r in rows if r["status"] in ("short", "missing")}


@unittest.skipUnless(shutil.which("c++filt"), "c++filt (binutils) is needed to read kernel names")
class RecordedBuilds(unittest.TestCase):
    def test_parsing_reads_every_lesson_kernel(self):
        facts = facts_of("05_solution")
        self.assertEqual(facts["arch"], "sm_90")
        by_name = {se.short_name(k["name"]): k for k in facts["kernels"].values()}
        self.assertEqual(by_name["void matmul_tiled<16>"]["shared"], 3072)
        self.assertEqual(by_name["void matmul_tiled<32>"]["shared"], 9216)
        self.assertEqual(by_name["matmul_register_tiled"]["regs"], 128)
        self.assertEqual(by_name["matmul_register_tiled"]["stack"], 0)
        self.assertEqual(by_name["matmul_naive"]["shared"], 0)

    def test_the_solutions_meet_every_rule(self):
        for case in ("02_solution", "03_solution", "04_solution", "05_solution", "06_solution"):
            with self.subTest(case=case):
                rows = se.judge(rubric_of(case[:2]), facts_of(case))
                self.assertTrue(rows)
                self.assertEqual([r for r in rows if r["status"] != "ok"], [])
                # and the recorded solution value is what the build shows
                for r in rows:
                    self.assertEqual(r["yours"], r["solution"], r)

    def test_padding_removed(self):
        self.assertEqual(shortfalls("02_no_padding"), {("void transpose_tiled<33>", "static shared bytes")})

    def test_lesson_06_padding_removed_from_the_padded_layout(self):
        # the swizzled layout's bytes stay 32 x 32: only the padded one falls short
        self.assertEqual(shortfalls("06_no_padding"), {("void transpose_tiled<PaddedTile<32> >", "static shared bytes")})

    def test_no_shared_memory_at_all(self):
        got = shortfalls("02_no_shared")
        self.assertIn(("void transpose_tiled<33>", "static shared bytes"), got)
        self.assertIn(("void transpose_tiled<33>", "BAR.SYNC instructions"), got)

    def test_half_warp_shuffle_mask(self):
        got = shortfalls("04_half_mask")
        self.assertEqual({label for _, label in got}, {"shuffles without all 32 lanes"})
        self.assertIn(("reduce_vec4_atomic", "shuffles without all 32 lanes"), got)

    def test_dropped_fence(self):
        self.assertEqual(shortfalls("04_no_fence"), {("void reduce_vec4_last_block<256>", "MEMBAR instructions"),
                                                     ("void reduce_vec4_last_block<1024>", "MEMBAR instructions")})

    def test_second_barrier_dropped(self):
        self.assertEqual(shortfalls("05_one_barrier"), {("void matmul_tiled<16>", "BAR.SYNC instructions"),
                                                        ("void matmul_tiled<32>", "BAR.SYNC instructions")})

    def test_required_shortfall_fails_the_command_advice_does_not(self):
        for case, rc in (("02_no_padding", 0), ("04_half_mask", 1), ("05_one_barrier", 1), ("04_solution", 0)):
            with self.subTest(case=case):
                rubric = os.path.join(ROOT, "lessons", [d for d in os.listdir(os.path.join(ROOT, "lessons"))
                                                        if d.startswith(case[:2] + "_")][0], "rubric.json")
                out = io.StringIO()
                real = sys.stdout
                sys.stdout = out
                try:
                    got = se.main(["static_evidence.py", "check", rubric, "--dumps", os.path.join(RECORDED, case)])
                finally:
                    sys.stdout = real
                self.assertEqual(got, rc, out.getvalue())
                self.assertIn("solution", out.getvalue())


class Parsing(unittest.TestCase):
    def test_resource_usage_first_elf_section_wins(self):
        text = ("Fatbin elf code:\n================\narch = sm_80\n\nResource usage:\n Function _Z1kv:\n"
                "  REG:10 STACK:8 SHARED:2048 LOCAL:4 CONSTANT[0]:352 TEXTURE:0\n"
                "Fatbin elf code:\n================\narch = sm_90\n\nResource usage:\n Function _Z1kv:\n"
                "  REG:12 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:352 TEXTURE:0\n")
        kernels, arch = se.parse_resource_usage(text)
        self.assertEqual(arch, "sm_80")
        self.assertEqual(kernels["_Z1kv"], {"regs": 10, "shared": 2048, "stack": 8, "local": 4})

    def test_shuffle_masks_through_registers_and_literals(self):
        ptx = (".visible .entry _Z1av(\n)\n{\nmov.u32 %r9, -1;\nshfl.sync.down.b32 %r1|%p1, %r2, 16, 31, %r9;\n"
               "mov.u32 %r9, 65535;\nshfl.sync.down.b32 %r1|%p1, %r2, 8, 31, %r9;\n"
               "shfl.sync.bfly.b32 %r3, %r2, 1, 31, 0x0000ffff;\nshfl.sync.idx.b32 %r3, %r2, 1, 31, %r7;\n}\n"
               ".entry _Z1bv(\n)\n{\nshfl.sync.up.b32 %r3, %r2, 1, 0, -1;\n}\n")
        masks = se.parse_ptx_shuffle_masks(ptx)
        self.assertEqual(masks["_Z1av"], [0xFFFFFFFF, 0xFFFF, 0xFFFF, None])
        self.assertEqual(masks["_Z1bv"], [0xFFFFFFFF])

    def test_short_names_keep_template_arguments(self):
        self.assertEqual(se.short_name("void reduce_tree_shared<(Finish)0>(float const*, long long, float*)"),
                         "void reduce_tree_shared<(Finish)0>")
        self.assertEqual(se.short_name("matmul_naive(float const*, int)"), "matmul_naive")
        self.assertEqual(se.short_name("_Z1kv"), "_Z1kv")

    def test_sass_counts_opcodes_and_their_modifiers(self):
        sass = ("\tFunction : _Z1kv\n"
                "        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;   /* 0x0000000000007b1d */\n"
                "        /*00a0*/              @!P0 BAR.SYNC.DEFER_BLOCKING 0x0 ;   /* 0x0000000000007b1d */\n"
                "        /*00b0*/                   MEMBAR.SC.GPU ;                 /* 0x0000000000007992 */\n"
                "        /*00c0*/                   BARRIER_NOT_AN_OPCODE ;         /* 0x0 */\n")
        ins = se.parse_sass(sass)["_Z1kv"]
        self.assertEqual(se.count_opcode(ins, "BAR.SYNC"), 2)
        self.assertEqual(se.count_opcode(ins, "BAR"), 2)
        self.assertEqual(se.count_opcode(ins, "MEMBAR"), 1)
        self.assertEqual(se.count_opcode(ins, "BAR.SYNC", r"0x1"), 0)


class BadInput(unittest.TestCase):
    def write(self, rubric):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        p = os.path.join(d, "rubric.json")
        with open(p, "w", encoding="utf-8") as f:
            f.write(rubric if isinstance(rubric, str) else json.dumps(rubric))
        return p

    def test_malformed_rubrics_are_refused_with_the_reason(self):
        good = {"kernel": "k", "fact": "regs", "op": "<=", "value": 1, "short": "s"}
        for rubric, words in (("{", "cannot read"), ({"rules": []}, "non-empty"),
                              ({"rules": [dict(good, op="=<")]}, "op"), ({"rules": [dict(good, fact="bananas")]}, "fact"),
                              ({"rules": [{k: v for k, v in good.items() if k != "short"}]}, "short"),
                              ({"rules": [{k: v for k, v in good.items() if k != "value"}]}, "solution"),
                              ({"rules": [dict(good, kernel="(")]}, "kernel pattern")):
            with self.subTest(words=words):
                with self.assertRaises(se.EvidenceError) as e:
                    se.load_rubric(self.write(rubric))
                self.assertIn(words, str(e.exception))

    def test_lesson_01s_rubric_has_counters_and_no_static_rules(self):
        # the naive kernels have no static fact that tells the lesson's point (the access pattern)
        self.assertEqual(se.load_rubric(os.path.join(ROOT, "lessons", "01_naive_transpose", "rubric.json"))["rules"], [])

    def test_missing_binary_or_cuobjdump_is_a_message_and_exit_2(self):
        rubric = os.path.join(ROOT, "lessons", "02_shared_transpose", "rubric.json")
        err, real = io.StringIO(), sys.stderr
        sys.stderr = err
        try:
            self.assertEqual(se.main(["x", "check", rubric, "/no/such/binary"]), 2)
            self.assertEqual(se.main(["x", "check", rubric, "--dumps", "/no/such/folder"]), 2)
            self.assertEqual(se.main(["x", "frobnicate"]), 2)
        finally:
            sys.stderr = real
        self.assertIn("static_evidence.py:", err.getvalue())

    def test_no_value_for_this_architecture_is_shown_not_judged(self):
        facts = facts_of("02_solution")
        facts["arch"] = "sm_100"
        rows = se.judge(rubric_of("02"), facts)
        self.assertTrue(any(r["status"] == "not judged" for r in rows))
        self.assertFalse(any(r["status"] == "short" for r in rows))


if __name__ == "__main__":
    unittest.main()
