int a;
// EXERCISE BEGIN a: no number in the id
// EXERCISE END
