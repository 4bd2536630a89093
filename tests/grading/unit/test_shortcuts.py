"""grading/precision.py and grading/library_use.py: reduced precision in the compiled code, a
library doing an exercise's work in the source. SASS lines below are cuobjdump -sass output of
kernels nvcc 13.0 compiled for sm_90; the tests that compile need nvcc (PTX) or cuobjdump (SASS)
and are skipped without them."""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
from grading import library_use, precision, shortcuts  # noqa: E402
from grading.static_evidence import find_cuda_tool  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def sass(function, *lines):
    body = "".join("        /*%04x*/                   %s ;   /* 0x0 */\n" % (16 * i, l) for i, l in enumerate(lines))
    return "\t\tFunction : %s\n%s" % (function, body)


HONEST = sass("_Z6honestPKfPfiPd", "HFMA2.MMA R13, -RZ, RZ, 1.75, 0", "FFMA R0, R2, R3, R0", "F2F.F64.F32 R6, R0",
              "F2F.F32.F64 R11, R10", "HFMA2.MMA R27, -RZ, RZ, -15.890625, -0.0047760009765625", "EXIT")
TF32 = sass("_Z21matmul_register_tiledPKfS0_Pfiii", "HMMA.1684.F32.TF32 R12, R8.reuse, R14, RZ", "EXIT")
HALF = sass("_Z14half_roundtripPKfPfi", "F2FP.F16.F32.PACK_AB R0, RZ, R2", "HADD2.F32 R0, -RZ, R0.H0_H0", "EXIT")
BF16 = sass("_Z14bf16_roundtripPKfPfi", "F2F.BF16.F32 R0, R2", "EXIT")
RUBRIC = {"rules": [{"exercise": "05.register_tiled", "kernel": "^matmul_register_tiled", "fact": "stack", "op": "=="}]}


class PrecisionRule(unittest.TestCase):
    def test_honest_fp32_code_has_no_finding(self):
        # ptxas moves constants through the half FMA pipe (HFMA2.MMA with RZ sources): not counted
        self.assertEqual(precision.findings(HONEST, None, RUBRIC), [])

    def test_tensor_cores_are_named_with_the_exercise(self):
        f = precision.findings(TF32 + HONEST, None, RUBRIC)
        self.assertEqual(f, ["05.register_tiled: computes in reduced precision (HMMA tensor-core instructions in its "
                             "machine code); the lesson teaches FP32"])

    def test_half_and_bfloat16_round_trips_in_any_function(self):
        f = precision.findings(HALF + BF16, None, RUBRIC)
        self.assertEqual(len(f), 2)
        self.assertIn("`bf16_roundtrip`: computes in reduced precision (F2F conversions to BF16", f[0])
        self.assertIn("F2FP conversions to half or bfloat16, HADD2 half-precision arithmetic", f[1])

    def test_each_instruction_class(self):
        for op, args in (("HGMMA.64x128x16.F32.BF16", "R24, gdesc[UR4], R24"), ("IMMA.16816.S8.S8", "R8, R8.ROW, R4.COL, RZ"),
                         ("QGMMA.64x64x32.F32.E4M3.E4M3", "R0, gdesc[UR4], R0"), ("HFMA2", "R0, R0, R0, R0"),
                         ("HMUL2", "R0, R1, R2"), ("I2F.F16", "R0, R1")):
            self.assertIsNotNone(precision.sass_reduced(op, args), op)
        for op, args in (("DMMA.884", "R0, R2, R4, R0"), ("HFMA2.MMA", "R3, -RZ, RZ, 0, 0"), ("FFMA", "R0, R1, R2, R3"),
                         ("F2F.F64.F32", "R6, R0"), ("I2F.U32", "R0, R1")):
            self.assertIsNone(precision.sass_reduced(op, args), op)

    def test_ptx_tf32_rounding_and_inline_mma(self):
        ptx = (".visible .entry _Z4tf32PKfPf(\n)\n{\n\tcvt.rna.tf32.f32 %r1, %f1;\n\tadd.f32 %f2, %f1, %f1;\n}\n"
               ".func  (.param .b32 func_retval0) _Z8helper_hf(\n)\n{\n\t{  cvt.rn.f16.f32 %rs1, %f1;}\n}\n"
               ".visible .entry _Z4mmaPKjPf(\n)\n{\n\tmma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1}, {%r1}, {%r2}, {%f2};\n}\n"
               ".visible .entry _Z6honestPf(\n)\n{\n\t.reg .b16 %rs<3>;\n\tfma.rn.f32 %f1, %f2, %f3, %f4;\n}\n")
        found = precision.ptx_reduced(ptx)
        self.assertEqual(found, {"_Z4tf32PKfPf": ["cvt.rna.tf32.f32"], "_Z8helper_hf": ["cvt.rn.f16.f32"], "_Z4mmaPKjPf": ["mma"]})

    def test_a_lesson_may_say_it_teaches_another_precision(self):
        self.assertEqual(precision.findings(TF32, None, {"precision": "TF32"}), [])


@unittest.skipUnless(find_cuda_tool("nvcc", "CUDACXX"), "no nvcc")
class CompiledKernels(unittest.TestCase):
    SOURCE = r'''
#include <mma.h>
#include <cuda_fp16.h>
__global__ void honest(const float* a, float* c, int n) {
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s = fmaf(a[k], a[k + threadIdx.x], s);
    c[threadIdx.x] = s + __shfl_down_sync(0xffffffffu, s, 1) * 1.875f;
}
__global__ void tf32(const float* a, const float* b, float* c) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
__global__ void half_trip(const float* a, float* c) { c[threadIdx.x] = __half2float(__float2half(a[threadIdx.x])); }
'''

    def compile(self, option, out):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "k.cu"), "w") as f:
            f.write(self.SOURCE)
        subprocess.run([find_cuda_tool("nvcc", "CUDACXX"), "-arch=sm_90", option, "-o", os.path.join(d, out),
                        os.path.join(d, "k.cu")], check=True, capture_output=True)
        return os.path.join(d, out)

    def test_ptx(self):
        with open(self.compile("-ptx", "k.ptx")) as f:
            found = precision.ptx_reduced(f.read())
        self.assertEqual(sorted(found), ["_Z4tf32PKfS0_Pf", "_Z9half_tripPKfPf"])
        self.assertIn("wmma", found["_Z4tf32PKfS0_Pf"])

    @unittest.skipUnless(find_cuda_tool("cuobjdump", "CUOBJDUMP"), "no cuobjdump")
    def test_sass(self):
        cubin = self.compile("-cubin", "k.cubin")
        text = subprocess.run([find_cuda_tool("cuobjdump", "CUOBJDUMP"), "-sass", cubin], capture_output=True, text=True,
                              check=True).stdout
        self.assertEqual(sorted(precision.sass_findings(text)), ["_Z4tf32PKfS0_Pf", "_Z9half_tripPKfPf"])


LESSON04 = os.path.join(REPO, "lessons", "04_reduction", "main.cu")
SHUFFLE = "    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);\n    return v;"
TREE_END = "    return s[0];\n    // EXERCISE END"


class LibraryRule(unittest.TestCase):
    def setUp(self):
        with open(LESSON04) as f:
            self.lesson = f.read()

    def judge(self, text, pre=()):
        return library_use.findings(self.lesson, text, list(pre[0]) if pre else [], list(pre[1]) if pre else [], "04_reduction")

    def test_the_lesson_and_its_exercise_have_none(self):
        self.assertEqual(self.judge(self.lesson), [])
        with open(os.path.join(REPO, "exercises", "04_reduction", "main.cu")) as f:
            self.assertEqual(self.judge(f.read()), [])

    def test_cooperative_groups_through_a_namespace_alias(self):
        text = self.lesson.replace("#include <cstdio>\n", "#include <cstdio>\n#include <cooperative_groups.h>\n"
                                   "namespace cg = cooperative_groups;\n")
        text = text.replace(SHUFFLE, "    return cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, cg::plus<float>());")
        f = self.judge(text)
        self.assertTrue(f[0].startswith("04.shuffle: a library does the exercise's work (`cg` at main.cu:"), f)
        self.assertIn("#include <cooperative_groups.h>", f[1])

    def test_a_helper_outside_the_region_and_a_using_declaration(self):
        text = self.lesson.replace("constexpr int kWarp = 32;\n", "constexpr int kWarp = 32;\nusing cub::WarpReduce;\n"
                                   "__device__ float helper(float v) { __shared__ WarpReduce<float>::TempStorage t; "
                                   "return WarpReduce<float>(t).Sum(v); }\n")
        text = text.replace(SHUFFLE, "    return helper(v);")
        f = self.judge(text)
        self.assertEqual(len(f), 1)
        self.assertIn("outside the exercise regions (`WarpReduce`, `cub` at main.cu:", f[0])

    def test_names_in_comments_and_strings_are_not_code(self):
        text = self.lesson.replace(SHUFFLE, SHUFFLE + "  // not cub::WarpReduce\n    printf(\"thrust\");")
        self.assertEqual(self.judge(text), [])

    def test_a_new_header_is_named_but_a_standard_one_is_not(self):
        text = self.lesson.replace("#include <cstdio>\n", "#include <cstdio>\n#include <climits>\n#include <mma.h>\n")
        f = self.judge(text)
        self.assertEqual(len(f), 1)
        self.assertIn("#include <mma.h> at main.cu:", f[0])

    def test_preprocessed_lines(self):
        text = '# 1 "x.cu"\nint a;\n# 1 "/h.h" 1\ncub b;\n# 3 "x.cu" 2\n\n  ::cub::BlockReduce c; "cub"\n'
        self.assertEqual(library_use.preprocessed_lines(text, "x.cu"), {1: ["int", "a"], 4: ["::", "cub", "::", "BlockReduce", "c"]})

    def test_the_marker_scans_read_the_text_as_line_by_line_reading_would(self):
        """preprocessed_lines and included_files scan the whole text for line markers at once; on
        generated texts (odd whitespace, unclosed quotes, escapes, no final newline) they give what
        reading the lines one by one gives (the definitions below)."""
        mark = re.compile(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"')
        full = re.compile(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d)*)\s*$')

        def lines_one_by_one(text, source):
            out, line, here = {}, 0, False
            for raw in text.split("\n"):
                m = mark.match(raw)
                if m:
                    line, here = int(m.group(1)), m.group(2) == source
                    continue
                if here and raw.strip():
                    out.setdefault(line, []).extend(library_use.line_tokens(raw))
                line += 1
            return out

        def includes_one_by_one(text, source):  # the markers matched line by line, judged as included_files does
            matched = (full.match(raw) for raw in text.split("\n"))
            return library_use.includes_from_markers(((m.group(1), m.group(2), m.group(3).split()) for m in matched if m),
                                                     source)

        spaces = [" ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\xa0", "\u2003", ""]
        names = ["x.cu", "/box/src/main.cu", "a b.h", "<built-in>", 'q\\"x', "x.cu\\", "/usr/include/cub/cub.cuh"]
        r = random.Random(42)

        def line():
            if r.random() < 0.5:
                flags = "".join(r.choice(spaces[:-1]) + r.choice("1234x") for _ in range(r.randint(0, 3)))
                return ("#" + r.choice(spaces) + str(r.randint(0, 40)) + r.choice(spaces) + '"' + r.choice(names)
                        + ('"' if r.random() < 0.9 else "") + flags + r.choice(spaces))
            return r.choice(["", " ", "#", "#pragma once", "# 3", "int a;", "  cub::BlockReduce<int> b;", "x = y::z; // c",
                             '"str"', "/* c */ q", "\\", '7 "x.cu" 2', '"', 'x.cu" 1', " 1", " 2"])
        for _ in range(3000):
            text = "\n".join(line() for _ in range(r.randint(0, 12))) + r.choice(["", "\n", "\n\n"])
            for source in names:
                self.assertEqual(library_use.preprocessed_lines(text, source), lines_one_by_one(text, source), repr(text))
                self.assertEqual(library_use.included_files(text, source), includes_one_by_one(text, source), repr(text))

    @unittest.skipUnless(find_cuda_tool("nvcc", "CUDACXX"), "no nvcc")
    def test_token_pasting_is_seen_after_preprocessing(self):
        text = self.lesson.replace("constexpr int kWarp = 32;\n", "constexpr int kWarp = 32;\n#define PASTE(a, b) a##b\n"
                                   "#define REDUCER PASTE(c, ub)::BlockReduce<float, kBlock>\n")
        text = text.replace(TREE_END, "    __shared__ typename REDUCER::TempStorage t;\n    return REDUCER(t).Sum(v);\n"
                            "    // EXERCISE END")
        self.assertEqual(self.judge(text), [])  # the source alone does not show it
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        passes = []
        for name, body in (("lesson", self.lesson), ("sub", text)):
            path = os.path.join(d, name + ".cu")
            with open(path, "w") as f:
                f.write(body)
            out = subprocess.run([find_cuda_tool("nvcc", "CUDACXX"), "-E", "-x", "cu", "-arch=sm_90", "-std=c++17",
                                  "-DCOURSE_NO_MAIN", "-I" + os.path.join(REPO, "common"), "-I" + os.path.join(REPO, "harness"),
                                  path], capture_output=True, text=True, check=True).stdout
            passes.append([library_use.preprocessed_lines(out, path)])
        f = self.judge(text, passes)
        self.assertTrue(f and f[0].startswith("04.tree: a library does the exercise's work (`cub` at main.cu:"), f)


# Headers a submission may include (standard, POSIX, the runtime's, the course's own), and what
# brings in a library's work.
ALLOWED = ["<filesystem>", "<span>", "<bit>", "<numbers>", "<concepts>", "<ranges>", "<compare>", "<charconv>",
           "<source_location>", "<unistd.h>", "<sys/prctl.h>", "<dlfcn.h>", "<sys/resource.h>", "<pthread.h>",
           "<cuda_runtime.h>", "<cuda_runtime_api.h>", '"timer.cuh"', '"cuda_check.cuh"', "<math.h>", "<cstdio>"]
FLAGGED = ["<cub/cub.cuh>", "<thrust/reduce.h>", "<cuda/std/atomic>", "<cuda/atomic>", "<cooperative_groups.h>",
           "<cooperative_groups/reduce.h>", "<mma.h>", "<cuda_fp16.h>", "<cuda_bf16.h>", "<cuda_fp8.h>", "<cublas_v2.h>"]


class IncludeRule(unittest.TestCase):
    """Where a header resolves decides (the preprocessor's line markers), not its name alone."""
    TK = ["/usr/local/cuda/targets/x86_64-linux/include"]
    OK = ["/box/src", "/course/common", "/course/harness"]

    def test_the_markers_name_the_file_each_include_entered(self):
        text = ('# 1 "/box/src/main.cu"\n# 1 "<built-in>" 1\n# 1 "/cuda/include/cuda_runtime.h" 1\n'
                '# 2 "<built-in>" 2\n# 1 "/box/src/main.cu"\nint a;\n# 1 "/usr/include/unistd.h" 1 3 4\n'
                '# 1 "/usr/include/features.h" 1 3 4\n# 2 "/usr/include/unistd.h" 2 3 4\n# 3 "/box/src/main.cu" 2\n'
                '# 1 "/box/src/../../tmp/x.h" 1\nint x;\n# 7 "/box/src/main.cu" 2\n')
        self.assertEqual(library_use.included_files(text, "/box/src/main.cu"), {1: "/usr/include/unistd.h", 5: "/tmp/x.h"})
        self.assertEqual(library_use.toolkit_dirs([text]), ["/cuda/include"])

    def test_where_a_header_resolves(self):
        for path in ("/usr/include/unistd.h", "/usr/include/x86_64-linux-gnu/sys/prctl.h", "/usr/include/c++/13/filesystem",
                     "/usr/lib/gcc/x86_64-linux-gnu/13/include/stddef.h", "/course/common/timer.cuh",
                     self.TK[0] + "/cuda_runtime_api.h", "/box/src/helper.cuh"):
            self.assertIsNone(library_use.foreign_header(path, self.TK, self.OK), path)
        for path in (self.TK[0] + "/cub/cub.cuh", self.TK[0] + "/mma.h", self.TK[0] + "/cuda_fp16.h",
                     self.TK[0] + "/math_constants.h", "/box/src/../../../usr/local/cuda/targets/x86_64-linux/include/crt/x.h"):
            self.assertIn("CUDA toolkit", library_use.foreign_header(path, self.TK, self.OK), path)
        self.assertIn("CUDA library", library_use.foreign_header("/usr/include/thrust/reduce.h", self.TK, self.OK))
        for path in ("/tmp/x.h", "/course/lessons/04_reduction/main.cu", "/subs/Ada/04_reduction/main.cu"):
            self.assertIn("outside the submission", library_use.foreign_header(path, self.TK, self.OK), path)
        # a toolkit installed among the system's headers (/usr/include): its libraries told by name
        self.assertIsNone(library_use.foreign_header("/usr/include/unistd.h", ["/usr/include"], self.OK))
        self.assertIsNotNone(library_use.foreign_header("/usr/include/cub/cub.cuh", ["/usr/include"], self.OK))

    def test_by_name_without_preprocessed_text(self):
        for h in ALLOWED:
            self.assertIsNone(library_use.include_problem(h, None, 0), h)
        for h in FLAGGED + ['"../../../usr/local/cuda/include/cub/cub.cuh"', '"/tmp/x.h"', '"../other/main.cu"']:
            self.assertIsNotNone(library_use.include_problem(h, None, 0), h)


@unittest.skipUnless(find_cuda_tool("nvcc", "CUDACXX"), "no nvcc")
class IncludesPreprocessed(unittest.TestCase):
    """The attack suite's honest includes (atk03-05, 07, 08, 11, 19, 20: <filesystem>, <unistd.h>,
    <sys/prctl.h>, <dlfcn.h>, "timer.cuh") and the libraries, through nvcc -E as grading/shortcuts.py
    runs it: one line each at the top of lesson 01's main.cu."""

    def judge(self, headers, extra="", lesson="01_naive_transpose", after=""):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        src = os.path.join(d, "src")
        os.mkdir(src)
        with open(os.path.join(REPO, "lessons", lesson, "main.cu")) as f:
            lesson = f.read()
        text = "".join("#include %s\n" % h for h in headers) + extra + lesson + after
        path = os.path.join(src, "main.cu")
        with open(path, "w") as f:
            f.write(text)
        nvcc = find_cuda_tool("nvcc", "CUDACXX")
        script = shortcuts.preprocess_script()
        subprocess.run(["bash", "-c", script, "pre", nvcc, "-arch=sm_90", REPO, path, os.path.join(d, "out")], check=True,
                       capture_output=True)
        texts = []
        for side in ("device", "host"):
            with open(os.path.join(d, "out", side + ".ii")) as f:
                texts.append(f.read())
        passes = [library_use.preprocessed_lines(t, path) for t in texts]
        resolved = shortcuts.resolved_includes(texts, path, nvcc, REPO)
        return library_use.shortcuts(lesson, text, [], passes, resolved), d

    def test_the_attack_rows_that_include_system_headers(self):
        """atk03-05, 07, 08, 11 (lesson 01) and atk19, 20 (lesson 02) of tests/grading/attacks, built
        as scripts/make_test_submissions.sh builds them (the attack after the lesson's main.cu): no
        library finding (the first GPU run found <filesystem>, <unistd.h>, <sys/prctl.h>, <dlfcn.h>
        and "timer.cuh" there)."""
        for lesson, name in (("01_naive_transpose", "tamper"), ("01_naive_transpose", "course_write"),
                             ("01_naive_transpose", "read_other"), ("01_naive_transpose", "escape"),
                             ("01_naive_transpose", "fork_bomb"), ("01_naive_transpose", "transcript_flood"),
                             ("02_shared_transpose", "forge_macro"), ("02_shared_transpose", "forge_interpose")):
            with open(os.path.join(REPO, "tests", "grading", "attacks", name + ".cu")) as f:
                code = f.read()
            with self.subTest(name=name):
                found, _ = self.judge([], "", lesson=lesson, after="\n\n" + code)
                self.assertEqual(found, [])

    def test_the_honest_includes_pass(self):
        found, _ = self.judge(ALLOWED)
        self.assertEqual(found, [])

    def test_each_library_header_is_named(self):
        found, _ = self.judge(FLAGGED)
        self.assertEqual(sorted({i for i, _, what in found if what.startswith("#include")}), list(range(len(FLAGGED))))

    def test_a_relative_path_into_the_toolkit_and_a_link_to_it(self):
        nvcc = find_cuda_tool("nvcc", "CUDACXX")
        tk = library_use.toolkit_dirs([], nvcc)[0]
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        cub = [p for p in (os.path.join(tk, "cub", "cub.cuh"), os.path.join(tk, "cccl", "cub", "cub.cuh")) if os.path.exists(p)]
        rel = os.path.relpath(cub[0], "/")  # (CUDA 13 keeps CUB in include/cccl/)
        os.symlink(os.path.realpath(tk), os.path.join(d, "tk"))
        with open(os.path.join(d, "x.h"), "w") as f:
            f.write("inline int outside() { return 1; }\n")
        headers = ['"../../../../../../../../../../%s"' % rel, '"%s/tk/math_constants.h"' % d, '"%s/x.h"' % d]
        found, _ = self.judge(headers)
        whats = {i: what for i, _, what in found}
        self.assertEqual(sorted(whats), [0, 1, 2], found)
        self.assertIn("#include %s" % headers[0], whats[0])
        self.assertIn("a header of the CUDA toolkit beyond its runtime", whats[1])
        self.assertIn("a header from outside the submission and the course", whats[2])


if __name__ == "__main__":
    unittest.main()
