#!/usr/bin/env python3
"""What a learner's page must be (CTest readme.learner_pages): short enough for one sitting, one
shape for every lesson, the idea drawn, a self-check at the end, no project history, no link to a
repository that does not exist.

    python3 tests/readme/learner_pages.py            every rule on every page
    python3 tests/readme/learner_pages.py -k 04      only the tests whose name holds "04"

Words are counted as a reader meets them: everything but HTML comments (the figure markers).
"""
import glob
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

LESSON_LIMIT, COMPANION_LIMIT, NOTES_LIMIT = 2000, 3000, 3000

# A lesson README's sections, in this order (a heading may say more after these words).
SHAPE = ["What you will learn", "The idea", "The code to read", "Run it", "What you should see",
         "Why", "Try this", "Check yourself", "Next"]

# Words that tell the project's history instead of what is true now. A learner page says what is
# true and what you will see; how the course found it out belongs in results/README.md or
# docs/maintainers.md.
HISTORY = [
    r"\b20\d\d-\d\d-\d\d\b",              # a date
    r"\bbefore the split\b",
    r"\blast one profiled\b",
    r"\buntil the file\b",
    r"\b\d[\d,]* lines long\b",
    r"\bthe (?:old|earlier|previous|former) (?:rule|model|probe|version|kernel|run|table|fit)\b",
    r"\b(?:earlier|previous) (?:session|sessions|runs?|versions?|rules?|models?)\b",
    r"\bsession\b",
    r"\bissue \d+\b",
    r"\bwe (?:found|learned|discovered|noticed)\b",
    r"\bused to (?:be|say|print|read)\b",
    r"\bas of (?:today|now)\b",
    r"\bthe course's history\b",
    r"\bdocument 00\d\b",                  # the seed files' names: learners never see them
    r"\bthe seeds\b",
]
DEAD_REPOSITORY = "YOUR-GITHUB-ORG"


def rel(path):
    return os.path.relpath(path, ROOT)


def lesson_readmes():
    return sorted(glob.glob(os.path.join(ROOT, "lessons", "[0-9][0-9]_*", "README.md")))


def companion_readmes():
    return sorted(glob.glob(os.path.join(ROOT, "lessons", "[0-9][0-9]_*", "*", "README.md")))


def notes_pages():
    return sorted(glob.glob(os.path.join(ROOT, "lessons", "[0-9][0-9]_*", "notes.md"))
                  + glob.glob(os.path.join(ROOT, "lessons", "[0-9][0-9]_*", "*", "notes.md")))


def learner_pages():
    return (lesson_readmes() + companion_readmes() + notes_pages()
            + sorted(glob.glob(os.path.join(ROOT, "site", "explorers", "*.md"))))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def visible(text):
    """The text without HTML comments."""
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def words(text):
    return len(visible(text).split())


def headings(text):
    bare = re.sub(r"```.*?```", "", text, flags=re.S)
    return [m.group(1).strip() for m in re.finditer(r"^## +(.+)$", bare, re.M)]


def section(text, title):
    """The text of the `## title...` section, to the next `## ` heading."""
    m = re.search(r"^## +" + re.escape(title) + r".*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else None


def history_hits(text):
    bare = visible(text)
    return [m.group(0) for pattern in HISTORY for m in re.finditer(pattern, bare, re.I)]


def idea_figures(path):
    """(alt text, target) of each image in the README that is one of the lesson's idea figures."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"!\[([^\]]*)\]\(((?:\.\./)*[^)\s]*figures/[^)\s]+\.svg)\)",
                                                         read(path))]


class LearnerPages(unittest.TestCase):
    pass


def add(name, fn):
    setattr(LearnerPages, "test_" + re.sub(r"\W+", "_", name), fn)


def limit_test(path, limit):
    def t(self):
        n = words(read(path))
        self.assertLessEqual(n, limit, f"{rel(path)} has {n} words: at most {limit}")
    return t


def shape_test(path):
    def t(self):
        text = read(path)
        found = headings(text)
        at = []
        for want in SHAPE:
            match = [i for i, h in enumerate(found) if h.lower().startswith(want.lower())]
            self.assertTrue(match, f"{rel(path)}: no '## {want}' section (the shape: {', '.join(SHAPE)})")
            at.append(match[0])
        self.assertEqual(at, sorted(at), f"{rel(path)}: the sections are not in the order {', '.join(SHAPE)}")
        learn = section(text, "What you will learn")
        bullets = re.findall(r"^- ", learn, re.M)
        self.assertEqual(len(bullets), 3, f"{rel(path)}: 'What you will learn' has {len(bullets)} bullets, not 3")
    return t


def check_yourself_test(path):
    def t(self):
        part = section(read(path), "Check yourself") or ""
        questions = len(re.findall(r"<details>", part))
        self.assertGreaterEqual(questions, 3, f"{rel(path)}: 'Check yourself' has {questions} folded answers; 3 to 5")
        self.assertLessEqual(questions, 5, f"{rel(path)}: 'Check yourself' has {questions} folded answers; 3 to 5")
        self.assertEqual(questions, len(re.findall(r"</details>", part)), f"{rel(path)}: a <details> is not closed")
        self.assertRegex(part, r"(?i)predict", f"{rel(path)}: no question asks for a prediction the code can confirm")
        # GitHub renders Markdown inside <details> only after a blank line that follows </summary>.
        unrendered = re.findall(r"</summary>[ \t]*\S.*|</summary>[ \t]*\n[ \t]*\S.*", part)
        self.assertEqual(unrendered, [], f"{rel(path)}: put a blank line after </summary> so the answer renders")
    return t


def figures_test(path):
    def t(self):
        figs = idea_figures(path)
        self.assertGreaterEqual(len(figs), 2, f"{rel(path)}: {len(figs)} idea figure(s) (figures/*.svg); at least 2")
        for alt, target in figs:
            self.assertGreaterEqual(len(alt.split()), 6, f"{rel(path)}: the alt text of {target} does not say what it shows")
            self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(path), target)), f"{rel(path)}: {target} does not exist")
    return t


def history_test(path):
    def t(self):
        hits = history_hits(read(path))
        self.assertEqual(hits, [], f"{rel(path)} tells history: {hits}; say what is true now, and move how the "
                                   "course found it out to results/README.md or docs/maintainers.md")
    return t


for p in lesson_readmes():
    name = rel(p)
    add("words_" + name, limit_test(p, LESSON_LIMIT))
    add("shape_" + name, shape_test(p))
    add("check_yourself_" + name, check_yourself_test(p))
    add("figures_" + name, figures_test(p))
for p in companion_readmes():
    add("words_" + rel(p), limit_test(p, COMPANION_LIMIT))
for p in notes_pages():
    add("words_" + rel(p), limit_test(p, NOTES_LIMIT))
for p in learner_pages():
    add("history_" + rel(p), history_test(p))


def no_dead_repository(self):
    hits = []
    for folder, dirs, files in os.walk(ROOT):
        # One walk of the tree, leaving out build folders (CMake's, the site's copies) and hidden ones.
        dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
        for name in files:
            if not name.endswith((".md", ".ipynb", ".html")):
                continue
            path = os.path.join(folder, name)
            for n, line in enumerate(read(path).split("\n"), 1):
                if DEAD_REPOSITORY in line and re.search(r"https?://\S*" + DEAD_REPOSITORY, line):
                    hits.append(f"{rel(path)}:{n}")
    self.assertEqual(hits, [], f"links to {DEAD_REPOSITORY}, a repository that does not exist: {hits}")


add("no_link_to_a_repository_that_does_not_exist", no_dead_repository)


class Rules(unittest.TestCase):
    """The rules themselves catch what they are for."""

    def test_words_skip_comments(self):
        self.assertEqual(words("one <!-- q: pct(\"h200\", \"01\", \"x\") -->38.0%<!-- /q --> two"), 3)

    def test_history_words(self):
        self.assertTrue(history_hits("measured in the 2026-11-22 run"))
        self.assertTrue(history_hits("as measured before the split"))
        self.assertTrue(history_hits("The old rule said"))
        self.assertEqual(history_hits("The tile holds 32 x 33 floats."), [])
        self.assertEqual(history_hits("<!-- 2026-11-22 --> fine"), [])

    def test_section(self):
        text = "## What you will learn\n- a\n- b\n- c\n## The idea\nx\n"
        self.assertEqual(len(re.findall(r"^- ", section(text, "What you will learn"), re.M)), 3)


if __name__ == "__main__":
    unittest.main(verbosity=1)
