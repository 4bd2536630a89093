#!/usr/bin/env python3
"""The "Open in Colab" links of the course, in one command.

  scripts/colab_links.py --check          (a host test) every link is where it should be and agrees
  scripts/colab_links.py --set OWNER/REPO  point every link, and the notebook's clone, at OWNER/REPO

The links sit in README.md and in each lessons/NN_name/README.md, and open
notebooks/course.ipynb from GitHub: https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/course.ipynb.
The course's public address is not known to the repository itself, so until a maintainer sets it
they name the placeholder YOUR-GITHUB-ORG/shared-memory-course; the notebook's COURSE_REPO (what
it clones) carries the same name, and --set changes all of them at once.
--check fails when a README lacks its link, when links and COURSE_REPO disagree, when a link
names another branch or file than the notebook, or when a relative link in the notebook's text
points at a file or folder that does not exist.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK = "notebooks/course.ipynb"
LINK = re.compile(r"https://colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/blob/([\w.-]+)/([\w./-]+)")
REPO_LINE = re.compile(r'^(COURSE_REPO = ")([\w.-]+/[\w.-]+)(")', re.M)


def readmes():
    return [ROOT / "README.md"] + sorted(ROOT.glob("lessons/[0-9][0-9]_*/README.md"))


def notebook_cells():
    return json.loads((ROOT / NOTEBOOK).read_text())["cells"]


def check():
    problems = []
    nb_path = ROOT / NOTEBOOK
    if not nb_path.is_file():
        return [f"{NOTEBOOK} does not exist"]
    cells = notebook_cells()
    sources = ["".join(c["source"]) for c in cells]
    repos = [m.group(2) for s in sources for m in REPO_LINE.finditer(s)]
    if len(repos) != 1:
        return [f"{NOTEBOOK}: expected one COURSE_REPO = \"OWNER/REPO\" line, found {len(repos)}"]
    repo = repos[0]
    files = readmes() + [nb_path]
    for f in files:
        text = "\n".join(s for c, s in zip(cells, sources) if c["cell_type"] == "markdown") if f == nb_path else f.read_text()
        links = LINK.findall(text)
        if not links:
            problems.append(f"{f.relative_to(ROOT)}: no Open-in-Colab link")
        for owner_repo, branch, path in links:
            if owner_repo != repo:
                problems.append(f"{f.relative_to(ROOT)}: link names {owner_repo}, the notebook clones {repo}")
            if branch != "main" or path != NOTEBOOK:
                problems.append(f"{f.relative_to(ROOT)}: link opens {branch}/{path}, not main/{NOTEBOOK}")
    # Relative links in the notebook's text, resolved from notebooks/ (as GitHub and Jupyter do).
    for c, s in zip(cells, sources):
        if c["cell_type"] != "markdown":
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", s):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (nb_path.parent / target.split("#")[0]).exists():
                problems.append(f"{NOTEBOOK}: relative link {target} points at nothing")
    print(f"checked {len(files)} files; the notebook clones {repo}")
    return problems


def set_repo(repo):
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        sys.exit(f"colab_links.py: '{repo}' is not OWNER/REPO")
    for f in readmes() + [ROOT / NOTEBOOK]:
        text = f.read_text()
        new = LINK.sub(lambda m: f"https://colab.research.google.com/github/{repo}/blob/{m.group(2)}/{m.group(3)}", text)
        if f.suffix == ".ipynb":  # the JSON text: COURSE_REPO = \"OWNER/REPO\"
            new = re.sub(r'(COURSE_REPO = \\")[\w.-]+/[\w.-]+(\\")', lambda m: m.group(1) + repo + m.group(2), new)
        if new != text:
            f.write_text(new)
            print(f"updated {f.relative_to(ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--check":
        found = check()
        for p in found:
            print("FAILED:", p)
        sys.exit(1 if found else 0)
    if len(sys.argv) == 3 and sys.argv[1] == "--set":
        set_repo(sys.argv[2])
        sys.exit(0)
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    sys.exit(2)
