// A full disk for a test, in the test's own process: a file-size limit (RLIMIT_FSIZE) with
// SIGXFSZ ignored, so writes past it fail with EFBIG as they would with ENOSPC; both put back
// when it goes out of scope. Header-only.
#ifndef CGOV_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
#define CGOV_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_

#include <signal.h>
#include <sys/resource.h>

namespace cgov::test_support {

class FileSizeLimit {
 public:
  // Files may grow to `bytes` (0: none may be written to).
  explicit FileSizeLimit(rlim_t bytes) {
    old_action_ = signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old_limit_);
    rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_limit_);
    signal(SIGXFSZ, old_action_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const { return ok_; }  // the limit is in force

 private:
  sighandler_t old_action_;
  rlimit old_limit_{};
  bool ok_ = false;
};

}  // namespace cgov::test_support

#endif  // CGOV_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
