#include "validate/compare.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace cgov::validate {
namespace {

// A samples.jsonl: a header, then one tick a second on GPUs 0 and 1; GPU 0 at `util(t)` with the
// job's pid 777 holding `job_mib` when `job_mib` > 0, GPU 1 idle and empty.
std::string Samples(int seconds, double (*util)(int), int job_mib, bool processes_known = true) {
  std::string out = R"({"kind":"header","schema_version":1})"
                    "\n";
  for (int s = 0; s < seconds; ++s) {
    const std::string ts = fmt::format("2026-11-19T{:02}:{:02}:{:02}.000Z", 0, s / 60, s % 60);
    std::string procs =
        !processes_known ? "null"
        : job_mib > 0
            ? fmt::format(
                  R"([{{"compute":true,"graphics":false,"mps":false,"pid":777,"used_memory_bytes":{}}}])",
                  uint64_t(job_mib) << 20)
            : "[]";
    out += fmt::format(
        R"({{"kind":"tick","ts":"{}","job":{{"pids":[777]}},"gpus":[)"
        R"({{"index":0,"util_gpu_pct":{},"mem_used_bytes":{},"power_mw":{},"processes":{}}},)"
        R"({{"index":1,"util_gpu_pct":0,"mem_used_bytes":0,"power_mw":60000,"processes":[]}}]}})"
        "\n",
        ts, util(s), uint64_t(job_mib) << 20, 100000 + 3000 * util(s), procs);
  }
  return out;
}

// The same seconds as nvidia-smi prints them (TZ=UTC), shifted by half a second.
std::string Smi(int seconds, double (*util)(int), int mem_mib, double watts_offset = 0) {
  std::string out;
  for (int s = 0; s < seconds; ++s) {
    out += fmt::format("2026/11/19 00:{:02}:{:02}.500, 0, {}, {}, {:.2f}\n", s / 60, s % 60,
                       util(s), mem_mib, 100 + 3 * util(s) + watts_offset);
    out += fmt::format("2026/11/19 00:{:02}:{:02}.500, 1, 0, 0, [N/A]\n", s / 60, s % 60);
  }
  return out;
}

double Duty30(int) { return 30; }
double Zero(int) { return 0; }
double Full(int) { return 100; }

std::vector<Check> Judge(const std::string& pattern, const std::string& samples,
                         const std::string& smi) {
  Result<LoadPattern> p = ParsePattern(pattern, 2048ull << 20);
  EXPECT_TRUE(p.ok());
  Result<std::vector<CgovGpuTick>> ticks = ParseCgovSamples(samples, 0);
  EXPECT_TRUE(ticks.ok()) << ticks.status().message();
  Result<std::vector<SmiRow>> rows = ParseSmiCsv(smi);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  std::vector<SmiRow> on0;
  for (const SmiRow& r : *rows) {
    if (r.index == 0) on0.push_back(r);
  }
  return ComparePattern(*p, *ticks, on0, CompareOptions{});
}

std::string Failed(const std::vector<Check>& checks) {
  std::string out;
  for (const Check& c : checks) {
    if (!c.pass) out += c.what + " (" + c.cgov + " / " + c.smi + ", expected " + c.expected + "); ";
  }
  return out;
}

TEST(ComparePattern, AFaithfulMeasurementPassesEveryCheck) {
  struct Case {
    const char* pattern;
    double (*util)(int);
    int job_mib;
  };
  const Case cases[] = {
      {"duty30", Duty30, 2100}, {"idle", Zero, 0}, {"held", Zero, 2048}, {"full", Full, 2100}};
  for (const Case& c : cases) {
    std::vector<Check> checks =
        Judge(c.pattern, Samples(20, c.util, c.job_mib), Smi(20, c.util, c.job_mib));
    EXPECT_EQ(checks.size(), 6u) << c.pattern;
    EXPECT_EQ(Failed(checks), "") << c.pattern << "\n" << MarkdownRows(c.pattern, checks);
  }
}

TEST(ComparePattern, EachKindOfWrongMeasurementFailsItsCheck) {
  // cgov reads 50 % where the pattern is 30 % and nvidia-smi says 30 %.
  auto fifty = [](int) { return 50.0; };
  std::vector<Check> wrong_util = Judge("duty30", Samples(20, fifty, 2100), Smi(20, Duty30, 2100));
  EXPECT_NE(Failed(wrong_util).find("mean utilization"), std::string::npos) << Failed(wrong_util);
  EXPECT_NE(Failed(wrong_util).find("utilization vs nvidia-smi"), std::string::npos);
  // Memory: nvidia-smi sees 500 MiB more (the reservation counted on one side only).
  std::vector<Check> wrong_mem = Judge("held", Samples(20, Zero, 2048), Smi(20, Zero, 2548));
  EXPECT_EQ(Failed(wrong_mem).find("memory used vs nvidia-smi"), 0u) << Failed(wrong_mem);
  // Power 30 % apart.
  std::vector<Check> wrong_power = Judge("full", Samples(20, Full, 2100), Smi(20, Full, 2100, 150));
  EXPECT_EQ(Failed(wrong_power).find("power vs nvidia-smi"), 0u) << Failed(wrong_power);
  // The job's process never seen on the GPU (no process list): attribution and phase fail.
  std::vector<Check> no_procs =
      Judge("held", Samples(20, Zero, 2048, /*processes_known=*/false), Smi(20, Zero, 2048));
  EXPECT_NE(Failed(no_procs).find("process attribution"), std::string::npos) << Failed(no_procs);
  EXPECT_NE(Failed(no_procs).find("share of ticks idle_held"), std::string::npos);
  // A job that should hold nothing but is on the GPU.
  std::vector<Check> idle_but_held = Judge("idle", Samples(20, Zero, 2048), Smi(20, Zero, 2048));
  EXPECT_NE(Failed(idle_but_held).find("process attribution"), std::string::npos);
}

TEST(ComparePattern, TooShortARunIsAFailureNotAPass) {
  std::vector<Check> checks = Judge("duty30", Samples(3, Duty30, 2100), Smi(3, Duty30, 2100));
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].pass);
  checks = Judge("duty30", "", "");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].pass);
}

TEST(ParseSmiCsv, ReadsRowsAndUnknownsAndNamesBadFields) {
  Result<std::vector<SmiRow>> rows = ParseSmiCsv(
      "2026/11/19 00:00:01.500, 0, 35, 1234, 75.32\n"
      "2026/11/19 00:00:02.500, 1, [N/A], 0, [Not Supported]\n\n");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].unix_ms, 1795046401'500) << "2026-11-19T00:00:01.500Z";
  EXPECT_EQ((*rows)[0].util_pct, 35);
  EXPECT_EQ((*rows)[0].mem_used_mib, 1234);
  EXPECT_EQ((*rows)[0].power_w, 75.32);
  EXPECT_EQ((*rows)[1].index, 1);
  EXPECT_FALSE((*rows)[1].util_pct.has_value());
  EXPECT_FALSE((*rows)[1].power_w.has_value());
  struct Bad {
    const char* text;
    const char* error;
  };
  const Bad bads[] = {
      {"2026/11/19 00:00:01.500, 0, 35, 1234\n", "line 1: 4 columns, expected 5"},
      {"x\n2026/11/19 00:00:01, 0, abc, 1, 2\n", "line 1: 1 columns"},
      {"2026/11/19 00:00:01, 0, abc, 1, 2\n",
       "line 1, column utilization.gpu: 'abc' is not a number"},
      {"yesterday, 0, 1, 1, 2\n", "line 1, column timestamp"},
      {"2026/11/19 00:00:01, 0, 1, 1, 2\n2026/11/19 00:00:02, [N/A], 1, 1, 2\n",
       "line 2, column index"},
  };
  for (const Bad& b : bads) {
    Result<std::vector<SmiRow>> r = ParseSmiCsv(b.text);
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_NE(r.status().message().find(b.error), std::string::npos) << r.status().message();
  }
}

TEST(ParseCgovSamples, TakesOneGpusTicksAndTheJobsProcesses) {
  Result<std::vector<CgovGpuTick>> ticks = ParseCgovSamples(Samples(3, Duty30, 2048), 0);
  ASSERT_TRUE(ticks.ok()) << ticks.status().message();
  ASSERT_EQ(ticks->size(), 3u);
  const CgovGpuTick& t = (*ticks)[2];
  EXPECT_EQ(t.util_pct, 30);
  EXPECT_EQ(t.mem_used_mib, 2048);
  EXPECT_DOUBLE_EQ(*t.power_w, 190);
  EXPECT_TRUE(t.processes_known && t.job_on_gpu);
  EXPECT_EQ(t.job_memory_bytes, 2048ull << 20);
  Result<std::vector<CgovGpuTick>> gpu1 = ParseCgovSamples(Samples(3, Duty30, 2048), 1);
  ASSERT_TRUE(gpu1.ok());
  EXPECT_FALSE((*gpu1)[0].job_on_gpu);
  Result<std::vector<CgovGpuTick>> bad = ParseCgovSamples("{\"kind\":\"tick\"}\nnot json\n", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos) << bad.status().message();
  bad = ParseCgovSamples(R"({"kind":"header"})"
                         "\n{oops\n",
                         0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace cgov::validate
