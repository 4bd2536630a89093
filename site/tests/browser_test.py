#!/usr/bin/env python3
"""site.browser: the built course site in headless Chromium.

  1. every page, opened from the plain folder (file://), loads without a console error, and every
     link, image, script and stylesheet it names inside the site exists (and so does the #anchor);
  2. on each explorer, choosing a pattern (from the list, and by typing a custom one) shows the
     sectors / wavefronts that lesson 01's and 06's host checks expect, and the same numbers the
     native build of the models prints (--native);
  3. a lesson page shows its idea figures (lessons/NN/figures/*.svg): each loaded, the first one
     scrolled into view for a screenshot;
  4. served over HTTP (as on GitHub Pages), search finds a lesson.
It saves a screenshot of each explorer and of that lesson's figure in --screenshots
(scripts/site.sh --screenshots copies them into site/screenshots/ for site/README.md).
"""
import argparse
import csv
import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def console_errors(driver):
    return [e["message"] for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def start_browser(args):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1700"):
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(args.chromedriver), options=options)


# ---------------------------------------------------------------- 1. pages and links
LINKS_JS = """
return [...document.querySelectorAll('a[href], img[src], script[src], link[href]')].map(
  e => [e.tagName, e.href || e.src, e.tagName === 'IMG' ? e.complete && e.naturalWidth > 0 : true]);
"""


def has_anchor(path, anchor, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8", errors="replace") as f:
            cache[path] = set(re.findall(r'id="([^"]+)"', f.read()))
    return urllib.parse.unquote(anchor) in cache[path]


def check_pages(driver, site):
    # 404.html is for web servers (its links start at the server's root): check_search opens it.
    pages = sorted(os.path.join(d, f) for d, _, files in os.walk(site) for f in files
                   if f.endswith(".html") and os.path.join(d, f) != os.path.join(site, "404.html"))
    checked_links = 0
    for page in pages:
        rel = os.path.relpath(page, site)
        driver.get("file://" + page)
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        if rel in ("site/explorers/sectors.html", "site/explorers/banks.html"):
            wait_ready(driver, rel)
        for message in console_errors(driver):
            fail(f"{rel}: console: {message}")
        for tag, url, loaded in driver.execute_script(LINKS_JS):
            if not url.startswith("file://"):
                if tag != "A":  # an image, script or stylesheet from elsewhere: the site must not need one
                    fail(f"{rel}: <{tag.lower()}> loads {url} from outside the site")
                continue  # a link out of the site (https://...): not ours to check here
            checked_links += 1
            parts = urllib.parse.urlsplit(url)
            target = urllib.parse.unquote(parts.path)
            if not os.path.isfile(target):
                fail(f"{rel}: <{tag.lower()}> points at a missing file: {os.path.relpath(target, site)}")
            elif parts.fragment and target.endswith(".html") and not has_anchor(target, parts.fragment):
                fail(f"{rel}: link to {os.path.relpath(target, site)}#{parts.fragment}: no such anchor")
            if not loaded:
                fail(f"{rel}: image did not load: {url}")
    print(f"pages: {len(pages)} opened from file://, {checked_links} links and resources inside the site checked")
    if len(pages) < 20:
        fail(f"only {len(pages)} pages in {site}")


# ---------------------------------------------------------------- 2. the explorers
def wait_ready(driver, what):
    try:
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("const e = document.querySelector('[data-explorer]'); return e && e.dataset.ready"))
    except TimeoutException:
        fail(f"{what}: the explorer never finished loading its WebAssembly model")


def native_dump(program):
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    dump = {}
    for line in out.splitlines():
        m = re.match(r"^(.*?): (?=\w+=|error )(.*)$", line)  # pattern names may hold ": " themselves
        if m:
            dump[m.group(1)] = dict(re.findall(r"(\w+)=(\S+)", m.group(2)))
    return dump


def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text.strip()


def set_custom(driver, prefix, elem, stride, offset):
    Select(driver.find_element(By.ID, prefix + "-pattern")).select_by_value("custom")
    Select(driver.find_element(By.ID, prefix + "-elem")).select_by_value(str(elem))
    for name, value in (("stride", stride), ("offset", offset)):
        box = driver.find_element(By.ID, f"{prefix}-{name}")
        box.clear()
        box.send_keys(str(value))


def h200_rate(lesson, kernel):
    """The rate the committed H200 run (results/h200/results.csv, what the site is built from by
    default) gives a kernel, as the READMEs and the explorer print it: one decimal, as the lesson
    printed it (scripts/quote_results.py), not the CSV's float formatted again."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    path = os.path.join(root, "results", "h200", "results.csv")
    sys.path.insert(0, os.path.join(root, "scripts"))
    import quote_results
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["lesson"] == lesson and row["kernel"] == kernel:
                return quote_results.Sources(root).figure("h200", row, "rate", 1).text
    fail(f"no {lesson} / {kernel} row in {path}")
    return "(none)"


def check_sectors(driver, site, native, shots):
    driver.get("file://" + os.path.join(site, "site", "explorers", "sectors.html"))
    wait_ready(driver, "sector explorer")
    # (pattern from the list, or custom element size / stride / offset) -> what check.cu expects
    cases = [
        ("transpose_naive_strided_reads: the warp's load", 32),   # sector model of the lesson's kernels
        ("transpose_naive_strided_reads: the warp's store", 4),
        ("transpose_naive_strided_writes: the warp's store", 32),
        ("copy_kernel: the warp's load", 4),
        ((4, 1, 4), 5),    # shifted by one float: straddles one extra sector
        ((8, 1, 0), 8),    # 32 doubles = 256 bytes
        ((4, 0, 100), 1),  # everybody reads the same word
    ]
    for pattern, expected in cases:
        if isinstance(pattern, str):
            Select(driver.find_element(By.ID, "sector-pattern")).select_by_visible_text(pattern)
            key = pattern
        else:
            set_custom(driver, "sector", *pattern)
            key = "elem={} stride={} offset={}".format(*pattern)
        shown = text(driver, "sector-count")
        want_native = native.get("sector " + key, {}).get("sectors")
        print(f"sectors, {key}: page {shown}, native {want_native}, check.cu {expected}")
        if shown != str(expected) or shown != want_native:
            fail(f"sector explorer, {key}: the page shows {shown} sectors; native model {want_native}, check.cu {expected}")
    driver.get("file://" + os.path.join(site, "site", "explorers", "sectors.html"))  # fresh controls for the screenshot
    wait_ready(driver, "sector explorer")
    Select(driver.find_element(By.ID, "sector-pattern")).select_by_visible_text(cases[0][0])
    rate = h200_rate("01_naive_transpose", "transpose_naive_strided_reads")  # what the page must quote
    if "transpose_naive_strided_reads" not in text(driver, "sector-measured-note") or \
            rate not in driver.find_element(By.CSS_SELECTOR, "#sector-measured tr.explorer-current").text:
        fail("sector explorer: the H200 measurement of transpose_naive_strided_reads is not shown beside its pattern")
    for message in console_errors(driver):
        fail(f"sector explorer: console: {message}")
    driver.save_screenshot(os.path.join(shots, "sectors.png"))


def check_banks(driver, site, native, shots):
    driver.get("file://" + os.path.join(site, "site", "explorers", "banks.html"))
    wait_ready(driver, "bank explorer")
    # (probe name, or custom width / stride / offset) -> (wavefronts, conflicts) that check.cu expects
    cases = [
        ("tile32x32_column", (32, 31)),      # unpadded tile column: one bank
        ("tile32x33_column", (1, 0)),        # padded
        ("tile32x32_xor_column", (1, 0)),    # swizzled
        ("double32x32_column", (32, 30)),    # 8-byte, unpadded
        ("double32x33_column", (2, 0)),      # 8-byte, padded
        ((8, 2, 0), (4, 2)),                 # every other double
        ((16, 0, 0), (2, 0)),                # 16-byte broadcast
        ((4, 33, 0), (1, 0)),
    ]
    names = [o.text for o in Select(driver.find_element(By.ID, "bank-pattern")).options]
    for pattern, (waves, conflicts) in cases:
        if isinstance(pattern, str):
            option = next((n for n in names if n.startswith(pattern + " (")), None)
            if option is None:
                fail(f"bank explorer: no pattern {pattern} in the list")
                continue
            Select(driver.find_element(By.ID, "bank-pattern")).select_by_visible_text(option)
            key = pattern
        else:
            set_custom(driver, "bank", *pattern)
            key = "width={} stride={} offset={}".format(*pattern)
        shown = (text(driver, "bank-wavefronts"), text(driver, "bank-conflicts"))
        n = native.get("bank " + key, {})
        want_native = (n.get("wavefronts"), n.get("conflicts"))
        print(f"banks, {key}: page {shown}, native {want_native}, check.cu {(waves, conflicts)}")
        if shown != (str(waves), str(conflicts)) or shown != want_native:
            fail(f"bank explorer, {key}: the page shows {shown}; native model {want_native}, check.cu {(waves, conflicts)}")
        rows = driver.find_elements(By.CSS_SELECTOR, "#bank-map tr")
        if len(rows) != 33:
            fail(f"bank explorer, {key}: the map has {len(rows)} rows, not a header and 32 lanes")
    # Bad input: the model's own error (a C++ exception, caught in models.cpp), shown on the page.
    set_custom(driver, "bank", 8, 1, 4)
    if "not aligned" not in text(driver, "bank-error") or driver.find_element(By.ID, "bank-result").is_displayed():
        fail(f"bank explorer: an 8-byte access at byte 4 shows '{text(driver, 'bank-error')}', not the model's error")
    set_custom(driver, "bank", 8, 1, 8)
    if text(driver, "bank-error") or text(driver, "bank-wavefronts") != native["bank width=8 stride=1 offset=8"]["wavefronts"]:
        fail("bank explorer: after an error, a valid access does not show its wavefronts again")

    driver.get("file://" + os.path.join(site, "site", "explorers", "banks.html"))
    wait_ready(driver, "bank explorer")
    Select(driver.find_element(By.ID, "bank-pattern")).select_by_visible_text("tile32x32_column (4-byte)")
    if "counted 32 wavefront" not in text(driver, "bank-measured"):
        fail("bank explorer: the H200's Nsight Compute count is not shown beside tile32x32_column")
    rate = h200_rate("06_bank_conflicts", "tiled 32x32 unpadded")  # the console's 1622.9, not 1623.0
    if f"ran at {rate} GB/s" not in text(driver, "bank-measured"):
        fail(f"bank explorer: the transpose of tile32x32_column is not shown at {rate} GB/s, as lesson 06 printed it")
    for message in console_errors(driver):
        fail(f"bank explorer: console: {message}")
    driver.save_screenshot(os.path.join(shots, "banks.png"))


# ---------------------------------------------------------------- 3. a lesson's idea figure
FIGURES_JS = """
return [...document.querySelectorAll('article img')].filter(i => /\\/figures\\/[^\\/]+\\.svg$/.test(i.src)).map(
  i => [i.src, i.alt, i.complete && i.naturalWidth > 0, i.getBoundingClientRect().width]);
"""
IN_VIEW_JS = """
const r = arguments[0].getBoundingClientRect();
return r.top >= 0 && r.bottom <= window.innerHeight && r.width > 0 && r.height > 0;
"""


def check_lesson_figure(driver, site, shots, lessons=("02_shared_transpose", "06_bank_conflicts")):
    """The first lesson of `lessons` whose page has idea figures (else any lesson's): every figure
    loaded (naturalWidth > 0) and drawn at a readable width; a screenshot with the first one in view."""
    folder = os.path.join(site, "lessons")
    pages = [os.path.join(folder, l, "index.html") for l in lessons] + \
        sorted(os.path.join(folder, d, "index.html") for d in os.listdir(folder) if d[:2].isdigit())
    for page in dict.fromkeys(p for p in pages if os.path.isfile(p)):
        driver.get("file://" + page)
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        figures = driver.execute_script(FIGURES_JS)
        if figures:
            break
    else:
        fail("no lesson page shows an idea figure (an image of the lesson's figures/*.svg)")
        return
    rel = os.path.relpath(page, site)
    for src, alt, loaded, width in figures:
        print(f"{rel}: figure {os.path.basename(src)}: loaded {loaded}, {width:.0f} px wide")
        if not loaded:
            fail(f"{rel}: the figure {src} did not load (naturalWidth 0)")
        elif width < 300:
            fail(f"{rel}: the figure {src} is drawn {width:.0f} px wide, too small to read")
        if len(alt.split()) < 6:
            fail(f"{rel}: the figure {src} has no alt text that says what it shows")
    first = next(e for e in driver.find_elements(By.CSS_SELECTOR, "article img") if "/figures/" in e.get_attribute("src"))
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", first)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(IN_VIEW_JS, first))
    time.sleep(1)  # the theme's header swaps its title as the page scrolls: let it settle
    if not driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0;", first):
        fail(f"{rel}: the first figure is not loaded when scrolled into view")
    for message in console_errors(driver):
        fail(f"{rel}: console: {message}")
    driver.save_screenshot(os.path.join(shots, "lesson_figure.png"))
    print(f"screenshot: {rel} with {os.path.basename(first.get_attribute('src'))} in view")


# ---------------------------------------------------------------- 4. search, over HTTP
def check_search(driver, site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        driver.get(f"http://127.0.0.1:{server.server_port}/index.html")
        box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
        box.click()
        box.send_keys("wavefronts")
        try:
            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
            print(f"search over http: {len(driver.find_elements(By.CSS_SELECTOR, '.md-search-result__item'))} results for 'wavefronts'")
        except TimeoutException:
            fail("search over http: no results for 'wavefronts'")
        for message in console_errors(driver):
            fail(f"index.html over http: console: {message}")
        driver.get(f"http://127.0.0.1:{server.server_port}/404.html")
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        for message in console_errors(driver):
            fail(f"404.html over http: console: {message}")
    finally:
        server.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", required=True)
    ap.add_argument("--native", required=True, help="site_models_native (prints the native models' answers)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    ap.add_argument("--screenshots", required=True)
    args = ap.parse_args()
    site = os.path.abspath(args.site)
    if not os.path.isfile(os.path.join(site, "index.html")):
        print(f"browser_test.py: no site in {site} (build the target `site` first)", file=sys.stderr)
        return 1
    os.makedirs(args.screenshots, exist_ok=True)
    native = native_dump(args.native)
    driver = start_browser(args)
    try:
        check_pages(driver, site)
        check_sectors(driver, site, native, args.screenshots)
        check_banks(driver, site, native, args.screenshots)
        check_lesson_figure(driver, site, args.screenshots)
        check_search(driver, site)
    finally:
        driver.quit()
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"OK: every page, link and explorer check passed; screenshots in {args.screenshots}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
