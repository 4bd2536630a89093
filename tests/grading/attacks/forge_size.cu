// Attack: a kernel that behaves differently at the speed case's size, and only after its first
// launch there. make_test_submissions.sh edits the kernel above: at 8192 x 4096 floats (the speed
// case's shape) each block notes in a static array that it ran, and from its second launch on every
// other block returns at once. The speed case poisons the output once and checks the last timed
// run's output, which the first (untimed) launch wrote in full: the runner's check passes and times
// half the work. The grader's witness loads the kernel's code again before each timed run, launches
// it once untimed, poisons the output and checks every timed run: the timed launch (its second) leaves
// half the output poisoned. Not timed, and a correctness finding.
