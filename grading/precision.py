"""Reduced precision in a submission's compiled code: a lesson that teaches FP32 arithmetic (every
lesson of this course) gives no pass for a result computed in half, bfloat16, TF32 or 8-bit types,
wherever it is computed. The checks compare values against bounds an FP32 kernel always meets, and
a TF32 tensor-core product stays inside them on random inputs (its rounding errors mostly cancel),
so the values cannot tell; the machine code can.

What counts, in the SASS of every function of the compiled runner (cuobjdump -sass), and in its PTX
(cuobjdump -ptx) where the binary holds PTX:
  - tensor-core matrix instructions: HMMA (wmma or mma.sync on half, bfloat16, TF32), HGMMA
    (wgmma), IMMA / IGMMA (8-bit and 4-bit integers), BMMA, QGMMA (FP8), and any other "...MMA"
    but DMMA (FP64, more precise than FP32);
  - conversions to a narrower float type: F2FP (packs two values into half or bfloat16), and
    F2F, I2F, F2I, FRND with an F16, BF16, TF32 or FP8 type;
  - half-precision arithmetic: HADD2, HMUL2, HFMA2, HMNMX2, HSET2, HSETP2;
  - in the PTX: mma, wmma, wgmma, and any instruction on .f16, .bf16, .tf32, .e4m3 or .e5m2
    (cvt.rna.tf32.f32 rounds a float to TF32 with integer instructions in the SASS).

Why an honest FP32 kernel never meets this rule: every one of these instructions reads or writes a
value in a type narrower than FP32 (or is a matrix instruction that only exists for such types),
and FP32 source code (float, fmaf, float4, shuffles, atomics, even double) compiles to none of them.
The one exception nvcc makes is handled: ptxas uses the half-precision FMA pipe to put a constant
in a register, `HFMA2.MMA R3, -RZ, RZ, 1.875, 0` (0 x 0 + an immediate: every source is the zero
register or an immediate), which every course solution's machine code has; an H...2 instruction
whose sources are only RZ and immediates computes nothing and is not counted. The course's own
device code in the runner (check.cu's kernels, the harness, CUB's kernels in lesson 04) has none
of these instructions (cuobjdump -sass of every lesson's check, built from the solutions).
"""
from __future__ import annotations

import re

from . import static_evidence as se
from .names import visible

# A type narrower than FP32 in a SASS modifier or a PTX type suffix.
NARROW = ("F16", "BF16", "TF32", "E4M3", "E5M2", "E2M1", "E2M3", "E3M2", "UE8M0", "UE4M3")
_HALF_ALU = re.compile(r"H(ADD|MUL|FMA|MNMX|SET|SETP)2")
_CONVERSIONS = ("F2F", "I2F", "F2I", "FRND", "I2FP", "F2IP")
_IMMEDIATE = re.compile(r"[-+]?(?:[0-9][0-9.e+-]*|0x[0-9a-fA-F]+|INF|QNAN|NAN)", re.I)
_PTX_FUNCTION = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_PTX_NARROW = re.compile(r"\.(?:f16x2|f16|bf16x2|bf16|tf32|e4m3x2|e4m3|e5m2x2|e5m2)\b")
_PTX_MMA = re.compile(r"^\s*(?:@!?%\w+\s+)?(wgmma|wmma|mma)\.")


def _constant_only(operands: str) -> bool:
    """Whether every source operand (all but the first, the destination) is the zero register or an
    immediate: `-RZ, RZ, 1.75, 0` of ptxas's constant moves through HFMA2.MMA."""
    parts = [p.strip() for p in operands.split(",")][1:]
    for p in parts:
        p = p.lstrip("-|!").rstrip("|")
        if p in ("RZ", "URZ") or _IMMEDIATE.fullmatch(p):
            continue
        return False
    return bool(parts)


def sass_reduced(opcode: str, operands: str) -> str | None:
    """What makes one SASS instruction reduced precision ("HMMA tensor-core instructions", ...), or None."""
    parts = opcode.split(".")
    base = parts[0]
    if base.endswith("MMA") and not base.endswith("DMMA"):
        return "%s tensor-core instructions" % base
    if base == "F2FP":
        return "F2FP conversions to half or bfloat16"
    if base in _CONVERSIONS and any(p in NARROW for p in parts[1:]):
        return "%s conversions to %s" % (base, "/".join(p for p in parts[1:] if p in NARROW))
    if _HALF_ALU.fullmatch(base) and not _constant_only(operands):
        return "%s half-precision arithmetic" % base
    return None


def _ptx_statement(s: str) -> str | None:
    """What makes one PTX statement (no `;`) reduced precision: its opcode, or None."""
    if not s or s.startswith((".", "//", "}", "$")):
        return None
    mma = _PTX_MMA.match(s)
    if mma:
        return mma.group(1)
    if not _PTX_NARROW.search(s):
        return None
    words = s.split()
    return words[1] if s.startswith("@") and len(words) > 1 else words[0]


def ptx_reduced(text: str) -> dict[str, list[str]]:
    """{PTX function (mangled): [what, ...]} for the reduced-precision instructions of a PTX listing
    (inline asm included: nvcc writes it between braces)."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        m = _PTX_FUNCTION.match(line)
        if m:
            current = m.group(1)
            continue
        for statement in line.split(";"):
            what = _ptx_statement(statement.strip().lstrip("{}").strip())
            if current and what and what not in found.setdefault(current, []):
                found[current].append(what)
    return found


def sass_findings(sass_text: str) -> dict[str, list[str]]:
    """{function (mangled): [what, ...]} for the reduced-precision instructions of a SASS listing."""
    found: dict[str, list[str]] = {}
    for function, instructions in se.parse_sass(sass_text).items():
        for opcode, operands in instructions:
            what = sass_reduced(opcode, operands)
            if what and what not in found.setdefault(function, []):
                found[function].append(what)
    return {f: w for f, w in found.items() if w}


def exercise_of(name: str, rubric: dict | None) -> str:
    """The exercise whose rubric rules (static or counters) name the kernel NAME (readable or
    mangled), or ''."""
    for key in ("rules", "counters"):
        for rule in (rubric or {}).get(key, []) or []:
            if isinstance(rule, dict) and isinstance(rule.get("exercise"), str) and isinstance(rule.get("kernel"), str):
                try:
                    if re.search(rule["kernel"], name):
                        return rule["exercise"]
                except re.error:
                    continue
    return ""


def teaches_fp32(rubric: dict | None) -> bool:
    """Whether the lesson holds its exercises to FP32: every lesson, unless its rubric says
    "precision" is something else (none does: a lesson that teaches tensor cores would)."""
    return str((rubric or {}).get("precision", "FP32")).upper() == "FP32"


def findings(sass_text: str, ptx_text: str | None, rubric: dict | None) -> list[str]:
    """The cell's findings: one per function of the runner's device code that computes in reduced
    precision, named by its exercise where the rubric knows its kernel (else by its own name)."""
    if not teaches_fp32(rubric):
        return []
    sass, ptx = sass_findings(sass_text), ptx_reduced(ptx_text or "")
    readable = se.demangle(set(sass) | set(ptx))
    out, seen = [], set()
    for function in sorted(readable, key=lambda f: readable[f]):
        name = readable[function]
        ex = exercise_of(name, rubric) or exercise_of(function, rubric)
        where = ex or "the device function %s" % _shown(se.short_name(name))
        if where in seen:
            continue
        seen.add(where)
        what = []
        if sass.get(function):
            what.append("%s in its machine code" % ", ".join(sass[function][:3]))
        if ptx.get(function):
            what.append("%s in its PTX" % ", ".join(ptx[function][:3]))
        out.append("%s: computes in reduced precision (%s); the lesson teaches FP32" % (where, "; ".join(what)))
    return out


def _shown(name: str) -> str:
    """A function name from the submission's binary, escaped and cut (it is the submission's text)."""
    return "`%s`" % visible(name)[:80]
