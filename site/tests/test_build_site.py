#!/usr/bin/env python3
"""site.build_refuses_bad_links: build_site.py must stop, naming the page and the link, when a
README links to a file or a folder that is not there, instead of building a site with a dead link.
Each case is a small fake course (the pages the site always holds, one of them with the bad link).
Also: a self-check's folded answers (<details> inside a numbered list) become blocks MkDocs folds
and renders (fold_details), as GitHub shows them.

    test_build_site.py <build_site.py> <scratch folder>
"""
import os
import shutil
import subprocess
import sys

PAGES = ["README.md", "exercises/README.md", "results/h200/README.md", "site/README.md",
         "site/explorers/sectors.md", "site/explorers/banks.md", "lessons/01_a/README.md"]
CASES = [  # (link in lessons/01_a/README.md, what the error must say)
    ("[the code](main.cu)", "lessons/01_a/README.md: link main.cu points at nothing"),
    ("[a folder](../../scripts/)", "lessons/01_a/README.md: link ../../scripts/ is a folder without a README.md"),
    ("![a chart](../../results/h200/plots/none.png)", "link ../../results/h200/plots/none.png points at nothing"),
    ("[out](../../../elsewhere.md)", "leaves the repository"),
    ("![a figure of the idea](figures/none.svg)", "link figures/none.svg points at nothing"),
    ("[notes](notes.md)", "link notes.md points at nothing"),
]

CHECK_YOURSELF = """## Check yourself

1. Predict how many wavefronts?
   <details><summary>Answer</summary>

   Two: lanes `l` and `l + 16` share a bank.
   </details>
2. One line?
   <details><summary>Answer</summary>Thirty-two.</details>

<details><summary>Hint 1</summary>

Look at the *launcher*.
</details>
"""


def check_fold(build_site):
    import importlib.util
    import markdown
    spec = importlib.util.spec_from_file_location("build_site", build_site)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    html = markdown.markdown("\n".join(module.fold_details(CHECK_YOURSELF.split("\n"))),
                             extensions=["md_in_html", "pymdownx.details"])
    want = ['<details class="question">\n<summary>Answer</summary>\n<p>Two: lanes <code>l</code> and <code>l + 16</code> share a bank.</p>\n</details>\n</li>',
            '<details class="question">\n<summary>Answer</summary>\n<p>Thirty-two.</p>\n</details>\n</li>\n</ol>',
            '<details class="question">\n<summary>Hint 1</summary>\n<p>Look at the <em>launcher</em>.</p>\n</details>']
    missing = [w for w in want if w not in html]
    if html.count("<li>") != 2 or missing or "&lt;" in html:
        print(f"FAIL: folded answers render as\n{html}\nmissing: {missing}")
        return 1
    print("ok: folded answers in a numbered list render as folded blocks, the list unbroken")
    return 0


LIST_AFTER_LINE = """In `main.cu`:
- `transpose_naive`, one side strided;
  its lazy continuation
- `copy_kernel`, the ceiling.

```
text:
- not a list, a fenced line
```
"""


def check_lists(build_site):
    """A list right under a paragraph line: GitHub starts the list, and so must the site (Python-Markdown
    needs a blank line before it, which blank_before_lists adds)."""
    import importlib.util
    import markdown
    spec = importlib.util.spec_from_file_location("build_site", build_site)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    staged = module.blank_before_lists(LIST_AFTER_LINE.split("\n"))
    html = markdown.markdown("\n".join(staged), extensions=["fenced_code"])
    if html.count("<li>") != 2 or "- not a list" not in html or len(staged) != len(LIST_AFTER_LINE.split("\n")) + 1:
        print(f"FAIL: a list under a paragraph line renders on the site as\n{html}")
        return 1
    print("ok: a list right under a paragraph line renders as a list on the site, fences untouched")
    return 0


def main(build_site, scratch):
    failures = 0
    for number, (link, expected) in enumerate(CASES):
        root = os.path.join(scratch, f"case{number}")
        shutil.rmtree(root, ignore_errors=True)
        for page in PAGES:
            os.makedirs(os.path.dirname(os.path.join(root, page)), exist_ok=True)
            with open(os.path.join(root, page), "w") as f:
                f.write("# A page\n\nSee [lesson 01](lessons/01_a/README.md).\n" if page == "README.md" else "# A page\n")
        os.makedirs(os.path.join(root, "scripts"))
        with open(os.path.join(root, "lessons/01_a/README.md"), "a") as f:
            f.write(f"\nA bad link: {link}\n")
        models = os.path.join(root, "models.js")
        open(models, "w").close()
        r = subprocess.run([sys.executable, build_site, "--root", root, "--models", models,
                            "--work", os.path.join(root, "work"), "--out", os.path.join(root, "html")],
                           capture_output=True, text=True)
        ok = r.returncode == 1 and expected in r.stderr and not os.path.exists(os.path.join(root, "html", "index.html"))
        print(f"{'ok' if ok else 'FAIL'}: {link} -> exit {r.returncode}: {r.stderr.strip()}")
        failures += not ok
    failures += check_fold(build_site)
    failures += check_lists(build_site)
    if failures:
        return 1
    print(f"OK: build_site.py refused all {len(CASES)} bad links; folded answers render")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
