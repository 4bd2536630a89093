#!/usr/bin/env bash
# Builds the course site into build-site/html (site/README.md says what it holds and how).
#
#   scripts/site.sh                 build it; open build-site/html/index.html in a browser
#   scripts/site.sh --test          build it, then run its tests (ctest -L site): the WebAssembly
#                                   models against the native ones, and every page in headless Chromium
#   scripts/site.sh --screenshots   --test, then copy the screenshots it took (the two explorers,
#                                   a lesson page with its idea figure) into site/screenshots/
#                                   (site/README.md shows them)
#
# Needs CMake, a C++ compiler, em++ and MkDocs with the Material theme; the tests also need node,
# Chromium, chromedriver and Selenium. Debian/Ubuntu:
#   apt install emscripten mkdocs mkdocs-material chromium chromium-driver python3-selenium
# No CUDA: this builds only the site (the full course build, `cmake --preset full`, builds it too).
set -euo pipefail
cd "$(dirname "$0")/.."

test=0 shots=0
case "${1:-}" in
  "") ;;
  --test) test=1 ;;
  --screenshots) test=1 shots=1 ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "site.sh: unknown option '$1' (use --test, --screenshots or --help)" >&2; exit 2 ;;
esac

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f build-site/CMakeCache.txt ] && generator=()  # keep the generator the folder was made with
configure=$(cmake -S site -B build-site "${generator[@]}")
if ! grep -q "Course site: target" <<<"$configure"; then
  echo "site.sh: the site cannot be built here:" >&2
  grep "Course site" <<<"$configure" >&2 || echo "$configure" >&2
  exit 1
fi
cmake --build build-site
echo "site.sh: open build-site/html/index.html (or serve build-site/html: it is ready for GitHub Pages)"
if [ "$test" = 1 ]; then
  ctest --test-dir build-site --output-on-failure --no-tests=error -L '^site$'
fi
if [ "$shots" = 1 ]; then
  mkdir -p site/screenshots
  cp build-site/screenshots/sectors.png build-site/screenshots/banks.png build-site/screenshots/lesson_figure.png \
     site/screenshots/
  echo "site.sh: copied the explorers' and the lesson figure's screenshots into site/screenshots/"
fi
