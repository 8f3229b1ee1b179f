// The fuzz targets are one binary, `cgov_fuzz`, reached under each target's name
// (build-asan/fuzz/TARGET is a link to it): one link of cgov_core instead of one a target, which
// took ~60 CPU-seconds of every sanitizer build (docs/fuzzing.md). A target is
//
//   CGOV_FUZZ_TARGET(budgets_fuzz) { ... return 0; }
//
// with `data` and `size` the input, as libFuzzer's LLVMFuzzerTestOneInput has them; fuzz_main.cc
// runs the one the binary was started as.
#ifndef CGOV_FUZZ_FUZZ_TARGET_H_
#define CGOV_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

namespace cgov::fuzz {

using TargetFunction = int (*)(const uint8_t* data, size_t size);

// Adds a target under `name` (before main, from each target's file); returns true.
bool Register(const char* name, TargetFunction function);

}  // namespace cgov::fuzz

#define CGOV_FUZZ_TARGET(name)                             \
  static int name##_one(const uint8_t* data, size_t size); \
  [[maybe_unused]] static const bool name##_registered =   \
      ::cgov::fuzz::Register(#name, &name##_one);          \
  static int name##_one(const uint8_t* data, size_t size)

#endif  // CGOV_FUZZ_FUZZ_TARGET_H_
