#!/usr/bin/env python3
"""site.build_refuses_bad_links: build_site.py must stop, naming the page and the link, when a
README links to a file or a folder that is not there, instead of building a site with a dead link.
Each case is a small fake course (the pages the site always holds, one of them with the bad link).

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
]


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
    if failures:
        return 1
    print(f"OK: build_site.py refused all {len(CASES)} bad links")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
