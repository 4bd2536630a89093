"""The course's grader: grades students' main.cu files with the lessons' own checks, treating every
submission as hostile. Entry point: grading/grade.py (scripts/grade.sh execs it). Modules, in the
order of the flow: plan (what to grade), sandbox (the bubblewrap command line), compile, run,
judge (the trusted verdict), gradebook (rows, exports); names (escaping), lessons (the one list),
gpus, slurm and cli (the command line and the whole run) help them."""
