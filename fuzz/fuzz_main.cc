// libFuzzer's two entry points for every target in one binary (fuzz_target.h): the target is the
// name the binary was started as (build-asan/fuzz/billing_fuzz), or CGOV_FUZZ_TARGET's value.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_target.h"

namespace cgov::fuzz {
namespace {

std::map<std::string, TargetFunction>& Targets() {
  static std::map<std::string, TargetFunction> targets;
  return targets;
}

TargetFunction chosen = nullptr;

}  // namespace

bool Register(const char* name, TargetFunction function) {
  Targets()[name] = function;
  return true;
}

}  // namespace cgov::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const char* named = std::getenv("CGOV_FUZZ_TARGET");
  std::string name = named != nullptr ? named : "";
  if (name.empty() && *argc > 0) {
    name = (*argv)[0];
    name = name.substr(name.rfind('/') + 1);
  }
  const auto& targets = cgov::fuzz::Targets();
  const auto found = targets.find(name);
  if (found == targets.end()) {
    std::fprintf(stderr,
                 "cgov_fuzz: no target %s: start it as one of these names (links in its "
                 "directory) or set CGOV_FUZZ_TARGET:\n",
                 name.c_str());
    for (const auto& [known, function] : targets) std::fprintf(stderr, "  %s\n", known.c_str());
    std::exit(2);
  }
  cgov::fuzz::chosen = found->second;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return cgov::fuzz::chosen(data, size);
}
