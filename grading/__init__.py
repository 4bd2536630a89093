"""The course's grading tools, one package (run a tool as `python3 -m grading.TOOL` from the
course's root; this file imports nothing, so that the student pack, which ships only the evidence
tools with it, imports none of the grader).

The class grader (scripts/grade.sh runs grading/grade.py; cli.main is its whole run): options
(the command line), preflight (a GPU and a sandbox before anything is built), runfolder (the plan:
cell folders, the seed, --resume), course_build (the course and its judges, built once), box (a
cell's sandboxed steps), cell_build and cell_grade (a cell's layers: compile, lint and static facts;
run, judge, sanitizers, memcheck subset, evidence), cell_evidence (rubrics, static facts,
performance), findings (what a step's exit and logs say), scheduler (the compile pool and the GPU
workers), progress, context (what every cell's steps share), exits, grader (the run as a whole),
slurm; and the modules they use: plan (what to grade), sandbox (the bubblewrap command line),
compile, run, judge (the trusted verdict), gradebook (rows, exports), cellrecord (each cell's
cell.json), names (escaping), lessons (the one list), gpus.

The evidence tools, which also ship to students: static_evidence (the compiled kernels' static
facts), rubric and evidence (a cell's performance evidence judged by its rubric), counters,
counters_rules and ncu (Nsight Compute's counters), ub_lint and ub_render (undefined behaviour GCC
sees in the device code; ub_lint.py also runs as a file), and regions (the one reader of the
lessons' EXERCISE markers, which ub_render, the mutants and scripts/make_exercises.cmake read them
through). The mutation tooling (maintainers): mutants and mutation_report. Every tool reads its
command line with argparse through cmdline (each tool's own grammar kept), which ships with them.
"""
