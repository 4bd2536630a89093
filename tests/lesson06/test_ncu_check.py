"""Host tests of lessons/06_bank_conflicts/ncu_check.py, without a GPU: the generated patterns are
valid and seeded, and the comparison reads ncu's CSV in launch order and fails on a disagreement.
A stand-in for ncu (this file, run as a script) prints the CSV ncu would print if the GPU counted
what the model predicts (FAKE_NCU_OFF_BY=0) or one wavefront more on every launch (1).

    python3 -m unittest discover -s tests/lesson06    (PROBES=path/to/06_bank_conflicts_probes)
"""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lessons", "06_bank_conflicts"))
import ncu_check  # noqa: E402


def fake_ncu(argv):
    """Called as ncu: --csv ... --metrics M1,M2,M3,M4 -k regex:bank_probe BINARY ARGS..."""
    metrics = argv[argv.index("--metrics") + 1].split(",")
    program = argv[argv.index("-k") + 2:]
    listing = subprocess.run(program + ["--list"], stdout=subprocess.PIPE, text=True, check=True).stdout
    off = int(os.environ.get("FAKE_NCU_OFF_BY", "0"))
    print("==PROF== Connected to process")  # ncu's own lines come before the table
    print('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"')
    for i, line in enumerate(listing.splitlines()):
        _, _, wf, bc = line.split()
        values = {metrics[0]: int(wf) + off, metrics[1]: int(bc), metrics[2]: int(wf) + off, metrics[3]: int(bc)}
        for m in metrics:
            print(f'"{i}","bank_probe","{m}","","{values[m]:,}"')


class Generated(unittest.TestCase):
    def test_patterns_are_valid_seeded_and_varied(self):
        for width in (4, 8, 16):
            patterns = ncu_check.generate(width, 300, 6)
            self.assertEqual(patterns, ncu_check.generate(width, 300, 6))
            self.assertNotEqual(patterns, ncu_check.generate(width, 300, 7))
            self.assertEqual(len({name for name, _ in patterns}), 300)
            for name, addr in patterns:
                self.assertEqual(len(addr), 32, name)
                for a in addr:
                    self.assertTrue(a == -1 or (a % width == 0 and 0 <= a <= ncu_check.PROBE_BYTES - width), (name, a))
            kinds = {name.split("_")[2] for name, _ in patterns}
            self.assertTrue({"random", "strided", "permuted", "div", "mod", "pair1", "pair2", "pair"} <= kinds, kinds)
            self.assertTrue(any("_off" in name for name, _ in patterns))


@unittest.skipUnless(os.environ.get("PROBES"), "PROBES (the path of 06_bank_conflicts_probes) not set")
class AgainstFakeNcu(unittest.TestCase):
    def run_check(self, mode, off_by):
        with tempfile.TemporaryDirectory() as tmp:
            ncu = os.path.join(tmp, "ncu")
            with open(ncu, "w") as f:
                f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} \"$@\"\n")
            os.chmod(ncu, 0o755)
            env = dict(os.environ, NCU=ncu, FAKE_NCU_OFF_BY=str(off_by))
            return subprocess.run([sys.executable, ncu_check.__file__, mode, os.environ["PROBES"], "--count", "20"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)

    def test_agreement_passes(self):
        for mode in ("table", "generated"):
            p = self.run_check(mode, 0)
            self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("loads, 16 bytes: 20 patterns, 20 agree, 0 disagree", p.stdout)

    def test_any_disagreement_fails_and_is_shown(self):
        for mode in ("table", "generated"):
            p = self.run_check(mode, 1)
            self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("20 patterns, 0 agree, 20 disagree (20 of them on wavefronts)", p.stdout)
        self.assertIn("addresses", p.stdout)


if __name__ == "__main__":
    fake_ncu(sys.argv[1:])
