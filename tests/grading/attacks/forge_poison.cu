// Attack: a kernel that does less work at the speed case's size once its output holds values.
// make_test_submissions.sh edits the kernel above: at 8192 x 4096 floats (the speed case's shape)
// every other block first reads one element of its own output tile and returns at once when it is not
// NaN (the poison). The runner's speed case poisons the output once, before all its runs: the first
// launch writes every tile, the later ones skip half, and the output checked after the last run is
// right, so its own check passes at about twice the speed. The grader's witness poisons the output
// before every timed run: each timed launch finds its whole output poisoned and does all the work.
// It is timed at its honest speed (atk18's), no faster.
