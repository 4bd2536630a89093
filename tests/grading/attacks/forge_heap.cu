// Attack: a kernel that allocates on the device heap. make_test_submissions.sh edits the kernel above:
// its first block keeps a pointer to memory it allocated with malloc. That memory outlives the
// witness's fresh start of each timed run (the submission's code loaded again resets the pointer,
// not the heap), so a kernel could keep its answer there and replay it. The grader reads the
// compiled device code's undefined functions (grading/witness.py: heap_calls) and times nothing
// of a lesson whose code allocates there: no speed credit, the slow kernel (atk18's) no better off.
