// A GPU load made through the CUDA *driver* API, loaded at run time with dlopen("libcuda.so.1"):
// no CUDA toolkit, runtime library or compiler is needed on the GPU host. The kernel is PTX that
// the driver compiles when the module is loaded; it spins on %globaltimer for a given time.
//
// Not thread-safe; one per process. Used by cgov-loadgen only (never by cgov).
#ifndef CGOV_VALIDATE_CUDA_LOAD_H_
#define CGOV_VALIDATE_CUDA_LOAD_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace cgov::validate {

// The PTX of the spin kernel `cgov_spin(u64 nanoseconds)` (exposed for tests).
const char* SpinKernelPtx();

class CudaLoad {
 public:
  // Loads libcuda (`library` empty: "libcuda.so.1"), initialises it, makes device `ordinal`'s
  // primary context current and JIT-compiles the spin kernel. Unavailable with the driver's error
  // name when any step fails (no driver, no such device, PTX rejected).
  static Result<std::unique_ptr<CudaLoad>> Open(int ordinal, const std::string& library = "");
  ~CudaLoad();
  CudaLoad(const CudaLoad&) = delete;
  CudaLoad& operator=(const CudaLoad&) = delete;

  // Allocates `bytes` of device memory, writes it once (so it is resident) and keeps it.
  Status Hold(uint64_t bytes);
  // Runs the spin kernel on every SM for `ms` milliseconds and waits for it.
  Status Busy(int64_t ms);
  int multiprocessors() const { return multiprocessors_; }

 private:
  struct Api;
  CudaLoad() = default;
  Status Check(int result, const char* call) const;

  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  int device_ = 0;
  bool context_retained_ = false;
  void* module_ = nullptr;
  void* function_ = nullptr;
  unsigned long long held_ = 0;  // CUdeviceptr
  int multiprocessors_ = 1;
};

}  // namespace cgov::validate

#endif  // CGOV_VALIDATE_CUDA_LOAD_H_
