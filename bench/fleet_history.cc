// cgov_fleet_history: a fleet's /metrics history in cgov's own metric shapes, as OpenMetrics text
// for `promtool tsdb create-blocks-from openmetrics`, and the truth it was made from as JSON.
//
//   cgov_fleet_history --nodes N [--first-node 0] [--gpus 8] [--hours 24] [--interval 60]
//                      [--start UNIX] [--seed 1] [--split-hours H] --out FILE.om --truth FILE.json
//
// Nodes first-node .. first-node + N - 1: a large fleet is written (and backfilled) in parts,
// each node the same whichever part it is in. With --split-hours, the history goes to
// FILE.om.0, FILE.om.1, ...: each a whole OpenMetrics file with the samples of H hours (the last
// one also the history's final scrape). promtool's backfill reads its whole input once per block
// it writes, so a month in one file is read 30 times; in day files, once.
//
// Each node's GPUs run jobs one after another: a job holds its GPU for 30 min to 6 h under its
// own pod (so identities come and go), with a utilization pattern of its kind (busy, starved,
// notebook left idle), and a GPU waits 0-2 h between jobs (truly idle). Every interval each daemon
// adds its interval's GPU-seconds to the phase it classifies, as `cgov daemon` does, and the
// holder's identity counters with it. Series carry the labels the daemon serves; only the
// families `cgov report --prometheus` reads are written. Used by bench/fleet_scale.sh and
// tests/e2e/fleet_rules_test.cc.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr const char* kPhases[] = {"truly_idle", "idle_held",     "underutilized",
                                   "productive", "compute_bound", "unknown"};
constexpr int kPhaseCount = 5;  // unknown is served and never counted here

struct Rng {  // splitmix64: the same fleet for the same seed on every machine
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int Uniform(int lo, int hi) { return lo + static_cast<int>(Next() % (hi - lo + 1)); }
};

struct Job {
  int node, gpu, first, last;  // steps [first, last]
  int kind;                    // 0 busy, 1 starved, 2 notebook
  std::string pod, user, project, team;
};

struct Step {        // one GPU at one step
  int8_t phase = 0;  // index in kPhases
  int8_t util = 0;   // percent
  int32_t job = -1;
};

int Classify(int util, bool held) {
  if (!held) return 0;
  if (util == 0) return 1;
  if (util < 60) return 2;
  if (util < 95) return 3;
  return 4;
}

// The history's text, in one file or one per --split-hours: each sample goes to the file of its
// step, and a family's TYPE line (and the closing EOF) to every file.
class Output {
 public:
  bool Open(const char* path, int parts, int steps_per_part) {
    steps_per_part_ = steps_per_part;
    for (int k = 0; k < parts; ++k) {
      std::string name = parts == 1 ? path : std::string(path) + "." + std::to_string(k);
      FILE* f = std::fopen(name.c_str(), "w");
      if (f == nullptr) {
        std::perror(name.c_str());
        Remove();
        return false;
      }
      buffers_.emplace_back(1 << 20);
      std::setvbuf(f, buffers_.back().data(), _IOFBF, buffers_.back().size());
      files_.push_back(f);
      names_.push_back(std::move(name));
      struct stat st {};
      regular_.push_back(fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode));
    }
    return true;
  }
  FILE* At(int step) const {
    return files_[std::min<size_t>(step / steps_per_part_, files_.size() - 1)];
  }
  void All(const char* line) const {
    for (FILE* f : files_) std::fputs(line, f);
  }
  // Closes every file; where a write to one failed (a full disk) or one fails to close, removes
  // them all (no partial history is left).
  bool Close() {
    bool ok = true;
    for (size_t k = 0; k < files_.size(); ++k) {
      const bool failed = std::ferror(files_[k]) != 0;
      if (std::fclose(files_[k]) != 0 || failed) {
        std::perror(names_[k].c_str());
        ok = false;
      }
    }
    files_.clear();
    if (!ok) Remove();
    return ok;
  }

 private:
  // Only the regular files: a device or a FIFO given as --out is left alone.
  void Remove() {
    for (FILE* f : files_) std::fclose(f);
    files_.clear();
    for (size_t k = 0; k < names_.size(); ++k) {
      if (regular_[k]) std::remove(names_[k].c_str());
    }
  }

  int steps_per_part_ = 1;
  std::vector<FILE*> files_;
  std::vector<std::string> names_;
  std::vector<bool> regular_;               // each file's: what Remove() may delete
  std::vector<std::vector<char>> buffers_;  // each file's (a moved vector keeps its storage)
};

}  // namespace

int main(int argc, char** argv) {
  int nodes = 0, first_node = 0, gpus = 8, hours = 24, interval = 60;
  long long start = 1785542400;  // 2026-08-01T00:00:00Z
  uint64_t seed = 1;
  int split_hours = 0;
  const char* out_path = nullptr;
  const char* truth_path = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--nodes")
      nodes = std::atoi(v);
    else if (flag == "--first-node")
      first_node = std::atoi(v);
    else if (flag == "--gpus")
      gpus = std::atoi(v);
    else if (flag == "--hours")
      hours = std::atoi(v);
    else if (flag == "--interval")
      interval = std::atoi(v);
    else if (flag == "--start")
      start = std::atoll(v);
    else if (flag == "--seed")
      seed = std::strtoull(v, nullptr, 10);
    else if (flag == "--split-hours")
      split_hours = std::atoi(v);
    else if (flag == "--out")
      out_path = v;
    else if (flag == "--truth")
      truth_path = v;
    else {
      std::fprintf(stderr, "cgov_fleet_history: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (nodes <= 0 || gpus <= 0 || hours <= 0 || interval <= 0 || split_hours < 0 ||
      split_hours > hours || split_hours * 3600 % interval != 0 || !out_path || !truth_path) {
    std::fprintf(
        stderr,
        "usage: cgov_fleet_history --nodes N [--first-node 0] [--gpus 8] [--hours 24] [--interval "
        "60] [--start UNIX] [--seed 1] [--split-hours H] --out FILE --truth FILE\n");
    return 2;
  }
  const int steps = hours * 3600 / interval + 1;  // step 0 is the daemons' start: all zero
  std::vector<Job> jobs;
  std::vector<Step> grid(static_cast<size_t>(nodes) * gpus * steps);
  auto at = [&](int n, int g, int k) -> Step& {
    return grid[(static_cast<size_t>(n) * gpus + g) * steps + k];
  };
  for (int n = 0; n < nodes; ++n) {
    Rng rng{seed * 1000003u + static_cast<uint64_t>(first_node + n)};
    int node_jobs = 0;
    for (int g = 0; g < gpus; ++g) {
      int k = 1 + rng.Uniform(0, 120 * 60 / interval);
      while (k < steps) {
        Job j;
        j.node = n;
        j.gpu = g;
        j.first = k;
        j.last = std::min(steps - 1, k + rng.Uniform(30, 360) * 60 / interval);
        j.kind = rng.Uniform(0, 9) < 6 ? 0 : (rng.Uniform(0, 1) ? 1 : 2);
        const int u = rng.Uniform(0, 199);
        j.user = "user" + std::to_string(u);
        j.project = "proj" + std::to_string(u % 23);
        j.team = "team" + std::to_string(u % 7);
        j.pod = "job-" + std::to_string(first_node + n) + "-" + std::to_string(node_jobs++);
        for (int s = j.first; s <= j.last; ++s) {
          Step& st = at(n, g, s);
          const int r = rng.Uniform(0, 99);
          int util = 0;
          if (j.kind == 0) util = r < 5 ? 0 : rng.Uniform(70, 100);
          if (j.kind == 1) util = r < 20 ? 0 : rng.Uniform(10, 55);
          if (j.kind == 2) util = r < 90 ? 0 : rng.Uniform(20, 90);
          st.util = static_cast<int8_t>(util);
          st.job = static_cast<int32_t>(jobs.size());
          st.phase = static_cast<int8_t>(Classify(util, true));
        }
        jobs.push_back(j);
        k = j.last + 1 + rng.Uniform(0, 120 * 60 / interval);
      }
    }
  }
  const int parts = split_hours > 0 ? (hours + split_hours - 1) / split_hours : 1;
  Output out;
  if (!out.Open(out_path, parts, split_hours > 0 ? split_hours * 3600 / interval : steps)) {
    return 1;
  }
  auto host = [&](int n) { return "node-" + std::to_string(first_node + n); };
  auto uuid = [&](int n, int g) {
    char b[64];
    std::snprintf(b, sizeof b, "GPU-%08x-0000-4000-8000-%012x", first_node + n, g);
    return std::string(b);
  };
  auto gpu_labels = [&](int n, int g) {
    char b[256];
    std::snprintf(b, sizeof b,
                  "gpu=\"%d\",UUID=\"%s\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\","
                  "Hostname=\"%s\",pci_bus_id=\"00000000:%02X:00.0\"",
                  g, uuid(n, g).c_str(), g, host(n).c_str(), 0x18 + g * 0x10);
    return std::string(b);
  };
  auto t = [&](int k) { return start + static_cast<long long>(k) * interval; };
  std::map<std::string, double> phase_truth;
  double busy_truth = 0;
  // Counters by GPU and phase.
  for (int busy = 0; busy < 2; ++busy) {
    const char* family = busy ? "cgov_gpu_busy_seconds" : "cgov_gpu_phase_seconds";
    out.All((std::string("# TYPE ") + family + " counter\n").c_str());
    for (int n = 0; n < nodes; ++n) {
      for (int g = 0; g < gpus; ++g) {
        const std::string labels = gpu_labels(n, g);
        for (int p = 0; p < kPhaseCount + (busy ? 0 : 1); ++p) {
          double value = 0;
          for (int k = 0; k < steps; ++k) {
            const Step& st = at(n, g, k);
            if (k > 0 && st.phase == p) value += busy ? interval * st.util / 100.0 : interval;
            std::fprintf(out.At(k), "%s_total{%s,phase=\"%s\"} %.10g %lld\n", family,
                         labels.c_str(), kPhases[p], value, t(k));
          }
          (busy ? busy_truth : phase_truth[kPhases[p]]) += value;
        }
      }
    }
  }
  // Energy (issue 62): each interval's power x time, by the phase it was in, a power reading
  // all along.
  auto watts = [&](int n, int g, int k) { return 70 + 6 * at(n, g, k).util; };
  double energy_truth = 0, idle_energy_truth = 0, power_known_truth = 0;
  out.All("# TYPE cgov_gpu_phase_energy_joules counter\n");
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = gpu_labels(n, g);
      for (int p = 0; p <= kPhaseCount; ++p) {
        double value = 0;
        for (int k = 0; k < steps; ++k) {
          if (k > 0 && at(n, g, k).phase == p) value += interval * watts(n, g, k);
          std::fprintf(out.At(k),
                       "cgov_gpu_phase_energy_joules_total{%s,phase=\"%s\"} %.10g %lld\n",
                       labels.c_str(), kPhases[p], value, t(k));
        }
        energy_truth += value;
        if (p <= 1) idle_energy_truth += value;  // truly idle, idle-held
      }
    }
  }
  out.All("# TYPE cgov_gpu_energy_seconds counter\n");
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = gpu_labels(n, g);
      for (int k = 0; k < steps; ++k) {
        std::fprintf(out.At(k), "cgov_gpu_energy_seconds_total{%s,basis=\"power\"} %lld %lld\n",
                     labels.c_str(), static_cast<long long>(k) * interval, t(k));
      }
      power_known_truth += static_cast<double>(steps - 1) * interval;
    }
  }
  // Gauges: memory, power, price.
  out.All("# TYPE cgov_gpu_memory_used_bytes gauge\n");
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = gpu_labels(n, g);
      for (int k = 0; k < steps; ++k) {
        const double bytes = at(n, g, k).job >= 0 ? 40.0 * (1 << 30) : 0;
        std::fprintf(out.At(k), "cgov_gpu_memory_used_bytes{%s} %.10g %lld\n", labels.c_str(),
                     bytes, t(k));
      }
    }
  }
  out.All("# TYPE cgov_gpu_power_watts gauge\n");
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = gpu_labels(n, g);
      for (int k = 0; k < steps; ++k) {
        std::fprintf(out.At(k), "cgov_gpu_power_watts{%s} %d %lld\n", labels.c_str(),
                     70 + 6 * at(n, g, k).util, t(k));
      }
    }
  }
  out.All("# TYPE cgov_gpu_price_usd_per_hour gauge\n");
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = gpu_labels(n, g);
      for (int k = 0; k < steps; ++k) {
        std::fprintf(out.At(k), "cgov_gpu_price_usd_per_hour{%s,source=\"flag\"} 3 %lld\n",
                     labels.c_str(), t(k));
      }
    }
  }
  // Identity counters: a job's series are born with its first interval and leave after its last.
  std::map<std::string, double> project_truth, project_energy_truth;
  double held_truth = 0, idle_held_truth = 0, idle_held_energy_truth = 0;
  const char* families[] = {"cgov_identity_gpu_seconds", "cgov_identity_held_seconds",
                            "cgov_identity_idle_held_seconds", "cgov_identity_energy_joules",
                            "cgov_identity_idle_held_energy_joules"};
  for (int f = 0; f < 5; ++f) {
    out.All((std::string("# TYPE ") + families[f] + " counter\n").c_str());
    for (const Job& j : jobs) {
      char labels[256];
      std::snprintf(labels, sizeof labels,
                    "Hostname=\"%s\",user=\"%s\",project=\"%s\",team=\"%s\",namespace=\"\","
                    "pod=\"%s\",container=\"\"",
                    host(j.node).c_str(), j.user.c_str(), j.project.c_str(), j.team.c_str(),
                    j.pod.c_str());
      for (int p = 0; p < (f == 0 ? kPhaseCount + 1 : 1); ++p) {
        double value = 0;
        for (int k = j.first; k <= j.last; ++k) {
          const Step& st = at(j.node, j.gpu, k);
          if (f == 0 && st.phase == p) value += interval;
          if (f == 1) value += interval;
          if (f == 2 && st.phase == 1) value += interval;
          // A job is alone on its GPU: all of the GPU's energy is its.
          if (f == 3) value += interval * watts(j.node, j.gpu, k);
          if (f == 4 && st.phase == 1) value += interval * watts(j.node, j.gpu, k);
          if (f == 0) {
            std::fprintf(out.At(k), "%s_total{%s,phase=\"%s\"} %.10g %lld\n", families[f], labels,
                         kPhases[p], value, t(k));
          } else {
            std::fprintf(out.At(k), "%s_total{%s} %.10g %lld\n", families[f], labels, value, t(k));
          }
        }
        if (f == 0) project_truth[j.project] += value;
        if (f == 1) held_truth += value;
        if (f == 2) idle_held_truth += value;
        if (f == 3) project_energy_truth[j.project] += value;
        if (f == 4) idle_held_energy_truth += value;
      }
    }
  }
  out.All("# TYPE cgov_ticks counter\n");
  for (int n = 0; n < nodes; ++n) {
    for (int k = 0; k < steps; ++k) {
      std::fprintf(out.At(k), "cgov_ticks_total{Hostname=\"%s\"} %d %lld\n", host(n).c_str(), k,
                   t(k));
    }
  }
  out.All("# EOF\n");
  if (!out.Close()) return 1;
  FILE* truth = std::fopen(truth_path, "w");
  if (truth == nullptr) {
    std::perror(truth_path);
    return 1;
  }
  std::fprintf(truth,
               "{\"nodes\": %d, \"gpus_per_node\": %d, \"hours\": %d, \"interval_s\": %d, "
               "\"start\": %lld, \"end\": %lld, \"identities\": %zu,\n \"phase_seconds\": {",
               nodes, gpus, hours, interval, start, t(steps - 1), jobs.size());
  bool first = true;
  for (const auto& [phase, v] : phase_truth) {
    std::fprintf(truth, "%s\"%s\": %.3f", first ? "" : ", ", phase.c_str(), v);
    first = false;
  }
  std::fprintf(truth,
               "},\n \"busy_seconds\": %.3f, \"held_seconds\": %.3f, \"idle_held_seconds\": "
               "%.3f,\n \"project_seconds\": {",
               busy_truth, held_truth, idle_held_truth);
  first = true;
  for (const auto& [project, v] : project_truth) {
    std::fprintf(truth, "%s\"%s\": %.3f", first ? "" : ", ", project.c_str(), v);
    first = false;
  }
  std::fprintf(truth,
               "},\n \"energy_joules\": %.3f, \"idle_energy_joules\": %.3f, "
               "\"power_known_seconds\": %.3f, \"idle_held_energy_joules\": %.3f,\n "
               "\"project_energy_joules\": {",
               energy_truth, idle_energy_truth, power_known_truth, idle_held_energy_truth);
  first = true;
  for (const auto& [project, v] : project_energy_truth) {
    std::fprintf(truth, "%s\"%s\": %.3f", first ? "" : ", ", project.c_str(), v);
    first = false;
  }
  std::fprintf(truth, "}}\n");
  return std::fclose(truth) == 0 ? 0 : 1;
}
