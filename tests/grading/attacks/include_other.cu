// ATTACK include_other: a correct submission that, at compile time, looks for a classmate's
// main.cu and the course's solution; if the compiler can see either, it refuses to compile
// with a LEAKED message (so a sandbox that shows them turns this row into "does not compile").
#if __has_include("@SUBMISSIONS@/atk00 victim/01_naive_transpose/main.cu")
#error "LEAKED: the compiler sees another student's submission"
#endif
#if __has_include("@COURSE@/lessons/01_naive_transpose/main.cu")
#error "LEAKED: the compiler sees the course's solution"
#endif
