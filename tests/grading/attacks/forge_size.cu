// Attack: a kernel that behaves differently at the speed case's size. The kernel above (edited by
// make_test_submissions.sh) skips every other block when it transposes 8192 x 4096 floats, the speed
// case's shape: twice as fast there, and wrong. So that its own run's check of that output still
// passes, this macro makes every compare_exact after this line record the EXPECTED value as the
// submission's (the check #includes this file before its test cases). The grader's witness runs the
// kernel itself, checks its output and finds it wrong: no speed credit, and a correctness finding.
#define compare_exact(got, want, cols) compare_exact(course::submitted(want), want, cols)
