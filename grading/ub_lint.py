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
# have no false positive on the course's own code (tests: grading/tests/test_ub_lint.py).
UB_FLAGS = ("-Waggressive-loop-optimizations", "-Warray-bounds")
TIMEOUT_S = 60

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

KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if
inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq __global__ __device__ __host__ __shared__ __constant__ __managed__ __forceinline__
__noinline__ __restrict__ __launch_bounds__ __align__ __attribute__ __grid_constant__ std size_t""".split())
_IDENT = re.compile(r"[A-Za-z_]\w*")
# Attributes and specifiers whose parentheses are not a function's parameters.
_ATTRIBUTE = re.compile(r"\b(__launch_bounds__|__align__|alignas|__attribute__|__declspec|decltype|noexcept)\s*\(")


class NotApplicable(Exception):
    """The source cannot be rendered as host C++ by this lint."""


def mask(text):
    """TEXT with comments and the insides of string and character literals replaced by spaces
    (newlines kept): the same length, so positions and line numbers carry over."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            blank(i + 1, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_") and \
                    re.match(r".*\b\d[\w']*$", text[max(0, i - 40):i]):
                i += 1  # a digit separator (1'000), not a character literal
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _blank_attributes(m):
    """M (masked text) with attribute-like parentheses blanked: __launch_bounds__(...) and the like."""
    out = list(m)
    for a in _ATTRIBUTE.finditer(m):
        depth, k = 0, a.end() - 1
        while k < len(m):
            if m[k] == "(":
                depth += 1
            elif m[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        for j in range(a.start(), min(k + 1, len(m))):
            if out[j] != "\n":
                out[j] = " "
    s = "".join(out)
    return re.sub(r"\[\[.*?\]\]", lambda x: " " * len(x.group(0)), s, flags=re.S)


def _template_header_end(m, i):
    """If M at I starts `template <...>`, the index after its `>`; else I."""
    t = re.match(r"template\s*<", m[i:])
    if not t:
        return i
    depth, k = 0, i + t.end() - 1
    while k < len(m):
        if m[k] in "<([":
            depth += 1
        elif m[k] in ">)]":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return len(m)


class Chunk:
    """One top-level declaration: text[start:end] of a file (masked copy m), its names, the names it uses."""

    def __init__(self, path, text, m, start, end, ns):
        self.path, self.start, self.end, self.ns = path, start, end, ns
        self.text = text[start:end]
        self.m = m[start:end]
        self.line = text.count("\n", 0, start) + 1
        self.last_line = self.line + self.text.count("\n")
        self.preprocessor = self.m.lstrip().startswith("#")
        self.names = set() if self.preprocessor else defined_names(self.m)
        self.uses = set(_IDENT.findall(self.m)) - KEYWORDS


def defined_names(m):
    """The names a top-level declaration (masked text M) defines: a function's, a type's, each
    declared variable's."""
    s = _blank_attributes(m).strip()
    k = 0
    while True:  # template <...> headers, any number of them
        e = _template_header_end(s, k)
        if e == k:
            break
        k = e
        while k < len(s) and s[k].isspace():
            k += 1
    s = s[k:]
    t = re.match(r"(?:(?:typedef|extern|static|inline|constexpr)\s+)*(struct|class|union|enum(?:\s+(?:class|struct))?)\s+(\w+)", s)
    if t:
        return {t.group(2)}
    if s.startswith("namespace"):
        return set()
    if s.startswith("typedef"):
        ids = [i for i in _IDENT.findall(s) if i not in KEYWORDS]
        return {ids[-1]} if ids else set()
    # Each declarator's name: the last identifier before its `=`, `[`, `(`, `{`, `,` or `;` at the
    # top level; an initializer (after `=`, up to the next `,` or `;`) names nothing.
    names, depth, declarator, init = set(), 0, [], False
    for tok in re.finditer(r"[A-Za-z_]\w*|::|[^\sA-Za-z_]", s):
        v = tok.group(0)
        if depth == 0 and v in ("=", "[", "{", "(", ";", ","):
            ids = [i for i in declarator if i not in KEYWORDS]
            if not init and ids and declarator[-1] == ids[-1]:
                names.add(ids[-1])
            declarator = []
            init = v == "=" or (init and v not in (",", ";"))
        if v in ("(", "[", "{"):
            depth += 1
        elif v in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and v != "::" and not init:
            declarator.append(v)
    return names


def chunks_of(path, text):
    """The top-level declarations of TEXT, in order: preprocessor lines are chunks of their own;
    a namespace's declarations are chunks inside it."""
    return _chunks(path, text, mask(text), 0, len(text), ())


def _directive_end(m, i, n):
    """The end of the preprocessor line at I of M (before N), with its continuations."""
    while i < n:
        j = m.find("\n", i, n)
        j = n if j < 0 else j
        if j > i and m[j - 1] == "\\" and j < n:
            i = j + 1
            continue
        return j
    return i


def _chunks(path, text, m, i, n, ns):
    out = []
    while i < n:
        while i < n and m[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        if m[i] == "#":  # a preprocessor line, with its continuations
            i = _directive_end(m, i, n)
            out.append(Chunk(path, text, m, start, i, ns))
            continue
        nsm = re.match(r"(inline\s+)?namespace\s*([\w:]*)\s*\{", m[i:i + 300])
        if nsm:  # descend: the namespace's own declarations, each a chunk inside it
            body = i + nsm.end()
            depth, k = 1, body
            while k < n and depth:
                if m[k] == "{":
                    depth += 1
                elif m[k] == "}":
                    depth -= 1
                k += 1
            if depth:
                raise NotApplicable("unbalanced braces at line %d" % (text.count("\n", 0, i) + 1))
            out += _chunks(path, text, m, body, k - 1, ns + ((nsm.group(1) or "") + "namespace " + nsm.group(2),))
            i = k
            continue
        depth, head_eq = 0, False
        j = _template_header_end(m, i)
        while j < n:
            c = m[j]
            if c == "#" and depth > 0 and m[m.rfind("\n", 0, j) + 1:j].strip() == "":
                e = m.find("\n", j, n)  # a preprocessor line inside a declaration: part of it
                j = n if e < 0 else e
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    raise NotApplicable("unbalanced brackets at line %d" % (text.count("\n", 0, j) + 1))
                if depth == 0 and c == "}" and not head_eq and not m[j + 1:j + 200].lstrip().startswith((";", ",")):
                    j += 1
                    break
            elif depth == 0 and c == "=":
                head_eq = True
            elif depth == 0 and c == ";":
                j += 1
                break
            j += 1
        if depth > 0:
            raise NotApplicable("unbalanced brackets from line %d" % (text.count("\n", 0, start) + 1))
        out.append(Chunk(path, text, m, start, j, ns))
        i = j
    return out


def regions(text):
    """[(BEGIN line, END line)] of the EXERCISE regions (1-based, markers included)."""
    out, begin = [], None
    for k, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s.startswith("// EXERCISE BEGIN"):
            begin = k
        elif s.startswith("// EXERCISE END") and begin is not None:
            out.append((begin, k))
            begin = None
    return out


def local_includes(text):
    return re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, flags=re.M)


def headers(main_text, common):
    """[(path, text)] of the course's headers MAIN.CU includes from COMMON, each once, included ones first."""
    out, seen = [], set()

    def visit(name):
        path = os.path.join(common, os.path.basename(name))
        if path in seen or not os.path.isfile(path):
            return
        seen.add(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in local_includes(text):
            visit(inc)
        out.append((path, text))
    for inc in local_includes(main_text):
        visit(inc)
    return out


def _clean(text):
    """A chunk's text as GCC gets it: #include and #pragma lines blanked (line count kept), and
    `extern __shared__` (dynamic shared memory) an extern array."""
    text = re.sub(r"^[ \t]*#[ \t]*(include|pragma|line|error|warning)\b.*$", "", text, flags=re.M)
    text = re.sub(r"\b_Pragma\s*\(", "(void)(", text)
    return re.sub(r"\bextern\s+__shared__\b", "extern", text)


_TEMPLATE_ID = r"\b%s\s*<((?:[^<>;{}]|<[^<>;{}]*>)*)>"  # name<ARGS>, ARGS with one level of <> inside


def _closure(seeds, by_name, chosen):
    """Adds to CHOSEN (ids) the chunks SEEDS name, transitively."""
    todo = list(seeds)
    while todo:
        c = todo.pop()
        if id(c) in chosen:
            continue
        chosen.add(id(c))
        for name in c.uses:
            todo += [d for d in by_name.get(name, []) if id(d) not in chosen]


def _header_chunks(main_text, common):
    """The declarations of the course's headers MAIN.CU includes (from COMMON)."""
    pool = []
    for path, text in headers(main_text, common):
        try:
            pool += [c for c in chunks_of(path, text) if not c.preprocessor]
        except NotApplicable:
            continue  # (the course's own headers always parse; a change that breaks one must not fail a student)
    return pool


def _emit(pool, chosen, uses):
    """The C++ for GCC: the shim, the chosen declarations (and main.cu's conditionals and macros),
    each at its own #line, then one use of each template kernel's instantiation."""
    parts = [SHIM]
    for c in pool:
        if id(c) in chosen or (c.preprocessor and c.path == "main.cu" and
                               re.match(r"\s*#\s*(define|undef|if|ifdef|ifndef|elif|else|endif)\b", c.m)):
            opened = "".join("%s { " % ns for ns in c.ns)
            parts.append('#line %d "%s"\n%s%s%s\n' % (c.line, c.path, opened, _clean(c.text), " }" * len(c.ns)))
    for k, (name, args, c, _) in enumerate(uses):
        q = "::".join(ns.split()[-1] for ns in c.ns)
        full = (q + "::" if q else "") + name
        parts.append("decltype(&%s<%s>) ub_lint_use_%d = &%s<%s>;\n" % (full, args, k, full, args))
    return "".join(parts)


def render(main_text, common, fallback=True):
    """The host C++ for GCC: the shim, then MAIN.CU's device code (every declaration that is
    __global__ or __device__ or holds an EXERCISE region) and every declaration it names, each at
    its own line of its own file (#line), then an instantiation of each template kernel.

    A template kernel is instantiated with the arguments MAIN.CU gives it (`name<kTile + 1>`,
    constants of the file only). One launched only from a template launcher (`kernel<T><<<...>>>`)
    gets, with FALLBACK, the arguments the file gives any template that fit its one parameter: the
    constants (launch_tiled<16>) for an int, the class templates' uses (launch<PaddedTile<32>>) for
    a class the kernel reads members of (Layout::at)."""
    spans = regions(main_text)
    main_chunks = chunks_of("main.cu", main_text)
    pool = _header_chunks(main_text, common) + main_chunks
    seeds = [c for c in main_chunks if not c.preprocessor and (re.search(r"\b__(global|device)__\b", c.m) or
                                                               any(c.line <= e and c.last_line >= b for b, e in spans))]
    if not seeds:
        raise NotApplicable("no device code in the file")
    by_name = {}
    for c in pool:
        for name in c.names:
            by_name.setdefault(name, []).append(c)
    chosen = set()
    _closure(seeds, by_name, chosen)

    masked = mask(main_text)
    class_templates = {n for c in pool for n in c.names
                       if re.match(r"template\s*<.*?>\s*(struct|class|union)\b", c.m.lstrip(), flags=re.S)}

    def constant(args):  # constants of the file and arithmetic: 16, kTile + 1
        return bool(re.fullmatch(r"[\w\s+\-*/%()]+", args)) and all(
            i not in KEYWORDS and by_name.get(i) for i in _IDENT.findall(args))

    def class_use(args):  # a class template of the file at constant arguments: PaddedTile<32>
        t = re.fullmatch(r"(\w+)\s*<([^<>]*)>", args)
        return bool(t) and t.group(1) in class_templates and constant(t.group(2))
    every = [a.group(1).strip() for a in re.finditer(_TEMPLATE_ID % r"\w+", masked)]
    uses = []  # (name, args, chunk, fallback)
    for c in seeds:
        head = re.match(r"template\s*<(.*?)>\s*(struct|class|union)?", c.m.lstrip(), flags=re.S)
        if not head or head.group(2) or not re.search(r"\b__global__\b", c.m):
            continue  # device functions are instantiated through the kernels that call them
        for name in c.names:
            direct = [a.group(1).strip() for a in re.finditer(_TEMPLATE_ID % re.escape(name), masked)]
            args = [(a, False) for a in direct if constant(a) or class_use(a)]
            param = re.fullmatch(r"\s*(int|unsigned|long|long long|std::size_t|size_t|class|typename)\s+(\w+)(\s*=[^,]*)?\s*",
                                 head.group(1))
            if not args and fallback and param:
                if param.group(1) in ("class", "typename"):
                    if re.search(r"\b%s\s*::" % param.group(2), c.m):
                        args = [(a, True) for a in every if class_use(a)]
                else:
                    args = [(a, True) for a in every if constant(a)]
            for a, fb in args:
                if all((name, re.sub(r"\s+", "", a)) != (u[0], re.sub(r"\s+", "", u[1])) for u in uses):
                    uses.append((name, a, c, fb))
                    _closure([d for i in _IDENT.findall(a) for d in by_name.get(i, [])], by_name, chosen)
    return _emit(pool, chosen, uses), any(u[3] for u in uses)


# GCC 13 names a warning that takes a level with a trailing "=" ([-Warray-bounds=]), GCC 12 without.
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


def main(argv):
    args = argv[1:]
    opts = {"--common": None, "--gxx": None, "--timeout": str(TIMEOUT_S)}
    flags, files = set(), []
    i = 0
    while i < len(args):
        a = args[i]
        if a in opts and i + 1 < len(args):
            opts[a] = args[i + 1]
            i += 2
        elif a in ("--json", "--show", "--verbose"):
            flags.add(a)
            i += 1
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            print("ub_lint.py: unknown option %s (see --help)" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
            i += 1
    if len(files) != 1 or not re.fullmatch(r"[0-9]+", opts["--timeout"] or ""):
        print("usage: ub_lint.py MAIN.CU [--json] [--common DIR] [--gxx PROGRAM] [--timeout S] [--show]", file=sys.stderr)
        return 2
    if "--show" in flags:
        with open(files[0], encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            sys.stdout.write(render(text, opts["--common"] or os.path.join(ROOT, "common"))[0])
        except NotApplicable as e:
            print("not applicable: %s" % e)
            return 3
        return 0
    r = lint(files[0], opts["--common"], opts["--gxx"], int(opts["--timeout"]))
    if "--verbose" in flags:
        sys.stdout.write(r.get("gcc", ""))
    if "--json" in flags:
        r.pop("gcc", None)
        print(json.dumps(r))
    else:
        for line in describe(r, files[0]):
            print(line)
    return {"clean": 0, "ub": 1}.get(r["status"], 3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
