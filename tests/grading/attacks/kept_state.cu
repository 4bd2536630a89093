// Attack: a kernel that keeps its answer in device memory between timed runs. make_test_submissions.sh
// edits lesson 04's reduce_vec4_last_block (made slow first: it reads its input four more times, like
// its honest twin atk27): at the speed case's sizes (2^22 floats and more) the last block keeps the sum in the
// slack of the 4-byte output allocation (out[1..3]: a tag, a fingerprint of eight input elements, the
// sum), which no check looks at and memcheck never sees (its subset leaves the speed size out). A
// later launch over the same input finds the tag and its fingerprint, spins about 8 us (inside the
// plausibility bound: faster than the solution, slower than half of CUB's time) and writes the kept sum.
// The runner's speed case runs every launch on one input: all but the first replay, and its check
// passes. The grader's witness clears every buffer of its process whole, slack included, before each
// launch, and draws every launch's input from a new seed: no launch finds a kept sum, or one for its
// input, so each one sums honestly, at its twin's speed.
