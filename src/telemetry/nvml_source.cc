#include "telemetry/nvml_source.h"

#include <time.h>

#include <algorithm>
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

nvmlReturn_t ReadMemory(const NvmlFunctions& f, nvmlDevice_t d, GpuFastSample* s) {
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    nvmlReturn_t ret = f.memory_v2(d, &m);
    if (ret == nvml::NVML_SUCCESS) {
      s->mem_used_bytes = m.used;
      s->mem_total_bytes = m.total;
    }
    return ret;
  }
  nvml::nvmlMemory_t m{};
  nvmlReturn_t ret = f.memory_v1(d, &m);
  if (ret == nvml::NVML_SUCCESS) {
    s->mem_used_bytes = m.used;
    s->mem_total_bytes = m.total;
  }
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
      {GpuField::kMemory, "nvmlDeviceGetMemoryInfo_v2",
       [](const NvmlFunctions& f) { return f.memory_v2 != nullptr || f.memory_v1 != nullptr; },
       ReadMemory},
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
  unsigned int count = 0;
  ret = f.device_count(&count);
  if (ret != nvml::NVML_SUCCESS) {
    return Unavailable(fmt::format("{}: nvmlDeviceGetCount failed: {}", library_->path(),
                                   library_->Describe(ret)));
  }
  gpus_.resize(count);
  handles_.assign(count, nullptr);
  lost_ = std::make_unique<std::atomic<bool>[]>(count);
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
  probe(GpuField::kComputeProcesses, f.compute_procs || f.compute_procs_v1,
        "nvmlDeviceGetComputeRunningProcesses_v3", [&] {
          count = 0;
          return f.compute_procs ? f.compute_procs(d, &count, nullptr)
                                 : f.compute_procs_v1(d, &count, nullptr);
        });
  probe(GpuField::kGraphicsProcesses, f.graphics_procs || f.graphics_procs_v1,
        "nvmlDeviceGetGraphicsRunningProcesses_v3", [&] {
          count = 0;
          return f.graphics_procs ? f.graphics_procs(d, &count, nullptr)
                                  : f.graphics_procs_v1(d, &count, nullptr);
        });
  probe(GpuField::kProcessUtilization, f.process_utilization != nullptr,
        "nvmlDeviceGetProcessUtilization", [&] {
          count = 0;
          return f.process_utilization(d, nullptr, &count, 0);
        });
  probe(GpuField::kMigMode, f.mig_mode != nullptr, "nvmlDeviceGetMigMode", [&] {
    nvmlReturn_t ret = f.mig_mode(d, &value, &pending);
    if (ret == nvml::NVML_SUCCESS) gpu->mig_enabled = value == nvml::NVML_DEVICE_MIG_ENABLE;
    return ret;
  });
  if (IsLost(i)) {
    gpu->lost = true;
    gpu->lost_reason = library_->Describe(nvml::NVML_ERROR_GPU_IS_LOST);
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
      CheckLost(i, field.read(f, handles_[i], &sample));
    }
    sample.lost = IsLost(i);
  }
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
    sample.lost = IsLost(i);
    sample.read_mono_ns = MonotonicNow();
  }
}

void NvmlSource::ReadProcesses(size_t index, GpuSlowSample* out) {
  const NvmlFunctions& f = library_->fn();
  nvmlDevice_t d = handles_[index];
  std::map<uint32_t, GpuProcess> by_pid;
  // Lists one kind into by_pid; returns false when the list could not be read.
  auto list = [&](GpuField field, auto modern, auto legacy, bool graphics) {
    if (!gpus_[index].field(field).supported) return false;
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned int count = static_cast<unsigned int>(
          modern ? proc_buffer_.size() : proc_buffer_v1_.size());
      nvmlReturn_t ret = modern ? modern(d, &count, proc_buffer_.data())
                                : legacy(d, &count, proc_buffer_v1_.data());
      if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) {
        // Processes may start between two calls: leave room for a few more.
        if (modern) {
          proc_buffer_.resize(count + 8);
        } else {
          proc_buffer_v1_.resize(count + 8);
        }
        continue;
      }
      if (ret != nvml::NVML_SUCCESS) {
        CheckLost(index, ret);
        return false;
      }
      for (unsigned int k = 0; k < count; ++k) {
        uint32_t pid = modern ? proc_buffer_[k].pid : proc_buffer_v1_[k].pid;
        unsigned long long used =
            modern ? proc_buffer_[k].usedGpuMemory : proc_buffer_v1_[k].usedGpuMemory;
        GpuProcess& p = by_pid[pid];
        p.pid = pid;
        (graphics ? p.graphics : p.compute) = true;
        if (used != nvml::NVML_VALUE_NOT_AVAILABLE) {
          p.used_memory_bytes = std::max(p.used_memory_bytes.value_or(0), uint64_t{used});
        }
      }
      return true;
    }
    return false;
  };
  bool compute_ok = list(GpuField::kComputeProcesses, f.compute_procs, f.compute_procs_v1, false);
  bool graphics_ok =
      !IsLost(index) &&
      list(GpuField::kGraphicsProcesses, f.graphics_procs, f.graphics_procs_v1, true);
  out->processes_known = compute_ok && (graphics_ok ||
                         !gpus_[index].field(GpuField::kGraphicsProcesses).supported);
  out->processes.clear();
  for (auto& [pid, p] : by_pid) out->processes.push_back(p);
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
  if (ret != nvml::NVML_SUCCESS) {  // NOT_FOUND: no samples since the last read
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
    if (it == sums.end()) continue;
    p.sm_util_pct = static_cast<uint32_t>(it->second.sm / it->second.n);
    p.mem_util_pct = static_cast<uint32_t>(it->second.mem / it->second.n);
  }
}

}  // namespace cgov
