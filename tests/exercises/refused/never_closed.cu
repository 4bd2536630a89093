int a;
    // EXERCISE BEGIN 01.a: never closed
int b;
