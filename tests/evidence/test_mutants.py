"""grading/mutants.py: deterministic one-line mutants of the EXERCISE regions, by rule."""
import io
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
from grading import mutants, regions  # noqa: E402

RULE = {name: rule for name, _, rule in mutants.RULES}


class Rules(unittest.TestCase):
    """Each rule on lines written for it: what it must make, and what it must leave alone."""

    def check(self, rule, line, expected):
        self.assertEqual(RULE[rule](line), expected)

    def test_drop_barrier_and_fence(self):
        self.check("drop_barrier", "    __syncthreads();", ["    "])
        self.check("drop_fence", "        __threadfence();", ["        "])
        self.check("drop_barrier", "    __syncwarp();", [])

    def test_half_mask(self):
        self.check("half_mask", "v += __shfl_down_sync(kFullMask, v, o);", ["v += __shfl_down_sync(0x0000ffffu, v, o);"])
        self.check("half_mask", "v += __shfl_xor_sync(0xffffffff, v, o);", ["v += __shfl_xor_sync(0x0000ffffu, v, o);"])
        self.check("half_mask", "unsigned m = kFullMask;", [])

    def test_bounds(self):
        self.check("off_by_one", "if (r < rows && c < cols) x = 1;",
                   ["if (r <= rows && c < cols) x = 1;", "if (r < rows && c <= cols) x = 1;"])
        self.check("off_by_one", "a << 2;", [])
        self.check("off_by_one_short", "for (int i = 0; i <= n; ++i)", ["for (int i = 0; i < n; ++i)"])

    def test_subscripts_swapped_in_uses_not_declarations(self):
        self.check("swap_subscripts", "out = tile[threadIdx.x][y];", ["out = tile[y][threadIdx.x];"])
        self.check("swap_subscripts", "__shared__ float tile[kTile][kPitch];", [])
        self.check("swap_subscripts", "As[buf][k][m] = 1;", [])  # three subscripts: not this rule
        self.check("swap_subscripts", "s[i][i] = 0;", [])

    def test_index_swaps(self):
        self.check("swap_block_indices", "r = blockIdx.y * 32, c = blockIdx.x * 32;", ["r = blockIdx.x * 32, c = blockIdx.y * 32;"])
        self.check("swap_block_indices", "r = blockIdx.x * 32;", [])
        self.check("swap_thread_indices", "ty = threadIdx.y, tx = threadIdx.x;", ["ty = threadIdx.x, tx = threadIdx.y;"])

    def test_padding(self):
        self.check("no_padding", "    __shared__ float tile[kTile][kPitch];", ["    __shared__ float tile[kTile][kTile];"])
        self.check("no_padding", "    __shared__ float t[32][32 + 1];", ["    __shared__ float t[32][32];"])
        self.check("no_padding", "    __shared__ float t[kB][kBM + kAPad];", ["    __shared__ float t[kB][kBM];"])
        self.check("no_padding", "const int edge = blockDim.x, pitch = edge + 1;", ["const int edge = blockDim.x, pitch = edge;"])
        self.check("no_padding", "constexpr int kAPad = 4;", ["constexpr int kAPad = 0;"])
        self.check("no_padding", "return r * (kTile + 1) + c;", ["return r * kTile + c;"])
        self.check("no_padding", "int n = rows + 1;", [])

    def test_loops(self):
        self.check("redundant_rows", "for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {",
                   ["for (int y = 0; y < kTile; y += 1) {"])
        self.check("wrong_stride", "for (int y = threadIdx.y; y < edge; y += blockDim.y) {",
                   ["for (int y = threadIdx.y; y < edge; y += 1) {"])
        self.check("wrong_stride", "for (int i = 0; i < n; i += 1)", [])
        self.check("wrong_halving", "for (int s = 128; s > 0; s /= 2)", ["for (int s = 128; s > 0; s /= 4)"])

    def test_vectors_and_swizzles(self):
        self.check("vector_dimension", "const bool a = K % 4 == 0 && aligned16(A);",
                   ["const bool a = M % 4 == 0 && aligned16(A);", "const bool a = N % 4 == 0 && aligned16(A);"])
        self.check("drop_alignment", "const bool a = K % 4 == 0 && aligned16(A);", ["const bool a = K % 4 == 0;"])
        self.check("no_swizzle", "return r * kTile + (c ^ (r & 31));", ["return r * kTile + c;"])
        self.check("swizzle_half", "return r * kTile + (c ^ (r & 31));", ["return r * kTile + (c ^ (r & 15));"])
        self.check("drop_reset", "        *blocks_done = 0;", ["        "])
        self.check("return_own_slot", "    return s[0];", ["    return s[threadIdx.x];"])
        self.check("return_own_slot", "    return s[t];", [])


class Regions(unittest.TestCase):
    TEXT = "\n".join([
        "__syncthreads();                      // 1: outside a region: never mutated",
        "void f() {",
        "    // EXERCISE BEGIN 01.a: something",
        "    // EXERCISE TODO: if (a < b) __syncthreads();",
        "    // EXERCISE STUB: __syncthreads();",
        "    // a comment: if (a < b)",
        "    if (a < b) x = 1;  // the comment stays: if (c < d)",
        "#pragma unroll",
        "    __syncthreads();",
        "    // EXERCISE END",
        "    if (a < b) y = 1;",
        "}",
    ])

    def test_only_code_lines_inside_regions(self):
        got = mutants.mutants_of("01_x", self.TEXT)
        self.assertEqual([(m[0], m[4]) for m in got], [
            ("01_x:01.a+4:off_by_one:0", "    if (a <= b) x = 1;  // the comment stays: if (c < d)"),
            ("01_x:01.a+6:drop_barrier:0", "    "),
            ("01_x:01.a+0:stub:0", "    // TODO(01.a): the exercise as given (its stub)\n    __syncthreads();"),
        ])
        self.assertEqual([m[2] for m in got], [7, 9, 3])  # the lines they change

    def test_ids_hold_when_code_above_a_region_moves(self):
        """An id is the region and the offset from its BEGIN line: lines added or removed above the
        region change the line numbers, not the ids; a line added inside it, above the mutated line,
        does change them."""
        before = mutants.mutants_of("01_x", self.TEXT)
        lines = self.TEXT.split("\n")
        moved = "\n".join(["// two lines", "int g() { return 0; }"] + lines[:2] + lines[2:])
        after = mutants.mutants_of("01_x", moved)
        self.assertEqual([m[0] for m in after], [m[0] for m in before])
        self.assertEqual([m[2] for m in after], [m[2] + 2 for m in before])
        self.assertEqual([m[4] for m in after], [m[4] for m in before])
        shorter = "\n".join(lines[1:])  # the line above the function removed
        self.assertEqual([m[0] for m in mutants.mutants_of("01_x", shorter)], [m[0] for m in before])
        inside = "\n".join(lines[:3] + ["    int unused = 0;"] + lines[3:])
        self.assertEqual([m[0] for m in mutants.mutants_of("01_x", inside)][:2],
                         ["01_x:01.a+5:off_by_one:0", "01_x:01.a+7:drop_barrier:0"])

    def test_apply_changes_exactly_that_line(self):
        mid, _, number, old, new = mutants.mutants_of("01_x", self.TEXT)[0]
        changed = mutants.apply(self.TEXT, number, new).split("\n")
        original = self.TEXT.split("\n")
        self.assertEqual([i for i in range(len(original)) if original[i] != changed[i]], [number - 1])


class TheLessons(unittest.TestCase):
    """On the course's own lessons: deterministic, one line each, and the issue's mistakes are there."""

    @classmethod
    def setUpClass(cls):
        cls.all = mutants.all_mutants()

    def test_deterministic_and_unique(self):
        self.assertEqual(self.all, mutants.all_mutants())
        ids = [m[0] for m in self.all]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertGreater(len(ids), 60)

    def test_every_mutant_is_one_changed_code_line_in_a_region(self):
        region_rules = {name for name, _ in mutants.REGION_RULES}
        for mid, rule, number, old, new in self.all:
            if rule in region_rules:
                continue  # TheRegionMutants
            lesson = mid.split(":", 1)[0]
            text = mutants.read_lesson(lesson)
            self.assertIn(number - 1, mutants.exercise_lines(text), mid)
            self.assertEqual(text.split("\n")[number - 1], old, mid)
            self.assertNotEqual(old, new, mid)
            comment = mutants.code_part(old)[1]
            self.assertTrue(new.endswith(comment), mid)  # rules change code, never its comment

    def find(self, lesson, rule, pattern):
        return [m for m in self.all if m[0].startswith(lesson) and m[1] == rule and re.search(pattern, m[4])]

    def test_the_issues_mistakes_are_generated(self):
        self.assertTrue(self.find("02", "no_padding", r"tile\[kTile\]\[kTile\]"))
        self.assertEqual(len(self.find("02", "redundant_rows", r"y = 0; y < kTile; y \+= 1")), 2)
        self.assertTrue(self.find("04", "half_mask", r"0x0000ffffu"))
        self.assertEqual(len(self.find("04", "drop_fence", r"")), 2)
        self.assertTrue(self.find("05", "drop_barrier", r"everybody is done reading"))
        self.assertEqual(len(self.find("05", "vector_dimension", r"")), 6)
        self.assertEqual(len(self.find("05", "drop_alignment", r"")), 3)
        self.assertTrue(self.find("06", "no_padding", r"kWords = kTile \* kTile"))
        self.assertTrue(self.find("04", "return_own_slot", r"return s\[threadIdx\.x\];"))

    def test_the_recorded_half_mask_mutant_is_this_generators(self):
        # tests/evidence/recorded/04_half_mask was built from a mutant made by hand (mutant.diff):
        # its changed line is exactly what the rule makes.
        with open(os.path.join(ROOT, "tests", "evidence", "recorded", "04_half_mask", "mutant.diff"), encoding="utf-8") as f:
            added = [l[1:] for l in f.read().splitlines() if l.startswith("+") and not l.startswith("+++")]
        self.assertEqual(len(added), 1)
        self.assertEqual([m[4] for m in self.find("04", "half_mask", r"")], added)


class TheRegionMutants(unittest.TestCase):
    """The region-level mistakes: every exercise's stub, and the issue's correct-but-wrong-pattern regions."""

    @classmethod
    def setUpClass(cls):
        cls.all = mutants.all_mutants()
        cls.region = [m for m in cls.all if m[1] in {name for name, _ in mutants.REGION_RULES}]

    @staticmethod
    def code(text):
        return [l.rstrip() for l in text.split("\n") if l.strip() and not l.strip().startswith("//")]

    def test_one_stub_per_region_and_together_they_are_the_exercise(self):
        for lesson in mutants.lessons():
            text = mutants.read_lesson(lesson)
            stubs = [m for m in self.region if m[0].startswith(lesson + ":") and m[1] == "stub"]
            self.assertEqual(sorted(m[2] for m in stubs), [b + 1 for _, b, _ in mutants.regions(text)], lesson)
            for mid, _, number, old, new in sorted(stubs, key=lambda m: -m[2]):
                text = mutants.apply(text, number, new, old)
            # Code lines equal to what scripts/make_exercises.cmake generated (comments aside).
            with open(os.path.join(ROOT, "exercises", lesson, "main.cu"), encoding="utf-8") as f:
                self.assertEqual(self.code(text), self.code(f.read()), lesson)
        self.assertEqual(len([m for m in self.region if m[1] == "stub"]), 13)

    def test_a_region_mutant_replaces_its_region_and_nothing_else(self):
        for mid, rule, number, old, new in self.region:
            text = mutants.read_lesson(mid.split(":", 1)[0])
            lines = text.split("\n")
            n_old = len(old.split("\n"))
            self.assertEqual("\n".join(lines[number - 1:number - 1 + n_old]), old, mid)
            self.assertTrue(lines[number - 1].strip().startswith("// EXERCISE BEGIN"), mid)
            self.assertTrue(lines[number - 2 + n_old].strip().startswith("// EXERCISE END"), mid)
            changed = mutants.apply(text, number, new, old).split("\n")
            self.assertEqual(changed[:number - 1], lines[:number - 1], mid)
            self.assertEqual(changed[number - 1 + len(new.split("\n")):], lines[number - 1 + n_old:], mid)
            self.assertNotIn("EXERCISE", new, mid)
            rid = lines[number - 1].split("EXERCISE BEGIN ")[1].split(":")[0]
            self.assertEqual(mid.split(":")[1:], [rid + "+0", rule, "0"])

    def test_the_issues_region_mistakes(self):
        ids = {m[0]: m for m in self.region}
        tiled = [m for m in self.region if m[1] == "naive_in_tiled"]
        self.assertEqual([m[0].split(":")[1] for m in tiled], ["02.tiled+0", "03.tile+0", "03.tile_in_flight+0"])
        for m in tiled:
            self.assertIn("__shared__", m[3])
            self.assertNotIn("__shared__", m[4])
            self.assertNotIn("__syncthreads", m[4])
            self.assertIn("out[c * rows + r] = in[r * cols + c];", m[4])  # reads coalesced, writes strided
        other = sorted(m for m in self.region if m[1] == "other_coalescing")
        self.assertEqual([m[3].split("\n")[0].split()[-1] for m in other], ["01.strided_reads", "01.strided_writes"])
        # reads: consecutive threads take consecutive floats of `in`; writes: of `out`.
        self.assertIn("= in[i];", other[0][4])
        self.assertIn("out[i] =", other[1][4])
        for m in other + tiled:
            self.assertIn(m[0], ids)

    def test_a_kernel_that_misses_its_idea_for_the_exercises_that_have_one(self):
        pointless = {m[0].split(":")[1]: m for m in self.region if m[1] == "misses_idea"}
        self.assertEqual(sorted(pointless), sorted(r + "+0" for r in (
            "01.strided_reads", "02.tiled", "03.tile_in_flight", "03.records", "04.tree", "04.shuffle", "04.last_block",
            "05.tiled", "06.swizzled")))
        # the issue's tree: interleaved addressing, the stride growing from 1; the warp sum without shuffles
        self.assertIn("if (t % (2 * stride) == 0) s[t] += s[t + stride];", pointless["04.tree+0"][4])
        self.assertNotIn("__shfl", pointless["04.shuffle+0"][4])
        self.assertNotIn("__shared__", pointless["03.records+0"][4])
        self.assertNotIn("kRowsInFlight", pointless["03.tile_in_flight+0"][4])


class OneReaderOfTheMarkers(unittest.TestCase):
    """grading/regions.py: the mutants, the lint (its lenient spans) and the exercise generator read
    the same regions."""

    def test_the_same_regions_every_way(self):
        for lesson in mutants.lessons():
            text = mutants.read_lesson(lesson)
            strict = regions.parse(text)
            self.assertEqual([(r.id, r.begin, r.end) for r in strict], mutants.regions(text), lesson)
            self.assertEqual([(r.begin + 1, r.end + 1) for r in strict], regions.spans(text), lesson)
            self.assertTrue(strict, lesson)

    def test_refused_markers(self):
        for text, message in (("// EXERCISE END", "main.cu:1: EXERCISE END without an EXERCISE BEGIN"),
                              ("// EXERCISE BEGIN 01.a: x\n// EXERCISE BEGIN 01.b: y", "main.cu:2: EXERCISE BEGIN inside region 01.a"),
                              ("x; // EXERCISE BEGIN 01.a: x", "main.cu:1: an EXERCISE marker must be on a line of its own")):
            with self.assertRaises(regions.MarkerError) as e:
                regions.parse(text)
            self.assertTrue(str(e.exception).startswith(message), str(e.exception))
        self.assertEqual(regions.spans("// EXERCISE BEGIN\n// EXERCISE BEGIN 01.a\nx\n// EXERCISE END"), [(2, 4)])


class EquivalentMutants(unittest.TestCase):
    """grading/equivalent_mutants.txt: `id: why`, each id a mutant the generator makes, none a stub."""

    def test_every_line_names_a_mutant_with_a_reason(self):
        ids = {m[0]: m for m in mutants.all_mutants()}
        seen = set()
        with open(os.path.join(ROOT, "grading", "equivalent_mutants.txt"), encoding="utf-8") as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                mid, sep, why = line.rstrip("\n").partition(": ")
                self.assertEqual(sep, ": ", line)
                self.assertIn(mid, ids, "not a mutant of grading/mutants.py (moved lines?): " + mid)
                self.assertGreater(len(why.split()), 8, "argue it: " + mid)
                self.assertNotIn(mid, seen)
                self.assertNotIn(ids[mid][1], {name for name, _ in mutants.REGION_RULES}, mid)
                seen.add(mid)
        self.assertTrue(seen)

    def test_the_list_holds_when_code_above_the_regions_moves(self):
        """Lines added at the top of a lesson (above every region) keep every listed id naming the
        same change, two lines further down."""
        with open(os.path.join(ROOT, "grading", "equivalent_mutants.txt"), encoding="utf-8") as f:
            listed = [l.split(": ", 1)[0] for l in f if l.strip() and not l.startswith("#")]
        for lesson in sorted({mid.split(":", 1)[0] for mid in listed}):
            text = mutants.read_lesson(lesson)
            before = {m[0]: m for m in mutants.mutants_of(lesson, text)}
            after = {m[0]: m for m in mutants.mutants_of(lesson, "// moved\n// down\n" + text)}
            for mid in (m for m in listed if m.startswith(lesson + ":")):
                self.assertIn(mid, after, mid)
                self.assertEqual(after[mid][2], before[mid][2] + 2, mid)
                self.assertEqual(after[mid][3:], before[mid][3:], mid)


class CommandLine(unittest.TestCase):
    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        real = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            rc = mutants.main(["mutants.py", *args])
        finally:
            sys.stdout, sys.stderr = real
        return rc, out.getvalue(), err.getvalue()

    def test_apply_writes_a_region_mutant(self):
        mid = next(m[0] for m in mutants.all_mutants(only="02") if m[1] == "naive_in_tiled")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "main.cu")
            self.assertEqual(self.run_main("apply", mid, path)[0], 0)
            with open(path, encoding="utf-8") as f:
                mutated = f.read()
        self.assertIn("lesson 01's transpose in the tiled kernel's place", mutated)
        self.assertEqual(mutated.count("EXERCISE BEGIN 02.tiled"), 0)
        rc, out, _ = self.run_main("show", mid)
        self.assertEqual(rc, 0)
        self.assertIn("-    __shared__ float tile[kTile][kPitch];", out)

    def test_show_apply_and_bad_ids(self):
        mid = mutants.all_mutants(only="04")[0][0]
        rc, out, _ = self.run_main("show", mid)
        self.assertEqual(rc, 0)
        self.assertEqual(len([l for l in out.splitlines() if l.startswith("+") and not l.startswith("+++")]), 1)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "main.cu")
            self.assertEqual(self.run_main("apply", mid, path)[0], 0)
            with open(path, encoding="utf-8") as f:
                mutated = f.read().split("\n")
        original = mutants.read_lesson(mid.split(":", 1)[0]).split("\n")
        self.assertEqual(sum(1 for a, b in zip(original, mutated) if a != b), 1)
        for bad in ("99_nothing:1:drop_barrier:0", "04_reduction:1:drop_barrier:0", "04_reduction:04.tree+1:drop_barrier:0",
                    "04_reduction:04.nothing+5:drop_barrier:0", "nonsense"):
            rc, _, err = self.run_main("show", bad)
            self.assertEqual(rc, 2, bad)
            self.assertIn("mutants.py:", err)
        self.assertEqual(self.run_main("frobnicate")[0], 2)

    def test_list_names_every_mutant_once(self):
        rc, out, _ = self.run_main("list")
        self.assertEqual(rc, 0)
        self.assertEqual([l.split("\t")[0] for l in out.splitlines()], [m[0] for m in mutants.all_mutants()])


if __name__ == "__main__":
    unittest.main()
