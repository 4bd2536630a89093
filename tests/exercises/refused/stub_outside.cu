int a;
// EXERCISE STUB: int b;
