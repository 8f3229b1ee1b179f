#include "app/demo/demo_fleet.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cgov {
namespace {

// What runs on a GPU, by role (GPU index modulo 8).
enum Role { kTraining, kNotebook, kFinetune, kInference, kFree };
constexpr Role kRoles[8] = {kTraining, kTraining, kTraining,  kTraining,
                            kNotebook, kFinetune, kInference, kFree};

struct Who {
  const char* user;
  const char* project;
  const char* team;
  const char* command;
};
constexpr Who kAlice = {"alice", "llm-pretrain", "research", "python"};
constexpr Who kCarol = {"carol", "eval", "research", "python"};
constexpr Who kBob = {"bob", "notebooks", "applied", "ipykernel"};
constexpr Who kDave = {"dave", "vision-finetune", "applied", "python"};
constexpr Who kErin = {"erin", "serving", "platform", "tritonserver"};
constexpr Who kErinStub = {"erin", "serving", "platform", "triton_python_b"};
constexpr Who kGdm = {"gdm", "", "", "Xorg"};

// The demo week's time of day (not os/clock.h's Clock).
struct WeekTime {
  int weekday;  // 0 = Monday
  double hour;  // 0..24, fractional
  int64_t second_of_day;
};

WeekTime At(int64_t ts_ms) {
  const int64_t day = ts_ms / kDayMs;
  const int64_t ms = ts_ms % kDayMs;
  return {static_cast<int>((day + 3) % 7), static_cast<double>(ms) / kHourMs, ms / 1000};
}

bool Weekday(const WeekTime& c) { return c.weekday < 5; }

}  // namespace

std::string DemoFleet::Description(int gpus) {
  static constexpr std::pair<Role, const char*> kWhat[] = {
      {kTraining,
       "alice's DDP pre-training (data loader starves it: bursts of 95 % then 5 %), sharing with "
       "carol's daytime evals"},
      {kNotebook,
       "bob's notebook, busy mornings and afternoons, left holding 20 GiB over lunch and every "
       "evening until midnight"},
      {kFinetune, "dave's fine-tune, done by 06:00 but holding its memory until 10:00"},
      {kInference, "erin's inference server, 20-60 % with the day"},
      {kFree, "free, only the login screen's Xorg on it"}};
  std::string out;
  for (const auto& [role, what] : kWhat) {
    // The GPUs of this role, as runs of consecutive indexes: "0-3", "4", "0-3, 8-11".
    std::string runs;
    int count = 0;
    for (int i = 0; i < gpus; ++i) {
      if (kRoles[i % 8] != role || (i > 0 && kRoles[(i - 1) % 8] == role)) continue;
      int last = i;
      while (last + 1 < gpus && kRoles[(last + 1) % 8] == role) ++last;
      runs += fmt::format("{}{}", runs.empty() ? "" : ", ",
                          last > i ? fmt::format("{}-{}", i, last) : std::to_string(i));
      count += last - i + 1;
    }
    if (count == 0) continue;
    out +=
        fmt::format("{}{} {}: {}", out.empty() ? "" : "; ", count > 1 ? "GPUs" : "GPU", runs, what);
  }
  return out;
}

Result<DemoFleet> DemoFleet::Create(int gpus, uint64_t seed, HistoryStore* store) {
  DemoFleet fleet;
  fleet.state_ = seed;
  auto process = [&](uint32_t pid, const Who& who, bool graphics) -> Result<Process> {
    IdentityRecord r;
    r.user = who.user;
    r.owner = who.user;
    r.project = who.project;
    r.team = who.team;
    Process p{pid, graphics, 0, 0};
    CGOV_ASSIGN_OR_RETURN(p.identity_id, store->IdentityId(r));
    CGOV_ASSIGN_OR_RETURN(p.command_id, store->CommandId(who.command));
    return p;
  };
  for (int i = 0; i < gpus; ++i) {
    Gpu g;
    GpuRecord record;
    record.uuid = fmt::format("GPU-demo0000-0000-4000-8000-{:012x}", i);
    record.index = i;
    record.name = "NVIDIA H100 80GB HBM3";
    record.mem_total_mib = 81559;
    record.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x18 + i);
    CGOV_ASSIGN_OR_RETURN(g.id, store->GpuId(record));
    g.role = kRoles[i % 8];
    const auto base = static_cast<uint32_t>(40000 + 100 * i);
    std::vector<std::pair<const Who*, bool>> who;
    switch (g.role) {
      case kTraining:
        who = {{&kAlice, false}, {&kCarol, false}};
        break;
      case kNotebook:
        who = {{&kBob, false}, {&kBob, false}};
        break;
      case kFinetune:
        who = {{&kDave, false}};
        break;
      case kInference:
        who = {{&kErin, false},
               {&kErinStub, false},
               {&kErinStub, false},
               {&kErinStub, false},
               {&kErinStub, false}};
        break;
      case kFree:
        who = {{&kGdm, true}};
        break;
    }
    for (size_t k = 0; k < who.size(); ++k) {
      CGOV_ASSIGN_OR_RETURN(Process p,
                            process(base + static_cast<uint32_t>(k), *who[k].first, who[k].second));
      g.processes.push_back(p);
    }
    fleet.gpus_.push_back(std::move(g));
  }
  return fleet;
}

uint64_t DemoFleet::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double DemoFleet::Noise(double amplitude) {
  return (static_cast<double>(Next() >> 11) / 9007199254740992.0 * 2 - 1) * amplitude;
}

void DemoFleet::Tick(int64_t ts_ms, StoredTick* tick) {
  const WeekTime c = At(ts_ms);
  tick->gpus.clear();
  tick->processes.clear();
  tick->cpu_pct_x10 = static_cast<uint32_t>(std::clamp(350 + Noise(150), 0.0, 1000.0));
  tick->iowait_pct_x10 = static_cast<uint32_t>(std::clamp(20 + Noise(20), 0.0, 1000.0));
  tick->mem_used_pct_x10 = 420;
  for (const Gpu& g : gpus_) {
    const auto pos = static_cast<uint32_t>(tick->gpus.size());
    double util = 0;
    std::vector<std::pair<const Process*, uint32_t>> live;  // process, MiB
    switch (g.role) {
      case kTraining: {
        // Pre-training runs 02:00-22:00; the loader starves it 8 s of every 20.
        if (c.hour >= 2 && c.hour < 22) {
          util = c.second_of_day % 20 < 12 ? 95 + Noise(3) : 5 + Noise(3);
          live.push_back({&g.processes[0], 71680});
        }
        if (Weekday(c) && c.hour >= 9 && c.hour < 18) {
          live.push_back({&g.processes[1], 2048});
          util = std::min(100.0, util + 10);
        }
        break;
      }
      case kNotebook: {
        const bool working =
            Weekday(c) && ((c.hour >= 9 && c.hour < 12) || (c.hour >= 14 && c.hour < 18));
        util = working ? 45 + Noise(15) : 0;
        if (Weekday(c) && c.hour >= 9) live.push_back({&g.processes[0], 20480});
        if (Weekday(c) && c.hour >= 9 && c.hour < 18) live.push_back({&g.processes[1], 4096});
        break;
      }
      case kFinetune:
        if (c.hour < 10) live.push_back({&g.processes[0], 61440});
        util = c.hour < 6 ? 82 + Noise(5) : 0;
        break;
      case kInference: {
        util = 40 + 20 * std::sin((c.hour - 9) / 24 * 2 * M_PI) + Noise(5);
        live.push_back({&g.processes[0], 30720});
        for (size_t k = 1; k < g.processes.size(); ++k) live.push_back({&g.processes[k], 1024});
        break;
      }
      case kFree:
        live.push_back({&g.processes[0], 128});
        break;
    }
    util = std::clamp(std::round(util), 0.0, 100.0);
    uint64_t mem = 512;
    for (const auto& [p, mib] : live) mem += mib;
    StoredGpu s;
    s.gpu_id = g.id;
    s.processes_known = true;
    using F = StoredGpuField;
    s.set(F::kUtilPct, static_cast<uint64_t>(util));
    s.set(F::kMemUtilPct, static_cast<uint64_t>(util * 0.6));
    s.set(F::kMemUsedMib, mem);
    s.set(F::kPowerDw, static_cast<uint64_t>(700 + util * 60 + Noise(20)));
    s.set(F::kPowerLimitDw, 7000);
    s.set(F::kTempC, static_cast<uint64_t>(33 + util * 0.4));
    s.set(F::kSmClockMhz, util > 0 ? 1980 : 345);
    s.set(F::kMemClockMhz, 2619);
    s.set(F::kClockReasons, util > 0 ? 0 : 1);
    s.set(F::kEncUtilPct, 0);
    s.set(F::kDecUtilPct, 0);
    s.set(F::kPcieTxKbps, static_cast<uint64_t>(util * 9000));
    s.set(F::kPcieRxKbps, static_cast<uint64_t>(util * 21000));
    tick->gpus.push_back(std::move(s));
    for (const auto& [p, mib] : live) {
      StoredProcess sp;
      sp.gpu_pos = pos;
      sp.pid = p->pid;
      sp.compute = !p->graphics;
      sp.graphics = p->graphics;
      sp.identity_id = p->identity_id;
      sp.command_id = p->command_id;
      sp.mem_used_mib = mib;
      if (!p->graphics)
        sp.sm_util_pct = static_cast<uint32_t>(util / static_cast<double>(live.size()));
      tick->processes.push_back(sp);
    }
  }
}

}  // namespace cgov
