"""The one list of lessons (lessons/lessons.txt): one line per gradable lesson folder,
`NN_name HIDDEN_SHAPE_ARITY`; `#` starts a comment, blank lines are ignored."""
from __future__ import annotations

import os
import re

# A lesson folder's name: the rule CMakeLists.txt applies to the same file (lowercase letters, digits, _).
_NAME = re.compile(r"^[0-9][0-9]_[a-z0-9_]+$")


class LessonListError(Exception):
    pass


def read_lessons(path: str) -> dict[str, int]:
    """{lesson: arity}, in the file's order. A missing or malformed file is an error: the grader
    never guesses the lessons."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise LessonListError("cannot read the list of lessons %s: %s" % (path, e.strerror))
    except UnicodeDecodeError:
        raise LessonListError("the list of lessons %s is not UTF-8 text" % path)
    lessons = {}
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not _NAME.match(words[0]) or not re.fullmatch(r"[1-9][0-9]*", words[1]):
            raise LessonListError("%s, line %d: expected 'NN_name ARITY', got '%s'" % (path, n, line.strip()))
        if words[0] in lessons:
            raise LessonListError("%s, line %d: %s listed twice" % (path, n, words[0]))
        lessons[words[0]] = int(words[1])
    if not lessons:
        raise LessonListError("%s lists no lesson" % path)
    return lessons


def course_lessons(repo: str) -> dict[str, int]:
    return read_lessons(os.path.join(repo, "lessons", "lessons.txt"))


def check_hidden_shapes(path: str, lessons: dict[str, int]) -> str | None:
    """None when every line of the hidden-shapes file is a lesson and as many positive whole numbers
    as that lesson's shapes have; else the first bad line, said."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return "cannot be read (%s)" % e.strerror
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        arity = lessons.get(words[0])
        ok = arity is not None and len(words) - 1 == arity and all(re.fullmatch(r"[1-9][0-9]*", w) for w in words[1:])
        if not ok:
            return 'line %d: "%s" (a lesson, then %s positive whole numbers)' % (n, line, arity if arity else "its")
    return None
