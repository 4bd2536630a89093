int a;
// EXERCISE HINT: a hint with no region
