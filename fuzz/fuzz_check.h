// What the fuzz targets hold true beyond "no crash": a broken property aborts with a message, and
// libFuzzer keeps the input that broke it (docs/fuzzing.md).
#ifndef CGOV_FUZZ_FUZZ_CHECK_H_
#define CGOV_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                               \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

#endif  // CGOV_FUZZ_FUZZ_CHECK_H_
