#!/usr/bin/env python3
"""The course's C++ folders form layers, drawn by who includes whom (CTest architecture.layers).

    python3 tests/architecture/test_layers.py [-v]   prints the folder graph, then runs the tests

Every `#include "..."` and `#include <...>` of the C and C++ sources in common/, harness/,
grading/, lessons/, exercises/ and tests/ is resolved as the compiler would find it: a quoted
name first beside the including file, then in the include folders that CMakeLists.txt gives its
targets (`target_include_directories(... ${CMAKE_CURRENT_SOURCE_DIR}/DIR ...)`: common/ and
harness/); an angle name in those folders only (else it is a system header, and not drawn).
Comments are left out; an include through a macro (`#include COURSE_LESSON_SOURCE`) is not drawn.

The rules (harness/README.md):
  - nothing in common/ includes anything of harness/ or grading/: common/ is what the lessons
    use, and the checks' harness sits on it, never under it;
  - no circle between the folders (a folder that includes another, directly or through others,
    which includes it back);
  - every quoted include resolves to one file: in the tree, or one of the headers CMake writes
    into the build folder (GENERATED below); and a name found in two include folders is refused,
    since which one a file gets would then depend on the order of its target's include folders.

The folder graph (each edge: the number of #include lines from one folder into the other) and
the layers it makes, lowest first, are printed so that a maintainer sees the layering.
Standard library only.
"""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# The top-level folders scanned: the course's C++ and whatever includes it.
FOLDERS = ("common", "harness", "grading", "lessons", "exercises", "tests")
# Folders that may include nothing of the others named here.
FORBIDDEN = {"common": ("harness", "grading")}
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".cu", ".c", ".cc", ".cpp", ".cxx", ".inl", ".ipp")
# Headers CMakeLists.txt writes into the build folder (they are on its targets' include paths).
GENERATED = {
    "course_lessons.hpp": "written from lessons/lessons.txt into <build>/generated",
    "transpose_cl.hpp": "lesson 02's OpenCL kernels, embedded into <build>/opencl_generated",
}

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
CMAKE_INCLUDE_DIRS_RE = re.compile(r"target_include_directories\s*\(([^)]*)\)", re.S)
CMAKE_SOURCE_DIR_RE = re.compile(r"\$\{CMAKE_CURRENT_SOURCE_DIR\}/([A-Za-z0-9_.-]+)")


def strip_comments(text):
    """`text` with its // and /* */ comments blanked (newlines kept, so line numbers stay), and
    string and character literals kept as they are (a "/*" inside one opens no comment)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            while j < n and text[j - 1] == "\\":  # a line comment continued by a backslash
                k = text.find("\n", j + 1)
                j = n if k < 0 else k
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def include_dirs_from_cmake(cmakelists):
    """The source folders CMakeLists.txt puts on its targets' include paths (top-level names)."""
    with open(cmakelists, encoding="utf-8") as f:
        text = f.read()
    dirs = []
    for call in CMAKE_INCLUDE_DIRS_RE.finditer(strip_cmake_comments(text)):
        for d in CMAKE_SOURCE_DIR_RE.findall(call.group(1)):
            if d not in dirs:
                dirs.append(d)
    return dirs


def strip_cmake_comments(text):
    return re.sub(r"#[^\n]*", "", text)


def top_folder(root, path):
    rel = os.path.relpath(path, root)
    return rel.split(os.sep)[0] if not rel.startswith("..") else None


class Include:
    def __init__(self, source, line, name, quoted, target, folder_from, folder_to, note=""):
        self.source, self.line, self.name, self.quoted = source, line, name, quoted
        self.target, self.folder_from, self.folder_to, self.note = target, folder_from, folder_to, note

    def where(self):
        return "%s:%d" % (self.source, self.line)

    def spelled(self):
        return '#include "%s"' % self.name if self.quoted else "#include <%s>" % self.name


class Scan:
    """Every include of the C/C++ files under `folders` of `root`, resolved."""

    def __init__(self, root, include_dirs, folders=FOLDERS, generated=GENERATED):
        self.root = os.path.abspath(root)
        self.include_dirs = list(include_dirs)
        self.folders = [f for f in folders if os.path.isdir(os.path.join(self.root, f))]
        self.generated = dict(generated)
        self.includes = []    # Include, resolved to a file of the tree
        self.unresolved = []  # Include of a quoted name found nowhere (and not generated)
        self.ambiguous = []   # (Include, [candidate files]) a name found in two include folders
        self.files = 0
        for folder in self.folders:
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, folder)):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
                for name in sorted(filenames):
                    if name.endswith(SOURCE_SUFFIXES):
                        self.scan_file(os.path.join(dirpath, name))

    def rel(self, path):
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def scan_file(self, path):
        self.files += 1
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = strip_comments(f.read())
        except OSError:
            return
        folder_from = top_folder(self.root, path)
        for m in INCLUDE_RE.finditer(text):
            quoted = m.group(1) is not None
            name = m.group(1) if quoted else m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            self.resolve(path, line, name, quoted, folder_from)

    def resolve(self, path, line, name, quoted, folder_from):
        source = self.rel(path)
        beside = []
        if quoted:
            candidate = os.path.normpath(os.path.join(os.path.dirname(path), name))
            if os.path.isfile(candidate):
                beside = [candidate]
        found = []
        for d in self.include_dirs:
            candidate = os.path.normpath(os.path.join(self.root, d, name))
            if os.path.isfile(candidate) and candidate not in found:
                found.append(candidate)
        if beside:
            target = beside[0]
        elif len(found) > 1:
            inc = Include(source, line, name, quoted, None, folder_from, None)
            self.ambiguous.append((inc, [self.rel(f) for f in found]))
            return
        elif found:
            target = found[0]
        else:
            if quoted and os.path.basename(name) not in self.generated:
                self.unresolved.append(Include(source, line, name, quoted, None, folder_from, None))
            return  # a system header (angle brackets) or one written at build time
        folder_to = top_folder(self.root, target)
        self.includes.append(Include(source, line, name, quoted, self.rel(target), folder_from, folder_to))

    # ---------------------------------------------------------------- the folder graph
    def edges(self):
        """{(from, to): [Include...]} between different top-level folders."""
        out = {}
        for inc in self.includes:
            if inc.folder_to is not None and inc.folder_to != inc.folder_from:
                out.setdefault((inc.folder_from, inc.folder_to), []).append(inc)
        return out

    def nodes(self):
        nodes = set(self.folders)
        for a, b in self.edges():
            nodes.update((a, b))
        return sorted(nodes)

    def cycles(self):
        """The folders that include one another, directly or not: each strongly connected part of
        the folder graph with more than one folder, as a sorted list (Tarjan's algorithm)."""
        graph = {n: sorted({b for (a, b) in self.edges() if a == n}) for n in self.nodes()}
        index, low, stack, on_stack, parts = {}, {}, [], set(), []
        counter = [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            for w in graph[v]:
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                part = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    part.append(w)
                    if w == v:
                        break
                if len(part) > 1:
                    parts.append(sorted(part))

        for v in graph:
            if v not in index:
                visit(v)
        return sorted(parts)

    def layers(self):
        """Folders by layer, lowest first: a folder's layer is one above the highest it includes
        (None where the graph has a circle)."""
        if self.cycles():
            return None
        edges = self.edges()
        level = {}

        def depth(n):
            if n not in level:
                below = [depth(b) for (a, b) in edges if a == n]
                level[n] = 1 + max(below) if below else 0
            return level[n]

        for n in self.nodes():
            depth(n)
        return [sorted(n for n in level if level[n] == k) for k in range(max(level.values()) + 1)]

    # ---------------------------------------------------------------- the rules
    def problems(self):
        """Every broken rule, one line each (empty: the layering holds)."""
        out = []
        for (a, b), incs in sorted(self.edges().items()):
            if b in FORBIDDEN.get(a, ()):
                for inc in incs:
                    out.append("%s: %s/ must not include %s/: %s resolves to %s" % (inc.where(), a, b, inc.spelled(), inc.target))
        edges = self.edges()
        for part in self.cycles():
            links = ["%s -> %s (%s: %s)" % (a, b, edges[(a, b)][0].where(), edges[(a, b)][0].spelled())
                     for a in part for b in part if (a, b) in edges]
            out.append("a circle between %s: %s" % (", ".join(p + "/" for p in part), "; ".join(links)))
        for inc in self.unresolved:
            out.append("%s: %s is found neither beside it nor in an include folder (%s)" %
                       (inc.where(), inc.spelled(), ", ".join(d + "/" for d in self.include_dirs)))
        for inc, candidates in self.ambiguous:
            out.append("%s: %s is found in more than one include folder (%s): give the headers different names" %
                       (inc.where(), inc.spelled(), ", ".join(candidates)))
        return out

    def report(self):
        """The folder graph, as printed for a maintainer."""
        edges = self.edges()
        lines = ["%d C/C++ files, %d #include lines into the tree; include folders: %s" %
                 (self.files, len(self.includes), ", ".join(d + "/" for d in self.include_dirs)),
                 "who includes whom (#include lines from one folder into another):"]
        width = max(len(n) for n in self.nodes()) + 1
        for n in self.nodes():
            outs = sorted(((b, len(incs)) for (a, b), incs in edges.items() if a == n), key=lambda e: (-e[1], e[0]))
            text = ", ".join("%s/ %d" % (b, k) for b, k in outs) if outs else "(nothing outside itself)"
            lines.append("  %-*s -> %s" % (width, n + "/", text))
        layers = self.layers()
        if layers is None:
            lines.append("layers: none (the graph has a circle)")
        else:
            lines.append("layers, lowest first: " + " | ".join(", ".join(p + "/" for p in layer) for layer in layers))
        return "\n".join(lines)


def scan_repository():
    return Scan(ROOT, include_dirs_from_cmake(os.path.join(ROOT, "CMakeLists.txt")))


# ---------------------------------------------------------------- tests
class RepositoryLayers(unittest.TestCase):
    def test_the_course_keeps_its_layers(self):
        scan = scan_repository()
        self.assertEqual(scan.problems(), [])

    def test_cmake_include_folders_are_the_two_layers(self):
        # If another folder joins the include paths, this test and the rules above are to be
        # thought through again (harness/README.md).
        self.assertEqual(sorted(include_dirs_from_cmake(os.path.join(ROOT, "CMakeLists.txt"))), ["common", "harness"])

    def test_the_checks_reach_the_harness_and_common_reaches_nothing(self):
        edges = scan_repository().edges()
        self.assertIn(("lessons", "harness"), edges)  # every check.cu: testing.hpp
        self.assertIn(("harness", "common"), edges)   # the harness sits on common/
        self.assertFalse([b for (a, b) in edges if a == "common"])


class Rules(unittest.TestCase):
    """The rules on small made-up trees."""

    def tree(self, files, cmake=None):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for path, text in files.items():
            full = os.path.join(d.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        if cmake is not None:
            with open(os.path.join(d.name, "CMakeLists.txt"), "w", encoding="utf-8") as f:
                f.write(cmake)
        return d.name

    CLEAN = {
        "common/lesson.cuh": '#pragma once\n#include "cli.hpp"\n#include <vector>\n',
        "common/cli.hpp": "#pragma once\n",
        "harness/testing.hpp": '#pragma once\n#include <doctest/doctest.h>\n#include "transcript.hpp"\n',
        "harness/transcript.hpp": '#pragma once\n#include "cli.hpp"\n',
        "harness/transcript.cpp": '#include "transcript.hpp"\n#include "course_lessons.hpp"\n',
        "lessons/01_x/main.cu": '#include "lesson.cuh"\n',
        "lessons/01_x/check.cu": '#include "testing.hpp"\n#include COURSE_LESSON_SOURCE\n',
        "tests/fixture.cpp": '#include "testing.hpp"\n',
    }

    def scan(self, files):
        return Scan(self.tree(files), ["common", "harness"])

    def test_a_clean_tree_passes_and_its_graph_is_drawn(self):
        scan = self.scan(self.CLEAN)
        self.assertEqual(scan.problems(), [])
        edges = {k: len(v) for k, v in scan.edges().items()}
        self.assertEqual(edges, {("harness", "common"): 1, ("lessons", "common"): 1, ("lessons", "harness"): 1,
                                 ("tests", "harness"): 1})
        self.assertEqual(scan.layers(), [["common"], ["harness"], ["lessons", "tests"]])
        report = scan.report()
        self.assertIn("  lessons/ -> common/ 1, harness/ 1\n", report)
        self.assertIn("  common/  -> (nothing outside itself)\n", report)
        self.assertIn("layers, lowest first: common/ | harness/ | lessons/, tests/", report)

    def test_a_planted_include_from_common_into_harness_fails(self):
        files = dict(self.CLEAN)
        files["common/lesson.cuh"] = '#pragma once\n#include "cli.hpp"\n\n#include "testing.hpp"  // planted\n'
        problems = self.scan(files).problems()
        self.assertIn('common/lesson.cuh:4: common/ must not include harness/: #include "testing.hpp" resolves to '
                      "harness/testing.hpp", problems)
        self.assertTrue(any(p.startswith("a circle between common/, harness/") for p in problems), problems)

    def test_an_include_from_common_into_grading_fails_however_spelled(self):
        files = dict(self.CLEAN)
        files["grading/seam.hpp"] = "#pragma once\n"
        files["common/cli.hpp"] = '#pragma once\n#include "../grading/seam.hpp"\n'
        scan = Scan(self.tree(files), ["common", "harness", "grading"])
        self.assertIn('common/cli.hpp:2: common/ must not include grading/: #include "../grading/seam.hpp" resolves to '
                      "grading/seam.hpp", scan.problems())
        files["common/cli.hpp"] = "#pragma once\n#include <seam.hpp>\n"  # through an include folder, in angle brackets
        scan = Scan(self.tree(files), ["common", "harness", "grading"])
        self.assertIn("common/cli.hpp:2: common/ must not include grading/: #include <seam.hpp> resolves to "
                      "grading/seam.hpp", scan.problems())

    def test_a_circle_between_two_folders_fails(self):
        files = dict(self.CLEAN)
        files["harness/transcript.hpp"] = '#pragma once\n#include "cli.hpp"\n#include "../lessons/01_x/shapes.hpp"\n'
        files["lessons/01_x/shapes.hpp"] = "#pragma once\n"
        scan = self.scan(files)
        self.assertEqual(scan.cycles(), [["harness", "lessons"]])
        problems = scan.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("a circle between harness/, lessons/: harness -> lessons "
                                               '(harness/transcript.hpp:3: #include "../lessons/01_x/shapes.hpp"); '
                                               "lessons -> harness (lessons/01_x/check.cu:1"), problems[0])
        self.assertIsNone(scan.layers())
        self.assertIn("layers: none (the graph has a circle)", scan.report())

    def test_a_circle_through_three_folders_fails(self):
        files = dict(self.CLEAN)
        files["tests/helper.hpp"] = "#pragma once\n"
        files["harness/transcript.hpp"] = '#pragma once\n#include "../tests/helper.hpp"\n'
        files["tests/helper.hpp"] = '#pragma once\n#include "../lessons/01_x/shapes.hpp"\n'
        files["lessons/01_x/shapes.hpp"] = "#pragma once\n"
        self.assertEqual(self.scan(files).cycles(), [["harness", "lessons", "tests"]])

    def test_comments_are_not_includes(self):
        files = dict(self.CLEAN)
        files["common/cli.hpp"] = ('#pragma once\n// #include "testing.hpp"\n/* once:\n#include "testing.hpp"\n*/\n'
                                   'const char* s = "/*";\n#include <vector>\n')
        scan = self.scan(files)
        self.assertEqual(scan.problems(), [])
        self.assertEqual(strip_comments('a /* x\ny */ b // z\n"//" \'/\''), 'a     \n     b     \n"//" \'/\'')

    def test_a_quoted_include_found_nowhere_fails_unless_generated(self):
        files = dict(self.CLEAN)
        files["lessons/01_x/check.cu"] = '#include "testing.hpp"\n#include "spead.cuh"\n'
        self.assertEqual(self.scan(files).problems(),
                         ['lessons/01_x/check.cu:2: #include "spead.cuh" is found neither beside it nor in an include '
                          "folder (common/, harness/)"])

    def test_a_name_in_two_include_folders_fails(self):
        files = dict(self.CLEAN)
        files["common/testing.hpp"] = "#pragma once\n"
        self.assertEqual(self.scan(files).problems(),
                         ['lessons/01_x/check.cu:1: #include "testing.hpp" is found in more than one include folder '
                          "(common/testing.hpp, harness/testing.hpp): give the headers different names",
                          'tests/fixture.cpp:1: #include "testing.hpp" is found in more than one include folder '
                          "(common/testing.hpp, harness/testing.hpp): give the headers different names"])
        # A quoted name beside the including file is that file, as for the compiler.
        files = dict(self.CLEAN)
        files["common/transcript.hpp"] = "#pragma once\n"
        self.assertEqual(self.scan(files).problems(), [])

    def test_include_folders_come_from_cmakelists(self):
        root = self.tree({}, cmake=("add_library(a STATIC x.cpp)\n"
                                    "target_include_directories(a PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/common)\n"
                                    "# target_include_directories(b PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/commented)\n"
                                    "target_include_directories(c PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/harness\n"
                                    "                                    ${CMAKE_CURRENT_BINARY_DIR}/generated  # built\n"
                                    "                                    ${CMAKE_CURRENT_SOURCE_DIR}/common)\n"))
        self.assertEqual(include_dirs_from_cmake(os.path.join(root, "CMakeLists.txt")), ["common", "harness"])


def main():
    print(scan_repository().report(), flush=True)
    unittest.main(verbosity=2 if "-v" in sys.argv else 1, argv=[sys.argv[0]] + [a for a in sys.argv[1:] if a != "-v"])


if __name__ == "__main__":
    main()
