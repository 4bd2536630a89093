#!/usr/bin/env python3
"""The "Open in Colab" badges of the course, in one command.

  scripts/colab_links.py --check            (CTest notebook.links) the badges and the notebook agree
  scripts/colab_links.py --set OWNER/REPO   put a badge under the title of README.md, of each
                                            lessons/NN_name/README.md and of the notebook, opening
                                            notebooks/course.ipynb from github.com/OWNER/REPO, and set
                                            the notebook's COURSE_REPO (what it clones) to OWNER/REPO
  scripts/colab_links.py --unset            take the badges out and empty COURSE_REPO again

A badge links https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/course.ipynb,
which only works once the course is public at that address; the repository does not know its own
address, so until a maintainer runs --set there is no badge at all, COURSE_REPO is "" (the notebook
then says how to get the course) and the READMEs' "No NVIDIA GPU?" lines point at docs/running.md.
--check accepts either state and fails on anything between: a badge or Colab link while COURSE_REPO
is empty, a README without its badge once it is set, a link naming another repository, branch or
file than the notebook, any link to a placeholder address (YOUR-GITHUB-ORG), or a relative link in
the notebook's text that points at a file or folder that does not exist.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK = "notebooks/course.ipynb"
PLACEHOLDER = "YOUR-GITHUB-ORG"
LINK = re.compile(r"https://colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/blob/([\w.-]+)/([\w./-]+)")
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
REPO_LINE = re.compile(r'^COURSE_REPO = "([^"]*)"', re.M)
OWNER_REPO = re.compile(r"[\w.-]+/[\w.-]+")


def badge(repo):
    return f"[![Open In Colab]({BADGE_IMAGE})](https://colab.research.google.com/github/{repo}/blob/main/{NOTEBOOK})"


def is_badge_line(line):
    return re.fullmatch(re.escape(f"[![Open In Colab]({BADGE_IMAGE})](") + LINK.pattern + r"\)", line.strip()) is not None


def readmes(root):
    return [root / "README.md"] + sorted(root.glob("lessons/[0-9][0-9]_*/README.md"))


def load_notebook(root):
    return json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))


def save_notebook(root, nb):
    (root / NOTEBOOK).write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def set_source(cell, text):
    cell["source"] = text.splitlines(keepends=True)


def course_repo(nb):
    """The notebook's COURSE_REPO: '' (not configured) or OWNER/REPO; None if it has not one such line."""
    found = [m.group(1) for c in nb["cells"] if c["cell_type"] == "code" for m in REPO_LINE.finditer(source(c))]
    return found[0] if len(found) == 1 else None


def with_badge(text, repo):
    """The Markdown text with its badge line (just under its first `# ` title) for repo, or without
    one (repo None). Other lines are kept as they are."""
    lines, after_badge = [], False
    for line in text.split("\n"):
        if is_badge_line(line):
            after_badge = True
            continue
        if not (after_badge and line.strip() == "" and lines and lines[-1].strip() == ""):
            lines.append(line)  # (a badge taken out leaves one blank line, not two)
        after_badge = False
    if repo:
        title = next((i for i, l in enumerate(lines) if l.startswith("# ")), None)
        if title is None:
            raise SystemExit("colab_links.py: a page without a '# ' title")
        rest = lines[title + 1:]
        lines[title + 1:] = ["", badge(repo)] + ([] if rest and rest[0].strip() == "" else [""]) + rest
    return "\n".join(lines)


def check(root=ROOT):
    problems = []
    nb_path = root / NOTEBOOK
    if not nb_path.is_file():
        return [f"{NOTEBOOK} does not exist"]
    nb = load_notebook(root)
    repo = course_repo(nb)
    if repo is None:
        return [f'{NOTEBOOK}: expected one line COURSE_REPO = "" or COURSE_REPO = "OWNER/REPO" in a code cell']
    if repo and not OWNER_REPO.fullmatch(repo):
        return [f'{NOTEBOOK}: COURSE_REPO = "{repo}" is neither "" nor OWNER/REPO']
    if PLACEHOLDER in repo:
        problems.append(f"{NOTEBOOK}: COURSE_REPO names the placeholder {repo}: leave it \"\" until the course has an address")
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    pages = [(f.relative_to(root), f.read_text(encoding="utf-8")) for f in readmes(root)] + [(pathlib.Path(NOTEBOOK), markdown)]
    for name, text in pages:
        links = LINK.findall(text)
        if PLACEHOLDER in text:
            problems.append(f"{name}: names {PLACEHOLDER}, an address that does not exist")
        if not repo:
            if links or BADGE_IMAGE in text:
                problems.append(f"{name}: an Open-in-Colab badge or link, but the course has no address yet "
                                f"(COURSE_REPO is empty): scripts/colab_links.py --unset, or --set OWNER/REPO")
            continue
        badges = [l for l in text.split("\n") if is_badge_line(l)]
        if len(badges) != 1:
            problems.append(f"{name}: {len(badges)} Open-in-Colab badge lines, expected 1 under the title "
                            f"(scripts/colab_links.py --set {repo})")
        for owner_repo, branch, path in links:
            if owner_repo != repo:
                problems.append(f"{name}: a Colab link names {owner_repo}, the notebook clones {repo}")
            if branch != "main" or path != NOTEBOOK:
                problems.append(f"{name}: a Colab link opens {branch}/{path}, not main/{NOTEBOOK}")
    # Relative links in the notebook's text, resolved from notebooks/ (as GitHub and Jupyter do).
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (nb_path.parent / target.split("#")[0]).exists():
            problems.append(f"{NOTEBOOK}: relative link {target} points at nothing")
    print(f"checked {len(pages)} pages; " + (f"the notebook clones {repo}, every page has its badge" if repo else
                                               "no course address configured (COURSE_REPO is empty): no badges"))
    return problems


def set_repo(repo, root=ROOT):
    """Badges and COURSE_REPO for repo (OWNER/REPO), or none of them (repo '')."""
    if repo and (not OWNER_REPO.fullmatch(repo) or PLACEHOLDER in repo):
        sys.exit(f"colab_links.py: '{repo}' is not the course's OWNER/REPO")
    for f in readmes(root):
        text = f.read_text(encoding="utf-8")
        new = with_badge(text, repo or None)
        if new != text:
            f.write_text(new, encoding="utf-8")
            print(f"updated {f.relative_to(root)}")
    nb = load_notebook(root)
    before = json.dumps(nb)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            set_source(cell, REPO_LINE.sub(lambda m: f'COURSE_REPO = "{repo}"', source(cell)))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    set_source(first, with_badge(source(first), repo or None))
    if json.dumps(nb) != before:
        save_notebook(root, nb)
        print(f"updated {NOTEBOOK}")


def main(argv):
    if argv == ["--check"]:
        found = check()
        for p in found:
            print("FAILED:", p)
        return 1 if found else 0
    if len(argv) == 2 and argv[0] == "--set":
        set_repo(argv[1])
        return 0
    if argv == ["--unset"]:
        set_repo("")
        return 0
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
