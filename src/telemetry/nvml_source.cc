#include "telemetry/nvml_source.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/text.h"

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

}  // namespace

// A name or uuid (driver text: made safe like any outside string); empty when unknown.
std::string NvmlSource::ReadDeviceString(nvml::nvmlDeviceGetString_fn f, nvmlDevice_t d,
                                         unsigned size) {
  if (f == nullptr) return "";
  std::string buffer(size, '\0');
  if (f(d, buffer.data(), size) != nvml::NVML_SUCCESS) return "";
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return SafeText(buffer);
}

NvmlSource::NvmlSource(std::unique_ptr<NvmlLibrary> library, Clock* clock)
    : library_(std::move(library)), clock_(*clock) {}

NvmlSource::~NvmlSource() {
  StopEventWatch();
  for (const UnitState& u : units_) {
    for (nvml::nvmlGpmSample_t sample : u.gpm.samples) {
      if (sample != nullptr) library_->fn().gpm_sample_free(sample);
    }
  }
  if (initialised_) library_->fn().shutdown();
}

Result<std::unique_ptr<NvmlSource>> NvmlSource::Open(const std::string& library_path,
                                                     Clock* clock) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> library, NvmlLibrary::Load(library_path));
  std::unique_ptr<NvmlSource> source(new NvmlSource(std::move(library), clock));
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
  std::vector<Unit> units;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t handle = nullptr;
    ret = f.handle_by_index(i, &handle);
    if (ret != nvml::NVML_SUCCESS) {
      Unit lost;
      lost.info.index = i;
      lost.info.lost = true;
      lost.info.lost_reason = "nvmlDeviceGetHandleByIndex: " + library_->Describe(ret);
      units.push_back(std::move(lost));
      continue;
    }
    Unit whole;
    whole.info.index = i;
    whole.handle = whole.parent = handle;
    if (f.mig_mode != nullptr) {
      unsigned int current = 0, pending = 0;
      whole.mig_mode_ret = f.mig_mode(handle, &current, &pending);
      whole.mig_mode_on =
          whole.mig_mode_ret == nvml::NVML_SUCCESS && current == nvml::NVML_DEVICE_MIG_ENABLE;
    }
    if (!EnumerateMig(whole, &units)) units.push_back(std::move(whole));
  }
  const size_t n = units.size();
  shared_ = std::make_unique<SharedState[]>(n);
  units_.assign(n, UnitState{});
  for (size_t pos = 0; pos < n; ++pos) {
    gpus_.push_back(std::move(units[pos].info));
    units_[pos].handle = units[pos].handle;
    units_[pos].parent = units[pos].parent;
    units_[pos].mig_mode_ret = units[pos].mig_mode_ret;
    units_[pos].mig_mode_on = units[pos].mig_mode_on;
  }
  for (size_t pos = 0; pos < n; ++pos) {
    if (gpus_[pos].lost) {
      shared_[pos].lost = true;
      continue;
    }
    Probe(pos);
  }
  return Status::Ok();
}

bool NvmlSource::CheckLost(size_t index, nvmlReturn_t ret) {
  if (ret != nvml::NVML_ERROR_GPU_IS_LOST) return false;
  shared_[index].lost.store(true, std::memory_order_relaxed);
  return true;
}

void NvmlSource::Probe(size_t i) {
  const NvmlFunctions& f = library_->fn();
  GpuInfo* gpu = &gpus_[i];
  nvmlDevice_t d = units_[i].handle;
  gpu->uuid = ReadDeviceString(f.uuid, d, nvml::NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  gpu->name = ReadDeviceString(f.name, d, nvml::NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  nvml::nvmlPciInfo_t pci{};
  if (f.pci_info && f.pci_info(units_[i].parent, &pci) == nvml::NVML_SUCCESS) {
    gpu->pci_bus_id.assign(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
  }
  GpuFastSample scratch;
  for (const FastField& field : FastFields()) {
    if (!field.present(f)) {
      gpu->field(field.field) = SymbolMissing(field.symbol);
      continue;
    }
    if (field.field == GpuField::kMemory) {
      const nvmlReturn_t ret = ProbeMemory(i, &scratch);
      if (IsLost(i)) break;
      gpu->field(field.field) = Judge(*library_, ret);
      continue;
    }
    if (gpu->mig && (field.field == GpuField::kPower || field.field == GpuField::kTotalEnergy)) {
      ProbeMigPower(i, field.field, &scratch);
      if (IsLost(i)) break;
      continue;
    }
    nvmlReturn_t ret = field.read(f, d, &scratch);
    if (CheckLost(i, ret)) break;
    gpu->field(field.field) = Judge(*library_, ret);
  }
  gpu->memory_total_bytes = scratch.mem_total_bytes;
  ProbeSlowFields(i);
  if (!IsLost(i) && !gpu->memory_reserved_bytes && scratch.mem_used_bytes) {
    EstimateReservedMemory(i, *scratch.mem_used_bytes);
  }
  if (gpu->mig && !gpu->field(GpuField::kUtilization).supported &&
      gpu->field(GpuField::kGpm).supported) {
    units_[i].util_from_gpm = true;
    gpu->field(GpuField::kUtilization) = {
        true, "from GPM graphics activity (a MIG instance has no utilization rates)"};
  }
  if (IsLost(i)) {
    gpu->lost = true;
    gpu->lost_reason = library_->Describe(nvml::NVML_ERROR_GPU_IS_LOST);
  }
}

// A MIG instance's power: its parent's reading x its memory share (docs/analysis.md, "Energy");
// its energy counter: none (a MIG handle's would be the whole GPU's, and each instance would
// count the GPU's energy again).
void NvmlSource::ProbeMigPower(size_t i, GpuField field, GpuFastSample* scratch) {
  GpuInfo* gpu = &gpus_[i];
  if (field == GpuField::kTotalEnergy) {
    gpu->field(field) = {false, "a MIG instance: the driver's counter is the whole GPU's"};
    return;
  }
  const double share = gpu->mig->price_share;
  if (!(share > 0)) {
    gpu->field(field) = {false, "a MIG instance whose share of the GPU is unknown"};
    return;
  }
  const nvmlReturn_t ret =
      ReadUint(library_->fn().power_usage, units_[i].parent, &scratch->power_mw);
  if (CheckLost(i, ret)) return;
  gpu->field(field) = Judge(*library_, ret);
  if (gpu->field(field).supported) {
    units_[i].mig_power_share = share;
    gpu->field(field).reason = fmt::format(
        "the GPU's power x the instance's {:.1f} % memory share (an estimate)", share * 100);
  }
}

// Slow fields: probed with the cheapest form of each call.
// Events and GPM are the physical GPU's (a MIG instance's through its parent's handle).
void NvmlSource::ProbeSlowFields(size_t i) {
  const NvmlFunctions& f = library_->fn();
  GpuInfo* gpu = &gpus_[i];
  nvmlDevice_t d = units_[i].handle;
  nvmlDevice_t parent = units_[i].parent;
  unsigned int value = 0, count = 0;
  auto probe = [&](GpuField field, bool present, const char* symbol, auto&& call) {
    if (IsLost(i)) return;
    if (!present) {
      gpu->field(field) = SymbolMissing(symbol);
      return;
    }
    nvmlReturn_t ret = call();
    if (!CheckLost(i, ret)) gpu->field(field) = Judge(*library_, ret);
  };
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
    nvmlReturn_t ret = f.supported_events(parent, &types);
    if (ret == nvml::NVML_SUCCESS && !(types & nvml::nvmlEventTypeXidCriticalError)) {
      return nvml::NVML_ERROR_NOT_SUPPORTED;
    }
    return ret;
  });
  const bool gpm = f.gpm_support && f.gpm_sample_alloc && f.gpm_sample_free && f.gpm_metrics_get &&
                   (gpu->mig ? f.gpm_mig_sample_get != nullptr : f.gpm_sample_get != nullptr);
  probe(GpuField::kGpm, gpm, gpu->mig ? "nvmlGpmMigSampleGet" : "nvmlGpmQueryDeviceSupport", [&] {
    nvml::nvmlGpmSupport_t support{nvml::NVML_GPM_SUPPORT_VERSION, 0};
    nvmlReturn_t ret = f.gpm_support(parent, &support);
    if (ret == nvml::NVML_SUCCESS && !support.isSupportedDevice) {
      return nvml::NVML_ERROR_NOT_SUPPORTED;  // before Hopper
    }
    return ret;
  });
  // GPM measures PCIe too: then the throughput call, ~20 ms of sleep a call, is not made.
  if (gpu->field(GpuField::kGpm).supported) {
    units_[i].pcie_from_gpm = true;
    gpu->field(GpuField::kPcieThroughput) = {
        true, "from GPM (nvmlDeviceGetPcieThroughput sleeps ~20 ms a call: not used)"};
  } else {
    probe(GpuField::kPcieThroughput, f.pcie_throughput != nullptr, "nvmlDeviceGetPcieThroughput",
          [&] { return f.pcie_throughput(d, nvml::NVML_PCIE_UTIL_TX_BYTES, &value); });
  }
  probe(GpuField::kMemoryHealth, f.remapped_rows != nullptr || f.retired_pages != nullptr,
        "nvmlDeviceGetRemappedRows", [&] {
          MemoryHealth health;
          nvmlReturn_t ret = ReadMemoryHealth(i, &health);
          if (ret == nvml::NVML_SUCCESS) units_[i].health = gpu->memory_health = health;
          units_[i].health_read_ns = clock_.MonotonicNs();
          return ret;
        });
  probe(GpuField::kMigMode, f.mig_mode != nullptr, "nvmlDeviceGetMigMode", [&] {
    const nvml::nvmlReturn_t ret = units_[i].mig_mode_ret;  // read at enumeration
    if (ret == nvml::NVML_SUCCESS) gpu->mig_enabled = units_[i].mig_mode_on;
    return ret;
  });
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
  // A MIG GPU's power, read once a sample for all its instances (they follow each other).
  nvmlDevice_t power_of = nullptr;
  int64_t parent_power_mw = -1;  // -1: not read
  for (size_t i = 0; i < gpus_.size(); ++i) {
    GpuFastSample& sample = (*out)[i];
    for (const FastField& field : fields) {
      if (IsLost(i)) break;
      if (!gpus_[i].field(field.field).supported) continue;
      if (field.field == GpuField::kTotalEnergy) {
        if (energy_period_ns_ <= 0) continue;
        const int64_t now = clock_.MonotonicNs();
        if (units_[i].energy_read_ns == 0 || now - units_[i].energy_read_ns >= energy_period_ns_) {
          const nvmlReturn_t ret = field.read(f, units_[i].handle, &sample);
          CheckLost(i, ret);
          units_[i].energy_mj = ret == nvml::NVML_SUCCESS ? sample.energy_mj : std::nullopt;
          units_[i].energy_read_ns = now;
          sample.energy_fresh = units_[i].energy_mj.has_value();
        }
        sample.energy_mj = units_[i].energy_mj;
        continue;
      }
      if (field.field == GpuField::kPower && units_[i].mig_power_share > 0) {
        if (power_of != units_[i].parent) {
          power_of = units_[i].parent;
          std::optional<uint32_t> read;
          CheckLost(i, ReadUint(f.power_usage, power_of, &read));
          parent_power_mw = read ? static_cast<int64_t>(*read) : -1;
        }
        if (parent_power_mw >= 0) {
          sample.power_mw = static_cast<uint32_t>(
              std::llround(static_cast<double>(parent_power_mw) * units_[i].mig_power_share));
        }
        continue;
      }
      if (field.field == GpuField::kUtilization && units_[i].util_from_gpm) {
        const int pct = shared_[i].gpm_util.load(std::memory_order_relaxed);
        if (pct >= 0) sample.util_gpu_pct = static_cast<uint32_t>(pct);
        continue;
      }
      CheckLost(i, field.read != nullptr ? field.read(f, units_[i].handle, &sample)
                                         : ReadMemory(i, &sample));
    }
    sample.lost = IsLost(i);
    if (units_[i].watched) {
      sample.xid_errors = shared_[i].xid_count.load(std::memory_order_relaxed);
      if (*sample.xid_errors > 0)
        sample.last_xid = shared_[i].last_xid.load(std::memory_order_relaxed);
    }
  }
}

void NvmlSource::ReadSlow(std::vector<GpuSlowSample>* out) {
  DrainEvents();
  // Reset in place: each GPU's process vector keeps its capacity for the next read.
  out->resize(gpus_.size());
  for (GpuSlowSample& sample : *out) {
    std::vector<GpuProcess> processes = std::move(sample.processes);
    processes.clear();
    sample = GpuSlowSample{};
    sample.processes = std::move(processes);
  }
  const NvmlFunctions& f = library_->fn();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    GpuSlowSample& sample = (*out)[i];
    if (!IsLost(i) && gpus_[i].field(GpuField::kPcieThroughput).supported &&
        !units_[i].pcie_from_gpm) {
      unsigned int tx = 0, rx = 0;
      nvmlReturn_t ret = f.pcie_throughput(units_[i].handle, nvml::NVML_PCIE_UTIL_TX_BYTES, &tx);
      if (ret == nvml::NVML_SUCCESS) sample.pcie_tx_kbps = tx;
      if (!CheckLost(i, ret)) {
        ret = f.pcie_throughput(units_[i].handle, nvml::NVML_PCIE_UTIL_RX_BYTES, &rx);
        if (ret == nvml::NVML_SUCCESS) sample.pcie_rx_kbps = rx;
        CheckLost(i, ret);
      }
    }
    if (!IsLost(i)) ReadProcesses(i, &sample);
    // ~2.4 ms of CPU a call on driver 580 even when it finds nothing: only for GPUs with a
    // process to attribute it to.
    if (!IsLost(i) && sample.processes_known && !sample.processes.empty()) {
      ReadProcessUtilization(i, &sample);
    }
    const bool no_process = sample.processes_known && sample.processes.empty();
    if (!IsLost(i) && gpus_[i].field(GpuField::kGpm).supported) {
      // The utilization call (~12 us) only where it can spare the activity metrics (~1-2 ms).
      const auto idle = [&] {
        const std::optional<nvml::nvmlUtilization_t> u = UtilizationNow(i);
        return u && u->gpu == 0 && u->memory == 0;
      };
      ReadGpm(i, no_process && units_[i].no_process_before && idle(), &sample);
    }
    units_[i].no_process_before = no_process;
    if (!IsLost(i) && gpus_[i].field(GpuField::kMemoryHealth).supported) {
      const int64_t now = clock_.MonotonicNs();
      if (now - units_[i].health_read_ns >= kMemoryHealthPeriodNs) {
        MemoryHealth health;
        const nvmlReturn_t ret = ReadMemoryHealth(i, &health);
        if (!CheckLost(i, ret))
          units_[i].health = ret == nvml::NVML_SUCCESS ? std::optional(health) : std::nullopt;
        units_[i].health_read_ns = now;
      }
      sample.memory_health = units_[i].health;
    }
    sample.lost = IsLost(i);
    sample.read_mono_ns = clock_.MonotonicNs();
  }
}

}  // namespace cgov
