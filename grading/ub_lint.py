#!/usr/bin/env python3
"""ub_lint.py — undefined behaviour in a lesson's device code, as GCC sees it.

    ub_lint.py MAIN.CU [--json] [--common DIR] [--gxx PROGRAM] [--timeout S] [--show] [--verbose]

Why: a kernel that indexes one past its own register array (`for (k = 0; k <= kN; ++k) v[k] = ...`
with `float v[kN]`) is undefined behaviour, and nvcc, which may assume it never happens, deletes
the extra iteration: the compiled kernel is right, so no check, sanitizer or timing can see the
mistake. GCC reasons the same way and says so (`iteration 4 invokes undefined behavior`, `array
subscript 4 is above array bounds`), but nvcc never hands device code to GCC. So this renders
MAIN.CU's device code as host C++ and compiles it with g++ -O3 (gcc_command):
  * each top-level declaration that is __global__ or __device__ or holds part of an EXERCISE
    region, and every top-level declaration those name, transitively (constants, helpers, structs,
    the course's own headers from common/ that MAIN.CU includes); nothing else of the file (no
    main, no launcher, no #include), each at its own line number (#line), so GCC names MAIN.CU's lines;
  * after a small header (SHIM) that stands in for CUDA's built-ins (threadIdx as values GCC cannot
    know, __syncthreads, shuffles, atomics, float4, ...), with __global__ and friends made empty;
  * every template kernel instantiated with the arguments MAIN.CU gives it (render()).
Only a warning GCC printed for one of UB_FLAGS, at a line of MAIN.CU, is a finding. Code that
cannot be rendered or compiled this way (a student's exotic code) is "not applicable", never a
failure. GCC reads the student's code: the grader runs this in the cell's sandbox, with a limit.

Exit: 0 clean, 1 undefined behaviour found, 3 not applicable, 2 bad command line. With --json the
last line printed is {"status": "clean"|"ub"|"not applicable", "findings": [{"line", "flag",
"message"}], "why"}. --show prints the C++ given to GCC instead; --verbose also GCC's output.
"""
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# GCC's warnings that say "this is undefined behaviour" (with the code in MAIN.CU's lines), and
# have no false positive on the course's own code (tests: tests/grading/unit/test_ub_lint.py).
UB_FLAGS = ("-Waggressive-loop-optimizations", "-Warray-bounds")
TIMEOUT_S = 60

if __package__:
    from . import cmdline, ub_render
    from .ub_render import NotApplicable
else:  # run as a file, as the grader's sandbox runs it (python3 VIEW/grading/ub_lint.py): its folder is sys.path[0]
    import cmdline  # type: ignore[import-not-found,no-redef]
    import ub_render  # type: ignore[import-not-found,no-redef]
    from ub_render import NotApplicable  # type: ignore[no-redef]

# Stands in for what nvcc gives device code. Thread and block indices are values GCC cannot know;
# the built-ins that move or order data are functions it cannot see into (or, where that is
# simple, what they do to memory, so that an access through them is still seen).
SHIM = r"""
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <math.h>
#include <type_traits>
#include <utility>
#define __CUDA_ARCH__ 900  // the device side of code that has two (#ifdef __CUDA_ARCH__)
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __constant__ static
#define __managed__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
extern const uint3 threadIdx, blockIdx;
extern const dim3 blockDim, gridDim;
extern const int warpSize;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) double2 { double x, y; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(4) char4 { signed char x, y, z, w; };
struct alignas(4) uchar4 { unsigned char x, y, z, w; };
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
void __syncthreads();
int __syncthreads_count(int);
int __syncthreads_and(int);
int __syncthreads_or(int);
void __syncwarp(unsigned mask = 0xffffffffu);
void __threadfence();
void __threadfence_block();
void __threadfence_system();
unsigned __activemask();
unsigned __ballot_sync(unsigned, int);
int __any_sync(unsigned, int);
int __all_sync(unsigned, int);
template <class T> T __shfl_sync(unsigned, T, int, int = 32);
template <class T> T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <class T> T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <class T> T __shfl_xor_sync(unsigned, T, int, int = 32);
template <class T> T __reduce_add_sync(unsigned, T);
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
template <class T, class U> inline T atomicAdd(T* p, U v) { T o = *p; *p = o + v; return o; }
template <class T, class U> inline T atomicSub(T* p, U v) { T o = *p; *p = o - v; return o; }
template <class T, class U> inline T atomicExch(T* p, U v) { T o = *p; *p = v; return o; }
template <class T, class U> inline T atomicMax(T* p, U v) { T o = *p; *p = o < v ? v : o; return o; }
template <class T, class U> inline T atomicMin(T* p, U v) { T o = *p; *p = v < o ? v : o; return o; }
template <class T, class U> inline T atomicAnd(T* p, U v) { T o = *p; *p = o & v; return o; }
template <class T, class U> inline T atomicOr(T* p, U v) { T o = *p; *p = o | v; return o; }
template <class T, class U> inline T atomicXor(T* p, U v) { T o = *p; *p = o ^ v; return o; }
template <class T, class U, class V> inline T atomicCAS(T* p, U c, V v) { T o = *p; if (o == c) *p = v; return o; }
inline unsigned atomicInc(unsigned* p, unsigned v) { unsigned o = *p; *p = o >= v ? 0 : o + 1; return o; }
inline unsigned atomicDec(unsigned* p, unsigned v) { unsigned o = *p; *p = (o == 0 || o > v) ? v : o - 1; return o; }
int __popc(unsigned);
int __popcll(unsigned long long);
int __ffs(int);
int __clz(int);
unsigned __brev(unsigned);
float __saturatef(float);
float __fdividef(float, float);
float __expf(float);
float __logf(float);
float __sinf(float);
float __cosf(float);
float __powf(float, float);
float __frcp_rn(float);
float __fsqrt_rn(float);
float __fmaf_rn(float, float, float);
float __int_as_float(int);
int __float_as_int(float);
float __uint_as_float(unsigned);
unsigned __float_as_uint(float);
int __float2int_rn(float);
int __float2int_rz(float);
float __int2float_rn(int);
float rsqrtf(float);
long long clock64();
int clock();
unsigned __mul24(unsigned, unsigned);
int __mulhi(int, int);
template <class A, class B> inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B> inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
"""


def render(main_text, common, fallback=True):
    """(the host C++ for GCC, whether a template kernel got fallback arguments): ub_render.render
    after SHIM."""
    return ub_render.render(main_text, common, fallback, SHIM)


_DIAG = re.compile(r'^(.*?):(\d+):(?:\d+:)? (warning|error): (.*?)(?: \[(-W[\w-]+)(?:=[\w-]*)?\])?$')


def gcc_command(gxx):
    """-O3: full unrolling, after which an index past an array is a constant GCC sees. No jump
    threading: the paths it makes up are where -Warray-bounds warns on code that is not wrong.
    -S: assembly to nowhere (a student's inline PTX is never assembled)."""
    return [gxx, "-std=c++17", "-O3", "-fno-thread-jumps", "-Wall", "-Wno-unknown-pragmas", "-fmax-errors=5",
            "-x", "c++", "-S", "-", "-o", os.devnull]


def lint(main_path, common=None, gxx=None, timeout=TIMEOUT_S):
    """{"status": "clean" | "ub" | "not applicable", "findings": [{"line", "flag", "message"}], "why",
    "gcc": its output} for the file MAIN_PATH."""
    common = common or os.path.join(ROOT, "common")
    na = lambda why: {"status": "not applicable", "findings": [], "why": why, "gcc": ""}
    try:
        with open(main_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return na("cannot read %s: %s" % (main_path, e.strerror))
    gxx = gxx or shutil.which("g++")
    if not gxx:
        return na("no g++ on this machine")
    for fallback in (True, False):
        try:
            source, guessed = render(text, common, fallback)
        except (NotApplicable, RecursionError) as e:
            return na("cannot render it as host C++: %s" % e)
        try:
            p = subprocess.run(gcc_command(gxx), input=source.encode("utf-8", "replace"), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return na("g++ took over %d s" % timeout)
        except OSError as e:
            return na("g++ did not start: %s" % e.strerror)
        out = p.stdout.decode("utf-8", "replace")
        if p.returncode == 0 or not guessed:
            break  # (else: once more without the guessed template arguments)
    if p.returncode != 0:
        first = next((l for l in out.splitlines() if ": error: " in l), (out.strip().splitlines() or [""])[-1])
        return dict(na("g++ cannot compile it as host C++ (%s)" % first.strip()[:300]), gcc=out)
    found = findings(out)
    return {"status": "ub" if found else "clean", "findings": found, "why": "", "gcc": out}


def findings(gcc_output):
    """GCC's UB_FLAGS warnings at lines of main.cu, as [{"line", "flag", "message"}], once each."""
    found, seen = [], set()
    for line in gcc_output.splitlines():
        d = _DIAG.match(line)
        if not d or d.group(3) != "warning" or d.group(1) != "main.cu" or d.group(5) not in UB_FLAGS:
            continue
        key = (int(d.group(2)), d.group(5))
        if key not in seen:
            seen.add(key)
            found.append({"line": int(d.group(2)), "flag": d.group(5), "message": d.group(4)[:300]})
    return found


def describe(result, shown="main.cu"):
    """One line per finding (or why not applicable), as a student reads it; SHOWN: the file's name."""
    if result["status"] == "clean":
        return ["no undefined behaviour GCC can see (g++ -O3 on the device code as host C++)"]
    if result["status"] == "not applicable":
        return ["not applicable: " + result["why"]]
    return ["%s:%d: %s [GCC %s]" % (shown, f["line"], f["message"], f["flag"]) for f in result["findings"]]


FLAGS = ("--json", "--show", "--verbose")
VALUED = ("--common", "--gxx", "--timeout")


def _parser():
    """The command line (argparse; each argument marked by cmdline.marked first)."""
    p = cmdline.Parser("ub_lint.py")
    for name in VALUED:
        p.add_argument(name, type=cmdline.value)
    for name in FLAGS:
        p.add_argument(name, action="store_true")
    p.add_argument("files", nargs="*", type=cmdline.value)
    return p


def main(argv):
    """Exit: 0 clean, 1 undefined behaviour, 3 not applicable, 2 a bad command line (an option it
    does not have: said with its name; anything else: the usage line)."""
    try:
        o = _parser().parse_intermixed_args(cmdline.marked(argv[1:], flags=FLAGS, valued=VALUED, helps=("-h", "--help"),
                                                           unknown=lambda a: a.startswith("-")))
    except cmdline.Help:
        print(__doc__)
        return 0
    except cmdline.Unknown as e:
        print("ub_lint.py: unknown option %s (see --help)" % e.arg, file=sys.stderr)
        return 2
    except cmdline.Refused:
        o = None
    timeout = str(TIMEOUT_S) if o is None or o.timeout is None else o.timeout
    if o is None or len(o.files) != 1 or not re.fullmatch(r"[0-9]+", timeout):
        print("usage: ub_lint.py MAIN.CU [--json] [--common DIR] [--gxx PROGRAM] [--timeout S] [--show]", file=sys.stderr)
        return 2
    if o.show:
        with open(o.files[0], encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            sys.stdout.write(render(text, o.common or os.path.join(ROOT, "common"))[0])
        except NotApplicable as e:
            print("not applicable: %s" % e)
            return 3
        return 0
    r = lint(o.files[0], o.common, o.gxx, int(timeout))
    if o.verbose:
        sys.stdout.write(r.get("gcc", ""))
    if o.json:
        r.pop("gcc", None)
        print(json.dumps(r))
    else:
        for line in describe(r, o.files[0]):
            print(line)
    return {"clean": 0, "ub": 1}.get(r["status"], 3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
