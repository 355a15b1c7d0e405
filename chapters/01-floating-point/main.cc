// chapter-01 placeholder (being written)
#include <cstdio>
#include "fp/fp16.h"
int main() { std::printf("%.9g\n", float(zt::fp16(1.0f))); }
