"""Unit tests of scripts/colab_links.py, on a copy of the course's READMEs and notebook in a scratch
folder: with no address configured there is no badge and --check passes; --set OWNER/REPO puts a
badge under every title and fills in the notebook's COURSE_REPO, and --check passes again; --unset
gives back the files as they were; whatever lies between the two states fails --check.

    python3 -m unittest discover -s tests/readme -v
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BADGE = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
LINK = "https://colab.research.google.com/github/{}/blob/main/notebooks/course.ipynb"


def lesson_readme(name):
    """A lesson README as the learner pages open: the title, then the "No NVIDIA GPU?" line."""
    return (f"# {name[:2]} — a lesson\n\n"
            "No NVIDIA GPU? [Running the course](../../docs/running.md#no-nvidia-gpu-of-your-own-colab) says how "
            "to run it on a free cloud GPU.\n\n## What you will learn\n- one\n- two\n- three\n")


class ColabLinks(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="colab_links_test_"))
        (self.root / "scripts").mkdir()
        shutil.copy(ROOT / "scripts" / "colab_links.py", self.root / "scripts")
        shutil.copy(ROOT / "README.md", self.root / "README.md")
        (self.root / "notebooks").mkdir()
        shutil.copy(ROOT / "notebooks" / "course.ipynb", self.root / "notebooks")
        self.lessons = sorted(p.parent.name for p in ROOT.glob("lessons/[0-9][0-9]_*/README.md"))
        self.assertEqual(len(self.lessons), 6)
        for name in self.lessons:
            (self.root / "lessons" / name).mkdir(parents=True)
            (self.root / "lessons" / name / "README.md").write_text(lesson_readme(name), encoding="utf-8")
        # What the notebook's text links to (checked to exist), as empty stand-ins.
        for target in re.findall(r"\]\(([^)\s#]+)", self.markdown()):
            if not re.match(r"[a-z]+:", target):
                path = (self.root / "notebooks" / target).resolve()
                if target.endswith("/"):
                    path.mkdir(parents=True, exist_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch()
        self.original = self.snapshot()

    def tearDown(self):
        shutil.rmtree(self.root)

    def run_script(self, *args):
        r = subprocess.run([sys.executable, str(self.root / "scripts" / "colab_links.py"), *args],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def readmes(self):
        return [self.root / "README.md"] + [self.root / "lessons" / n / "README.md" for n in self.lessons]

    def snapshot(self):
        return {p: p.read_text(encoding="utf-8") for p in self.readmes() + [self.root / "notebooks" / "course.ipynb"]}

    def notebook(self):
        return json.loads((self.root / "notebooks" / "course.ipynb").read_text(encoding="utf-8"))

    def markdown(self):
        return "\n".join("".join(c["source"]) for c in self.notebook()["cells"] if c["cell_type"] == "markdown")

    def course_repo(self):
        code = "\n".join("".join(c["source"]) for c in self.notebook()["cells"] if c["cell_type"] == "code")
        return re.findall(r'^COURSE_REPO = "([^"]*)"', code, re.M)

    def test_no_address_no_badge(self):
        rc, out = self.run_script("--check")
        self.assertEqual(rc, 0, out)
        self.assertIn("no badges", out)
        self.assertEqual(self.course_repo(), [""])
        for text in self.original.values():
            self.assertNotIn("colab.research.google.com", text)
            self.assertNotIn("YOUR-GITHUB-ORG", text)

    def test_set_puts_the_badges_back_and_unset_takes_them_out(self):
        rc, out = self.run_script("--set", "alice/shared-memory-course")
        self.assertEqual(rc, 0, out)
        badge = BADGE + "(" + LINK.format("alice/shared-memory-course") + ")"
        for path in self.readmes():
            lines = path.read_text(encoding="utf-8").split("\n")
            self.assertTrue(lines[0].startswith("# "), path)
            self.assertEqual(lines[1:4], ["", badge, ""], f"{path}: the badge is not just under the title")
            self.assertEqual(sum(badge in l for l in lines), 1, path)
        lesson = (self.root / "lessons" / self.lessons[0] / "README.md").read_text(encoding="utf-8")
        self.assertIn("No NVIDIA GPU? [Running the course]", lesson)  # kept beside the badge
        self.assertEqual(self.course_repo(), ["alice/shared-memory-course"])
        self.assertIn(badge, self.markdown())
        rc, out = self.run_script("--check")
        self.assertEqual(rc, 0, out)
        self.assertIn("the notebook clones alice/shared-memory-course", out)

        set_once = self.snapshot()
        self.assertEqual(self.run_script("--set", "alice/shared-memory-course")[0], 0)
        self.assertEqual(self.snapshot(), set_once, "a second --set changed something")
        self.assertEqual(self.run_script("--set", "bob/course")[0], 0)
        for path in self.readmes():
            text = path.read_text(encoding="utf-8")
            self.assertEqual(text.count("colab.research.google.com/github/"), 1, path)
            self.assertIn(LINK.format("bob/course"), text)
        self.assertEqual(self.course_repo(), ["bob/course"])
        self.assertEqual(self.run_script("--check")[0], 0)

        rc, out = self.run_script("--unset")
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.snapshot(), self.original, "--unset did not give back the files as they were")
        self.assertEqual(self.run_script("--check")[0], 0)

    def test_check_fails_between_the_states(self):
        readme = self.root / "README.md"
        placeholder = BADGE + "(" + LINK.format("YOUR-GITHUB-ORG/shared-memory-course") + ")"
        cases = {
            "a placeholder badge": lambda: readme.write_text(placeholder + "\n" + self.original[readme]),
            "a badge without an address": lambda: readme.write_text(
                self.original[readme].replace("\n", "\n\n" + BADGE + "(" + LINK.format("alice/course") + ")\n", 1)),
        }
        for name, damage in cases.items():
            with self.subTest(name):
                damage()
                rc, out = self.run_script("--check")
                self.assertEqual(rc, 1, out)
                self.assertIn("FAILED: README.md:", out)
                readme.write_text(self.original[readme])
        self.assertEqual(self.run_script("--set", "alice/course")[0], 0)
        lesson = self.readmes()[1]
        good = lesson.read_text(encoding="utf-8")
        for name, text in {"a README without its badge": self.original[lesson],
                           "a link to another repository": good.replace("alice/course", "carol/course"),
                           "a link to another branch": good.replace("/blob/main/", "/blob/dev/")}.items():
            with self.subTest(name):
                lesson.write_text(text, encoding="utf-8")
                rc, out = self.run_script("--check")
                self.assertEqual(rc, 1, out)
                self.assertIn(f"FAILED: lessons/{self.lessons[0]}/README.md:", out)
        lesson.write_text(good, encoding="utf-8")
        self.assertEqual(self.run_script("--check")[0], 0)

    def test_set_refuses_what_is_not_an_address(self):
        for bad in ("YOUR-GITHUB-ORG/shared-memory-course", "no-slash", "a/b/c"):
            with self.subTest(bad):
                rc, out = self.run_script("--set", bad)
                self.assertNotEqual(rc, 0)
                self.assertEqual(self.snapshot(), self.original)


if __name__ == "__main__":
    unittest.main()
