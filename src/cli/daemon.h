// `cgov daemon --db PATH [--interval 30s] [--retain 90d]`: records every GPU and every GPU
// process of this host into a history database until SIGINT/SIGTERM.
#ifndef CGOV_CLI_DAEMON_H_
#define CGOV_CLI_DAEMON_H_

#include <vector>

#include "cli/process_attribution.h"
#include "store/tick_record.h"
#include "telemetry/sampler.h"

namespace cgov::cli {

// The stored form of a sampled tick, into *out (its vectors' capacity kept: the daemon builds one
// every tick). `gpu_ids[i]` is the dictionary id of the source's GPU i. Process identities come
// from `attributor` (read once per process).
Status BuildStoredTick(const TickSample& tick, const std::vector<uint32_t>& gpu_ids,
                       ProcessAttributor* attributor, StoredTick* out);

// Registers a source's GPUs in the history dictionary; their ids in source order.
Result<std::vector<uint32_t>> RegisterGpus(const std::vector<GpuInfo>& gpus, HistoryStore* store);

int RunDaemon(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_DAEMON_H_
