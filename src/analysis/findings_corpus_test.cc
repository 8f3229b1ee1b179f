// The diagnosis corpus: named workloads, each with the findings it must and must not produce.
// docs/analysis.md's table of expected diagnoses is generated from this list (the second test
// fails when the two differ; CGOV_WRITE_DOCS=1 rewrites the table).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/cost.h"
#include "analysis/findings.h"
#include "analysis/savings.h"
#include "analysis/timeline.h"

namespace cgov {
namespace {

struct Workload {
  const char* name;
  const char* what;  // one line for the docs
  size_t gpus;
  int seconds;  // at 1 s ticks
  std::function<GpuPoint(int t, size_t g)> gpu;
  std::function<HostSample(int t)> host;  // null: nothing known of the host
  std::vector<std::string> must, must_not;
  // The job's own CPU, % of all the host's cores (cgov run knows it); null: unknown.
  std::function<double(int t)> job_cpu = nullptr;
};

GpuPoint At(double util, uint64_t held_mib = 20'000) {
  GpuPoint p;
  p.util_pct = util;
  p.compute_memory_bytes = held_mib << 20;
  p.memory_pct = 50;
  return p;
}

HostSample Cpu(double pct, double iowait = 0) {
  HostSample h;
  h.cpu_pct = pct;
  h.iowait_pct = iowait;
  return h;
}

const std::vector<Workload>& Corpus() {
  static const std::vector<Workload> corpus = {
      {"compute_bound",
       "4 GPUs steady at 98 %",
       4,
       600,
       [](int, size_t) { return At(98); },
       nullptr,
       {"compute_bound_precision"},
       {"input_pipeline_starvation", "steady_underutilization", "unexplained_waste"}},
      {"productive_75",
       "1 GPU steady at 75 %",
       1,
       600,
       [](int, size_t) { return At(75); },
       nullptr,
       {"unexplained_waste"},
       {"steady_underutilization", "input_pipeline_starvation"}},
      {"steady_50",
       "1 GPU steady at 50 %",
       1,
       600,
       [](int, size_t) { return At(50); },
       nullptr,
       {"steady_underutilization"},
       {"input_pipeline_starvation", "unexplained_waste"}},
      {"steady_34",
       "1 GPU steady at 34 %",
       1,
       600,
       [](int, size_t) { return At(34); },
       nullptr,
       {"steady_underutilization"},
       {"unexplained_waste"}},
      {"steady_20",
       "1 GPU steady at 20 % (80 % of it unused)",
       1,
       600,
       [](int, size_t) { return At(20); },
       nullptr,
       {"steady_underutilization"},
       {"compute_bound_precision", "unexplained_waste"}},
      {"bursty_5_95",
       "4 GPUs: 14 s at 95 %, 6 s at 5 % (a starved loader)",
       4,
       600,
       [](int t, size_t) { return At(t % 20 < 14 ? 95 : 5); },
       nullptr,
       {"input_pipeline_starvation"},
       {"compute_bound_precision", "steady_underutilization"}},
      {"bursty_15_95",
       "4 GPUs: 14 s at 95 %, 6 s at 15 %",
       4,
       600,
       [](int t, size_t) { return At(t % 20 < 14 ? 95 : 15); },
       nullptr,
       {"input_pipeline_starvation"},
       {"compute_bound_precision"}},
      {"bursty_30_100",
       "2 GPUs: 10 s at 100 %, 10 s at 30 %",
       2,
       600,
       [](int t, size_t) { return At(t % 20 < 10 ? 100 : 30); },
       nullptr,
       {"input_pipeline_starvation"},
       {"compute_bound_precision", "steady_underutilization"}},
      {"wobble_55_75",
       "1 GPU alternating 55 % and 75 % each second (no trough)",
       1,
       600,
       [](int t, size_t) { return At(t % 2 ? 55 : 75); },
       nullptr,
       {},
       {"input_pipeline_starvation"}},
      {"idle_held_notebook",
       "1 GPU over 3 h: a kernel computes 20 min an hour at 90 %, then holds its 20 GiB at 0 %",
       1,
       3 * 3600,
       [](int t, size_t) { return At(t % 3600 < 1200 ? 90 : 0); },
       nullptr,
       {"idle_held_gpu"},
       {"unused_gpu", "steady_underutilization", "input_pipeline_starvation"}},
      {"idle_tail",
       "2 GPUs at 95 % for 60 % of the run, then idle with memory held",
       2,
       600,
       [](int t, size_t) { return At(t < 360 ? 95 : 0); },
       nullptr,
       {"idle_tail"},
       {"input_pipeline_starvation"}},
      {"idle_head",
       "2 GPUs idle for the first 30 % (downloads), then 95 %",
       2,
       600,
       [](int t, size_t) { return At(t < 180 ? 0 : 95, t < 180 ? 0 : 20'000); },
       nullptr,
       {"idle_head"},
       {"unused_gpu"}},
      {"imbalance",
       "3 GPUs: two at 95 %, one at 12 % with memory held",
       3,
       600,
       [](int, size_t g) { return At(g == 2 ? 12 : 95); },
       nullptr,
       {"gpu_imbalance"},
       {"unused_gpu"}},
      {"one_unused_of_8",
       "8 GPUs: 7 at 95 %, GPU 7 computes nothing, no process on it",
       8,
       3600,
       [](int, size_t g) { return g == 7 ? At(0, 0) : At(95); },
       nullptr,
       {"unused_gpu"},
       {"gpu_imbalance", "unexplained_waste"}},
      {"unused_single",
       "1 GPU requested, never used",
       1,
       600,
       [](int, size_t) { return At(0, 0); },
       nullptr,
       {"unused_gpu"},
       {"idle_held_gpu"}},
      {"shared_box_gaps",
       "3 GPUs, each idle (no process) a third of the time between jobs",
       3,
       3600,
       [](int t, size_t g) { return (t / 600 + static_cast<int>(g)) % 3 == 0 ? At(0, 0) : At(80); },
       nullptr,
       {"idle_capacity"},
       {"unused_gpu"}},
      {"inference_server",
       "1 GPU, steady low load with request spikes (25 %, 90 % every 30 s)",
       1,
       600,
       [](int t, size_t) { return At(t % 30 == 0 ? 90 : 25); },
       nullptr,
       {"steady_underutilization"},
       {"input_pipeline_starvation", "idle_held_gpu"}},
      {"cpu_bound_host",
       "1 GPU at 40 % while the job's own processes saturate the host CPU (96 %, the job 90 %)",
       1,
       600,
       [](int, size_t) { return At(40); },
       [](int) { return Cpu(96); },
       {"cpu_bound_host"},
       {"io_wait", "cpu_contention"},
       [](int) { return 90.0; }},
      {"cpu_other_tenant",
       "1 GPU at 40 % while another tenant saturates the host CPU (96 %, the job 3 %)",
       1,
       600,
       [](int, size_t) { return At(40); },
       [](int) { return Cpu(96); },
       {"cpu_contention"},
       {"cpu_bound_host"},
       [](int) { return 3.0; }},
      {"io_wait",
       "1 GPU at 40 % while the host waits for storage (iowait 35 %)",
       1,
       600,
       [](int, size_t) { return At(40); },
       [](int) { return Cpu(50, 35); },
       {"io_wait"},
       {"cpu_bound_host"}},
      {"thermal",
       "1 GPU at 95 % with thermal slowdown reasons set",
       1,
       600,
       [](int, size_t) {
         GpuPoint p = At(95);
         p.clock_reasons = 0x40;
         return p;
       },
       nullptr,
       {"thermal_throttling"},
       {"power_capped"}},
      {"power_capped",
       "1 GPU at 95 % with the power cap reason set",
       1,
       600,
       [](int, size_t) {
         GpuPoint p = At(95);
         p.clock_reasons = 0x4;
         return p;
       },
       nullptr,
       {"power_capped"},
       {"thermal_throttling"}},
      {"memory_pressure",
       "1 GPU at 95 % using 92 % of its memory",
       1,
       600,
       [](int, size_t) {
         GpuPoint p = At(95);
         p.memory_pct = 92;
         return p;
       },
       nullptr,
       {"memory_pressure"},
       {"memory_slack"}},
      {"memory_slack",
       "1 GPU at 95 % using 8 % of its memory (a MIG-size candidate)",
       1,
       600,
       [](int, size_t) {
         GpuPoint p = At(95);
         p.memory_pct = 8;
         return p;
       },
       nullptr,
       {"memory_slack"},
       {"memory_pressure"}},
      {"mixed",
       "4 GPUs: compute-bound, starved, steady low, unused",
       4,
       1200,
       [](int t, size_t g) {
         switch (g) {
           case 0:
             return At(97);
           case 1:
             return At(t % 20 < 14 ? 95 : 5);
           case 2:
             return At(30);
           default:
             return At(0, 0);
         }
       },
       nullptr,
       {"input_pipeline_starvation", "steady_underutilization", "unused_gpu"},
       {"unexplained_waste"}},
  };
  return corpus;
}

struct Diagnosis {
  std::vector<Finding> findings;
  CostBlock cost;
};

Diagnosis Diagnose(const Workload& w) {
  UsageAccumulator acc(w.gpus, 1000);
  for (int t = 0; t < w.seconds; ++t) {
    std::vector<GpuPoint> points;
    for (size_t g = 0; g < w.gpus; ++g) points.push_back(w.gpu(t, g));
    std::optional<double> job;
    if (w.job_cpu) job = w.job_cpu(t);
    acc.Add(t * 1000, points, w.host ? w.host(t) : HostSample{}, job);
  }
  UsageTotals u = acc.Finish(w.seconds * 1000);
  ResolvedPrice price;
  price.per_gpu_hour = 4'000'000;
  price.source = "test";
  const std::vector<ResolvedPrice> prices(w.gpus, price);
  Diagnosis d;
  d.cost = ComputeCost(u, prices, std::nullopt, "");
  d.findings = Recommend(u, d.cost, prices);
  return d;
}

std::string Ids(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += (out.empty() ? "" : ", ") + f.id;
  return out;
}

TEST(DiagnosisCorpus, EachWorkloadGetsItsFindingsAndNotTheWrongOnes) {
  ASSERT_GE(Corpus().size(), 20u);
  for (const Workload& w : Corpus()) {
    const Diagnosis d = Diagnose(w);
    auto has = [&](const std::string& id) {
      for (const Finding& f : d.findings) {
        if (f.id == id) return true;
      }
      return false;
    };
    for (const std::string& id : w.must) {
      EXPECT_TRUE(has(id)) << w.name << ": expected " << id << "; got " << Ids(d.findings);
    }
    for (const std::string& id : w.must_not) {
      EXPECT_FALSE(has(id)) << w.name << ": did not expect " << id << "; got " << Ids(d.findings);
    }
    // Waste is never met with silence, and where a lever exists its savings are not zero.
    if (d.cost.waste_fraction >= 0.10) {
      EXPECT_FALSE(d.findings.empty()) << w.name;
      bool lever = false, unexplained = false;
      for (const Finding& f : d.findings) {
        lever = lever || (f.axis == Axis::kUtilization && f.savings_fraction > 0);
        unexplained = unexplained || f.id == "unexplained_waste";
      }
      EXPECT_TRUE(lever || unexplained) << w.name << ": " << Ids(d.findings);
    }
    // Observed values are measured, not the threshold echoed back.
    for (const Finding& f : d.findings) {
      if (f.observed_unit.empty()) continue;
      EXPECT_FALSE(f.observed == f.threshold && f.id != "xid_errors")
          << w.name << ": " << f.id << " observed " << f.observed << " = its threshold";
    }
  }
}

// The docs' table, from the corpus.
std::string Table() {
  std::string out =
      "| workload | what it is | must find | must not find |\n"
      "| --- | --- | --- | --- |\n";
  auto list = [](const std::vector<std::string>& ids) {
    std::string s;
    for (const std::string& id : ids) s += (s.empty() ? "" : ", ") + ("`" + id + "`");
    return s.empty() ? std::string("—") : s;
  };
  for (const Workload& w : Corpus()) {
    out += std::string("| `") + w.name + "` | " + w.what + " | " + list(w.must) + " | " +
           list(w.must_not) + " |\n";
  }
  return out;
}

TEST(DiagnosisCorpus, TheDocsTableIsGeneratedFromTheCorpus) {
  const std::string path = std::string(CGOV_FIXTURES_DIR) + "/../../docs/analysis.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string doc = buffer.str();
  const std::string begin =
      "<!-- diagnosis-corpus:begin (generated by src/analysis/findings_corpus_test.cc) -->\n";
  const std::string end = "<!-- diagnosis-corpus:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << path << " has no corpus table";
  ASSERT_NE(e, std::string::npos);
  const std::string current = doc.substr(b + begin.size(), e - b - begin.size());
  if (current != Table() && std::getenv("CGOV_WRITE_DOCS") != nullptr) {
    doc.replace(b + begin.size(), e - b - begin.size(), Table());
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(current, Table()) << "docs/analysis.md is out of date: run the unit tests with "
                                 "CGOV_WRITE_DOCS=1 to regenerate its corpus table";
}

}  // namespace
}  // namespace cgov
