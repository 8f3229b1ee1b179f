#include "validate/cuda_load.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace cgov::validate {
namespace {

// The CUDA driver API's C types, as cuda.h declares them (stable since CUDA 4).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;

// Every thread spins; the blocks fill every SM several times over, so each SM reports busy.
constexpr unsigned kBlocksPerSm = 4;
constexpr unsigned kThreadsPerBlock = 128;

constexpr const char kSpinPtx[] = R"(
.version 6.0
.target sm_50
.address_size 64

.visible .entry cgov_spin(
    .param .u64 cgov_spin_ns
)
{
    .reg .pred  %p<2>;
    .reg .b64   %rd<6>;

    ld.param.u64    %rd1, [cgov_spin_ns];
    mov.u64         %rd2, %globaltimer;
SPIN:
    mov.u64         %rd3, %globaltimer;
    sub.s64         %rd4, %rd3, %rd2;
    setp.lt.u64     %p1, %rd4, %rd1;
    @%p1 bra        SPIN;
    ret;
}
)";

}  // namespace

struct CudaLoad::Api {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*primary_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*synchronize)() = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
};

const char* SpinKernelPtx() { return kSpinPtx; }

Result<std::unique_ptr<CudaLoad>> CudaLoad::Open(int ordinal, const std::string& library) {
  const std::string name = library.empty() ? "libcuda.so.1" : library;
  std::unique_ptr<CudaLoad> load(new CudaLoad());
  load->handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (load->handle_ == nullptr) {
    const char* why = dlerror();
    return Unavailable(
        fmt::format("{}: {} (is the NVIDIA driver installed?)", name, why ? why : "dlopen failed"));
  }
  load->api_ = std::make_unique<Api>();
  Api& a = *load->api_;
  struct Want {
    const char* symbol;
    void** slot;
  };
  const Want wants[] = {
      {"cuInit", reinterpret_cast<void**>(&a.init)},
      {"cuDeviceGet", reinterpret_cast<void**>(&a.device_get)},
      {"cuDeviceGetAttribute", reinterpret_cast<void**>(&a.device_attribute)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void**>(&a.primary_retain)},
      {"cuDevicePrimaryCtxRelease_v2", reinterpret_cast<void**>(&a.primary_release)},
      {"cuCtxSetCurrent", reinterpret_cast<void**>(&a.ctx_set_current)},
      {"cuModuleLoadData", reinterpret_cast<void**>(&a.module_load_data)},
      {"cuModuleUnload", reinterpret_cast<void**>(&a.module_unload)},
      {"cuModuleGetFunction", reinterpret_cast<void**>(&a.module_get_function)},
      {"cuMemAlloc_v2", reinterpret_cast<void**>(&a.mem_alloc)},
      {"cuMemFree_v2", reinterpret_cast<void**>(&a.mem_free)},
      {"cuMemsetD8_v2", reinterpret_cast<void**>(&a.memset_d8)},
      {"cuLaunchKernel", reinterpret_cast<void**>(&a.launch)},
      {"cuCtxSynchronize", reinterpret_cast<void**>(&a.synchronize)},
      {"cuGetErrorName", reinterpret_cast<void**>(&a.error_name)},
  };
  for (const Want& w : wants) {
    *w.slot = dlsym(load->handle_, w.symbol);
    if (*w.slot == nullptr) return Unavailable(fmt::format("{}: no symbol {}", name, w.symbol));
  }
  CGOV_RETURN_IF_ERROR(load->Check(a.init(0), "cuInit"));
  CGOV_RETURN_IF_ERROR(load->Check(a.device_get(&load->device_, ordinal), "cuDeviceGet"));
  int sms = 0;
  if (a.device_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, load->device_) == 0 &&
      sms > 0) {
    load->multiprocessors_ = sms;
  }
  CUcontext context = nullptr;
  CGOV_RETURN_IF_ERROR(
      load->Check(a.primary_retain(&context, load->device_), "cuDevicePrimaryCtxRetain"));
  load->context_retained_ = true;
  CGOV_RETURN_IF_ERROR(load->Check(a.ctx_set_current(context), "cuCtxSetCurrent"));
  CGOV_RETURN_IF_ERROR(
      load->Check(a.module_load_data(&load->module_, kSpinPtx), "cuModuleLoadData (PTX JIT)"));
  CGOV_RETURN_IF_ERROR(load->Check(
      a.module_get_function(&load->function_, load->module_, "cgov_spin"), "cuModuleGetFunction"));
  return load;
}

CudaLoad::~CudaLoad() {
  if (api_) {
    if (held_ != 0) api_->mem_free(held_);
    if (module_ != nullptr) api_->module_unload(module_);
    if (context_retained_) api_->primary_release(device_);
  }
  if (handle_ != nullptr) dlclose(handle_);
}

Status CudaLoad::Check(int result, const char* call) const {
  if (result == 0) return Status::Ok();
  const char* name = nullptr;
  if (api_ && api_->error_name) api_->error_name(result, &name);
  return Unavailable(fmt::format("{} failed: {} ({})", call, name ? name : "CUDA error", result));
}

Status CudaLoad::Hold(uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  CGOV_RETURN_IF_ERROR(Check(api_->mem_alloc(&held_, bytes), "cuMemAlloc_v2"));
  CGOV_RETURN_IF_ERROR(Check(api_->memset_d8(held_, 0x5a, bytes), "cuMemsetD8_v2"));
  return Check(api_->synchronize(), "cuCtxSynchronize");
}

Status CudaLoad::Busy(int64_t ms) {
  if (ms <= 0) return Status::Ok();
  unsigned long long ns = static_cast<unsigned long long>(ms) * 1'000'000ULL;
  void* params[] = {&ns};
  const unsigned blocks = static_cast<unsigned>(multiprocessors_) * kBlocksPerSm;
  CGOV_RETURN_IF_ERROR(Check(
      api_->launch(function_, blocks, 1, 1, kThreadsPerBlock, 1, 1, 0, nullptr, params, nullptr),
      "cuLaunchKernel"));
  return Check(api_->synchronize(), "cuCtxSynchronize");
}

}  // namespace cgov::validate
