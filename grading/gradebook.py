"""Cell results and the gradebook.

A cell folder (OUT/cells/NNNN) holds its record, cell.json (grading/cellrecord.py): who the cell
is from the start (with the notes beside its row: note in the gradebook, feedback_note in the
student's own feedback, which names no classmate) and its result once graded, every value on one
line (names as the plan shows them: names.display_name, then names.class_labels; findings with
control characters escaped). The result's fields: compiled (yes / no / -), passed and total (the
test cases that judged a value the submission computed), course_passed and course_total (the
course's own test cases, which judged none: shown apart, never counted), finding (empty when the
cell is fully right), performance ("met/judged" rules of its rubric, "off" or "not measured";
empty: off), performance_short (the first shortfall's words), speed_credit (0 to 1: the slowest
exercise's speed credit, empty when no speed was judged), speed_ratio (that exercise's speed as a
share of the solution's) and rules (the other performance rules, met/judged).

The gradebook (CSV and Markdown, one row per cell, in the order of the cell folders), and its
exports: scores.csv (student, score, max score, comment: for an LMS import) and feedback/ (one
Markdown file per student). Every name it shows goes through names.class_labels (shown_names), so
that no two students, and no two entries of a student, look alike in any of them, whatever wrote
the records. A cell's correctness is passed when it compiled, every counted test case passed, at
least one was counted, and it has no finding. Its score, a share of its lesson's weight: 0 when
not passed; else C% + P% x its performance credit (--weights C,P, default 50,50; grading/score.py),
or 100% when its performance is off or not measured.
"""
from __future__ import annotations

import os
import re
from typing import Any, Callable

from . import cellrecord, pipeline, score
from .names import class_labels, csv_field, feedback_file_names, md_field, visible

HEADER = ["student", "lesson", "compiled", "checks passed", "checks total",
          "first failure or sanitizer finding", "course test cases passed", "course test cases total",
          "correctness", "performance", "score", "first performance shortfall", "note"]
NOTE = ("Checks count the test cases that judged a value the submission computed. The course's own "
        "test cases (they judge none of the submission's values) are shown apart and never count in "
        "the score. Performance is the speed of the lesson's slowest exercise as a share of the course "
        "solution's, with the speed credit it earns, and the lesson rubric's other rules met (off: not "
        "graded; not measured: no GPU run or no rubric); it counts only in a cell whose correctness passed.")
DEFAULT_SPLIT = score.DEFAULT_SPLIT
cell_score = score.cell_score
performance_short = score.performance_short


class WeightsError(Exception):
    pass


def one_line(value: object) -> str:
    return visible(str(value)).replace("\n", " ")


def write_atomic(path: str, text: str) -> None:
    """PATH holds TEXT whole, or what it held before (written beside it, then renamed)."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    os.replace(tmp, path)


def finish_cell(cell_dir: str, compiled: str, passed: str = "", total: str = "", finding: str = "", course_passed: str = "",
                course_total: str = "", performance: dict[str, Any] | None = None) -> None:
    """The cell's result, in its record (whole or not at all). PERFORMANCE: {"performance":
    "met/judged" | "off" | "not measured", "short": words, and where measured "speed_credit",
    "speed_ratio", "rules_met", "rules_judged"} of a cell that ran (None: it did not)."""
    perf = performance or {}
    extra = score.record_values(perf)
    result = cellrecord.Result(*(one_line(v) for v in (compiled, passed, total, course_passed, course_total, finding,
                                                      perf.get("performance", ""), perf.get("short", ""),
                                                      extra["speed_credit"], extra["speed_ratio"], extra["rules"])))
    cellrecord.update(cell_dir, result=result)


def is_pass(compiled: str, passed: str, total: str, finding: str) -> bool:
    """The pass rule (grading/pipeline.py's, which every grading tool shares)."""
    return pipeline.grader_passed(compiled, passed, total, finding)


def parse_split(text: str) -> tuple[int, int]:
    """--weights C,P -> (C, P): whole numbers >= 0 that add up to 100."""
    m = re.fullmatch(r"\s*([0-9]{1,3})\s*,\s*([0-9]{1,3})\s*", text or "")
    if not m or int(m.group(1)) + int(m.group(2)) != 100:
        raise WeightsError("--weights C,P needs two whole numbers that add up to 100, the shares of correctness and "
                           "performance (e.g. 80,20; 100,0 counts correctness alone), not '%s'" % visible(text or ""))
    return int(m.group(1)), int(m.group(2))


def performance_column(compiled: str, graded: bool, rec: dict[str, str]) -> str:
    if not graded or compiled != "yes":
        return "-"
    return score.performance_words(rec)


def percent(x: float) -> str:
    return "%.0f%%" % (100 * x)


def read_weights(path: str, lessons: dict[str, int]) -> dict[str, str]:
    """Lines "NN_name WEIGHT" (WEIGHT >= 0; # starts a comment line) -> {lesson: weight}."""
    weights = {}
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise WeightsError("--weights %s: %s" % (path, e.strerror))
    for n, line in enumerate(lines, 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        name = words[0]
        if name not in lessons:
            raise WeightsError("--weights %s, line %d: '%s' is not a lesson (one of: %s)"
                               % (path, n, visible(name), ", ".join(lessons)))
        if len(words) != 2 or not re.fullmatch(r"[0-9]+(\.[0-9]+)?", words[1]):
            raise WeightsError("--weights %s, line %d: expected 'NN_name WEIGHT' with WEIGHT a number >= 0, got '%s'"
                               % (path, n, visible(line.strip())))
        weights[name] = words[1]
    return weights


def num(x: float) -> str:
    """3, 2.50"""
    return "%d" % x if x == int(x) else "%.2f" % x


def _course_column(rec: dict[str, str]) -> str:
    p, t = rec.get("course_passed", ""), rec.get("course_total", "")
    return "%s of %s" % (p, t) if t not in ("", "0") else ""


def _fresh_feedback(outdir: str) -> str:
    """OUTDIR/feedback/, emptied (a link there is removed, never followed)."""
    feedback = os.path.join(outdir, "feedback")
    if os.path.isdir(feedback) and not os.path.islink(feedback):
        for name in os.listdir(feedback):
            os.unlink(os.path.join(feedback, name))
    else:
        if os.path.lexists(feedback):
            os.unlink(feedback)
        os.makedirs(feedback)
    return feedback


def _not_graded(cells: str, rec: dict[str, str]) -> str:
    """The finding of a cell without a result: a Slurm task that ended early left its reason in .slice-K.why."""
    why = ""
    sl = rec.get("slice", "")
    if sl and os.path.isfile(os.path.join(cells, ".slice-%s.why" % sl)):
        with open(os.path.join(cells, ".slice-%s.why" % sl), "rb") as w:
            why = visible(w.read(400)).replace("\\x0a", " ").strip()
    return ("not graded: %s; grade again with --resume"
            % (why or "no result: its run was interrupted, or its Slurm task was lost"))


def shown_names(records: list[dict[str, str]], lessons: dict[str, int]) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """How the gradebook shows the names of RECORDS (names.class_labels: no two alike, whatever
    wrote the records): {student: shown}, {(student, lesson): shown lesson}, each student's entries
    kept clear of each other and of the course's lessons."""
    entries: dict[str, list[str]] = {}
    for rec in records:
        entries.setdefault(rec.get("student", ""), []).append(rec.get("lesson", ""))
    lesson_shown = {}
    for student, names in entries.items():
        for lesson, shown in class_labels((n for n in names if n), fixed=lessons).items():
            lesson_shown[(student, lesson)] = shown
    return class_labels(entries), lesson_shown


class _Book:
    """The gradebook's rows, and each student's, as the cell folders are read in order."""

    def __init__(self, lessons: dict[str, int], weight: Callable[[str], float], split: tuple[int, int]) -> None:
        self.lessons, self.weight, self.split = lessons, weight, split
        self.shown: tuple[dict[str, str], dict[tuple[str, str], str]] = ({}, {})  # shown_names of the cells' records
        self.csv = [",".join(HEADER)]
        self.md = ["| student | lesson | compiled | checks passed | checks total | first failure or sanitizer finding "
                   "| course's own test cases (not counted) | correctness | performance | score | first performance shortfall | note |",
                   "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        self.students: dict[str, dict[str, Any]] = {}  # shown name -> {"score", "passed", "failed", "rows"}, in order of first row
        self.ncells = self.npassed = self.nungraded = 0
        self.failed = False

    def add(self, cells: str, record: cellrecord.CellRecord) -> None:
        """The row of a cell's RECORD."""
        graded = record.result is not None
        rec = record.fields()
        student, lesson = rec.get("student", ""), rec.get("lesson", "")
        shown_lesson = self.shown[1].get((student, lesson), lesson)
        student = self.shown[0].get(student, student)
        compiled, passed, total = rec.get("compiled", ""), rec.get("passed", ""), rec.get("total", "")
        finding = rec.get("finding", "")
        if not graded:
            compiled = "-"
            self.nungraded += 1
            finding = _not_graded(cells, rec)
        self.ncells += 1
        ok = is_pass(compiled, passed, total, finding)
        if ok:
            self.npassed += 1
        else:
            self.failed = True
            if not finding:  # never a blank failure
                finding = "%s of %s test cases passed" % (passed or "0", total or "0")
        st = self.students.setdefault(student, {"score": 0.0, "passed": [], "failed": [], "rows": []})
        earned = cell_score(ok, rec if graded else {}, self.split)
        extra = ("passed" if ok else "not passed", performance_column(compiled, graded, rec), percent(earned),
                 rec.get("performance_short", "") if graded else "")
        if lesson in self.lessons:
            if ok:
                st["score"] += self.weight(lesson) * earned
                st["passed"].append(lesson)
            else:
                st["failed"].append(lesson)
        cp, ct = (rec.get("course_passed", ""), rec.get("course_total", "")) if graded else ("", "")
        note, own_note = rec.get("note", ""), rec.get("feedback_note", "")
        self.csv.append(",".join(csv_field(x) for x in (student, shown_lesson, compiled, passed, total, finding, cp, ct)
                                 + extra + (note,)))
        course = _course_column(rec) if graded else ""
        self.md.append("|" + "".join(" %s |" % md_field(x) for x in (student, shown_lesson, compiled, passed, total, finding, course)
                                     + extra + (note,)))
        st["rows"].append("|" + "".join(" %s |" % md_field(x) for x in (shown_lesson, compiled, passed, total, finding, course)
                                        + extra + (own_note,)))

    def close(self, cells: str) -> None:
        """The Markdown's closing lines: the counts, the note and run-info.txt."""
        md = self.md
        md.append("")
        md.append("%d cells: %d passed, %d did not." % (self.ncells, self.npassed, self.ncells - self.npassed))
        if self.nungraded:
            md.append("%d of them were never graded (no result); grade again with --resume." % self.nungraded)
        md.append(NOTE)
        info = os.path.join(cells, "run-info.txt")
        if os.path.isfile(info):
            with open(info, encoding="utf-8", errors="surrogateescape") as f:
                md.append("")
                md.extend(visible(l) for l in f.read().splitlines())


def _feedback_text(student: str, st: dict[str, Any], missing: list[str], max_score: float, split: tuple[int, int]) -> str:
    text = ["# Feedback for %s" % md_field(student), "",
            "Score: %s of %s (a lesson counts when it compiled, passed every counted test case (at least one) and had no finding; "
            "then it scores its weight times the row's score: %d%% for correctness plus %d%% times its performance credit "
            "(nine tenths for the speed of its slowest exercise against the course solution's, one tenth for the other "
            "performance rules met), or all of it where performance was off or not measured)."
            % (num(st["score"]), num(max_score), split[0], split[1]), "",
            "| lesson | compiled | checks passed | checks total | first failure or sanitizer finding "
            "| course's own test cases (not counted) | correctness | performance | score | first performance shortfall | note |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    text.extend(st["rows"])
    if missing:
        text.extend(["", "Not submitted: " + " ".join(missing)])
    text.extend(["", NOTE])
    return "\n".join(text) + "\n"


def _scores(book: _Book, feedback: str, lessons: dict[str, int], weight: Callable[[str], float],
            split: tuple[int, int]) -> list[str]:
    """scores.csv's lines; each student's feedback file written into FEEDBACK."""
    max_score = sum(weight(l) for l in lessons)
    scores = ["student,score,max score,comment"]
    files = feedback_file_names(book.students)
    for student, st in book.students.items():
        fb = files[student]
        missing = [l for l in lessons if weight(l) != 0 and l not in st["passed"] and l not in st["failed"]]
        comment = "passed: " + (" ".join(st["passed"]) or "none")
        if st["failed"]:
            comment += "; not passed: " + " ".join(st["failed"])
        if missing:
            comment += "; not submitted: " + " ".join(missing)
        comment += "; details in feedback/" + fb
        scores.append(",".join((csv_field(student), num(st["score"]), num(max_score), csv_field(comment))))
        with open(os.path.join(feedback, fb), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(_feedback_text(student, st, missing, max_score, split))
    return scores


def write_gradebook(cells: str, outdir: str, lessons: dict[str, int], weights: dict[str, str] | None = None, me: str = "grade.sh",
                    split: tuple[int, int] = DEFAULT_SPLIT) -> tuple[int, str, str | None]:
    """Writes OUTDIR/gradebook.csv and .md, OUTDIR/scores.csv and OUTDIR/feedback/ from the cell
    folders of CELLS; returns (exit status: 0 every cell passed, 1 otherwise, printed Markdown,
    what to say on stderr). A cell record it cannot read: cellrecord.RecordError, nothing written.
    SPLIT: --weights C,P. The exit status is correctness alone: a performance shortfall is not a failure."""
    weights = weights or {}
    weight = lambda l: float(weights.get(l, "1"))
    try:
        entries = sorted(e for e in os.listdir(cells) if os.path.isdir(os.path.join(cells, e)))
    except OSError:
        entries = []
    records = [cellrecord.read(os.path.join(cells, e)) for e in entries]  # (each read before anything is written)
    os.makedirs(outdir, exist_ok=True)
    feedback = _fresh_feedback(outdir)
    book = _Book(lessons, weight, split)
    book.shown = shown_names([record.fields() for record in records if record is not None], lessons)
    for record in records:
        if record is not None:
            book.add(cells, record)
    book.close(cells)
    scores = _scores(book, feedback, lessons, weight, split)
    for name, lines in (("gradebook.csv", book.csv), ("gradebook.md", book.md), ("scores.csv", scores)):
        with open(os.path.join(outdir, name), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines) + "\n")
    md = "\n".join(book.md) + "\n"
    if book.ncells == 0:
        return 1, md, "%s: no cell records (*/cell.json) in %s" % (me, visible(cells))
    return (1 if book.failed else 0), md, None
