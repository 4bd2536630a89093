#!/usr/bin/env python3
"""Builds the course site from the course's own files (site/README.md says what goes in).

    build_site.py --models build/site/explorer_models.js --work build/site/stage --out build/site/html

Stages, under --work, the pages MkDocs needs, taken from the repository at build time (nothing
here is a second copy of their text): the top README, every lesson's and exercise's README, the
results README, the charts, a page for every source or log file a README links to, and the two
explorers; with them every page a README links to (a lesson's notes.md) and every image it shows
(a lesson's figures/*.svg). Links are rewritten only where a static site needs it: a link to a folder goes to its
README, a link to a source file to that file's page. Then `mkdocs build --strict`, which fails on
any link to a page that does not exist, writes the site to --out.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SITE = os.path.join(ROOT, "site")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import quote_results  # noqa: E402  (a measured figure shown as the READMEs show it)

# Pages always in the site (each also reachable by links from the top README).
ENTRY_PAGES = ["README.md", "exercises/README.md", "site/README.md",
               "site/explorers/sectors.md", "site/explorers/banks.md"]
IMAGE_EXT = {".png", ".svg", ".jpg", ".jpeg", ".gif"}
SOURCE_LANG = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".hpp": "cpp", ".h": "c", ".cl": "c",
               ".py": "python", ".sh": "bash", ".cmake": "cmake", ".txt": "text", ".csv": "text",
               ".json": "json", ".yml": "yaml"}
EXTERNAL_IMAGE = re.compile(r"!\[([^\]]*)\]\((?:https?:)?//[^)\s]+\)")
LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\()([^)\s]+)(\))")  # alt text may hold [..]


class SiteError(Exception):
    pass


DETAILS = re.compile(r"^( *)<details>\s*(?:<summary>(.*?)</summary>)?(.*)$")
SUMMARY = re.compile(r"^\s*<summary>(.*?)</summary>(.*)$")


def fold_details(lines):
    """Each `<details><summary>T</summary> ... </details>` (a self-check's answer, an exercise's
    hint) as a collapsible block that MkDocs renders as GitHub does, inside a numbered list too:
    `??? question "T"` and the content indented under it (pymdownx.details). Python-Markdown leaves
    raw HTML inside a list item as inline text, showing the tags and not the Markdown between them.
    A block without its `</details>` stays as it is."""
    out, i, fence = [], 0, False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else DETAILS.match(line)
        if not m:
            out.append(line)
            i += 1
            continue
        indent, title, rest, j = len(m.group(1)), m.group(2), m.group(3), i + 1
        if title is None:  # <summary> on a line of its own
            nxt = next((k for k in range(i + 1, len(lines)) if lines[k].strip()), None)
            s = SUMMARY.match(lines[nxt]) if nxt is not None else None
            if s:
                title, rest, j = s.group(1), s.group(2), nxt + 1
        first = rest.split("</details>")[0].strip()  # text on the <summary> line itself
        body, closed, inner_fence = [], "</details>" in rest, False
        if not closed:
            while j < len(lines):
                text = lines[j]
                j += 1
                if text.lstrip().startswith("```"):
                    inner_fence = not inner_fence
                if not inner_fence and "</details>" in text:
                    body.append(text[:text.index("</details>")])
                    closed = True
                    break
                body.append(text)
        if not closed:
            out.append(line)
            i += 1
            continue
        level = 0 if indent == 0 else -(-indent // 4) * 4  # list content: 4 spaces for Python-Markdown
        pad = " " * (level + 4)
        if out and out[-1].strip():
            out.append("")
        out += [" " * level + '??? question "' + (title or "Details").strip().replace('"', "&quot;") + '"', ""]
        if first:
            out.append(pad + first)
        while body and not body[0].strip():
            body.pop(0)
        for b in body:
            strip = min(indent, len(b) - len(b.lstrip(" ")))
            out.append(pad + b[strip:] if b.strip() else "")
        while out and not out[-1].strip():
            out.pop()
        out.append("")
        i = j
    return out


LIST_ITEM = re.compile(r"^ *(?:[-*+]|\d+[.)]) +\S")


def blank_before_lists(lines):
    """A blank line before each list that follows a paragraph line directly ("In `main.cu`:" and
    then "- ..."). GitHub (CommonMark) starts a list there; Python-Markdown needs the blank line and
    otherwise prints the items as one run-on paragraph. Lines inside a list (items, their lazy
    continuations) and inside code fences are left as they are."""
    out, fence, in_list = [], False, False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and LIST_ITEM.match(line):
            prev = out[-1] if out else ""
            if prev.strip() and not in_list and not prev.lstrip().startswith(("|", "#", "<", "```")):
                out.append("")
            in_list = True
        elif not fence and out and not out[-1].strip() and line.strip() and not line.startswith(" "):
            in_list = False  # a paragraph after a blank line ends the list
        out.append(line)
    return out


def split_anchor(target):
    path, sep, anchor = target.partition("#")
    return path, sep + anchor


def is_local(target):
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith("#") and not target.startswith("/")


class Stager:
    def __init__(self, docs):
        self.docs = docs
        self.pages, self.queue, self.files = set(), [], set()

    def add_page(self, rel):
        if rel not in self.pages:
            if not os.path.isfile(os.path.join(ROOT, rel)):
                raise SiteError(f"page {rel} not found")
            self.pages.add(rel)
            self.queue.append(rel)

    def resolve(self, page, target):
        """Where a link of `page` points in the site, queueing whatever it needs."""
        path, anchor = split_anchor(target)
        rel = os.path.normpath(os.path.join(os.path.dirname(page), path))
        full = os.path.join(ROOT, rel)
        if rel.startswith(".."):
            raise SiteError(f"{page}: link {target} leaves the repository")
        if os.path.isdir(full):
            if not os.path.isfile(os.path.join(full, "README.md")):
                raise SiteError(f"{page}: link {target} is a folder without a README.md")
            rel = os.path.join(rel, "README.md")
            path = os.path.relpath(rel, os.path.dirname(page))
        elif not os.path.isfile(full):
            raise SiteError(f"{page}: link {target} points at nothing ({rel})")
        ext = os.path.splitext(rel)[1].lower()
        if ext == ".md":
            self.add_page(rel)
        elif ext in IMAGE_EXT:
            self.files.add(rel)
        else:  # a source file or a log: its own page, beside a copy of the file itself
            self.files.add(rel)
            self.source_page(rel)
            path += ".md"
            if re.fullmatch(r"#L\d+(?:-L\d+)?", anchor):
                anchor = ""  # (GitHub's line anchor: the site's source page has none, so it opens at the top)
        return path + anchor

    def source_page(self, rel):
        out = os.path.join(self.docs, rel + ".md")
        if os.path.exists(out):
            return
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lang = SOURCE_LANG.get(os.path.splitext(rel)[1].lower(), "text")
        fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(f"# {rel}\n\n[The file itself]({os.path.basename(rel)}) · "
                    f"part of the course's repository, shown here as it was when the site was built.\n\n"
                    f"{fence}{lang}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}\n")

    def stage_page(self, rel):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        folder = os.path.dirname(rel)
        if re.match(r"^(lessons|exercises)/\d\d_[^/]+(/opencl|/going_further)?$", folder):
            # A lesson's page ends with links to every file of its folder, each shown as a page.
            files = sorted(f for f in os.listdir(os.path.join(ROOT, folder))
                           if f != "README.md" and os.path.isfile(os.path.join(ROOT, folder, f)))
            lines += ["", "---", "", "**The files of this folder:** " + " · ".join(f"[`{f}`]({f})" for f in files)]
        out, in_fence = [], False
        for line in blank_before_lists(fold_details(lines)):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            if not in_fence:
                # An image from another site (a badge) becomes its text: the site loads nothing from
                # outside itself, so it works offline and from disk.
                line = EXTERNAL_IMAGE.sub(lambda m: m.group(1), line)
                line = LINK.sub(lambda m: m.group(1) + (self.resolve(rel, m.group(2)) if is_local(m.group(2))
                                                        else m.group(2)) + m.group(3), line)
                # GitHub renders Markdown inside <details>; Python-Markdown does when asked to.
                line = line.replace("<details>", '<details markdown="1">')
            out.append(line)
        dest = os.path.join(self.docs, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write("\n".join(out))

    def run(self, entries):
        for rel in entries:
            self.add_page(rel)
        while self.queue:
            self.stage_page(self.queue.pop(0))
        for rel in sorted(self.files):
            dest = os.path.join(self.docs, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, rel), dest)


def measurements(csv_path, ncu_path, shown=lambda row, column, d: quote_results.fixed(row[column], d)):
    """What the H200 measured, for the explorers: results.csv rows of lessons 01 and 06, and the
    probe table of lesson 06's Nsight Compute run (model vs counted wavefronts). Each figure also
    as text (rate_text, percent_text), rounded as the READMEs round it (`shown`: quote_results'
    rounding, from what the lesson printed), so that a page never shows 1623.0 for a 1622.9."""
    data = {"gpu": "", "lesson01": {}, "lesson06": {}, "strides": {}, "probes": {}}
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["lesson"] not in ("01_naive_transpose", "06_bank_conflicts", "06_bank_conflicts_going_further"):
                continue
            data["gpu"] = row["gpu"]
            stride = row["problem"].startswith("stride microbenchmark")
            entry = {"rate": float(row["rate"]), "unit": row["unit"], "percent": float(row["percent_of_ceiling"]),
                     "problem": row["problem"], "rate_text": shown(row, "rate", 2 if stride else 1),
                     "percent_text": shown(row, "percent_of_ceiling", 1)}
            if row["lesson"] == "01_naive_transpose":
                data["lesson01"][row["kernel"]] = entry
            elif row["problem"].startswith("stride microbenchmark"):
                m = re.match(r"s\[lane \* (\d+)\]", row["kernel"])
                if m:
                    data["strides"][m.group(1)] = entry
            else:
                data["lesson06"][row["kernel"]] = entry
    header = None
    with open(ncu_path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| probe |"):
                header = cells
            elif header and line.startswith("| ") and not line.startswith("| ---") and len(cells) == len(header):
                if header[2].startswith("ld wavefronts"):  # ncu_check.py: | probe | width | model | ncu | model | ncu | ...
                    wavefronts, conflicts = cells[3], cells[5]
                else:  # the table before lesson 06's split: named columns
                    row = dict(zip(header, cells))
                    wavefronts, conflicts = row["ncu ld wavefronts"], row["ncu ld conflicts"]
                data["probes"][cells[0]] = {"ncu_wavefronts": int(wavefronts), "ncu_conflicts": int(conflicts)}
    if not data["lesson01"] or not data["lesson06"] or not data["probes"]:
        raise SiteError(f"no lesson 01/06 rows in {csv_path} or no probe table in {ncu_path}")
    return data


def main():
    global ROOT  # --root: another checkout (the tests use small fake ones)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", required=True, help="explorer_models.js built by em++")
    ap.add_argument("--work", required=True, help="staging folder (emptied first)")
    ap.add_argument("--out", required=True, help="where the site goes (emptied first)")
    ap.add_argument("--results", default="results/h200", help="results folder the explorers quote")
    ap.add_argument("--root", default=ROOT, help="the course's repository (default: the one holding this script)")
    ap.add_argument("--site-url", default="", help="where the site will be served (e.g. https://you.github.io/course/): "
                    "only the 404 page needs it")
    args = ap.parse_args()
    ROOT = os.path.abspath(args.root)
    try:
        if not os.path.isfile(args.models):
            raise SiteError(f"{args.models} not found (it is built by em++: see site/README.md)")
        work = os.path.abspath(args.work)
        docs = os.path.join(work, "docs")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(docs)
        stager = Stager(docs)
        lessons = sorted(d for d in os.listdir(os.path.join(ROOT, "lessons")) if re.match(r"\d\d_", d))
        entries = ENTRY_PAGES + [f"lessons/{d}/README.md" for d in lessons] + \
            [f"exercises/{d}/README.md" for d in lessons if os.path.isfile(os.path.join(ROOT, "exercises", d, "README.md"))] + \
            [f"results/{g}/README.md" for g in sorted(os.listdir(os.path.join(ROOT, "results")))
             if os.path.isfile(os.path.join(ROOT, "results", g, "README.md"))]
        stager.run(entries)

        explorers = os.path.join(docs, "site", "explorers")  # the pages are staged already; now their scripts
        for name in os.listdir(os.path.join(SITE, "explorers")):
            if not name.endswith(".md"):
                shutil.copyfile(os.path.join(SITE, "explorers", name), os.path.join(explorers, name))
        shutil.copyfile(args.models, os.path.join(explorers, "explorer_models.js"))
        shutil.copytree(os.path.join(SITE, "theme"), os.path.join(work, "theme"))
        results = os.path.join(ROOT, args.results)
        sources, run = quote_results.Sources(ROOT), os.path.relpath(results, os.path.join(ROOT, "results"))
        data = measurements(os.path.join(results, "results.csv"), os.path.join(results, "ncu.txt"),
                            lambda row, column, d: sources.figure(run, row, column, d).text)
        data["source"] = args.results
        with open(os.path.join(explorers, "h200_measured.js"), "w", encoding="utf-8") as f:
            # A script, not JSON fetched at run time: pages opened from file:// cannot fetch.
            f.write(f"// Written by site/build_site.py from {args.results} at build time.\n")
            f.write("window.COURSE_MEASURED = " + json.dumps(data, indent=1) + ";\n")

        with open(os.path.join(SITE, "mkdocs.yml"), encoding="utf-8") as f:
            config = f.read()
        nav = ["nav:", "  - Home: README.md", "  - Lessons:"]
        for d in lessons:
            nav.append(f"    - {d[:2]} {d[3:].replace('_', ' ')}: lessons/{d}/README.md")
            if os.path.isfile(os.path.join(docs, "lessons", d, "notes.md")):  # staged: a README links it
                nav.append(f"    - {d[:2]} notes: lessons/{d}/notes.md")
            if d == "02_shared_transpose":
                nav.append(f"    - 02 in OpenCL: lessons/{d}/opencl/README.md")
            if os.path.isfile(os.path.join(ROOT, "lessons", d, "going_further", "README.md")):
                nav.append(f"    - {d[:2]} going further: lessons/{d}/going_further/README.md")
                if os.path.isfile(os.path.join(docs, "lessons", d, "going_further", "notes.md")):
                    nav.append(f"    - {d[:2]} going further, notes: lessons/{d}/going_further/notes.md")
        nav += ["  - Exercises:", "    - How they work: exercises/README.md"]
        nav += [f"    - {d[:2]} {d[3:].replace('_', ' ')}: exercises/{d}/README.md" for d in lessons
                if os.path.isfile(os.path.join(docs, "exercises", d, "README.md"))]
        nav += ["  - Explorers:", "    - Sectors (lesson 01): site/explorers/sectors.md",
                "    - Banks (lesson 06): site/explorers/banks.md",
                "  - Results:"]
        nav += [f"    - {gpu.upper()}: results/{gpu}/README.md" for gpu in sorted(os.listdir(os.path.join(ROOT, "results")))
                if os.path.isfile(os.path.join(docs, "results", gpu, "README.md"))]
        if os.path.isfile(os.path.join(docs, "results", "README.md")):
            nav.insert(nav.index("  - Results:") + 1, "    - Every GPU: results/README.md")
        for page, title in (("docs/running.md", "Running the course"), ("grading/README.md", "For instructors"),
                            ("docs/maintainers.md", "For maintainers")):
            if os.path.isfile(os.path.join(docs, page)):
                nav.append(f"  - {title}: {page}")
        nav += ["  - About this site: site/README.md"]
        if args.site_url:
            nav.append(f"site_url: {json.dumps(args.site_url)}")
        with open(os.path.join(work, "mkdocs.yml"), "w", encoding="utf-8") as f:
            f.write(config + "\n" + "\n".join(nav) + "\n")
        out = os.path.abspath(args.out)
        shutil.rmtree(out, ignore_errors=True)
        r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                            "-f", os.path.join(work, "mkdocs.yml"), "-d", out])
        if r.returncode != 0:
            raise SiteError("mkdocs build failed (see above)")
        with open(os.path.join(out, ".nojekyll"), "w"):
            pass  # GitHub Pages: serve the folder as it is
        print(f"site: {out}/index.html ({len(stager.pages)} pages from the course, {len(stager.files)} files)")
        return 0
    except (SiteError, OSError) as e:
        print(f"build_site.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
