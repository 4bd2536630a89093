// Attack: a kernel that breaks the grader's witness instead of forging a time. make_test_submissions.sh
// edits the kernel above: block (0, 0) counts the kernel's launches in a static variable, and at
// 8192 x 4096 floats (the speed case's shape) the kernel traps while that count is under 2. In the
// runner the correctness test cases launch it first, so its speed case runs and its output is right;
// in the witness, which runs the speed test cases alone and loads the kernel's code again before each
// timed run, its first launch traps and the witness ends without a time. A speed the grader did not
// time earns no speed credit (grading/evidence.py), so the slow kernel (atk18's) cannot hide its
// speed this way: before that rule, the lesson's score came from its other rules alone (100%).
