// EXERCISE BEGIN 01.a: outer
int a;

  // EXERCISE BEGIN 01.b: inner
  // EXERCISE END
// EXERCISE END
