#!/usr/bin/env python3
"""Static facts of a compiled kernel, judged by an exercise's rubric (no GPU needed).
Run from the course's root as `python3 -m grading.static_evidence ...` (grading/ is a package).

    static_evidence.py facts BINARY                  every kernel's registers, shared bytes, stack,
                                                     local memory and SASS instruction counts (JSON)
    static_evidence.py check RUBRIC BINARY           the rubric's rules on BINARY, in its words;
                                                     exit 1 when a "required" rule falls short
    static_evidence.py check RUBRIC --dumps DIR      the same, from recorded cuobjdump output
                                                     (DIR/resource.txt, sass.txt, ptx.txt: the tests)

Where the facts come from: `cuobjdump --dump-resource-usage` (REG, SHARED, STACK, LOCAL per
kernel), `cuobjdump -sass` (the machine code, whose opcodes are counted per kernel: BAR for
__syncthreads, MEMBAR for __threadfence, ...) and `cuobjdump -ptx` (each shfl.sync's member mask,
which the machine code keeps in a register). They read the
binary only: they work on a machine without a GPU. cuobjdump is taken from $CUOBJDUMP, then PATH,
then $CUDA_HOME/bin and /usr/local/cuda/bin.

A rubric (lessons/NN_name/rubric.json) is a list of rules. Each names a kernel (a regular
expression searched in the demangled and the mangled name), a fact, a comparison, the course
solution's value for each GPU architecture (recorded from a real build of the solution; a rule
with no value for the binary's architecture is shown, not judged), and the words to show when
the student's kernel falls short. "required" rules are contracts the checks cannot see on the
GPU (a fence, a full shuffle mask); the others are evidence of speed (padding, shared memory at
all), shown beside correctness but never failing it.
"""
import json
import lzma
import os
import re
import shutil
import subprocess
import sys

from . import cmdline

# ---------------------------------------------------------------- parsing cuobjdump's output

_FUNCTION = re.compile(r"^\s*Function (\S+):\s*$")
_FIELD = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")
_ARCH = re.compile(r"^\s*arch = (sm_\d+a?)\s*$")


def parse_resource_usage(text):
    """{mangled kernel name: {"regs", "shared", "stack", "local"}} and the first ELF arch seen.

    The same kernel can appear once per embedded architecture; the first ELF section wins, and the
    arch returned is that section's (PTX sections carry no resource usage)."""
    kernels, arch, current, section_arch, in_elf = {}, None, None, None, False
    for line in text.splitlines():
        if line.startswith("Fatbin elf code"):
            in_elf = True
        elif line.startswith("Fatbin ptx code"):
            in_elf = False
        m = _ARCH.match(line)
        if m and in_elf:
            section_arch = m.group(1)
        m = _FUNCTION.match(line)
        if m:
            current = m.group(1)
            continue
        if current and "REG:" in line:
            fields = dict((k, int(v)) for k, v in _FIELD.findall(line))
            if current not in kernels:
                kernels[current] = {
                    "regs": fields.get("REG", 0),
                    "shared": fields.get("SHARED", 0),
                    "stack": fields.get("STACK", 0),
                    "local": fields.get("LOCAL", 0),
                }
                if arch is None:
                    arch = section_arch
            current = None
    return kernels, arch


_SASS_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$")
# "        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;   /* 0x... */"
_SASS_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*?);")


def parse_sass(text):
    """{mangled kernel name: [(opcode with modifiers, operands), ...]} in program order."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m:
            current = m.group(1)
            kernels.setdefault(current, [])
            continue
        if current is None:
            continue
        m = _SASS_INSTRUCTION.match(line)
        if m:
            kernels[current].append((m.group(1), m.group(2).strip()))
    return kernels


def count_opcode(instructions, prefix, operands=None):
    """How many instructions start with `prefix` (BAR.SYNC, MEMBAR, WARPSYNC, ...); with `operands`,
    only those whose operand text matches that regular expression."""
    n = 0
    for opcode, args in instructions:
        if opcode == prefix or opcode.startswith(prefix + "."):
            if operands is None or re.search(operands, args):
                n += 1
    return n


_PTX_ENTRY = re.compile(r"^(?:\.(?:visible|weak)\s+)?\.entry\s+([A-Za-z_$][\w$]*)\s*\(")
_PTX_MOV = re.compile(r"^\s*mov\.[bu]32\s+(%r\d+),\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))\s*;")
_PTX_SHFL = re.compile(r"^\s*shfl\.sync\.[a-z]+\.b32\s+([^;]*);")


def parse_ptx_shuffle_masks(text):
    """{mangled kernel name: [member mask of each shfl.sync, or None when not a known constant]}.

    nvcc puts the mask in a register (`mov.u32 %r29, -1;` then `shfl.sync.down.b32 ..., %r29;`), so
    the last constant moved into that register before the shuffle is the mask."""
    kernels, current, consts = {}, None, {}
    for line in text.splitlines():
        m = _PTX_ENTRY.match(line)
        if m:
            current, consts = m.group(1), {}
            kernels[current] = []
            continue
        if current is None:
            continue
        m = _PTX_MOV.match(line)
        if m:
            consts[m.group(1)] = int(m.group(2), 0) & 0xFFFFFFFF
            continue
        m = _PTX_SHFL.match(line)
        if m:
            mask = m.group(1).split(",")[-1].strip()
            if re.fullmatch(r"-?(?:0[xX][0-9a-fA-F]+|\d+)", mask):
                kernels[current].append(int(mask, 0) & 0xFFFFFFFF)
            else:
                kernels[current].append(consts.get(mask))
    return kernels


def demangle(names):
    """{mangled: readable} through c++filt when it is installed, else the names unchanged."""
    names = list(names)
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=False).stdout
    readable = out.splitlines()
    if len(readable) != len(names):
        return {n: n for n in names}
    return dict(zip(names, readable))


# ---------------------------------------------------------------- running cuobjdump


class EvidenceError(Exception):
    """A message for the user: no cuobjdump, an unreadable binary, a malformed rubric."""


def find_cuda_tool(name, env, explicit=None):
    """The CUDA toolkit program NAME: EXPLICIT, then $ENV, then PATH, then $CUDA_HOME/bin,
    $CUDA_PATH/bin and /usr/local/cuda/bin; None when none is an executable file."""
    candidates = [explicit, os.environ.get(env), shutil.which(name)]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(os.path.join(home, "bin", name))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def find_cuobjdump():
    found = find_cuda_tool("cuobjdump", "CUOBJDUMP")
    if found:
        return found
    raise EvidenceError("cuobjdump not found (set CUOBJDUMP, or put the CUDA toolkit's bin/ on PATH)")


def dump(binary, option):
    if not os.path.isfile(binary):
        raise EvidenceError(f"no such binary: {binary}")
    result = subprocess.run([find_cuobjdump(), option, binary], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise EvidenceError(f"cuobjdump {option} {binary} failed: {result.stderr.strip()}")
    return result.stdout


def facts_from_dumps(resource_text, sass_text, ptx_text=None):
    """{"arch": ..., "kernels": {mangled: {"name": readable, "regs", "shared", "stack", "local",
    "partial_shuffle_masks"}}}, plus the SASS instruction lists under "sass". Without PTX (a binary
    built for real architectures only) partial_shuffle_masks is None: not known."""
    usage, arch = parse_resource_usage(resource_text)
    sass = parse_sass(sass_text)
    masks = parse_ptx_shuffle_masks(ptx_text) if ptx_text else None
    names = demangle(usage.keys())
    kernels = {}
    for mangled, fields in usage.items():
        partial = None
        if masks is not None:
            partial = sum(1 for m in masks.get(mangled, []) if m != 0xFFFFFFFF)
        kernels[mangled] = dict(fields, name=names[mangled], partial_shuffle_masks=partial)
    return {"arch": arch, "kernels": kernels, "sass": sass}


def facts_from_binary(binary):
    ptx = dump(binary, "-ptx")
    return facts_from_dumps(dump(binary, "--dump-resource-usage"), dump(binary, "-sass"), ptx)


# ---------------------------------------------------------------- rubrics

_OPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}
_RESOURCE_FACTS = {"regs": "registers", "shared": "static shared bytes", "stack": "stack bytes", "local": "local bytes",
                   "partial_shuffle_masks": "shuffles without all 32 lanes"}


def read_rubric_json(path, error, limit=16 << 20):
    """The JSON object in the rubric file PATH (at most LIMIT bytes read), before any rule is checked;
    raises ERROR (an exception class) with the reason. The one reader of rubric files: this module's
    static rules, grading/evidence.py's speed rules and grading/counters.py's counters rules."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"over {limit} bytes")
        rubric = json.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"cannot read the rubric {path}: {e}") from e
    if not isinstance(rubric, dict):
        raise error(f"{path}: a rubric is a JSON object")
    return rubric


def load_rubric(path):
    rubric = read_rubric_json(path, EvidenceError)
    if "rules" not in rubric and (rubric.get("speed") or rubric.get("counters")):
        rubric["rules"] = []  # a rubric of speed or counters rules only (grading/evidence.py)
        return rubric
    validate_rules(rubric.get("rules"), path)
    return rubric


def validate_rules(rules, path):
    """Raises EvidenceError unless RULES is a non-empty list of well-formed static rules."""
    if not isinstance(rules, list) or not rules:
        raise EvidenceError(f"{path}: a rubric needs a non-empty list \"rules\"")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise EvidenceError(f"{path}: rule {i + 1} is not an object")
        where = f"{path}: rule {i + 1}"
        for key in ("kernel", "fact", "op", "short"):
            if key not in rule:
                raise EvidenceError(f"{where} has no \"{key}\"")
        if rule["op"] not in _OPS:
            raise EvidenceError(f"{where}: op {rule['op']!r} is not one of {' '.join(_OPS)}")
        fact = rule["fact"]
        if fact not in _RESOURCE_FACTS and not fact.startswith("sass:"):
            raise EvidenceError(f"{where}: fact {fact!r} is not one of {', '.join(_RESOURCE_FACTS)} or sass:OPCODE")
        if "value" not in rule and "solution" not in rule:
            raise EvidenceError(f"{where} needs \"value\" (a fixed threshold) or \"solution\" (per architecture)")
        try:
            re.compile(rule["kernel"])
        except re.error as e:
            raise EvidenceError(f"{where}: kernel pattern {rule['kernel']!r}: {e}") from e


def fact_value(facts, mangled, fact):
    if fact in _RESOURCE_FACTS:
        return facts["kernels"][mangled][fact]
    # sass:OPCODE or sass:OPCODE:OPERAND-REGEX
    _, opcode, *operands = fact.split(":", 2)
    return count_opcode(facts["sass"].get(mangled, []), opcode, operands[0] if operands else None)


def fact_label(fact):
    if fact in _RESOURCE_FACTS:
        return _RESOURCE_FACTS[fact]
    _, opcode, *operands = fact.split(":", 2)
    return f"{opcode} instructions" + (f" /{operands[0]}/" if operands else "")


def matching_kernels(pattern, names):
    """The mangled names of NAMES ({mangled: readable}) that PATTERN (a rule's "kernel") is found in,
    in their readable or their mangled form."""
    pattern = re.compile(pattern)
    return [m for m, readable in names.items() if pattern.search(readable) or pattern.search(m)]


def listings_needed(rubric, names):
    """What of the binary the static rules of RUBRIC read, beyond the resource usage that lists its
    kernels (NAMES, {mangled: readable}): (ptx, sass_kernels). ptx: whether a rule reads shuffle
    masks (the PTX listing); sass_kernels: the sorted mangled names of the kernels a "sass:" rule
    matches, or None for every kernel's (no rubric). judge() sees the same facts for every rule."""
    if rubric is None:
        return True, None
    rules = rubric.get("rules", [])
    ptx = any(r.get("fact") == "partial_shuffle_masks" for r in rules)
    sass = set()
    for r in rules:
        if str(r.get("fact", "")).startswith("sass:"):
            sass.update(matching_kernels(r["kernel"], names))
    return ptx, sorted(sass)


def sass_options(sass_kernels, resource_text):
    """cuobjdump's options for the machine code of SASS_KERNELS (listings_needed), None when none is
    needed. Disassembling is what costs: cuobjdump starts nvdisasm (about 0.3 s before it reads
    anything) once per cubin with -sass, once per function with -sass -fun; so by function when
    that is no more starts than the cubins in the binary (its resource usage lists them)."""
    if sass_kernels is not None and not sass_kernels:
        return None
    cubins = sum(1 for line in resource_text.splitlines() if line.startswith("Fatbin elf code"))
    if sass_kernels is None or len(sass_kernels) > cubins:
        return ["-sass"]
    return ["-sass", "-fun", ",".join(sass_kernels)]


def judge(rubric, facts):
    """One dict per rule: kernel, label, yours, solution, status (ok|short|not judged|missing), words."""
    rows = []
    arch = facts["arch"]
    for rule in rubric["rules"]:
        matches = matching_kernels(rule["kernel"], {m: k["name"] for m, k in facts["kernels"].items()})
        threshold = rule.get("value")
        if threshold is None:
            threshold = rule["solution"].get(arch) if arch else None
        solution = rule.get("solution", {}).get(arch) if arch else None
        required = rule.get("required", False)
        if not matches:
            rows.append(dict(kernel=rule["kernel"], label=fact_label(rule["fact"]), yours=None, solution=solution,
                             status="missing", required=required,
                             words=f"no kernel matching /{rule['kernel']}/ in this binary"))
            continue
        for mangled in sorted(matches, key=lambda m: facts["kernels"][m]["name"]):
            yours = fact_value(facts, mangled, rule["fact"])
            if yours is None:
                status, words = "not judged", "no PTX in this binary to read the shuffle masks from"
            elif threshold is None:
                status, words = "not judged", f"no solution value recorded for {arch}"
            elif _OPS[rule["op"]](yours, threshold):
                status, words = "ok", rule.get("ok", "")
            else:
                status, words = "short", rule["short"]
            rows.append(dict(kernel=facts["kernels"][mangled]["name"], label=fact_label(rule["fact"]), yours=yours,
                             solution=solution, status=status, required=required, words=words,
                             expect=f"{rule['op']} {threshold}" if threshold is not None else ""))
    return rows


def short_name(name):
    """The kernel's name without its parameter list: `void f<(E)1>(float*, int)` -> `void f<(E)1>`."""
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i]
    return name


def report(rows, out=None):
    """The table `scripts/exercises.sh check` shows. Returns True when no required rule fell short."""
    out = out or sys.stdout
    all_required_met = True
    for r in rows:
        mark = {"ok": "ok", "short": "SHORT" if r["required"] else "short", "not judged": "-", "missing": "?"}[r["status"]]
        if r["status"] in ("short", "missing") and r["required"]:
            all_required_met = False
        yours = "-" if r["yours"] is None else str(r["yours"])
        solution = "-" if r["solution"] is None else str(r["solution"])
        print(f"  [{mark:5}] {short_name(r['kernel'])[:40]:40} {r['label']:30} yours {yours:>6}   solution {solution:>6}", file=out)
        if r["status"] != "ok" and r["words"]:
            print(f"          {r['words']}", file=out)
    if any(r["status"] == "short" for r in rows):
        print("  (short: evidence of speed, shown and never held against you; SHORT: a contract the GPU checks cannot see)",
              file=out)
    return all_required_met


def read_recorded(folder, kind):
    """folder/kind.txt, or folder/kind.txt.xz (how the tests keep cuobjdump's output small); None if neither."""
    plain = os.path.join(folder, kind + ".txt")
    if os.path.exists(plain):
        with open(plain, encoding="utf-8") as f:
            return f.read()
    if os.path.exists(plain + ".xz"):
        with lzma.open(plain + ".xz", "rt", encoding="utf-8") as f:
            return f.read()
    return None


def _command_line(args):
    """ARGS read by argparse: `facts BINARY`, `check RUBRIC BINARY` or `check RUBRIC --dumps DIR`
    (--dumps only there); None: any other command line."""
    p = cmdline.Parser("static_evidence.py")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("facts").add_argument("binary", type=cmdline.value)
    check = sub.add_parser("check")
    check.add_argument("rubric", type=cmdline.value)
    check.add_argument("binary", nargs="?", type=cmdline.value)
    check.add_argument("--dumps", type=cmdline.value)
    if len(args) == 4 and args[0] == "check" and args[2] == "--dumps":
        tokens = ["check", cmdline.MARK + args[1], "--dumps", cmdline.MARK + args[3]]
    else:
        tokens = cmdline.marked(args, commands=("facts", "check"))
    try:
        a = p.parse_args(tokens)
    except cmdline.Refused:
        return None
    return a if a.command == "facts" or (a.binary is None) != (a.dumps is None) else None


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    a = _command_line(argv[1:])
    if a is None:
        print("static_evidence.py: unknown command line (see --help)", file=sys.stderr)
        return 2
    try:
        if a.command == "facts":
            facts = facts_from_binary(a.binary)
            print(json.dumps({"arch": facts["arch"], "kernels": facts["kernels"]}, indent=1, sort_keys=True))
            return 0
        rubric = load_rubric(a.rubric)
        if a.dumps is None:
            facts = facts_from_binary(a.binary)
        else:
            resource, sass, ptx = (read_recorded(a.dumps, k) for k in ("resource", "sass", "ptx"))
            if resource is None or sass is None:
                raise EvidenceError(f"{a.dumps} needs resource.txt and sass.txt (or .txt.xz)")
            facts = facts_from_dumps(resource, sass, ptx)
    except (EvidenceError, OSError) as e:
        print(f"static_evidence.py: {e}", file=sys.stderr)
        return 2
    if not facts["kernels"]:
        print("static_evidence.py: no kernels with resource usage in this binary", file=sys.stderr)
        return 2
    print(f"static evidence ({facts['arch']}; {rubric.get('about', 'rubric ' + a.rubric)}):")
    return 0 if report(judge(rubric, facts)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
