// The explorers' models built natively (host C++ compiler): prints explorer_dump(), which the
// test site.wasm_matches_native compares with what the WebAssembly build prints under node.
#include <cstdio>

extern "C" const char* explorer_dump();

int main() {
    std::fputs(explorer_dump(), stdout);
    return 0;
}
