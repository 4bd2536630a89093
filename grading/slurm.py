"""--slurm: a job array that grades the class (task K: the students K, K + N, ... with --resume
--slice K/N) and a gradebook job that runs after the whole array, however its tasks ended."""
from __future__ import annotations

import os
import shlex


def write(sdir: str, grade_sh: str, task_args: list[str], tasks: int, gpus_per_task: int, partition: str, account: str,
          cells_dir: str, out: str, weights_file: str, split: str = "") -> None:
    """The Slurm job array of the class, its gradebook job and submit.sh, written into SDIR."""
    q = shlex.quote
    os.makedirs(sdir, exist_ok=True)

    def header(name: str) -> str:
        h = "#!/bin/bash\n# Written by grade.sh --slurm; submit both jobs with: bash %s\n" % q(os.path.join(sdir, "submit.sh"))
        h += "#SBATCH --job-name=%s\n#SBATCH --ntasks=1\n" % name
        if partition:
            h += "#SBATCH --partition=%s\n" % partition
        if account:
            h += "#SBATCH --account=%s\n" % account
        return h

    arr = header("grade-cells")
    arr += "#SBATCH --array=0-%d\n#SBATCH --output=%s/task-%%a.log\n" % (tasks - 1, sdir)
    if gpus_per_task > 0:
        arr += "#SBATCH --gpus-per-task=%d\n" % gpus_per_task
    arr += "# exit 0 and 1 (a cell did not pass) are a finished task; anything else is a failed one\n"
    arr += " ".join(q(a) for a in [grade_sh] + task_args)
    arr += ' --slice "$SLURM_ARRAY_TASK_ID/%d"\nrc=$?; [ $rc -le 1 ] || exit $rc\n' % tasks
    book = header("grade-gradebook")
    book += "#SBATCH --output=%s/gradebook.log\n" % sdir
    book += "%s --gradebook-from %s --out %s" % (q(grade_sh), q(cells_dir), q(out))
    if weights_file:
        book += " --weights %s" % q(weights_file)
    if split:
        book += " --weights %s" % q(split)
    book += "\nrc=$?; [ $rc -le 1 ] || exit $rc\n"
    sub = "#!/bin/bash\n# Submits the grading array, then the gradebook job that waits for all of it.\nset -e\n"
    sub += "array=$(sbatch --parsable %s)\narray=${array%%%%;*}\n" % q(os.path.join(sdir, "grade-array.sbatch"))
    sub += "book=$(sbatch --parsable --dependency=afterany:$array %s)\nbook=${book%%%%;*}\n" % q(os.path.join(sdir, "gradebook.sbatch"))
    sub += 'echo "submitted: grading job array $array (%d tasks), then gradebook job $book; the gradebook will be in %s"\n' % (
        tasks, q(os.path.join(out, "gradebook.md")))
    for name, text in (("grade-array.sbatch", arr), ("gradebook.sbatch", book), ("submit.sh", sub)):
        with open(os.path.join(sdir, name), "w") as f:
            f.write(text)
