int a;
int b;
// EXERCISE END
