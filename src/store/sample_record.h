// The records of samples.jsonl (format: docs/samples-jsonl.md): a header, then one tick per line.
#ifndef CGOV_STORE_SAMPLE_RECORD_H_
#define CGOV_STORE_SAMPLE_RECORD_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tags.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/job_tree.h"
#include "telemetry/sampler.h"

namespace cgov {

inline constexpr int kSamplesSchemaVersion = 1;

struct SamplesHeader {
  std::vector<std::string> command;
  Tags tags;
  HostInfo host;
  double interval_s = 0;
  int64_t started_at_ns = 0;
  bool nvml_ok = false;
  std::string nvml_error;
  std::string driver_version;
  std::vector<GpuInfo> gpus;
};

nlohmann::json HeaderRecord(const SamplesHeader& header);

// Replaces *out with the tick's line (no newline). `start_mono_ns`: the run's start on the
// monotonic clock, so t_s counts from 0. Streams the JSON (this runs every tick); the output is
// what nlohmann::json would dump for the same record, keys sorted.
void WriteTickRecord(const TickSample& tick, const JobTreeSample& job, int64_t start_mono_ns,
                     std::string* out);

}  // namespace cgov

#endif  // CGOV_STORE_SAMPLE_RECORD_H_
