#include "telemetry/nvml_source.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace cgov {
namespace {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

// One fast field: whether the library has it, and how to read it into a sample.
struct FastField {
  GpuField field;
  const char* symbol;  // named in "symbol ... missing"
  bool (*present)(const NvmlFunctions&);
  nvmlReturn_t (*read)(const NvmlFunctions&, nvmlDevice_t, GpuFastSample*);
};

template <typename T>
nvmlReturn_t ReadUint(nvml::nvmlDeviceGetUint_fn f, nvmlDevice_t d, std::optional<T>* out) {
  unsigned int value = 0;
  nvmlReturn_t ret = f(d, &value);
  if (ret == nvml::NVML_SUCCESS) *out = value;
  return ret;
}

nvmlReturn_t ReadClock(const NvmlFunctions& f, nvmlDevice_t d, int clock,
                       std::optional<uint32_t>* out) {
  unsigned int mhz = 0;
  nvmlReturn_t ret = f.clock_info(d, clock, &mhz);
  if (ret == nvml::NVML_SUCCESS) *out = mhz;
  return ret;
}

nvmlReturn_t ReadCodec(nvml::nvmlDeviceGetCodecUtilization_fn f, nvmlDevice_t d,
                       std::optional<uint32_t>* out) {
  unsigned int pct = 0, period_us = 0;
  nvmlReturn_t ret = f(d, &pct, &period_us);
  if (ret == nvml::NVML_SUCCESS) *out = pct;
  return ret;
}

const std::vector<FastField>& FastFields() {
  static const std::vector<FastField> fields = {
      {GpuField::kUtilization, "nvmlDeviceGetUtilizationRates",
       [](const NvmlFunctions& f) { return f.utilization != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         nvml::nvmlUtilization_t u{};
         nvmlReturn_t ret = f.utilization(d, &u);
         if (ret == nvml::NVML_SUCCESS) {
           s->util_gpu_pct = u.gpu;
           s->util_mem_pct = u.memory;
         }
         return ret;
       }},
      // Read by NvmlSource::ReadMemory: it needs the GPU's reserved memory.
      {GpuField::kMemory, "nvmlDeviceGetMemoryInfo_v2",
       [](const NvmlFunctions& f) { return f.memory_v2 != nullptr || f.memory_v1 != nullptr; },
       nullptr},
      {GpuField::kPower, "nvmlDeviceGetPowerUsage",
       [](const NvmlFunctions& f) { return f.power_usage != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadUint(f.power_usage, d, &s->power_mw);
       }},
      {GpuField::kPowerLimit, "nvmlDeviceGetEnforcedPowerLimit",
       [](const NvmlFunctions& f) { return f.power_limit != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadUint(f.power_limit, d, &s->power_limit_mw);
       }},
      {GpuField::kTemperature, "nvmlDeviceGetTemperature",
       [](const NvmlFunctions& f) { return f.temperature != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         unsigned int c = 0;
         nvmlReturn_t ret = f.temperature(d, nvml::NVML_TEMPERATURE_GPU, &c);
         if (ret == nvml::NVML_SUCCESS) s->temp_c = c;
         return ret;
       }},
      {GpuField::kSmClock, "nvmlDeviceGetClockInfo",
       [](const NvmlFunctions& f) { return f.clock_info != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadClock(f, d, nvml::NVML_CLOCK_SM, &s->sm_clock_mhz);
       }},
      {GpuField::kMemClock, "nvmlDeviceGetClockInfo",
       [](const NvmlFunctions& f) { return f.clock_info != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadClock(f, d, nvml::NVML_CLOCK_MEM, &s->mem_clock_mhz);
       }},
      {GpuField::kClockReasons, "nvmlDeviceGetCurrentClocksEventReasons",
       [](const NvmlFunctions& f) { return f.clock_reasons != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         unsigned long long bits = 0;
         nvmlReturn_t ret = f.clock_reasons(d, &bits);
         if (ret == nvml::NVML_SUCCESS) s->clock_reasons = bits;
         return ret;
       }},
      {GpuField::kEncoder, "nvmlDeviceGetEncoderUtilization",
       [](const NvmlFunctions& f) { return f.encoder_util != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadCodec(f.encoder_util, d, &s->enc_util_pct);
       }},
      {GpuField::kDecoder, "nvmlDeviceGetDecoderUtilization",
       [](const NvmlFunctions& f) { return f.decoder_util != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         return ReadCodec(f.decoder_util, d, &s->dec_util_pct);
       }},
      {GpuField::kTotalEnergy, "nvmlDeviceGetTotalEnergyConsumption",
       [](const NvmlFunctions& f) { return f.total_energy != nullptr; },
       [](const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
         unsigned long long mj = 0;
         nvmlReturn_t ret = f.total_energy(d, &mj);
         if (ret == nvml::NVML_SUCCESS) s->energy_mj = mj;
         return ret;
       }},
  };
  return fields;
}

// A probe result: errors that say "this GPU cannot" disable the field; transient ones do not.
FieldSupport Judge(const NvmlLibrary& lib, nvmlReturn_t ret) {
  switch (ret) {
    case nvml::NVML_ERROR_NOT_SUPPORTED:
    case nvml::NVML_ERROR_NO_PERMISSION:
    case nvml::NVML_ERROR_FUNCTION_NOT_FOUND:
    case nvml::NVML_ERROR_INVALID_ARGUMENT:
    case nvml::NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return {false, lib.Describe(ret)};
    default:
      return {true, ""};
  }
}

FieldSupport SymbolMissing(const char* symbol) {
  return {false, fmt::format("symbol {} missing from the library", symbol)};
}

std::string ReadString(nvml::nvmlDeviceGetString_fn f, nvmlDevice_t d, unsigned size) {
  if (f == nullptr) return "";
  std::string buffer(size, '\0');
  if (f(d, buffer.data(), size) != nvml::NVML_SUCCESS) return "";
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return buffer;
}

int64_t MonotonicNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

NvmlSource::NvmlSource(std::unique_ptr<NvmlLibrary> library) : library_(std::move(library)) {}

NvmlSource::~NvmlSource() {
  StopEventWatch();
  for (GpmState& g : gpm_) {
    for (nvml::nvmlGpmSample_t sample : g.samples) {
      if (sample != nullptr) library_->fn().gpm_sample_free(sample);
    }
  }
  if (initialised_) library_->fn().shutdown();
}

Result<std::unique_ptr<NvmlSource>> NvmlSource::Open(const std::string& library_path) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> library, NvmlLibrary::Load(library_path));
  std::unique_ptr<NvmlSource> source(new NvmlSource(std::move(library)));
  CGOV_RETURN_IF_ERROR(source->Init());
  return source;
}

Status NvmlSource::Init() {
  const NvmlFunctions& f = library_->fn();
  nvmlReturn_t ret = f.init();
  if (ret != nvml::NVML_SUCCESS) {
    return Unavailable(fmt::format(
        "{}: nvmlInit failed: {} (is the NVIDIA kernel driver loaded? `nvidia-smi` should work)",
        library_->path(), library_->Describe(ret)));
  }
  initialised_ = true;
  char text[nvml::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (f.driver_version && f.driver_version(text, sizeof(text)) == nvml::NVML_SUCCESS) {
    driver_version_ = text;
  }
  if (f.nvml_version && f.nvml_version(text, sizeof(text)) == nvml::NVML_SUCCESS) {
    nvml_version_ = text;
  }
  int cuda = 0;
  if (f.cuda_driver_version && f.cuda_driver_version(&cuda) == nvml::NVML_SUCCESS) {
    cuda_driver_version_ = cuda;
  }
  DecideProcessLists();
  unsigned int count = 0;
  ret = f.device_count(&count);
  if (ret != nvml::NVML_SUCCESS) {
    return Unavailable(fmt::format("{}: nvmlDeviceGetCount failed: {}", library_->path(),
                                   library_->Describe(ret)));
  }
  gpus_.resize(count);
  handles_.assign(count, nullptr);
  lost_ = std::make_unique<std::atomic<bool>[]>(count);
  xid_count_ = std::make_unique<std::atomic<uint64_t>[]>(count);
  last_xid_ = std::make_unique<std::atomic<uint32_t>[]>(count);
  watched_.assign(count, false);
  gpm_.assign(count, GpmState{});
  last_seen_us_.assign(count, 0);
  for (unsigned i = 0; i < count; ++i) {
    gpus_[i].index = i;
    ret = f.handle_by_index(i, &handles_[i]);
    if (ret != nvml::NVML_SUCCESS) {
      gpus_[i].lost = true;
      gpus_[i].lost_reason = "nvmlDeviceGetHandleByIndex: " + library_->Describe(ret);
      lost_[i] = true;
      continue;
    }
    Probe(&gpus_[i]);
  }
  return Status::Ok();
}

bool NvmlSource::CheckLost(size_t index, nvmlReturn_t ret) {
  if (ret != nvml::NVML_ERROR_GPU_IS_LOST) return false;
  lost_[index].store(true, std::memory_order_relaxed);
  return true;
}

void NvmlSource::Probe(GpuInfo* gpu) {
  const NvmlFunctions& f = library_->fn();
  const size_t i = gpu->index;
  nvmlDevice_t d = handles_[i];
  gpu->uuid = ReadString(f.uuid, d, nvml::NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  gpu->name = ReadString(f.name, d, nvml::NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  nvml::nvmlPciInfo_t pci{};
  if (f.pci_info && f.pci_info(d, &pci) == nvml::NVML_SUCCESS) {
    gpu->pci_bus_id.assign(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
  }
  GpuFastSample scratch;
  for (const FastField& field : FastFields()) {
    if (!field.present(f)) {
      gpu->field(field.field) = SymbolMissing(field.symbol);
      continue;
    }
    if (field.field == GpuField::kMemory) {
      ProbeMemory(gpu, &scratch);
      if (IsLost(i)) break;
      continue;
    }
    nvmlReturn_t ret = field.read(f, d, &scratch);
    if (CheckLost(i, ret)) break;
    gpu->field(field.field) = Judge(*library_, ret);
  }
  gpu->memory_total_bytes = scratch.mem_total_bytes;

  // Slow fields: probed with the cheapest form of each call.
  unsigned int value = 0, count = 0, pending = 0;
  auto probe = [&](GpuField field, bool present, const char* symbol, auto&& call) {
    if (IsLost(i)) return;
    if (!present) {
      gpu->field(field) = SymbolMissing(symbol);
      return;
    }
    nvmlReturn_t ret = call();
    if (!CheckLost(i, ret)) gpu->field(field) = Judge(*library_, ret);
  };
  probe(GpuField::kPcieThroughput, f.pcie_throughput != nullptr, "nvmlDeviceGetPcieThroughput",
        [&] { return f.pcie_throughput(d, nvml::NVML_PCIE_UTIL_TX_BYTES, &value); });
  constexpr GpuField kListFields[] = {GpuField::kComputeProcesses, GpuField::kGraphicsProcesses,
                                      GpuField::kMpsProcesses};
  constexpr const char* kListSymbols[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                          "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                          "nvmlDeviceGetMPSComputeRunningProcesses_v3"};
  for (size_t list = 0; list < process_list_fns_.size(); ++list) {
    nvml::nvmlDeviceGetProcesses_fn fn = process_list_fns_[list];
    probe(kListFields[list], fn != nullptr, kListSymbols[list], [&] {
      count = 0;  // a count query: nothing is written
      return fn(d, &count, nullptr);
    });
  }
  probe(GpuField::kProcessUtilization, f.process_utilization != nullptr,
        "nvmlDeviceGetProcessUtilization", [&] {
          count = 0;
          return f.process_utilization(d, nullptr, &count, 0);
        });
  const bool events = f.supported_events && f.event_set_create && f.event_set_free &&
                      f.register_events && f.event_wait;
  probe(GpuField::kXidEvents, events, "nvmlDeviceGetSupportedEventTypes", [&] {
    unsigned long long types = 0;
    nvmlReturn_t ret = f.supported_events(d, &types);
    if (ret == nvml::NVML_SUCCESS && !(types & nvml::nvmlEventTypeXidCriticalError)) {
      return nvml::NVML_ERROR_NOT_SUPPORTED;
    }
    return ret;
  });
  const bool gpm = f.gpm_support && f.gpm_sample_alloc && f.gpm_sample_free &&
                   f.gpm_sample_get && f.gpm_metrics_get;
  probe(GpuField::kGpm, gpm, "nvmlGpmQueryDeviceSupport", [&] {
    nvml::nvmlGpmSupport_t support{nvml::NVML_GPM_SUPPORT_VERSION, 0};
    nvmlReturn_t ret = f.gpm_support(d, &support);
    if (ret == nvml::NVML_SUCCESS && !support.isSupportedDevice) {
      return nvml::NVML_ERROR_NOT_SUPPORTED;  // before Hopper
    }
    return ret;
  });
  probe(GpuField::kMigMode, f.mig_mode != nullptr, "nvmlDeviceGetMigMode", [&] {
    nvmlReturn_t ret = f.mig_mode(d, &value, &pending);
    if (ret == nvml::NVML_SUCCESS) gpu->mig_enabled = value == nvml::NVML_DEVICE_MIG_ENABLE;
    return ret;
  });
  if (!IsLost(i) && !gpu->memory_reserved_bytes && scratch.mem_used_bytes) {
    EstimateReservedMemory(gpu, *scratch.mem_used_bytes);
  }
  if (IsLost(i)) {
    gpu->lost = true;
    gpu->lost_reason = library_->Describe(nvml::NVML_ERROR_GPU_IS_LOST);
  }
}

// _v2 answers the reservation; an error from it (a driver that exports the symbol but rejects
// the call) falls back to v1, whose `used` includes the reservation: corrected once it is known.
void NvmlSource::ProbeMemory(GpuInfo* gpu, GpuFastSample* scratch) {
  const NvmlFunctions& f = library_->fn();
  nvmlDevice_t d = handles_[gpu->index];
  nvmlReturn_t ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    ret = f.memory_v2(d, &m);
    if (CheckLost(gpu->index, ret)) return;
    if (ret == nvml::NVML_SUCCESS) {
      gpu->memory_reserved_bytes = m.reserved;
      gpu->memory_reserved_source = "nvmlDeviceGetMemoryInfo_v2";
      scratch->mem_total_bytes = m.total;
    }
  }
  if (ret != nvml::NVML_SUCCESS && f.memory_v1 != nullptr) {
    nvml::nvmlMemory_t m{};
    ret = f.memory_v1(d, &m);
    if (CheckLost(gpu->index, ret)) return;
    if (ret == nvml::NVML_SUCCESS) {
      scratch->mem_used_bytes = m.used;  // with the reservation: EstimateReservedMemory
      scratch->mem_total_bytes = m.total;
    }
  }
  gpu->field(GpuField::kMemory) = Judge(*library_, ret);
}

// On a driver without _v2, the reservation is what v1 calls used and no process holds. Only
// estimated when every process's memory is known (a hidden one would be counted as reserved).
void NvmlSource::EstimateReservedMemory(GpuInfo* gpu, uint64_t v1_used_bytes) {
  GpuSlowSample slow;
  ReadProcesses(gpu->index, &slow);
  if (!slow.processes_known) return;
  uint64_t held = 0;
  for (const GpuProcess& p : slow.processes) {
    if (!p.used_memory_bytes) return;
    held += *p.used_memory_bytes;
  }
  gpu->memory_reserved_bytes = v1_used_bytes - std::min(held, v1_used_bytes);
  gpu->memory_reserved_source = "estimated at start: v1 used less every process's memory";
}

nvmlReturn_t NvmlSource::ReadMemory(size_t index, GpuFastSample* out) const {
  const NvmlFunctions& f = library_->fn();
  nvmlDevice_t d = handles_[index];
  nvmlReturn_t ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    ret = f.memory_v2(d, &m);
    if (ret == nvml::NVML_SUCCESS) {
      out->mem_used_bytes = m.used;
      out->mem_total_bytes = m.total;
      return ret;
    }
    if (ret == nvml::NVML_ERROR_GPU_IS_LOST || f.memory_v1 == nullptr) return ret;
  }
  nvml::nvmlMemory_t m{};
  ret = f.memory_v1(d, &m);
  if (ret == nvml::NVML_SUCCESS) {
    const uint64_t reserved = gpus_[index].memory_reserved_bytes.value_or(0);
    out->mem_used_bytes = m.used - std::min<uint64_t>(reserved, m.used);
    out->mem_total_bytes = m.total;
  }
  return ret;
}

void NvmlSource::DecideProcessLists() {
  const NvmlFunctions& f = library_->fn();
  const bool conf_compute = library_->HasSymbol("nvmlDeviceGetConfComputeMemSizeInfo");
  const bool detail_list = library_->HasSymbol("nvmlDeviceGetRunningProcessDetailList");
  struct Kind {
    const char* name;
    const char* role;
    nvml::nvmlDeviceGetProcesses_fn modern;
    nvml::nvmlDeviceGetProcesses_fn v1;
  };
  const Kind kinds[] = {{"compute", "compute processes", f.compute_procs, f.compute_procs_v1},
                        {"graphics", "graphics processes", f.graphics_procs, f.graphics_procs_v1},
                        {"mps", "mps processes", f.mps_procs, f.mps_procs_v1}};
  for (const Kind& kind : kinds) {
    std::string symbol = library_->ResolvedSymbol(kind.role);
    if (symbol.empty()) symbol = library_->ResolvedSymbol(std::string(kind.role) + " (v1)");
    ProcessListFacts facts{symbol, driver_version_, conf_compute, detail_list};
    process_lists_.push_back({kind.name, symbol, ExpectedProcessEntryWidth(facts)});
    process_list_fns_.push_back(kind.modern != nullptr ? kind.modern : kind.v1);
  }
}

std::vector<std::string> NvmlSource::AbiWarnings() const {
  std::lock_guard<std::mutex> lock(warnings_mu_);
  return abi_warnings_;
}

void NvmlSource::Warn(std::string line) {
  std::lock_guard<std::mutex> lock(warnings_mu_);
  if (std::find(abi_warnings_.begin(), abi_warnings_.end(), line) == abi_warnings_.end()) {
    abi_warnings_.push_back(std::move(line));
  }
}

void NvmlSource::ReadFast(std::vector<GpuFastSample>* out) {
  out->assign(gpus_.size(), GpuFastSample{});
  const NvmlFunctions& f = library_->fn();
  const std::vector<FastField>& fields = FastFields();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    GpuFastSample& sample = (*out)[i];
    for (const FastField& field : fields) {
      if (IsLost(i)) break;
      if (!gpus_[i].field(field.field).supported) continue;
      CheckLost(i, field.read != nullptr ? field.read(f, handles_[i], &sample)
                                         : ReadMemory(i, &sample));
    }
    sample.lost = IsLost(i);
    if (watched_[i]) {
      sample.xid_errors = xid_count_[i].load(std::memory_order_relaxed);
      if (*sample.xid_errors > 0) sample.last_xid = last_xid_[i].load(std::memory_order_relaxed);
    }
  }
}

void NvmlSource::StartEventWatch() {
  const NvmlFunctions& f = library_->fn();
  if (event_thread_.joinable() || event_set_ != nullptr) return;
  bool any = false;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    any = any || (!IsLost(i) && gpus_[i].field(GpuField::kXidEvents).supported);
  }
  if (!any || f.event_set_create(&event_set_) != nvml::NVML_SUCCESS) {
    event_set_ = nullptr;
    return;
  }
  any = false;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (IsLost(i) || !gpus_[i].field(GpuField::kXidEvents).supported) continue;
    watched_[i] = f.register_events(handles_[i], nvml::nvmlEventTypeXidCriticalError,
                                    event_set_) == nvml::NVML_SUCCESS;
    any = any || watched_[i];
  }
  if (!any) {
    f.event_set_free(event_set_);
    event_set_ = nullptr;
    return;
  }
  event_thread_ = std::thread([this] { EventLoop(); });
}

void NvmlSource::StopEventWatch() {
  stop_events_.store(true);
  if (event_thread_.joinable()) event_thread_.join();
  if (event_set_ != nullptr) library_->fn().event_set_free(event_set_);
  event_set_ = nullptr;
}

void NvmlSource::EventLoop() {
  constexpr unsigned kWaitMs = 500;  // how long a stop may wait
  const NvmlFunctions& f = library_->fn();
  while (!stop_events_.load()) {
    nvml::nvmlEventData_t data{};
    nvmlReturn_t ret = f.event_wait(event_set_, &data, kWaitMs);
    if (ret == nvml::NVML_ERROR_TIMEOUT) continue;
    if (ret != nvml::NVML_SUCCESS) {  // not a busy loop on a driver that errs at once
      std::this_thread::sleep_for(std::chrono::milliseconds(kWaitMs));
      continue;
    }
    if (!(data.eventType & nvml::nvmlEventTypeXidCriticalError)) continue;
    auto it = std::find(handles_.begin(), handles_.end(), data.device);
    if (it == handles_.end()) continue;
    const size_t i = static_cast<size_t>(it - handles_.begin());
    const uint32_t xid = static_cast<uint32_t>(std::min<unsigned long long>(data.eventData, 999));
    last_xid_[i].store(xid, std::memory_order_relaxed);
    xid_count_[i].fetch_add(1, std::memory_order_relaxed);
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    std::lock_guard<std::mutex> lock(xid_mu_);
    if (pending_xid_.size() == kMaxPendingXid) pending_xid_.pop_front();
    pending_xid_.push_back({static_cast<unsigned>(i), xid, now_ms});
  }
}

std::vector<XidEvent> NvmlSource::DrainXidEvents() {
  std::lock_guard<std::mutex> lock(xid_mu_);
  std::vector<XidEvent> out(pending_xid_.begin(), pending_xid_.end());
  pending_xid_.clear();
  return out;
}

void NvmlSource::ReadSlow(std::vector<GpuSlowSample>* out) {
  out->assign(gpus_.size(), GpuSlowSample{});
  const NvmlFunctions& f = library_->fn();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    GpuSlowSample& sample = (*out)[i];
    if (!IsLost(i) && gpus_[i].field(GpuField::kPcieThroughput).supported) {
      unsigned int tx = 0, rx = 0;
      nvmlReturn_t ret = f.pcie_throughput(handles_[i], nvml::NVML_PCIE_UTIL_TX_BYTES, &tx);
      if (ret == nvml::NVML_SUCCESS) sample.pcie_tx_kbps = tx;
      if (!CheckLost(i, ret)) {
        ret = f.pcie_throughput(handles_[i], nvml::NVML_PCIE_UTIL_RX_BYTES, &rx);
        if (ret == nvml::NVML_SUCCESS) sample.pcie_rx_kbps = rx;
        CheckLost(i, ret);
      }
    }
    if (!IsLost(i)) ReadProcesses(i, &sample);
    if (!IsLost(i) && sample.processes_known) ReadProcessUtilization(i, &sample);
    if (!IsLost(i) && gpus_[i].field(GpuField::kGpm).supported) ReadGpm(i, &sample);
    sample.lost = IsLost(i);
    sample.read_mono_ns = MonotonicNow();
  }
}

void NvmlSource::ReadProcesses(size_t index, GpuSlowSample* out) {
  std::map<uint32_t, GpuProcess> by_pid;
  constexpr GpuField kFields[] = {GpuField::kComputeProcesses, GpuField::kGraphicsProcesses,
                                  GpuField::kMpsProcesses};
  bool known = true;
  for (size_t list = 0; list < process_list_fns_.size() && !IsLost(index); ++list) {
    const FieldSupport& support = gpus_[index].field(kFields[list]);
    // Compute must answer; graphics and MPS lists a GPU does not support are simply empty.
    if (!support.supported) {
      known = known && list != 0;
      continue;
    }
    known = ListProcesses(index, list, &by_pid) && known;
  }
  out->processes_known = known && !IsLost(index);
  out->processes.clear();
  for (auto& [pid, p] : by_pid) out->processes.push_back(p);
}

bool NvmlSource::ListProcesses(size_t index, size_t list, std::map<uint32_t, GpuProcess>* by_pid) {
  constexpr size_t kEntry = nvml::kMaxProcessEntryBytes;
  const ProcessListAbi& abi = process_lists_[list];
  if (proc_bytes_.empty()) proc_bytes_.resize(16 * kEntry);
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Room for `capacity` entries of the widest layout: no driver can write past the buffer.
    const unsigned int capacity = static_cast<unsigned int>(proc_bytes_.size() / kEntry);
    std::fill(proc_bytes_.begin(), proc_bytes_.end(), kProcessBufferSentinel);
    unsigned int count = capacity;
    nvmlReturn_t ret = process_list_fns_[list](handles_[index], &count, proc_bytes_.data());
    if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) {
      // Processes may start between two calls: leave room for a few more.
      proc_bytes_.resize((size_t{count} + 8) * kEntry);
      continue;
    }
    if (ret != nvml::NVML_SUCCESS || count > capacity) {
      CheckLost(index, ret);
      return false;
    }
    DecodedProcessList decoded =
        DecodeProcessList(proc_bytes_.data(), proc_bytes_.size(), count, abi.expected.bytes);
    if (decoded.mismatch) {
      Warn(decoded.entry_bytes == 0
               ? fmt::format("{} wrote {} bytes for {} process entries, which fits no known "
                             "entry width (expected {}: {}); the list is treated as unknown",
                             abi.symbol, decoded.written_bytes, count, abi.expected.bytes,
                             abi.expected.why)
               : fmt::format("{} wrote {}-byte process entries where {} were expected ({}); "
                             "they are read as {}-byte entries",
                             abi.symbol, decoded.entry_bytes, abi.expected.bytes,
                             abi.expected.why, decoded.entry_bytes));
    }
    if (decoded.entry_bytes == 0) return false;
    for (const ProcessEntry& e : decoded.entries) {
      GpuProcess& p = (*by_pid)[e.pid];
      p.pid = e.pid;
      if (list == 1) {
        p.graphics = true;
      } else {
        p.compute = true;
        p.mps = p.mps || list == 2;
      }
      if (e.used_memory_bytes != nvml::NVML_VALUE_NOT_AVAILABLE) {
        p.used_memory_bytes = std::max(p.used_memory_bytes.value_or(0), e.used_memory_bytes);
      }
    }
    return true;
  }
  return false;
}

// Each read takes a GPM sample; the metrics are the driver's over the time since the previous
// one (so the first read has none).
void NvmlSource::ReadGpm(size_t index, GpuSlowSample* out) {
  const NvmlFunctions& f = library_->fn();
  GpmState& g = gpm_[index];
  for (nvml::nvmlGpmSample_t& sample : g.samples) {
    if (sample == nullptr && f.gpm_sample_alloc(&sample) != nvml::NVML_SUCCESS) return;
  }
  nvmlReturn_t ret = f.gpm_sample_get(handles_[index], g.samples[g.current]);
  if (ret != nvml::NVML_SUCCESS) {
    CheckLost(index, ret);
    g.primed = false;
    return;
  }
  if (g.primed) {
    struct Wanted {
      unsigned int id;
      std::optional<double> GpmMetrics::*field;
    };
    static constexpr Wanted kWanted[] = {
        {nvml::NVML_GPM_METRIC_SM_UTIL, &GpmMetrics::sm_active_pct},
        {nvml::NVML_GPM_METRIC_SM_OCCUPANCY, &GpmMetrics::sm_occupancy_pct},
        {nvml::NVML_GPM_METRIC_ANY_TENSOR_UTIL, &GpmMetrics::tensor_active_pct},
        {nvml::NVML_GPM_METRIC_DRAM_BW_UTIL, &GpmMetrics::dram_active_pct},
        {nvml::NVML_GPM_METRIC_PCIE_TX_PER_SEC, &GpmMetrics::pcie_tx_mib_s},
        {nvml::NVML_GPM_METRIC_PCIE_RX_PER_SEC, &GpmMetrics::pcie_rx_mib_s},
        {nvml::NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, &GpmMetrics::nvlink_tx_mib_s},
        {nvml::NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, &GpmMetrics::nvlink_rx_mib_s},
    };
    if (!gpm_request_) gpm_request_ = std::make_unique<nvml::nvmlGpmMetricsGet_t>();
    nvml::nvmlGpmMetricsGet_t& request = *gpm_request_;
    request = {};
    request.version = nvml::NVML_GPM_METRICS_GET_VERSION;
    request.numMetrics = std::size(kWanted);
    request.sample1 = g.samples[g.current ^ 1];
    request.sample2 = g.samples[g.current];
    for (size_t k = 0; k < std::size(kWanted); ++k) request.metrics[k].metricId = kWanted[k].id;
    if (f.gpm_metrics_get(&request) == nvml::NVML_SUCCESS) {
      for (size_t k = 0; k < std::size(kWanted); ++k) {
        const nvml::nvmlGpmMetric_t& m = request.metrics[k];
        if (m.nvmlReturn == nvml::NVML_SUCCESS && std::isfinite(m.value) && m.value >= 0) {
          out->gpm.*kWanted[k].field = m.value;
        }
      }
    }
  }
  g.current ^= 1;
  g.primed = true;
}

void NvmlSource::ReadProcessUtilization(size_t index, GpuSlowSample* out) {
  if (!gpus_[index].field(GpuField::kProcessUtilization).supported) return;
  const NvmlFunctions& f = library_->fn();
  unsigned int count = 0;
  nvmlReturn_t ret = nvml::NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 3 && ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    count = static_cast<unsigned int>(util_buffer_.size());
    ret = f.process_utilization(handles_[index], util_buffer_.empty() ? nullptr : util_buffer_.data(),
                                &count, last_seen_us_[index]);
    if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) util_buffer_.resize(count + 8);
  }
  if (ret == nvml::NVML_ERROR_NOT_FOUND) {
    count = 0;  // no process used the GPU since the last read: every listed one was idle
  } else if (ret != nvml::NVML_SUCCESS) {
    CheckLost(index, ret);
    return;
  }
  struct Sum {
    uint64_t sm = 0, mem = 0, n = 0;
  };
  std::map<uint32_t, Sum> sums;
  for (unsigned int k = 0; k < count; ++k) {
    const auto& s = util_buffer_[k];
    Sum& sum = sums[s.pid];
    sum.sm += s.smUtil;
    sum.mem += s.memUtil;
    ++sum.n;
    last_seen_us_[index] = std::max(last_seen_us_[index], s.timeStamp);
  }
  for (GpuProcess& p : out->processes) {
    auto it = sums.find(p.pid);
    if (it == sums.end()) {  // no sample: it did not use the GPU in this window
      p.sm_util_pct = 0;
      p.mem_util_pct = 0;
      continue;
    }
    p.sm_util_pct = static_cast<uint32_t>(it->second.sm / it->second.n);
    p.mem_util_pct = static_cast<uint32_t>(it->second.mem / it->second.n);
  }
}

}  // namespace cgov
