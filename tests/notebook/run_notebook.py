#!/usr/bin/env python3
"""Executes notebooks/course.ipynb headless (nbclient, a Jupyter kernel) and checks how it ended.

usage: run_notebook.py NOTEBOOK OUT.ipynb [--build DIR] [--lesson NN_name] [--solve]
                       [--expect-gpu | --expect-no-gpu]

--build DIR points the notebook at a build folder that is already configured and built (the check
workflow's), so the test rebuilds nothing; without it the notebook configures and builds as a
learner's would. The executed notebook, outputs and all, is written to OUT.ipynb.
--solve plays a learner who solves the lesson's exercise in the notebook: it types, into the
notebook's EDITS cell, one (old, new) pair per TODO gap of exercises/LESSON/main.cu, the gap and
its stub lines replaced by the code of lessons/LESSON/main.cu. The notebook then runs in a fresh
copy of the course (no build folders; --build still serves the lesson's own cells), so the
exercise file it edits and the exercise build it configures are the copy's.
Passes when every cell ran without an exception, the last cell printed its "Notebook finished"
line, and the outputs show what this machine should show: without an NVIDIA GPU the course's
no-GPU messages (the lesson's host part and exit code 3, GPU checks skipped, the exercise not
solved, even when --solve solved it: only GPU checks that ran can solve it); with one, the lesson's
check and run passing, and the exercise solved exactly when --solve solved it. With --solve, every
pair must have been found and replaced, and the edited exercise must be the lesson's code.
Exit code 77 (CTest: skipped) when nbclient or a Python 3 kernel is missing.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print("FAILED:", message)
    sys.exit(1)


ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from grading import regions  # noqa: E402  (the one reader of the EXERCISE markers)


def marker(line):
    """A line of the exercises' markup (grading/regions.py) or the site's, which the exercise does not hold."""
    return regions.marker(line.rstrip("\n")) is not None or line.lstrip().startswith("// SITE MODEL ")


def solution_edits(exercise, lesson, todos_path=None):
    """(old, new) per TODO gap: the exercise's TODO comment and stub lines, and the lesson's code there.

    The lesson marks each gap `// EXERCISE BEGIN id` ... `// EXERCISE END`; in the exercise the gap
    is the `// TODO(id)` line, one line per TODO line (marker, or the entry's lines in the lesson's
    exercise_todos.txt at TODOS_PATH) and one per STUB marker (grading/regions.py reads them all).
    """
    ex, le = exercise.splitlines(keepends=True), lesson.splitlines(keepends=True)
    todos = regions.read_todos(str(todos_path)) if todos_path else {}
    edits = []
    for r in regions.parse(lesson, "lesson", todos, str(todos_path)):
        todo = [k for k, l in enumerate(ex) if l.lstrip().startswith(f"// TODO({r.id}):")]
        if len(todo) != 1:
            fail(f"exercise: {len(todo)} lines start with '// TODO({r.id}):', expected 1")
        gap = 1 + len(r.todo) + len(r.stubs)
        edits.append(("".join(ex[todo[0]:todo[0] + gap]), "".join(l for l in le[r.begin + 1:r.end] if not marker(l))))
    return edits


def literal(text):
    """A Python string literal for text, one source line per line of text (as a learner pastes code)."""
    return "\n     ".join(repr(line) for line in text.splitlines(keepends=True)) or "''"


def course_root(start):
    return next(f for f in [start, *start.parents] if (f / "CMakePresets.json").is_file() and (f / "lessons").is_dir())


parser = argparse.ArgumentParser()
parser.add_argument("notebook")
parser.add_argument("out")
parser.add_argument("--build")
parser.add_argument("--lesson")
parser.add_argument("--solve", action="store_true", help="solve the exercise through the notebook's EDITS cell")
group = parser.add_mutually_exclusive_group()
group.add_argument("--expect-gpu", action="store_true")
group.add_argument("--expect-no-gpu", action="store_true")
parser.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
args = parser.parse_args()

try:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from jupyter_client.kernelspec import KernelSpecManager
    KernelSpecManager().get_kernel_spec("python3")
except Exception as e:  # noqa: BLE001 - any missing piece means: cannot run here
    print(f"SKIPPED: cannot execute notebooks here ({type(e).__name__}: {e}); "
          "Debian/Ubuntu: apt install python3-nbclient python3-ipykernel")
    sys.exit(77)

if args.expect_gpu:
    gpu = True
elif args.expect_no_gpu:
    gpu = False
else:
    smi = shutil.which("nvidia-smi")
    gpu = bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0



notebook = pathlib.Path(args.notebook).resolve()
nb = nbformat.read(notebook, as_version=4)
parameters = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
if args.lesson:  # as a learner would: edit the parameter cell
    lines = parameters.source.split("\n")
    parameters.source = "\n".join(f'LESSON = "{args.lesson}"' if l.startswith("LESSON =") else l for l in lines)
lesson = re.search(r'^LESSON = "([^"]+)"', parameters.source, re.M)[1]
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger: no warnings on stderr
if args.build:
    os.environ["COURSE_NOTEBOOK_BUILD"] = str(pathlib.Path(args.build).resolve())
    if not args.solve:  # solving, the copy's exercise must be built: its own build-exercises/
        os.environ["COURSE_NOTEBOOK_EXERCISE_BUILD"] = args.build
edits = []
if args.solve:
    root = course_root(notebook.parent)
    exercise_rel = pathlib.Path("exercises", lesson, "main.cu")
    exercise_text = (root / exercise_rel).read_text()
    lesson_text = (root / "lessons" / lesson / "main.cu").read_text()
    todos = root / "lessons" / lesson / "exercise_todos.txt"
    edits = solution_edits(exercise_text, lesson_text, todos if todos.is_file() else None)
    if not edits:
        fail(f"lessons/{lesson}/main.cu marks no exercise gap (// EXERCISE BEGIN)")
    for old, new in edits:
        if exercise_text.count(old) != 1:
            fail(f"{exercise_rel}: the text to replace occurs {exercise_text.count(old)} times, expected once:\n{old}")
    edits_cell = next((c for c in nb.cells if c.cell_type == "code" and "EDITS = [" in c.source), None)
    if edits_cell is None:
        fail("the notebook has no cell with 'EDITS = ['")
    typed = "EDITS = [\n" + "".join(f"    ({literal(old)},\n     {literal(new)}),\n" for old, new in edits) + "]"
    edits_cell.source, count = re.subn(r"^EDITS = \[\n.*?^\]", lambda _: typed, edits_cell.source, count=1, flags=re.M | re.S)
    if count != 1:
        fail("the EDITS cell has no 'EDITS = [' ... ']' block to fill in")
    workdir = tempfile.TemporaryDirectory(prefix="course-notebook-")
    copy = pathlib.Path(workdir.name, "course")
    skip = {".git", ".wt", ".deps", ".whl", ".gl"}
    shutil.copytree(root, copy, symlinks=True,
                    ignore=lambda d, names: [n for n in names if pathlib.Path(d) == root and (n in skip or n.startswith("build"))])
    notebook = copy / notebook.relative_to(root)
    print(f"solving exercise {lesson} with {len(edits)} edits, in a copy of the course: {copy}")
client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                        resources={"metadata": {"path": str(notebook.parent)}})
failure = None
try:
    client.execute()
except CellExecutionError as e:
    failure = f"a cell raised an exception:\n{e}"
out = pathlib.Path(args.out)
out.parent.mkdir(parents=True, exist_ok=True)
nbformat.write(nb, out)
print(f"executed notebook written to {out}")
if failure:
    print("FAILED:", failure)
    sys.exit(1)

text = ""
for cell in nb.cells:
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            print(f"FAILED: error output {o.get('ename')}: {o.get('evalue')}")
            sys.exit(1)
        text += o.get("text", "") if o.get("output_type") == "stream" else ""

expect = ["Notebook finished:", "(exit code 0)"]  # at least the build and the check ran
if gpu:
    expect += ["GPU (name, compute capability, memory, driver):", "exit code 0: every kernel matched the CPU reference",
               "100% tests passed", "exercise"]
else:
    expect += ["No NVIDIA GPU in this runtime.",
               "exit code 3: no usable GPU: the host part ran, the kernels did not",
               "the GPU part (kernels, their checks, timings) did not run:",  # the lesson's own no-GPU line
               "Skipped", "skipped: no GPU"]
if args.solve:  # scripts/exercises.sh check NN: the learner's version compiled and passed its host checks
    expect += ["build: ok", "host checks: ok"]
if args.solve and gpu:  # ... and its GPU checks: solved, in the progress table too
    expect += ["GPU checks: passed", f"{lesson:<22}| {'ok':<10}| {'ok':<12}| solved", "1/1 solved"]
else:
    expect += ["0/1 solved"]
missing = [e for e in expect if e not in text]
if args.solve:
    edits_output = "".join(o.get("text", "") for o in edits_cell.get("outputs", []))
    replaced = edits_output.count("replaced:")
    print(f"{'found:  ' if replaced == len(edits) else 'MISSING:'} the EDITS cell replaced {replaced} of {len(edits)} gaps")
    solved = (copy / exercise_rel).read_text().splitlines()
    code = [l for l in lesson_text.splitlines() if not marker(l)]
    is_lesson = solved[len(solved) - len(code):] == code and all(l.startswith("//") for l in solved[:len(solved) - len(code)])
    print(f"{'found:  ' if is_lesson else 'MISSING:'} the edited {exercise_rel} is the lesson's code (below its header)")
    if replaced != len(edits) or "not found" in edits_output or not is_lesson:
        missing.append("every edit applied")
for e in expect:
    print(("found:   " if e not in missing else "MISSING: ") + e)
if missing:
    sys.exit(1)
print(f"notebook ran to its end ({'with' if gpu else 'without'} a GPU)")
