// A fake libnvidia-ml.so.1: the NVML C ABI that Cost Governor loads, answering from a scenario
// file named by $CGOV_FAKE_NVML_SCENARIO (format: docs/fake-nvml.md).
//
// Besides NVML's symbols it exports three test hooks (never looked up by cgov itself):
//   void fakeNvmlSetTime(double seconds)  freeze scenario time (negative: back to the real clock)
//   unsigned long long fakeNvmlCallCount(const char* function)
//   void fakeNvmlResetCounts(void)
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "abi_table.h"
#include "scenario.h"

// nvmlDevice_t is a pointer to an opaque struct; ours encodes the GPU index + 1, or for a MIG
// device kMigHandleBase + its index in Scenario::mig_devices + 1.
struct nvmlDevice_st_fwd;
struct FakeEventSet;
struct FakeGpmSample;

namespace {

using fake_nvml::Gpu;
using fake_nvml::Process;
using fake_nvml::StateField;

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3,
              kNoPermission = 4, kNotFound = 6, kInsufficientSize = 7, kGpuIsLost = 15,
              kUnknown = 999;

constexpr uintptr_t kMigHandleBase = 0x100000;

struct Counter {
  std::atomic<unsigned long long> calls{0};
  std::atomic<int> delay_ms{0};
};

struct State {
  std::mutex mu;  // guards counters' map shape, scenario swaps
  std::map<std::string, std::unique_ptr<Counter>> counters;
  std::shared_ptr<const fake_nvml::Scenario> scenario;       // owner, swapped under mu
  std::atomic<const fake_nvml::Scenario*> current{nullptr};  // read by every call, lock-free
  int init_count = 0;
  double start_s = 0;
  std::atomic<double> frozen_time{-1.0};
};

// Destroyed at dlclose or exit; cgov joins its sampling threads before either. A namespace-scope
// object (built when the library is loaded, before any call), not a function's static: every
// call reads it, and a guarded static cost the fake a call and a check each time.
State g_state;
inline State& S() { return g_state; }

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

Counter* CounterFor(const char* function) {
  std::lock_guard<std::mutex> lock(S().mu);
  auto& slot = S().counters[function];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

// Counts the call and applies the scenario's delay for it.
void Enter(Counter* counter) {
  counter->calls.fetch_add(1, std::memory_order_relaxed);
  int ms = counter->delay_ms.load(std::memory_order_relaxed);
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

#define FAKE_ENTER()                                    \
  static Counter* fake_counter_ = CounterFor(__func__); \
  Enter(fake_counter_)

// Valid from nvmlInit to the last nvmlShutdown, which callers must not race with their own calls
// (the NVML contract).
const fake_nvml::Scenario* Current() { return S().current.load(std::memory_order_acquire); }

double Now(const fake_nvml::Scenario& s) {
  double frozen = S().frozen_time.load();
  if (frozen >= 0) return frozen;
  return (MonotonicSeconds() - S().start_s) * s.time_scale;
}

// A scenario's driver must not be played by a variant that exports what that driver lacks (a
// 535.98 scenario on the full variant would test a driver that never existed).
bool ExportsMatchDriver(const fake_nvml::Scenario& scenario) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&MonotonicSeconds), &self) == 0 || !self.dli_fname) {
    return true;
  }
  void* handle = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return true;
  const fake_nvml::DriverAbi& abi = fake_nvml::AbiForDriver(scenario.driver_version);
  bool ok = true;
  for (const std::string& symbol : fake_nvml::SymbolsAbsentFrom(abi)) {
    if (dlsym(handle, symbol.c_str()) != nullptr) {
      std::fprintf(stderr,
                   "fake NVML: driver %s has no %s (%s), but this variant (%s) exports it: use a "
                   "variant built for that driver (docs/fake-nvml.md)\n",
                   scenario.driver_version.c_str(), symbol.c_str(), abi.source, self.dli_fname);
      ok = false;
    }
  }
  dlclose(handle);
  return ok;
}

int LoadScenario() {
  const char* path = std::getenv("CGOV_FAKE_NVML_SCENARIO");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "fake NVML: CGOV_FAKE_NVML_SCENARIO is not set\n");
    return kUnknown;
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "fake NVML: cannot read scenario %s\n", path);
    return kUnknown;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto scenario = std::make_shared<fake_nvml::Scenario>();
  std::string error;
  if (!fake_nvml::ParseScenario(text.str(), path, scenario.get(), &error)) {
    std::fprintf(stderr, "fake NVML: %s\n", error.c_str());
    return kUnknown;
  }
  if (scenario->init_error != 0) return scenario->init_error;
  if (!ExportsMatchDriver(*scenario)) return kUnknown;
  if (scenario->v3_process_entry_bytes == 0) {  // looked up once, not on every call
    scenario->v3_process_entry_bytes =
        fake_nvml::AbiForDriver(scenario->driver_version).v3_process_entry_bytes;
  }
  for (auto& [function, ms] : scenario->delays_ms) CounterFor(function.c_str())->delay_ms = ms;
  std::lock_guard<std::mutex> lock(S().mu);
  S().scenario = std::move(scenario);
  S().start_s = MonotonicSeconds();
  S().current.store(S().scenario.get(), std::memory_order_release);
  return kSuccess;
}

// Resolves a handle to its GPU and the time, or answers the error the call must return.
struct Call {
  const fake_nvml::Scenario* scenario = nullptr;
  const Gpu* gpu = nullptr;
  double t = 0;
  int error = kSuccess;
};

Call Resolve(nvmlDevice_st_fwd* device, const char* field) {
  Call call;
  call.scenario = Current();
  if (!call.scenario) {
    call.error = kUninitialized;
    return call;
  }
  auto index = reinterpret_cast<uintptr_t>(device);
  const std::vector<Gpu>& list =
      index > kMigHandleBase ? call.scenario->mig_devices : call.scenario->gpus;
  if (index > kMigHandleBase) index -= kMigHandleBase;
  if (index == 0 || index > list.size()) {
    call.error = kInvalidArgument;
    return call;
  }
  call.gpu = &list[index - 1];
  call.t = Now(*call.scenario);
  const Gpu* physical = call.gpu->IsMigDevice()
                            ? &call.scenario->gpus[static_cast<size_t>(call.gpu->parent)]
                            : call.gpu;
  if (physical->LostAt(call.t)) call.error = kGpuIsLost;
  // (empty() first: a lookup by a const char* builds a std::string each call)
  else if (field && !call.gpu->not_supported.empty() && call.gpu->not_supported.count(field)) {
    call.error = kNotSupported;
  } else if (field && !call.gpu->no_permission.empty() && call.gpu->no_permission.count(field)) {
    call.error = kNoPermission;
  }
  return call;
}

// Rounded half up (as lround for these non-negative values), without a libm call a field.
unsigned Uint(double v) {
  if (!(v > 0)) return 0u;
  return v >= 4294967295.0 ? 4294967295u : static_cast<unsigned>(v + 0.5);
}
unsigned long long Mib(double mib) { return static_cast<unsigned long long>(mib * 1048576.0); }

// A process as one device lists it: with its MIG ids (0xFFFFFFFF outside MIG).
struct Listing {
  const Process* process;
  unsigned gpu_instance, compute_instance;
};

// Calls visit(Listing) for each of a GPU's processes; a parent in MIG mode lists every MIG
// device's (nvml.h: "aggregate information"), a MIG device its own. A visitor, not a vector: the
// fake answers ~100 calls a tick and must not cost more than the cgov it stands under.
template <typename Visit>
void ForEachProcess(const fake_nvml::Scenario& s, const Gpu& gpu, Visit visit) {
  const unsigned none = 0xFFFFFFFFu;
  const bool in_mig = gpu.IsMigDevice();
  for (const Process& p : gpu.processes) {
    visit(Listing{&p, in_mig ? gpu.gpu_instance : none, in_mig ? gpu.compute_instance : none});
  }
  for (size_t k : gpu.mig_devices) {
    const Gpu& d = s.mig_devices[k];
    for (const Process& p : d.processes) visit(Listing{&p, d.gpu_instance, d.compute_instance});
  }
}

double MemUsedMib(const Call& c) {
  double sum = 0;
  ForEachProcess(*c.scenario, *c.gpu, [&](const Listing& l) {
    if (l.process->ActiveAt(c.t)) sum += l.process->used_mib;
  });
  return c.gpu->ValueAt(c.t, StateField::kMemUsedMib, sum);
}

void CopyString(const std::string& from, char* to, unsigned size) {
  std::snprintf(to, size, "%s", from.c_str());
}

struct UtilSample {
  unsigned pid;
  unsigned long long timestamp_us;
  unsigned sm, mem, enc, dec;
};
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct MemoryV1 {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};

enum class ListKind { kCompute, kGraphics, kMps };

bool Listed(const Process& p, ListKind kind) {
  switch (kind) {
    case ListKind::kCompute:
      return p.compute && !p.mps;
    case ListKind::kGraphics:
      return p.graphics;
    case ListKind::kMps:
      return p.mps;
  }
  return false;
}

// Writes one entry of `entry_bytes` (16: v1; 24: v2; 32: the 535.43-535.86 _v3) the way the
// driver does: pid, padding, usedGpuMemory, then the MIG ids and the protected-memory count.
void WriteEntry(unsigned char* at, size_t entry_bytes, const Listing& l) {
  const unsigned pid = l.process->pid;
  const unsigned long long used = Mib(l.process->used_mib);
  const unsigned long long protected_bytes = 0;
  std::memset(at, 0, entry_bytes);
  std::memcpy(at, &pid, 4);
  std::memcpy(at + 8, &used, 8);
  if (entry_bytes >= 24) {
    std::memcpy(at + 16, &l.gpu_instance, 4);
    std::memcpy(at + 20, &l.compute_instance, 4);
  }
  if (entry_bytes >= 32) std::memcpy(at + 24, &protected_bytes, 8);
}

int ListProcesses(nvmlDevice_st_fwd* device, unsigned* count, void* infos, ListKind kind,
                  size_t entry_bytes) {
  const char* field = kind == ListKind::kCompute    ? "compute_processes"
                      : kind == ListKind::kGraphics ? "graphics_processes"
                                                    : "mps_processes";
  Call c = Resolve(device, field);
  if (c.error) return c.error;
  if (count == nullptr) return kInvalidArgument;
  auto listed = [&](const Listing& l) {
    return l.process->ActiveAt(c.t) && Listed(*l.process, kind);
  };
  unsigned needed = 0;
  ForEachProcess(*c.scenario, *c.gpu, [&](const Listing& l) { needed += listed(l) ? 1 : 0; });
  if (*count < needed || (infos == nullptr && needed > 0)) {
    *count = needed;
    return kInsufficientSize;
  }
  auto* out = static_cast<unsigned char*>(infos);
  size_t k = 0;
  ForEachProcess(*c.scenario, *c.gpu, [&](const Listing& l) {
    if (listed(l)) WriteEntry(out + k++ * entry_bytes, entry_bytes, l);
  });
  *count = needed;
  return kSuccess;
}

// _v3's entry width is the driver's, not the symbol's (abi_table.cc).
size_t V3EntryBytes(nvmlDevice_st_fwd* device) {
  (void)device;
  const fake_nvml::Scenario* s = Current();
  return s && s->v3_process_entry_bytes > 0 ? s->v3_process_entry_bytes : 24;
}

static_assert(sizeof(UtilSample) == 32 && sizeof(PciInfo) == 68);
static_assert(sizeof(MemoryV1) == 24 && sizeof(MemoryV2) == 40);

}  // namespace

extern "C" {

using nvmlDevice_t = nvmlDevice_st_fwd*;

static int InitImpl() {
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (S().init_count > 0) {
      ++S().init_count;
      return kSuccess;
    }
  }
  int ret = LoadScenario();
  if (ret == kSuccess) {
    std::lock_guard<std::mutex> lock(S().mu);
    ++S().init_count;
  }
  return ret;
}

int nvmlInit_v2() {
  FAKE_ENTER();
  return InitImpl();
}

int nvmlInit() {
  FAKE_ENTER();
  return InitImpl();
}

int nvmlShutdown() {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(S().mu);
  if (S().init_count == 0) return kUninitialized;
  if (--S().init_count == 0) {
    S().current.store(nullptr, std::memory_order_release);
    S().scenario.reset();
  }
  return kSuccess;
}

const char* nvmlErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNoPermission:
      return "Insufficient Permissions";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  FAKE_ENTER();
  auto s = Current();
  if (!s) return kUninitialized;
  CopyString(s->driver_version, version, length);
  return kSuccess;
}

int nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  FAKE_ENTER();
  auto s = Current();
  if (!s) return kUninitialized;
  CopyString(s->nvml_version, version, length);
  return kSuccess;
}

static int CudaVersionImpl(int* version) {
  auto s = Current();
  if (!s) return kUninitialized;
  *version = s->cuda_driver_version;
  return kSuccess;
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  FAKE_ENTER();
  return CudaVersionImpl(version);
}

int nvmlSystemGetCudaDriverVersion(int* version) {
  FAKE_ENTER();
  return CudaVersionImpl(version);
}

static int CountImpl(unsigned* count) {
  auto s = Current();
  if (!s) return kUninitialized;
  *count = static_cast<unsigned>(s->gpus.size());
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  FAKE_ENTER();
  return CountImpl(count);
}

int nvmlDeviceGetCount(unsigned* count) {
  FAKE_ENTER();
  return CountImpl(count);
}

static int HandleImpl(unsigned index, nvmlDevice_t* device) {
  auto s = Current();
  if (!s) return kUninitialized;
  if (index >= s->gpus.size()) return kInvalidArgument;
  if (s->gpus[index].LostAt(Now(*s))) return kGpuIsLost;
  *device = reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(index) + 1);
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  FAKE_ENTER();
  return HandleImpl(index, device);
}

int nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t* device) {
  FAKE_ENTER();
  return HandleImpl(index, device);
}

int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  FAKE_ENTER();
  Call c = Resolve(device, "name");
  if (c.error) return c.error;
  CopyString(c.gpu->name, name, length);
  return kSuccess;
}

int nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  FAKE_ENTER();
  Call c = Resolve(device, "uuid");
  if (c.error) return c.error;
  CopyString(c.gpu->uuid, uuid, length);
  return kSuccess;
}

static int PciImpl(nvmlDevice_t device, PciInfo* pci) {
  Call c = Resolve(device, "pci_info");
  if (c.error) return c.error;
  *pci = PciInfo{};
  CopyString(c.gpu->pci_bus_id, pci->bus_id, sizeof(pci->bus_id));
  CopyString(c.gpu->pci_bus_id.substr(4), pci->bus_id_legacy, sizeof(pci->bus_id_legacy));
  std::sscanf(c.gpu->pci_bus_id.c_str(), "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
  pci->pci_device_id = 0x233010DE;
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, PciInfo* pci) {
  FAKE_ENTER();
  return PciImpl(device, pci);
}

int nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, PciInfo* pci) {
  FAKE_ENTER();
  return PciImpl(device, pci);
}

int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, MemoryV2* memory) {
  FAKE_ENTER();
  Call c = Resolve(device, "memory_v2");
  if (!c.error) c = Resolve(device, "memory");
  if (c.error) return c.error;
  // NVML checks the struct version; a bare "2" is the classic mistake this catches.
  if (memory->version != (sizeof(MemoryV2) | (2u << 24))) return 25;  // ARGUMENT_VERSION_MISMATCH
  memory->total = Mib(c.gpu->memory_total_mib);
  memory->reserved = Mib(c.gpu->reserved_mib.value_or(0));
  memory->used = Mib(MemUsedMib(c));  // allocated only
  const unsigned long long taken = memory->used + memory->reserved;
  memory->free = memory->total > taken ? memory->total - taken : 0;
  return kSuccess;
}

// v1's `used` is reserved + allocated (nvml.h 550.54.14, nvmlMemory_t), so total = free + used.
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, MemoryV1* memory) {
  FAKE_ENTER();
  Call c = Resolve(device, "memory");
  if (c.error) return c.error;
  memory->total = Mib(c.gpu->memory_total_mib);
  memory->used = Mib(MemUsedMib(c) + c.gpu->reserved_mib.value_or(0));
  memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, unsigned* rates /* gpu, memory */) {
  FAKE_ENTER();
  Call c = Resolve(device, "utilization");
  if (c.error) return c.error;
  rates[0] = Uint(c.gpu->ValueAt(c.t, StateField::kUtilGpu, 0));
  rates[1] = Uint(c.gpu->ValueAt(c.t, StateField::kUtilMem, 0));
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* mw) {
  FAKE_ENTER();
  Call c = Resolve(device, "power");
  if (c.error) return c.error;
  *mw = Uint(c.gpu->ValueAt(c.t, StateField::kPowerW, 60) * 1000);
  return kSuccess;
}

// Energy is power integrated over scenario time (0.1 s steps, kept per GPU so each call only
// integrates what is new; time going back — a frozen clock reset — starts again from 0).
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj) {
  FAKE_ENTER();
  Call c = Resolve(device, "total_energy");
  if (c.error) return c.error;
  static std::mutex mu;
  static std::map<const Gpu*, std::pair<double, double>> integrated;  // t, joules
  std::lock_guard lock(mu);
  auto& [t, joules] = integrated[c.gpu];
  if (c.t < t) t = joules = 0;
  while (t < c.t) {
    const double step = std::min(0.1, c.t - t);
    joules += c.gpu->ValueAt(t + step / 2, StateField::kPowerW, 60) * step;
    t += step;
  }
  *mj = static_cast<unsigned long long>(joules * 1000);
  return kSuccess;
}

int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* mw) {
  FAKE_ENTER();
  Call c = Resolve(device, "power_limit");
  if (c.error) return c.error;
  if (c.gpu->power_limit_w <= 0) return kNotSupported;
  *mw = Uint(c.gpu->power_limit_w * 1000);
  return kSuccess;
}

int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* celsius) {
  FAKE_ENTER();
  Call c = Resolve(device, "temperature");
  if (c.error) return c.error;
  if (sensor != 0) return kInvalidArgument;
  *celsius = Uint(c.gpu->ValueAt(c.t, StateField::kTempC, 35));
  return kSuccess;
}

int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* mhz) {
  FAKE_ENTER();
  const char* field = type == 2 ? "mem_clock" : "sm_clock";
  Call c = Resolve(device, field);
  if (c.error) return c.error;
  if (type == 2)
    *mhz = Uint(c.gpu->ValueAt(c.t, StateField::kMemClockMhz, 2619));
  else if (type == 0 || type == 1)
    *mhz = Uint(c.gpu->ValueAt(c.t, StateField::kSmClockMhz, 1980));
  else
    return kInvalidArgument;
  return kSuccess;
}

static int ReasonsImpl(nvmlDevice_t device, unsigned long long* reasons) {
  Call c = Resolve(device, "clock_reasons");
  if (c.error) return c.error;
  *reasons = static_cast<unsigned long long>(c.gpu->ValueAt(c.t, StateField::kClockReasons, 0));
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_ENTER();
  return ReasonsImpl(device, reasons);
}

int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_ENTER();
  return ReasonsImpl(device, reasons);
}

int nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned* kbps) {
  FAKE_ENTER();
  Call c = Resolve(device, "pcie_throughput");
  if (c.error) return c.error;
  if (counter == 0)
    *kbps = Uint(c.gpu->ValueAt(c.t, StateField::kPcieTxKbps, 0));
  else if (counter == 1)
    *kbps = Uint(c.gpu->ValueAt(c.t, StateField::kPcieRxKbps, 0));
  else
    return kInvalidArgument;
  return kSuccess;
}

int nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned* pct, unsigned* period_us) {
  FAKE_ENTER();
  Call c = Resolve(device, "encoder");
  if (c.error) return c.error;
  *pct = Uint(c.gpu->ValueAt(c.t, StateField::kEncUtil, 0));
  *period_us = 167000;
  return kSuccess;
}

int nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned* pct, unsigned* period_us) {
  FAKE_ENTER();
  Call c = Resolve(device, "decoder");
  if (c.error) return c.error;
  *pct = Uint(c.gpu->ValueAt(c.t, StateField::kDecUtil, 0));
  *period_us = 167000;
  return kSuccess;
}

int nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  FAKE_ENTER();
  Call c = Resolve(device, "mig_mode");
  if (c.error) return c.error;
  *current = *pending = c.gpu->mig ? 1u : 0u;
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kCompute, V3EntryBytes(d));
}
int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kCompute, 24);
}
int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kCompute, 16);
}
int nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kGraphics, V3EntryBytes(d));
}
int nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kGraphics, 24);
}
int nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kGraphics, 16);
}
int nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kMps, V3EntryBytes(d));
}
int nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kMps, 24);
}
int nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t d, unsigned* n, void* infos) {
  FAKE_ENTER();
  return ListProcesses(d, n, infos, ListKind::kMps, 16);
}

// Exported for their presence only (cgov reads the driver's ABI from which symbols exist).
int nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, void* info) {
  FAKE_ENTER();
  (void)device;
  (void)info;
  return kNotSupported;
}
int nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, void* list) {
  FAKE_ENTER();
  (void)device;
  (void)list;
  return kNotSupported;
}

// One sample per active compute process, stamped with the scenario time in microseconds; only
// samples newer than last_seen_us are returned, as the real driver does.
int nvmlDeviceGetProcessUtilization(nvmlDevice_t device, UtilSample* samples, unsigned* count,
                                    unsigned long long last_seen_us) {
  FAKE_ENTER();
  Call c = Resolve(device, "process_utilization");
  if (c.error) return c.error;
  if (count == nullptr) return kInvalidArgument;
  const unsigned long long now_us =
      1'700'000'000'000'000ULL + static_cast<unsigned long long>(c.t * 1e6);
  unsigned needed = 0;
  for (const Process& p : c.gpu->processes) {
    if (p.compute && p.ActiveAt(c.t) && now_us > last_seen_us) ++needed;
  }
  if (needed == 0) return kNotFound;
  if (samples == nullptr || *count < needed) {
    *count = needed;
    return kInsufficientSize;
  }
  unsigned k = 0;
  double gpu_util = c.gpu->ValueAt(c.t, StateField::kUtilGpu, 0);
  for (const Process& p : c.gpu->processes) {
    if (!p.compute || !p.ActiveAt(c.t)) continue;
    samples[k++] =
        UtilSample{p.pid, now_us, Uint(p.sm_util.value_or(gpu_util)), Uint(p.mem_util), 0, 0};
  }
  *count = needed;
  return kSuccess;
}

// ---- MIG: a parent's devices, their ids and sizes -----------------------------------------------

// nvml.h: "Returns zero if MIG is not supported or enabled." An H100 has room for 7.
int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  FAKE_ENTER();
  Call c = Resolve(device, nullptr);
  if (c.error) return c.error;
  if (c.gpu->IsMigDevice()) return kInvalidArgument;
  *count = c.gpu->mig ? std::max<unsigned>(7, static_cast<unsigned>(c.gpu->mig_devices.size())) : 0;
  return kSuccess;
}

int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index, nvmlDevice_t* mig) {
  FAKE_ENTER();
  Call c = Resolve(device, nullptr);
  if (c.error) return c.error;
  if (c.gpu->IsMigDevice() || mig == nullptr) return kInvalidArgument;
  if (!c.gpu->mig) return kNotSupported;
  if (index >= c.gpu->mig_devices.size()) return kNotFound;
  *mig = reinterpret_cast<nvmlDevice_t>(kMigHandleBase + c.gpu->mig_devices[index] + 1);
  return kSuccess;
}

int nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id) {
  FAKE_ENTER();
  Call c = Resolve(device, nullptr);
  if (c.error) return c.error;
  if (!c.gpu->IsMigDevice()) return kNotSupported;
  *id = c.gpu->gpu_instance;
  return kSuccess;
}

int nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned* id) {
  FAKE_ENTER();
  Call c = Resolve(device, nullptr);
  if (c.error) return c.error;
  if (!c.gpu->IsMigDevice()) return kNotSupported;
  *id = c.gpu->compute_instance;
  return kSuccess;
}

struct DeviceAttributes {
  unsigned sm_count, copy_engines, decoders, encoders, jpegs, ofas, gi_slices, ci_slices;
  unsigned long long memory_mib;
};
static_assert(sizeof(DeviceAttributes) == 40);

// nvml.h: "This API currently only supports MIG device handles."
int nvmlDeviceGetAttributes_v2(nvmlDevice_t device, DeviceAttributes* attributes) {
  FAKE_ENTER();
  Call c = Resolve(device, nullptr);
  if (c.error) return c.error;
  if (!c.gpu->IsMigDevice()) return kNotSupported;
  *attributes = DeviceAttributes{c.gpu->sm_count,
                                 1,
                                 1,
                                 0,
                                 0,
                                 0,
                                 c.gpu->slices,
                                 c.gpu->slices,
                                 static_cast<unsigned long long>(c.gpu->memory_total_mib)};
  return kSuccess;
}

// ---- memory health: remapped rows or retired pages -------------------------------------------

// nvml.h 550.54.14: "On MIG-enabled GPUs with active instances, querying the number of remapped
// rows is not supported"; a GPU given retired_pages is older than Ampere.
int nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* correctable, unsigned* uncorrectable,
                              unsigned* pending, unsigned* failure) {
  FAKE_ENTER();
  Call c = Resolve(device, "memory_health");
  if (c.error) return c.error;
  if (!correctable || !uncorrectable || !pending || !failure) return kInvalidArgument;
  if (c.gpu->IsMigDevice() || !c.gpu->mig_devices.empty() || c.gpu->retired_pages) {
    return kNotSupported;
  }
  const Gpu::RemappedRows& r = c.gpu->remapped_rows;
  *correctable = r.correctable;
  *uncorrectable = r.uncorrectable;
  *pending = r.pending ? 1 : 0;
  *failure = r.failure ? 1 : 0;
  return kSuccess;
}

// Writes min(count, pages) made-up addresses; INSUFFICIENT_SIZE with the count when they do not
// fit.
int nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned* count,
                              unsigned long long* addresses) {
  FAKE_ENTER();
  Call c = Resolve(device, "memory_health");
  if (c.error) return c.error;
  if (count == nullptr || (cause != 0 && cause != 1)) return kInvalidArgument;
  if (!c.gpu->retired_pages) return kNotSupported;
  const unsigned pages = cause == 0 ? c.gpu->retired_pages->first : c.gpu->retired_pages->second;
  if (*count < pages) {
    *count = pages;
    return kInsufficientSize;
  }
  if (pages > 0 && addresses == nullptr) return kInvalidArgument;
  for (unsigned k = 0; k < pages; ++k) addresses[k] = 0x100000ULL * (k + 1) + cause;
  *count = pages;
  return kSuccess;
}

int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, int* pending) {
  FAKE_ENTER();
  Call c = Resolve(device, "memory_health");
  if (c.error) return c.error;
  if (pending == nullptr) return kInvalidArgument;
  if (!c.gpu->retired_pages) return kNotSupported;
  *pending = c.gpu->retired_pages_pending ? 1 : 0;
  return kSuccess;
}

// ---- events: Xid critical errors from the scenario's xid_events --------------------------------

struct FakeEventSet {
  std::mutex mu;
  std::map<unsigned, size_t> next;  // registered GPU index -> its next undelivered event
};

struct EventData {
  nvmlDevice_t device;
  unsigned long long type, data;
  unsigned gpu_instance, compute_instance;
};
static_assert(sizeof(EventData) == 32);

int nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long* types) {
  FAKE_ENTER();
  Call c = Resolve(device, "xid_events");
  if (c.error) return c.error;
  *types = 0x1 | 0x2 | 0x8;  // single- and double-bit ECC, Xid critical errors
  return kSuccess;
}

int nvmlEventSetCreate(FakeEventSet** set) {
  FAKE_ENTER();
  if (!Current()) return kUninitialized;
  *set = new FakeEventSet();
  return kSuccess;
}

int nvmlEventSetFree(FakeEventSet* set) {
  FAKE_ENTER();
  delete set;
  return kSuccess;
}

// Events before the registration are not delivered, as with the real driver.
int nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, FakeEventSet* set) {
  FAKE_ENTER();
  Call c = Resolve(device, "xid_events");
  if (c.error) return c.error;
  if (set == nullptr || !(types & 0x8)) return kInvalidArgument;
  size_t past = 0;
  while (past < c.gpu->xid_events.size() && c.gpu->xid_events[past].t < c.t) ++past;
  std::lock_guard<std::mutex> lock(set->mu);
  set->next[static_cast<unsigned>(reinterpret_cast<uintptr_t>(device) - 1)] = past;
  return kSuccess;
}

static int EventWaitImpl(FakeEventSet* set, EventData* data, unsigned timeout_ms) {
  if (set == nullptr || data == nullptr) return kInvalidArgument;
  const double deadline = MonotonicSeconds() + timeout_ms / 1000.0;
  for (;;) {
    const fake_nvml::Scenario* s = Current();
    if (!s) return kUninitialized;
    const double t = Now(*s);
    {
      std::lock_guard<std::mutex> lock(set->mu);
      for (auto& [index, next] : set->next) {
        const Gpu& gpu = s->gpus[index];
        if (next >= gpu.xid_events.size() || gpu.xid_events[next].t > t) continue;
        const fake_nvml::XidEvent& e = gpu.xid_events[next];
        *data = EventData{reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(index) + 1), 0x8,
                          e.xid, e.gpu_instance, 0xFFFFFFFFu};
        ++next;
        return kSuccess;
      }
    }
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) return 10;  // NVML_ERROR_TIMEOUT
    // Blocks like the driver instead of spinning (cgov's CPU figures include the fake's): until
    // the deadline or the next event, at most 250 ms so that a frozen clock moved by a test is
    // seen soon.
    double next = left;
    {
      std::lock_guard<std::mutex> lock(set->mu);
      for (const auto& [index, n] : set->next) {
        const Gpu& gpu = s->gpus[index];
        if (n < gpu.xid_events.size() && S().frozen_time.load() < 0) {
          next = std::min(next, (gpu.xid_events[n].t - t) / s->time_scale);
        }
      }
    }
    const double nap = std::clamp(next, 0.001, 0.25);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(nap * 1e6)));
  }
}

int nvmlEventSetWait_v2(FakeEventSet* set, EventData* data, unsigned timeout_ms) {
  FAKE_ENTER();
  return EventWaitImpl(set, data, timeout_ms);
}

int nvmlEventSetWait(FakeEventSet* set, EventData* data, unsigned timeout_ms) {
  FAKE_ENTER();
  return EventWaitImpl(set, data, timeout_ms);
}

// ---- GPM: profiling metrics from the timeline (sm_active defaults to util_gpu) ------------------

struct FakeGpmSample {
  const Gpu* gpu = nullptr;  // the GPU or MIG device sampled, once taken
  double t = 0;
};

struct GpmMetric {
  unsigned id;
  int ret;
  double value;
  const char* names[3];
};
struct GpmMetricsGet {
  unsigned version, count;
  FakeGpmSample* sample1;
  FakeGpmSample* sample2;
  GpmMetric metrics[333];
};
static_assert(sizeof(GpmMetric) == 40 && offsetof(GpmMetricsGet, metrics) == 24);

int nvmlGpmQueryDeviceSupport(nvmlDevice_t device, unsigned* support /* version, supported */) {
  FAKE_ENTER();
  Call c = Resolve(device, "gpm");
  if (c.error) return c.error;
  if (support[0] != 1) return 25;  // ARGUMENT_VERSION_MISMATCH
  support[1] = c.gpu->gpm ? 1 : 0;
  return kSuccess;
}

int nvmlGpmSampleAlloc(FakeGpmSample** sample) {
  FAKE_ENTER();
  *sample = new FakeGpmSample();
  return kSuccess;
}

int nvmlGpmSampleFree(FakeGpmSample* sample) {
  FAKE_ENTER();
  delete sample;
  return kSuccess;
}

int nvmlGpmSampleGet(nvmlDevice_t device, FakeGpmSample* sample) {
  FAKE_ENTER();
  Call c = Resolve(device, "gpm");
  if (c.error) return c.error;
  if (!c.gpu->gpm || c.gpu->IsMigDevice()) return kNotSupported;
  sample->gpu = c.gpu;
  sample->t = c.t;
  return kSuccess;
}

// A GPU instance's sample, through its parent's handle.
int nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned gpu_instance, FakeGpmSample* sample) {
  FAKE_ENTER();
  Call c = Resolve(device, "gpm");
  if (c.error) return c.error;
  if (!c.gpu->gpm || c.gpu->IsMigDevice()) return kNotSupported;
  for (size_t k : c.gpu->mig_devices) {
    const Gpu& d = c.scenario->mig_devices[k];
    if (d.gpu_instance != gpu_instance) continue;
    sample->gpu = &d;
    sample->t = c.t;
    return kSuccess;
  }
  return kNotFound;
}

// Each metric is the timeline's value at the later sample (steps, as everywhere in the fake).
int nvmlGpmMetricsGet(GpmMetricsGet* request) {
  FAKE_ENTER();
  const fake_nvml::Scenario* s = Current();
  if (!s) return kUninitialized;
  if (request->version != 1) return 25;
  if (!request->sample1 || !request->sample2 || !request->sample1->gpu ||
      request->sample1->gpu != request->sample2->gpu || request->count > 333) {
    return kInvalidArgument;
  }
  const Gpu& gpu = *request->sample2->gpu;
  const double t = request->sample2->t;
  for (unsigned k = 0; k < request->count; ++k) {
    GpmMetric& m = request->metrics[k];
    std::optional<StateField> field;
    switch (m.id) {
      case 1:
        field = StateField::kUtilGpu;
        break;
      case 2:
        field = StateField::kSmActive;
        break;
      case 3:
        field = StateField::kSmOccupancy;
        break;
      case 5:
        field = StateField::kTensorActive;
        break;
      case 10:
        field = StateField::kDramActive;
        break;
      case 20:
        field = StateField::kPcieTxMibS;
        break;
      case 21:
        field = StateField::kPcieRxMibS;
        break;
      case 60:
        field = StateField::kNvlinkRxMibS;
        break;
      case 61:
        field = StateField::kNvlinkTxMibS;
        break;
    }
    m.ret = field ? kSuccess : kNotSupported;
    m.value = !field      ? 0
              : m.id == 2 ? gpu.ValueAt(t, *field, gpu.ValueAt(t, StateField::kUtilGpu, 0))
                          : gpu.ValueAt(t, *field, 0);
  }
  return kSuccess;
}

// ---- test hooks -------------------------------------------------------------------------------

void fakeNvmlSetTime(double seconds) { S().frozen_time.store(seconds); }

unsigned long long fakeNvmlCallCount(const char* function) {
  std::lock_guard<std::mutex> lock(S().mu);
  auto it = S().counters.find(function);
  return it == S().counters.end() ? 0 : it->second->calls.load();
}

void fakeNvmlResetCounts() {
  std::lock_guard<std::mutex> lock(S().mu);
  for (auto& [name, counter] : S().counters) counter->calls = 0;
}

}  // extern "C"
