# need_bwrap.sh — sourced by the grading tests that run grade.sh's sandbox: ends the test as
# SKIPPED (exit 77, never passed) where bubblewrap is missing or cannot create its namespaces.
command -v bwrap > /dev/null || { echo "SKIPPED: bubblewrap (bwrap) is not installed (grade.sh's sandbox)"; exit 77; }
why=$(bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true 2>&1) ||
  { echo "SKIPPED: bubblewrap cannot create its namespaces here: $why"; exit 77; }
