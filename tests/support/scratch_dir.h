// A directory of a unit test's own under /tmp, removed with everything in it when it goes.
#ifndef CGOV_TESTS_SUPPORT_SCRATCH_DIR_H_
#define CGOV_TESTS_SUPPORT_SCRATCH_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace cgov {

class ScratchDir {
 public:
  ScratchDir() {
    char name[] = "/tmp/cgov_scratch_XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_SUPPORT_SCRATCH_DIR_H_
