"""The mutation run, for maintainers (not the class grader, never shipped to students): every mutant
of the lessons' EXERCISE regions built and graded layer by layer, to show which layer of default
grading catches each. `python3 -m grading.mutation.run` (scripts/mutation_run.sh wraps it); the
layers and the caught rule are grading/pipeline.py's, the bookkeeping grading/mutation_report.py's."""
