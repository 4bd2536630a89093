// Attack: a kernel that behaves differently at the speed case's size, and only after its first
// launch there. make_test_submissions.sh edits the kernel above: at 8192 x 4096 floats (the speed
// case's shape) each block notes in a static array that it ran, and from its second launch on every
// other block returns at once, leaving what an earlier launch wrote. Its own run's check catches it:
// the array outlives the test case, so a later speed case's launch into a freshly poisoned output
// skips half of it (on an H200: "speed: 02.tiled: ... 1952 of 4096 differ"). Had it passed there,
// the grader's witness loads the kernel's code again before each timed run (the array starts over),
// launches it once untimed, poisons the output and checks every timed run. Either way: no credit.
