#!/usr/bin/env python3
"""What a learner's page must be (CTest readme.learner_pages): short enough for one sitting, one
shape for every lesson, the idea drawn, a self-check at the end, no project history, no link to a
repository that does not exist, and no text that renders as a list where a paragraph is meant.

    python3 tests/readme/learner_pages.py            every rule on every page
    python3 tests/readme/learner_pages.py -k 04      only the tests whose name holds "04"

Words are counted as a reader meets them: everything but HTML comments (the figure markers, and
the q-names block at the end of a page that says what each named figure is made from). A page
names its figures (`<!-- q: tiled_pct -->38.0%<!-- /q -->`) rather than spelling their expressions
in the text, which a reader of the raw Markdown would wade through (scripts/quote_results.py).

The rendering rules parse the pages as their readers get them: with a CommonMark parser
(markdown-it-py), as GitHub does, and with Python-Markdown, as the course site (MkDocs) does after
site/build_site.py has folded each <details> answer. Debian: apt install python3-markdown-it
python3-markdown. Without them those tests are skipped, unless COURSE_REQUIRE_MARKDOWN=1 (CI sets it).
"""
import glob
import os
import re
import sys
import textwrap
import unittest

try:
    from markdown_it import MarkdownIt
    import markdown as python_markdown
except ImportError:
    MarkdownIt = python_markdown = None

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


PARSERS_MISSING = ("the rendering rules need a CommonMark parser and Python-Markdown "
                   "(apt install python3-markdown-it python3-markdown)")


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


def exercise_readmes():
    return sorted(glob.glob(os.path.join(ROOT, "exercises", "[0-9][0-9]_*", "README.md")))


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


# A figure's marker that spells its expression instead of a name (q-begin blocks, on lines of their
# own, may spell theirs).
SPELLED = re.compile(r"<!-- q: (?![a-z][a-z0-9_]* -->)")


def spelled_markers(text):
    """Line numbers of the figure markers that spell an expression instead of naming it."""
    return [n for n, line in enumerate(text.split("\n"), 1) if SPELLED.search(line)]


def history_hits(text):
    bare = visible(text)
    return [m.group(0) for pattern in HISTORY for m in re.finditer(pattern, bare, re.I)]


def idea_figures(path):
    """(alt text, target) of each image in the README that is one of the lesson's idea figures."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"!\[([^\]]*)\]\(((?:\.\./)*[^)\s]*figures/[^)\s]+\.svg)\)",
                                                         read(path))]


def commonmark_lists(text):
    """What GitHub renders as a list that a paragraph was probably meant to be, parsed with CommonMark:
    an ordered list that starts at a number other than 1 (a line of prose that begins with "7. "),
    a one-item list that cuts into a paragraph (a wrapped line that begins with "1. " or "- "), and a
    folded answer whose text begins with a list. [(line, what)], lines counted from 1."""
    front = re.match(r"---\n.*?\n---\n", text, re.S)  # YAML front matter (MkDocs reads it): blank lines
    if front:
        text = "\n" * front.group(0).count("\n") + text[front.end():]
    tokens = MarkdownIt("commonmark").parse(text)
    hits = []
    for i, t in enumerate(tokens):
        if t.type in ("ordered_list_open", "bullet_list_open"):
            line = t.map[0] + 1
            start = t.attrGet("start")
            if t.type == "ordered_list_open" and start is not None and int(start) != 1:
                hits.append((line, f"a list that starts at {start}: a number followed by a dot begins a list"))
            close = next(j for j in range(i + 1, len(tokens))
                         if tokens[j].type == t.type.replace("_open", "_close") and tokens[j].level == t.level)
            items = [u for u in tokens[i + 1:close] if u.type == "list_item_open" and u.level == t.level + 1]
            before = tokens[i - 1] if i else None
            if len(items) == 1 and before is not None and before.type == "paragraph_close":
                para = next(u for u in reversed(tokens[:i - 1]) if u.type == "paragraph_open" and u.level == before.level)
                if para.map[1] == t.map[0]:
                    hits.append((line, "a one-item list that cuts into the paragraph above it (a wrapped line "
                                       "that begins with a number and a dot, or a dash)"))
        if t.type == "html_block" and re.search(r"<!-- /(?:q|not measured) -->", t.content.split("\n")[0]):
            hits.append((t.map[0] + 1, "a line that begins with a number's marker (<!-- q: ... -->): GitHub shows "
                                       "the whole line as raw HTML, its Markdown unrendered, and breaks the "
                                       "paragraph there; put a word before the marker or join the line to the one above"))
        if t.type == "html_block" and "</summary>" in t.content and "</details>" not in t.content:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt.type in ("ordered_list_open", "bullet_list_open"):
                hits.append((nxt.map[0] + 1, "a folded answer that begins with a list (on GitHub)"))
    return hits


def site_answers(text):
    """Each folded answer's body as the site renders it: site/build_site.py folds <details> into a
    `??? question` block (pymdownx.details), whose indented text Python-Markdown renders on its own.
    [(title line, HTML)]."""
    sys.path.insert(0, os.path.join(ROOT, "site"))
    import build_site  # noqa: E402  (the site's own folding)
    lines = build_site.fold_details(text.split("\n"))
    out = []
    for n, line in enumerate(lines):
        if not line.lstrip().startswith("??? "):
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for b in lines[n + 1:]:
            if b.strip() and len(b) - len(b.lstrip()) <= indent:
                break
            body.append(b)
        html = python_markdown.markdown(textwrap.dedent("\n".join(body)), extensions=["tables", "md_in_html"])
        out.append((line.strip(), html.strip()))
    return out


def rendering_problems(text):
    """Lines of a page that render as a list where a paragraph is meant, on GitHub or on the site."""
    hits = [f"line {n}: {what}" for n, what in commonmark_lists(text)]
    for title, html in site_answers(text):
        if re.match(r"<(?:ol|ul)\b", html):
            hits.append(f"{title}: the answer begins with a list on the site: {html[:60]!r}")
    return hits


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


def named_figures_test(path):
    def t(self):
        lines = spelled_markers(read(path))
        self.assertEqual(lines, [], f"{rel(path)}: the figure markers of lines {lines} spell their expressions; "
                                    "name each one, <!-- q: NAME -->, and add 'NAME = EXPRESSION' to the q-names "
                                    "block at the end of the page (scripts/quote_results.py's docstring shows it)")
    return t


def rendering_test(path):
    def t(self):
        if MarkdownIt is None:
            if os.environ.get("COURSE_REQUIRE_MARKDOWN") == "1":
                self.fail(f"COURSE_REQUIRE_MARKDOWN=1, but {PARSERS_MISSING}")
            self.skipTest(PARSERS_MISSING)
        hits = rendering_problems(read(path))
        self.assertEqual(hits, [], f"{rel(path)} renders as a list where a paragraph is meant: {hits}; "
                                   "reword the line so that it does not begin with a number and a dot")
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
    add("renders_" + rel(p), rendering_test(p))
for p in learner_pages() + exercise_readmes():
    add("named_figures_" + rel(p), named_figures_test(p))


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


NAMED_PAGE = ("The copy reaches <!-- q: copy_pct -->38.0%<!-- /q --> of `cudaMemcpy`.\n\n"
              "<!-- q-names: where each figure above comes from (scripts/quote_results.py)\n"
              "copy_pct = pct(\"h200\", \"01\", \"copy_kernel (not a transpose)\")\n"
              "span_copy = span(\"lessons/01_naive_transpose/main.cu\", \"[(]x[)] 1. two words - a list\")\n"
              "-->\n")


class Rules(unittest.TestCase):
    """The rules themselves catch what they are for."""

    def test_words_skip_comments(self):
        self.assertEqual(words("one <!-- q: pct(\"h200\", \"01\", \"x\") -->38.0%<!-- /q --> two"), 3)
        self.assertEqual(words("one <!-- q: copy_pct -->38.0%<!-- /q --> two"), 3)
        self.assertEqual(words(NAMED_PAGE), 6)  # the q-names block is no words

    def test_named_figures(self):
        self.assertEqual(spelled_markers(NAMED_PAGE), [])
        self.assertEqual(spelled_markers("a\nthe copy <!-- q: pct(\"h200\", \"01\", \"x\") -->38.0%<!-- /q -->\n"), [2])
        self.assertEqual(spelled_markers("<!-- q-begin: text(\"h200/lessons.txt\", \"01\", \"x\") -->\n<!-- q-end -->\n"), [])

    def test_history_words(self):
        self.assertTrue(history_hits("measured in the 2026-11-22 run"))
        self.assertTrue(history_hits("as measured before the split"))
        self.assertTrue(history_hits("The old rule said"))
        self.assertEqual(history_hits("The tile holds 32 x 33 floats."), [])
        self.assertEqual(history_hits("<!-- 2026-11-22 --> fine"), [])

    @unittest.skipIf(MarkdownIt is None, PARSERS_MISSING)
    def test_rendering(self):
        question = "1. Predict it.\n   <details><summary>Answer</summary>\n\n   {}\n\n   </details>\n"
        # An answer that begins with a number and a dot is a list, on GitHub and on the site.
        self.assertEqual(len(rendering_problems(question.format("2. Lane `l` reads word `6l`."))), 3)
        self.assertEqual(rendering_problems(question.format("Two. Lane `l` reads word `6l`.")), [])
        self.assertEqual(rendering_problems(question.format("Two wavefronts:\n   1. x\n   2. y")), [])
        # An answer outside a list item, too.
        self.assertTrue(rendering_problems("<details><summary>A</summary>\n\n1. x\n\n</details>\n"))
        # Prose that begins a line with a number: a list where it starts a block or cuts into a paragraph.
        self.assertTrue(rendering_problems("Half of it:\n\n7. 50 % of 228 KiB is 114 KiB.\n"))
        self.assertTrue(rendering_problems("The warp needs\n1. wavefront, as the figure shows.\n"))
        self.assertEqual(rendering_problems("The warp needs 1. wavefront.\n"), [])
        # Lists meant as lists stay.
        self.assertEqual(rendering_problems("Steps:\n\n1. one\n2. two\n\n- a\n- b\n"), [])
        # A number's marker that begins a line turns the line into raw HTML on GitHub.
        marker = '<!-- q: ms("h200", "01", "copy_kernel") -->0.32<!-- /q --> ms, `code` here'
        self.assertTrue(rendering_problems("The copy takes\n" + marker + "\n"))
        self.assertTrue(rendering_problems("- a point\n  " + marker + "\n"))
        self.assertEqual(rendering_problems("The copy takes " + marker + "\nand more.\n"), [])
        self.assertEqual(rendering_problems("<!-- q-end -->\n\nText.\n"), [])
        # A named marker, and the q-names block that ends a page, render as nothing at all.
        self.assertEqual(rendering_problems(NAMED_PAGE), [])
        self.assertTrue(rendering_problems("The copy takes\n<!-- q: copy_ms -->0.32<!-- /q --> ms, `code` here\n"))
        html = MarkdownIt("commonmark").render(NAMED_PAGE)
        self.assertEqual(re.sub(r"<!--.*?-->", "", html, flags=re.S).strip(), "<p>The copy reaches 38.0% of <code>cudaMemcpy</code>.</p>")
        html = python_markdown.markdown(NAMED_PAGE, extensions=["tables", "md_in_html"])
        self.assertEqual(re.sub(r"<!--.*?-->", "", html, flags=re.S).strip(), "<p>The copy reaches 38.0% of <code>cudaMemcpy</code>.</p>")

    def test_section(self):
        text = "## What you will learn\n- a\n- b\n- c\n## The idea\nx\n"
        self.assertEqual(len(re.findall(r"^- ", section(text, "What you will learn"), re.M)), 3)


if __name__ == "__main__":
    unittest.main(verbosity=1)
