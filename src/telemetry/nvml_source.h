// The GPUs of this machine as NVML sees them: enumerated and probed once, then sampled.
//
// Reads are split in two so that slow driver calls never stretch the sampling tick:
//   ReadFast  utilization, memory, power, temperature, clocks, reasons, codecs (microseconds each)
//   ReadSlow  process lists, per-process utilization, GPM, PCIe throughput (milliseconds on real
//             drivers)
// The sampler calls ReadFast on its tick and ReadSlow on a thread of its own.
//
// Two calls cost far more on a real driver than the rest (driver 580.159.04 on an H100,
// docs/validation.md): nvmlDeviceGetTotalEnergyConsumption, ~2.9 ms of CPU a call, so the energy
// counter is read only by those who ask (the daemon) and at most every SetEnergyPeriod; and
// nvmlDeviceGetPcieThroughput, which sleeps ~20 ms and spends ~0.7 ms of CPU a call, so a GPU with
// GPM (Hopper and later) takes its PCIe rates from GPM instead and the call is never made.
//
// On that driver a few more calls each wait on an RPC to the GPU's firmware (GSP) and spend a
// millisecond or more of CPU a call, found with perf on an H200 (docs/validation.md):
// nvmlDeviceGetProcessUtilization (~2.4 ms) and nvmlGpmMetricsGet when it is asked for any
// activity metric (SM, occupancy, tensor, DRAM, graphics: ~1-1.9 ms; PCIe and NVLink alone cost
// ~4 us). So ReadSlow asks per-process utilization only of a GPU with two or more processes
// listed (the one process of a GPU is given the GPU's own utilization), and leaves the activity
// metrics out of a GPM read when the GPU listed no process at either end of the sample window
// and its utilization is 0 (they are then 0: without a process no kernel can run).
#ifndef CGOV_TELEMETRY_NVML_SOURCE_H_
#define CGOV_TELEMETRY_NVML_SOURCE_H_

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "os/env.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/nvml_loader.h"
#include "telemetry/nvml_process_layout.h"

namespace cgov {

// One process-list call as this driver answers it (for doctor and docs/nvml-abi.md).
struct ProcessListAbi {
  std::string kind;    // "compute", "graphics", "mps"
  std::string symbol;  // resolved symbol; empty when absent
  ProcessEntryWidth expected;
};

class NvmlSource {
 public:
  // Loads the library (see NvmlLibrary::Load), initialises NVML and probes every GPU's fields.
  // Unavailable when there is no driver or nvmlInit fails; the message says why and what to do.
  // A machine with a driver and no GPU is ok, with gpus() empty.
  // `clock` (outliving the source) stamps each read and ages the health and energy reads: the
  // caller's Env's, so that a read's age is measured on the same clock as its tick.
  static Result<std::unique_ptr<NvmlSource>> Open(const std::string& library_path,
                                                  Clock* clock = &Env::Default()->clock());

  ~NvmlSource();  // nvmlShutdown
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  const NvmlLibrary& library() const { return *library_; }
  const std::string& driver_version() const { return driver_version_; }  // empty when unknown
  const std::string& nvml_version() const { return nvml_version_; }
  std::optional<int> cuda_driver_version() const { return cuda_driver_version_; }  // 12040 = 12.4

  // Identity and supported fields, as probed at Open. Lost flags there are as of the probe.
  const std::vector<GpuInfo>& gpus() const { return gpus_; }

  // True once any call on GPU `index` returned NVML_ERROR_GPU_IS_LOST; it is then never queried
  // again. Thread-safe.
  bool IsLost(size_t index) const { return shared_[index].lost.load(std::memory_order_relaxed); }

  // The process-list calls and the entry width expected of each, decided at Open.
  const std::vector<ProcessListAbi>& process_lists() const { return process_lists_; }

  // What the driver did that its declared ABI does not say (a process list written with another
  // entry width than expected), one line each, deduplicated. Thread-safe.
  std::vector<std::string> AbiWarnings() const;

  // Resizes *out to gpus().size() and fills the fast fields. Unsupported or failed fields stay
  // unknown. Thread safety: may run concurrently with ReadSlow, not with itself.
  void ReadFast(std::vector<GpuFastSample>* out);

  // Reads the energy counter (GpuFastSample::energy_mj) at most once per `period_ns`, the samples
  // between carrying the last value (a counter: nothing is lost, it is only as old as the
  // period; GpuFastSample::energy_fresh marks the sample that read it); 0, the default, never
  // reads it. Several callers (/metrics, the history's energy ledger): the shortest period asked
  // wins. Call before sampling starts.
  void SetEnergyPeriod(int64_t period_ns) {
    if (period_ns > 0 && (energy_period_ns_ <= 0 || period_ns < energy_period_ns_)) {
      energy_period_ns_ = period_ns;
    }
  }

  // Registers every GPU whose driver reports Xid critical errors (field xid_events) for them;
  // each ReadSlow then drains what the driver queued, and their count and last code appear in
  // ReadFast's samples. Idempotent. Call before sampling starts (not thread-safe with ReadSlow).
  void StartEventWatch();
  // The Xid events received since the last call, oldest first (at most kMaxPendingXid are
  // kept; older ones are dropped, the counters still count them). Thread-safe.
  std::vector<XidEvent> DrainXidEvents();
  static constexpr size_t kMaxPendingXid = 1024;

  // Resizes *out to gpus().size() and fills the slow fields, stamping read_mono_ns from
  // CLOCK_MONOTONIC. Thread safety: may run concurrently with ReadFast, not with itself.
  void ReadSlow(std::vector<GpuSlowSample>* out);
  // How often ReadSlow re-reads memory health (remapped rows or retired pages); between reads
  // each sample carries the last value.
  static constexpr int64_t kMemoryHealthPeriodNs = 60'000'000'000;

 private:
  NvmlSource(std::unique_ptr<NvmlLibrary> library, Clock* clock);
  Status Init();
  // A sampled unit before probing: a whole GPU, or a MIG instance with its parent's handle.
  struct Unit {
    GpuInfo info;
    nvml::nvmlDevice_t handle = nullptr;
    nvml::nvmlDevice_t parent = nullptr;  // == handle for a whole GPU
    // nvmlDeviceGetMigMode of the parent, read once at enumeration (probed from it).
    nvml::nvmlReturn_t mig_mode_ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
    bool mig_mode_on = false;
  };
  // Appends GPU `index`'s MIG instances to *units (`whole` is the GPU's own unit, its MIG mode
  // read); false when it is not in MIG mode or has none (then the whole GPU is sampled).
  bool EnumerateMig(const Unit& whole, std::vector<Unit>* units);
  static std::string ReadDeviceString(nvml::nvmlDeviceGetString_fn f, nvml::nvmlDevice_t d,
                                      unsigned size);
  void Probe(size_t pos);
  void ProbeSlowFields(size_t pos);
  void ProbeMigPower(size_t pos, GpuField field, GpuFastSample* scratch);
  // Reads memory once (_v2, else v1) and keeps the reservation; returns what the call answered.
  nvml::nvmlReturn_t ProbeMemory(size_t pos, GpuFastSample* scratch);
  void EstimateReservedMemory(size_t pos, uint64_t v1_used_bytes);
  void DecideProcessLists();
  // Records a lost GPU; returns true when `ret` says so.
  bool CheckLost(size_t index, nvml::nvmlReturn_t ret);
  nvml::nvmlReturn_t ReadMemory(size_t index, GpuFastSample* out) const;
  void ReadProcesses(size_t index, GpuSlowSample* out);
  // Lists one kind into *by_pid; false when the list could not be read.
  bool ListProcesses(size_t index, size_t list, std::vector<GpuProcess>* processes);
  void ReadProcessUtilization(size_t index, GpuSlowSample* out);
  // nvmlDeviceGetUtilizationRates now; nullopt where the GPU has none of its own (MIG) or the
  // call failed.
  std::optional<nvml::nvmlUtilization_t> UtilizationNow(size_t index);
  // `quiet`: the GPU ran nothing in the window (no process, 0 %): only PCIe and NVLink are asked,
  // the activity metrics are 0.
  void ReadGpm(size_t index, bool quiet, GpuSlowSample* out);
  // Reads GPU `index`'s remapped rows, or where the GPU has none its retired pages.
  nvml::nvmlReturn_t ReadMemoryHealth(size_t index, MemoryHealth* out);
  void Warn(std::string line);
  void DrainEvents();  // from ReadSlow
  void StopEventWatch();

  std::unique_ptr<NvmlLibrary> library_;
  Clock& clock_;  // read times, health and energy reads' ages
  bool initialised_ = false;
  std::string driver_version_;
  std::string nvml_version_;
  std::optional<int> cuda_driver_version_;
  std::vector<GpuInfo> gpus_;
  // What NvmlSource keeps of each sampled unit (a whole GPU or a MIG instance), at its position
  // in gpus_: one struct a unit rather than a vector a field.
  struct GpmState {  // two samples, the older one and the one taken now, alternating
    std::array<nvml::nvmlGpmSample_t, 2> samples{};
    int current = 0;
    bool primed = false;  // samples[current ^ 1] holds the previous read
  };
  struct UnitState {
    nvml::nvmlDevice_t handle = nullptr;  // the GPU's or MIG device's
    nvml::nvmlDevice_t parent = nullptr;  // the physical GPU's
    // nvmlDeviceGetMigMode's answer and whether MIG is on, until probed.
    nvml::nvmlReturn_t mig_mode_ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
    bool mig_mode_on = false;
    // MIG instances have no utilization call: theirs is GPM's graphics activity, kept in
    // SharedState::gpm_util by ReadGpm and read by ReadFast.
    bool util_from_gpm = false;
    // A MIG instance's power is its parent GPU's reading x this share (its memory's, as its
    // price), never the MIG handle's answer, which some drivers give as the whole GPU's; 0 for
    // a whole GPU. Its energy counter is not read (the whole GPU's too).
    double mig_power_share = 0;
    bool pcie_from_gpm = false;  // PCIe rates from GPM: nvmlDeviceGetPcieThroughput not called
    // The energy counter's last read and when.
    std::optional<uint64_t> energy_mj;
    int64_t energy_read_ns = 0;
    bool watched = false;  // Xid events: written before the thread starts, then read-only
    // Slow path (ReadSlow only; Probe before it).
    unsigned long long last_seen_us = 0;
    bool no_process_before = false;  // the last read listed no process (processes known)
    GpmState gpm;
    // Memory health changes rarely and is read once a minute; the last read is carried.
    std::optional<MemoryHealth> health;
    int64_t health_read_ns = 0;
    bool retired_pages_only = false;  // the GPU answered NOT_SUPPORTED for remapped rows
  };
  // What one thread writes and another reads, a unit's: apart, as atomics.
  struct SharedState {
    std::atomic<int> gpm_util{-1};  // percent, -1 until GPM's first metrics
    std::atomic<bool> lost{false};
    std::atomic<uint64_t> xid_count{0};
    std::atomic<uint32_t> last_xid{0};
  };
  std::vector<UnitState> units_;
  std::unique_ptr<SharedState[]> shared_;
  int64_t energy_period_ns_ = 0;               // how often the energy counter is read
  std::vector<ProcessListAbi> process_lists_;  // compute, graphics, mps
  std::vector<nvml::nvmlDeviceGetProcesses_fn> process_list_fns_;  // parallel to process_lists_
  // Xid events: the set, drained by ReadSlow; per-GPU counters read by ReadFast.
  nvml::nvmlEventSet_t event_set_ = nullptr;
  std::mutex xid_mu_;
  std::deque<XidEvent> pending_xid_;
  mutable std::mutex warnings_mu_;
  std::vector<std::string> abi_warnings_;
  // Slow-path state (touched by ReadSlow only; Probe before it).
  std::vector<unsigned char> proc_bytes_;  // room for N entries of kMaxProcessEntryBytes
  std::vector<nvml::nvmlProcessUtilizationSample_t> util_buffer_;
  std::unique_ptr<nvml::nvmlGpmMetricsGet_t> gpm_request_;  // 13 KB, reused
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_NVML_SOURCE_H_
