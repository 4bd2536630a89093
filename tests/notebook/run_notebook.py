#!/usr/bin/env python3
"""Executes notebooks/course.ipynb headless (nbclient, a Jupyter kernel) and checks how it ended.

usage: run_notebook.py NOTEBOOK OUT.ipynb [--build DIR] [--lesson NN_name] [--expect-gpu | --expect-no-gpu]

--build DIR points the notebook at a build folder that is already configured and built (the check
workflow's), so the test rebuilds nothing; without it the notebook configures and builds as a
learner's would. The executed notebook, outputs and all, is written to OUT.ipynb.
Passes when every cell ran without an exception, the last cell printed its "Notebook finished"
line, and the outputs show what this machine should show: without an NVIDIA GPU the course's
no-GPU messages (the lesson's host part and exit code 3, GPU checks skipped, the exercise not
solved); with one, the lesson's check and run passing. Exit code 77 (CTest: skipped) when nbclient
or a Python 3 kernel is missing.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("notebook")
parser.add_argument("out")
parser.add_argument("--build")
parser.add_argument("--lesson")
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
if args.lesson:  # as a learner would: edit the parameter cell
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    lines = cell.source.split("\n")
    cell.source = "\n".join(f'LESSON = "{args.lesson}"' if l.startswith("LESSON =") else l for l in lines)
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger: no warnings on stderr
if args.build:
    os.environ["COURSE_NOTEBOOK_BUILD"] = args.build
    os.environ["COURSE_NOTEBOOK_EXERCISE_BUILD"] = args.build
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
               "Skipped", "skipped: no GPU", "0/1 solved"]
missing = [e for e in expect if e not in text]
for e in expect:
    print(("found:   " if e not in missing else "MISSING: ") + e)
if missing:
    sys.exit(1)
print(f"notebook ran to its end ({'with' if gpu else 'without'} a GPU)")
