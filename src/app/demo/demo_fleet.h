// A deterministic simulated shared GPU box for `cgov demo`: training jobs with starved data
// loaders, a notebook left over lunch, a fine-tune with an idle tail, an inference server, a
// free card with only a desktop on it; several users, projects and teams. Same seed, same ticks.
#ifndef CGOV_APP_DEMO_DEMO_FLEET_H_
#define CGOV_APP_DEMO_DEMO_FLEET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "store/history_store.h"
#include "store/tick_record.h"

namespace cgov {

class DemoFleet {
 public:
  // Registers the GPUs, identities and commands in `store` (within the caller's transaction).
  static Result<DemoFleet> Create(int gpus, uint64_t seed, HistoryStore* store);

  // The tick at ts_ms (simulated wall clock, Unix ms). Pure apart from the random stream.
  void Tick(int64_t ts_ms, StoredTick* tick);

  // What runs on the first `gpus` GPUs, by role ("GPUs 0-3: alice's DDP pre-training ...; GPU 4:
  // ..."): only the GPUs the demo has.
  static std::string Description(int gpus);

 private:
  struct Process {
    uint32_t pid = 0;
    bool graphics = false;
    uint32_t identity_id = 0;
    uint32_t command_id = 0;
  };
  struct Gpu {
    uint32_t id = 0;
    int role = 0;
    std::vector<Process> processes;  // by role, in the order Tick lists them
  };
  uint64_t Next();  // splitmix64
  double Noise(double amplitude);

  std::vector<Gpu> gpus_;
  uint64_t state_ = 0;
};

}  // namespace cgov

#endif  // CGOV_APP_DEMO_DEMO_FLEET_H_
