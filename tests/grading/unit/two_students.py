"""A class of two students, Ada and Bo, who each hand in lesson 06 as one line, planned by
runfolder.make_plan with --no-sandbox --host-only: the setting of the tests of --resume
(test_cli.py) and of the cell records' consumers (test_cellrecord.py). Nothing is built."""
import os
import shutil
import tempfile

from grading import options, runfolder, sandbox
from grading.exits import Stop

LESSONS = {"01_naive_transpose": 2, "02_shared_transpose": 2, "06_bank_conflicts": 2}


class TwoStudents:
    """A mix-in for a unittest.TestCase: self.subs (the class), self.out, and plan()."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.subs = os.path.join(self.tmp, "subs")
        for s in ("Ada", "Bo"):
            os.makedirs(os.path.join(self.subs, s, "06_bank_conflicts"))
            with open(os.path.join(self.subs, s, "06_bank_conflicts", "main.cu"), "w") as f:
                f.write("int x;\n")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def plan(self, *extra):
        """The run folder planned with these options after the defaults; its options as .o."""
        o = options.parse([self.subs, "--out", self.out, "--no-sandbox", "--host-only"] + list(extra))
        folder = runfolder.make_plan(o, self.out, os.path.realpath(self.subs), LESSONS, False, sandbox.UID_FIRST, Stop(o.slice))
        folder.o = o
        return folder
