#!/usr/bin/env bash
# Host test: without a usable sandbox, scripts/grade.sh grades nothing, says so in one line and
# exits 3 (unless --no-sandbox is given).
#   test_no_sandbox.sh missing   bubblewrap is not on PATH
#   test_no_sandbox.sh broken    a bwrap that cannot create namespaces (as in a container without them)
# Prints "OK: exit code 3: <the line>" only when every assertion holds.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
scripts=$here/../../../scripts
mode=${1:-missing}
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/submissions/Ada/01_naive_transpose" "$tmp/bin"
cp "$here/../../../lessons/01_naive_transpose/main.cu" "$tmp/submissions/Ada/01_naive_transpose/" 2> /dev/null ||
  echo "int main() {}" > "$tmp/submissions/Ada/01_naive_transpose/main.cu"
# A PATH with only what grade.sh needs before it looks for the sandbox (and, for "broken", a bwrap
# that fails the way bubblewrap does where user namespaces are off).
for tool in bash dirname basename id head sed grep cat tr od awk sort cut mkdir rm chmod setpriv ps wc nproc; do
  p=$(command -v "$tool") && ln -s "$p" "$tmp/bin/$tool"
done
case $mode in
  missing) ;;
  broken) printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n' > "$tmp/bin/bwrap"
          chmod +x "$tmp/bin/bwrap" ;;
  *) echo "usage: $0 missing|broken"; exit 2 ;;
esac
PATH="$tmp/bin" bash "$scripts/grade.sh" "$tmp/submissions" --out "$tmp/out" --host-only > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
last=$(tail -n 1 "$tmp/log")
[ $rc -eq 3 ] || { echo "FAIL: exit code $rc, expected 3"; exit 1; }
[ "$(grep -c '' "$tmp/log")" -eq 1 ] || { echo "FAIL: more than one line of output"; exit 1; }
[[ $last == "grade.sh: no sandbox: "*"--no-sandbox (nothing graded)" ]] || { echo "FAIL: the line does not say why and what to do"; exit 1; }
[ ! -e "$tmp/out" ] || { echo "FAIL: it wrote into --out before finding out there is no sandbox"; exit 1; }
echo "OK: exit code 3: $last"
