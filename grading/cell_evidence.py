"""A cell's performance evidence: each lesson's rubric (lessons/NN_name/rubric.json, the course's:
trusted), the static facts of the cell's compiled runner (cuobjdump, in the cell's sandbox, while it
compiles) and the cell's performance, judged by grading/evidence.py on the verdict's speed
evidence and those facts."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from . import evidence, gradebook, judge, static_evidence
from .box import Box
from .options import Options
from .runfolder import Cell

STATIC_LIMIT_S = 60
STATIC_CAP = 64 << 20


@dataclass
class Rubrics:
    """Each graded lesson's rubric, or why there is none; and cuobjdump, for the static facts."""
    rubrics: dict[str, dict] = field(default_factory=dict)
    no_rubric: dict[str, str] = field(default_factory=dict)
    cuobjdump: str | None = None
    no_cuobjdump: str = ""


def load_rubrics(repo: str, lessons: list[str]) -> Rubrics:
    """Each lesson's rubric (lessons/NN_name/rubric.json, the course's: trusted), or the reason
    there is none; and cuobjdump, for the static facts."""
    r = Rubrics()
    for lesson in sorted(set(lessons)):
        path = os.path.join(repo, "lessons", lesson, "rubric.json")
        if not os.path.isfile(path):
            r.no_rubric[lesson] = "no rubric for %s" % lesson
            continue
        try:
            r.rubrics[lesson] = evidence.load_rubric(path)
        except evidence.RubricError as e:
            r.no_rubric[lesson] = "grader error: %s" % e
    try:
        r.cuobjdump = static_evidence.find_cuobjdump()
    except static_evidence.EvidenceError as e:
        r.cuobjdump, r.no_cuobjdump = None, str(e)
    return r


def _listing(box: Box, cell: Cell, kind: str, options: list[str], binary: str, cuobjdump: str, cap: int,
             texts: dict[str, str]) -> str | None:
    """cuobjdump OPTIONS BINARY in the cell's sandbox: None and texts[kind] set, or why not."""
    name = "static-" + kind
    step = box.run(cell.dir, cell.number, name, STATIC_LIMIT_S, "run", [cuobjdump] + options + [binary], None, cap=cap,
                   background=True)
    log = os.path.join(cell.dir, name + ".log")
    option = options[0]
    if not step.started:
        return "cuobjdump could not start in the sandbox (see %s.log)" % name
    if step.rc == 127:
        return "cuobjdump not found in the sandbox"
    if step.cut > 0:
        return "short: cuobjdump %s printed over %d MiB for the compiled kernels" % (option, cap >> 20)
    if step.timed_out:
        return "short: cuobjdump %s took over %d s on the compiled kernels" % (option, STATIC_LIMIT_S)
    if step.rc != 0 or step.mem_killed:
        return "short: cuobjdump %s could not read the compiled kernels (exit %d)" % (option, step.rc)
    fd = os.open(log, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        texts[kind] = f.read(cap + 1).decode("utf-8", "replace")
    os.unlink(log)  # (megabytes per cell; the facts are kept in static.json)
    return None


def static_facts(box: Box, cell: Cell, binary: str, rubrics: Rubrics, cap: int = STATIC_CAP) -> tuple[Any, str | None]:
    """(facts, None) of the cell's compiled runner, read by cuobjdump in the cell's sandbox (it
    reads a file the submission's compile made), each listing cut at CAP bytes (64 MiB) and 60 s; or
    (None, why): "short: ..." when the binary could not be read (held against the cell), else not
    measured (no cuobjdump: the grader's machine). The resource usage lists the kernels; then
    only what the lesson's rubric reads: the PTX where a rule reads shuffle masks, and the
    machine code of the kernels a "sass:" rule matches (static_evidence.listings_needed)."""
    if rubrics.cuobjdump is None:
        return None, rubrics.no_cuobjdump
    tool = rubrics.cuobjdump
    texts: dict[str, str] = {}
    why = _listing(box, cell, "resource", ["--dump-resource-usage"], binary, tool, cap, texts)
    if why is None:
        usage, _ = static_evidence.parse_resource_usage(texts["resource"])
        ptx, sass_kernels = static_evidence.listings_needed(rubrics.rubrics.get(cell.lesson),
                                                            static_evidence.demangle(usage.keys()))
        if ptx:
            why = _listing(box, cell, "ptx", ["-ptx"], binary, tool, cap, texts)
        sass = static_evidence.sass_options(sass_kernels, texts["resource"])
        if why is None and sass:
            why = _listing(box, cell, "sass", sass, binary, tool, cap, texts)
    if why is not None:
        return None, why
    facts = static_evidence.facts_from_dumps(texts["resource"], texts.get("sass", ""), texts.get("ptx"))
    gradebook.write_atomic(os.path.join(cell.dir, "static.json"),
                           json.dumps({"arch": facts["arch"], "kernels": facts["kernels"]}, indent=1, sort_keys=True))
    if not facts["kernels"]:
        return None, "short: cuobjdump found no kernel in the compiled runner"
    return facts, None


def performance(o: Options, rubrics: Rubrics, cell: Cell, g: judge.Grade | None) -> dict[str, Any]:
    """The cell's performance: {"performance": "met/judged" | "off" | "not measured", "met",
    "total", "short" (the first shortfall's words), "contracts_broken", and what its score is
    made of (grading/score.py): "speed_credit", "speed_ratio", "rules_met", "rules_judged"};
    evidence.json keeps every rule's result."""
    if not o.performance:
        return {"performance": "off"}
    if o.host_only:
        return {"performance": "not measured", "short": ""}
    if cell.lesson not in rubrics.rubrics:
        return {"performance": "not measured", "short": ""}  # (why: run-info.txt and the rubric's folder)
    facts, why = cell.static
    result = evidence.judge(rubrics.rubrics[cell.lesson], g.evidence if g is not None else None, facts, None, facts_problem=why,
                            ideas=g.ideas if g is not None else None)
    gradebook.write_atomic(os.path.join(cell.dir, "evidence.json"),
                           json.dumps(result, indent=1, sort_keys=True, default=str) + "\n")
    return {"performance": evidence.summary(result), "met": result["met"], "total": result["met"] + result["short"],
            "short": result["first_short"], "contracts_broken": result["contracts_broken"],
            "speed_credit": result["speed_credit"], "speed_ratio": result["speed_ratio"],
            "rules_met": result["rules_met"], "rules_judged": result["rules_judged"]}
