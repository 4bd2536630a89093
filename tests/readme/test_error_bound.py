"""Lesson 05's error bound: the K from which (K + 2) u falls below Higham's gamma_K = K u / (1 - K u),
u = 2^-24, computed in exact rational arithmetic, is the K that lessons/05_tiled_matmul/notes.md and
check.cu state (their text and the host checks that straddle it), so the two cannot drift apart.

    python3 -m unittest discover -s tests/readme -v
"""
import os
import re
import unittest
from fractions import Fraction

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LESSON = os.path.join(ROOT, "lessons", "05_tiled_matmul")
U = Fraction(1, 2 ** 24)


def gamma(k, u=U):
    return k * u / (1 - k * u)


def below(k):
    """(K + 2) u < gamma_K, exactly."""
    return (k + 2) * U < gamma(k)


def boundary():
    """The first K from which (K + 2) u < gamma_K; it stays below for every larger K with K u < 1."""
    k = 1
    while not below(k):
        k += 1
    return k


def read(*path):
    with open(os.path.join(LESSON, *path), encoding="utf-8") as f:
        return f.read()


class ErrorBoundBoundary(unittest.TestCase):
    def test_boundary_is_exact(self):
        k = boundary()
        self.assertEqual(k, 5792)
        # The closed form: (K + 2) u < K u / (1 - K u)  <=>  K (K + 2) u > 2  <=>  K (K + 2) > 2^25.
        self.assertLessEqual((k - 1) * (k + 1), 2 ** 25)
        self.assertGreater(k * (k + 2), 2 ** 25)
        # Below from there on, for every K the course can run (--k allows up to 65536).
        self.assertTrue(all(below(j) for j in range(k, 65537)))

    def test_notes_state_it(self):
        m = re.search(r"falls below γ_K from \*\*K = (\d+)\*\* on", read("notes.md"))
        self.assertIsNotNone(m, "notes.md no longer says from which K (K + 2)·u falls below γ_K")
        self.assertEqual(int(m.group(1)), boundary())

    def test_check_cu_states_it(self):
        text = read("check.cu")
        m = re.search(r"falls below gamma_K = K u / \(1 - K u\) from K = (\d+) on", text)
        self.assertIsNotNone(m, "check.cu no longer says from which K (K + 2) u falls below gamma_K")
        self.assertEqual(int(m.group(1)), boundary())
        # The host checks that hold the boundary: (K + 2) u >= gamma_K at K - 1, < at K.
        at = re.search(r"CHECK\(\((\d+) \+ 2\) \* u >= \1 \* u / \(1\.0 - \1 \* u\)\);", text)
        over = [int(k) for k in re.findall(r"CHECK\(\((\d+) \+ 2\) \* u < \1 \* u / \(1\.0 - \1 \* u\)\);", text)]
        self.assertIsNotNone(at, "check.cu has no host check that (K + 2) u >= gamma_K just below the boundary")
        self.assertEqual(int(at.group(1)), boundary() - 1)
        self.assertIn(boundary(), over, "check.cu has no host check that (K + 2) u < gamma_K at the boundary")


if __name__ == "__main__":
    unittest.main(verbosity=2)
