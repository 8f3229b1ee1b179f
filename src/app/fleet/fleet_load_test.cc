// The fleet loader against a fake Prometheus API (our own HTTP server on loopback answering
// canned JSON by path, query and time): hour bucketing with partial first and last hours and a
// query_range for the whole ones, identities, prices, means, and the errors a user can act on.
#include "app/fleet/fleet_load.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "core/time_format.h"
#include "export/http_server.h"
#include "fakes/fake_http_server.h"
#include "store/prometheus_source.h"

namespace cgov {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const int64_t kSince = *ParseTimestampMs("2026-11-16T10:30:00Z");  // a Monday
const int64_t kUntil = *ParseTimestampMs("2026-11-16T13:15:00Z");
double S(const char* t) { return static_cast<double>(*ParseTimestampMs(t)) / 1000; }

// A query's time as Prometheus reads it: RFC 3339, or decimal seconds.
double TimeParam(const std::string& text) {
  if (Result<int64_t> ms = ParseTimestampMs(text); ms.ok()) return static_cast<double>(*ms) / 1000;
  return std::stod(text);
}

// A step as Prometheus reads it: a duration (1800000ms), or decimal seconds made nanoseconds
// and then milliseconds, both truncated (2060.490 s is 2060489 ms).
double StepParam(const std::string& text) {
  if (text.ends_with("ms")) return static_cast<double>(std::stoll(text)) / 1000;
  const auto ns = static_cast<int64_t>(std::stod(text) * 1e9);
  return static_cast<double>(ns / 1'000'000) / 1000;
}

json GpuLabels(const char* phase) {
  return {{"Hostname", "n1"},
          {"UUID", "GPU-0"},
          {"gpu", "0"},
          {"modelName", "NVIDIA H100"},
          {"pci_bus_id", "00000000:18:00.0"},
          {"phase", phase}};
}
// A productive GPU of its own on `host`.
json ProductiveGpuOn(const std::string& host) {
  json l = GpuLabels("productive");
  l["Hostname"] = host;
  l["UUID"] = "GPU-" + host;
  return l;
}
// Each host's productive seconds by hour, counted from `first_hour`.
std::map<std::string, std::map<int64_t, int64_t>> ProductiveSecondsByHost(const HistoryInput& in,
                                                                          int64_t first_hour) {
  std::map<uint32_t, std::string> host_of;
  for (const GpuRecord& g : in.gpus) host_of[g.id] = g.host;
  std::map<std::string, std::map<int64_t, int64_t>> seconds;
  for (const HourBucket& b : in.hours) {
    for (const auto& [id, g] : b.gpus) {
      const int64_t ms = g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
      if (ms != 0) seconds[host_of[id]][b.hour - first_hour] += ms / 1000;
    }
  }
  return seconds;
}
// The window's productive GPU time and its identities' held time, in ms.
std::pair<int64_t, int64_t> ProductiveAndHeldMs(const HistoryInput& in) {
  int64_t productive = 0, held = 0;
  for (const HourBucket& b : in.hours) {
    for (const auto& [id, g] : b.gpus) {
      productive += g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
    }
    for (const auto& [key, h] : b.identities) held += h.held_ms;
  }
  return {productive, held};
}
json Identity(json extra = json::object()) {
  json l = {{"Hostname", "n1"}, {"user", "alice"}, {"project", "llm"}};
  l.update(extra);
  return l;
}
json Vector(std::vector<std::pair<json, double>> series) {
  json result = json::array();
  for (auto& [labels, v] : series)
    result.push_back({{"metric", labels}, {"value", {0, std::to_string(v)}}});
  return {{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}};
}

class FakePrometheus {
 public:
  ServedResponse Answer(const ServedRequest& r) {
    {
      std::lock_guard lock(mu_);
      seen_.push_back(r);
    }
    ServedResponse out;
    out.content_type = "application/json";
    const std::string q = r.query.count("query") ? r.query.at("query") : "";
    const bool busy = q.find("cgov_gpu_busy_seconds_total") != std::string::npos;
    const bool phase = q.find("cgov_gpu_phase_seconds_total") != std::string::npos;
    // The patterns: high as long as busy (same values); swings 3, 8, 20, 31 at the four times
    // and 33 at the end.
    const bool pattern = q.find("cgov_gpu_pattern_seconds_total") != std::string::npos;
    const bool swings = q.find("cgov_gpu_swings_total") != std::string::npos;
    // Energy (issue 62): 400 W whenever the GPU is counted (400 J a phase second), a power
    // reading all along (its seconds with one are the phase seconds).
    const bool energy = q.find("cgov_gpu_phase_energy_joules_total") != std::string::npos;
    const bool energy_time = q.find("cgov_gpu_energy_seconds_total") != std::string::npos;
    json pattern_labels = GpuLabels("");
    pattern_labels.erase("phase");
    json swing_labels = pattern_labels;
    json basis_labels = pattern_labels;
    basis_labels["basis"] = "power";
    pattern_labels["pattern"] = "high";
    const double scale = energy ? 400 : 1;
    if (q.starts_with("group by (Hostname, job) (last_over_time(")) {  // the honor-labels check
      out.body =
          (renamed_ ? Vector({{{{"Hostname", "n1"}, {"job", "cgov"}}, 1}}) : Vector({})).dump();
      return out;
    }
    if (q.starts_with("sum by (Hostname) (resets(")) {  // no daemon restarted
      out.body = json{{"status", "success"},
                      {"data",
                       {{"resultType", r.path == "/api/v1/query" ? "vector" : "matrix"},
                        {"result", json::array()}}}}
                     .dump();
      return out;
    }
    if (r.path == "/api/v1/query_range") {
      // The counters' values at 10:30, 11:00, 12:00 and 13:00, as far as the range asks.
      const std::map<double, std::tuple<const char*, const char*, const char*>> table = {
          {S("2026-11-16T10:30Z"), {"400", "500", "3"}},
          {S("2026-11-16T11:00Z"), {"1750", "2300", "8"}},
          {S("2026-11-16T12:00Z"), {"4000", "5300", "20"}},
          {S("2026-11-16T13:00Z"), {"6700", "8900", "31"}}};
      json values = json::array();
      const double step = StepParam(r.query.at("step"));
      for (double t = TimeParam(r.query.at("start")); t <= TimeParam(r.query.at("end")) + 1e-3;
           t += step) {
        auto it = table.find(t);
        if (it == table.end()) continue;
        const auto& [busy_value, phase_value, swing_value] = it->second;
        values.push_back({t, swings            ? swing_value
                             : busy || pattern ? busy_value
                             : energy          ? std::to_string(std::stoi(phase_value) * 400)
                                               : phase_value});
      }
      const json labels = pattern       ? pattern_labels
                          : swings      ? swing_labels
                          : energy_time ? basis_labels
                                        : GpuLabels("productive");
      out.body =
          json{{"status", "success"},
               {"data",
                {{"resultType", "matrix"}, {"result", {{{"metric", labels}, {"values", values}}}}}}}
              .dump();
      return out;
    }
    const double at = (r.query.count("time") ? TimeParam(r.query.at("time")) : 0.0);
    // The identity and tick sums at the window's start (10:30) and end: what they added between.
    const bool start = std::abs(at - S("2026-11-16T10:30Z")) < 1;
    if (pattern || swings) {
      const json& labels = pattern ? pattern_labels : swing_labels;
      out.body =
          Vector({{labels, pattern ? (start ? 400.0 : 6700.0) : (start ? 3.0 : 33.0)}}).dump();
    } else if (energy_time) {
      out.body = Vector({{basis_labels, start ? 500.0 : 9800.0}}).dump();
    } else if (phase || busy || energy) {
      // The counters' values at the window's start and end: 30 min of productive time (22.5
      // of it busy) before the 11:00 value, 15 min of idle-held time after the 13:00 one.
      out.body = (start ? Vector({{GpuLabels("productive"), busy ? 400 : 500 * scale}})
                        : Vector({{GpuLabels("productive"), busy ? 6700 : 8900 * scale},
                                  {GpuLabels("idle_held"), busy ? 0 : 900 * scale}}))
                     .dump();
    } else if (q.find("cgov_identity_idle_held_energy_joules_total") != std::string::npos) {
      out.body = (start ? Vector({}) : Vector({{Identity(), 900.0 * 400}})).dump();
    } else if (q.find("cgov_identity_energy_joules_total") != std::string::npos) {
      out.body = Vector({{Identity(), start ? 50.0 * 400 : 9950.0 * 400}}).dump();
    } else if (q.find("cgov_identity_gpu_seconds_total") != std::string::npos) {
      // idle_held is born in the window; bob's sum added nothing in it (left out).
      json bob = Identity({{"user", "bob"}, {"phase", "productive"}});
      out.body = (start ? Vector({{Identity({{"phase", "productive"}}), 100}, {bob, 77}})
                        : Vector({{Identity({{"phase", "productive"}}), 9100},
                                  {bob, 77},
                                  {Identity({{"phase", "idle_held"}}), 900}}))
                     .dump();
    } else if (q.find("cgov_identity_idle_held_seconds_total") != std::string::npos) {
      out.body = (start ? Vector({}) : Vector({{Identity(), 900}})).dump();
    } else if (q.find("cgov_identity_cost_usd_total") != std::string::npos) {
      out.body = Vector({{Identity(), start ? 0.25 : 11.25}}).dump();  // $11 in the window
    } else if (q.find("cgov_identity_held_seconds_total") != std::string::npos) {
      out.body = Vector({{Identity(), start ? 50.0 : 9950.0}}).dump();
    } else if (q.find("cgov_gpu_memory_used_bytes") != std::string::npos) {
      out.body = Vector({{{{"Hostname", "n1"}, {"UUID", "GPU-0"}}, 40000.0 * 1048576}}).dump();
    } else if (q.find("node_gpu_hourly_cost") != std::string::npos) {
      // OpenCost's series: one per node, its own labels.
      out.body = opencost_ ? Vector({{{{"node", "n1"}}, 2.5}, {{{"node", "other"}}, 9.0}}).dump()
                           : Vector({}).dump();
    } else if (q.find("cgov_gpu_power_watts") != std::string::npos) {
      out.body = Vector({{{{"Hostname", "n1"}, {"UUID", "GPU-0"}}, 500.5}}).dump();
    } else if (q.find("cgov_gpu_price_usd_per_hour") != std::string::npos) {
      out.body =
          Vector({{{{"Hostname", "n1"}, {"UUID", "GPU-0"}, {"source", "catalog: p5"}}, 4}}).dump();
    } else if (q.find("cgov_ticks_total") != std::string::npos) {
      out.body = Vector({{{{"Hostname", "n1"}}, start ? 1000.0 : 1330.0}}).dump();
    } else {
      out.body = Vector({}).dump();
    }
    return out;
  }
  std::atomic<bool> opencost_{true};
  std::atomic<bool> renamed_{false};  // the scrape renamed cgov's labels (honor_labels: false)
  std::vector<ServedRequest> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<ServedRequest> seen_;
};

std::unique_ptr<HttpServer> Serve(ServedHandler handler) {
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  auto started = HttpServer::Start(o, std::move(handler));
  EXPECT_TRUE(started.ok()) << started.status().message();
  return started.ok() ? std::move(started).value() : nullptr;
}

std::string Url(const HttpServer& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

// `parallel`: the queries in flight at once, which changes nothing in what is loaded.
void CheckPartialAndWholeHoursIdentitiesPricesAndMeans(int parallel) {
  SCOPED_TRACE(fmt::format("{} at once", parallel));
  FakePrometheus fake;
  auto server = Serve([&](const ServedRequest& r) { return fake.Answer(r); });
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server) + "/");
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(parallel);
  Result<HistoryInput> loaded = LoadFleet(*prom, kSince, kUntil);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const HistoryInput& in = *loaded;

  ASSERT_EQ(in.gpus.size(), 1u);
  EXPECT_EQ(in.gpus[0].host, "n1");
  EXPECT_EQ(in.gpus[0].index, 0);
  EXPECT_EQ(in.gpus[0].name, "NVIDIA H100");
  const uint32_t gpu = in.gpus[0].id;
  // 10:30-11:00 and 13:00-13:15 by instant queries, 11:00-13:00 by one range query.
  std::map<int64_t, GpuHour> hours;
  for (const HourBucket& b : in.hours) {
    if (b.gpus.count(gpu)) hours[b.hour] = b.gpus.at(gpu);
  }
  const int64_t h10 = kSince / kHourMs;
  ASSERT_EQ(hours.size(), 4u);
  constexpr size_t kProductivePos = static_cast<size_t>(Phase::kProductive);
  constexpr size_t kIdleHeldPos = static_cast<size_t>(Phase::kIdleHeld);
  EXPECT_EQ(hours[h10].usage.phase_ms[kProductivePos], 1'800'000);
  EXPECT_EQ(hours[h10].usage.util_ms_x100, 1'350'000 * 100);
  EXPECT_EQ(hours[h10].usage.waste_ms_x100[kProductivePos], (1'800'000 - 1'350'000) * 100);
  EXPECT_EQ(hours[h10 + 1].usage.phase_ms[kProductivePos], 3'000'000);
  EXPECT_EQ(hours[h10 + 2].usage.phase_ms[kProductivePos], 3'600'000);
  EXPECT_EQ(hours[h10 + 2].usage.util_ms_x100, 2'700'000 * 100);
  EXPECT_EQ(hours[h10 + 3].usage.phase_ms[kIdleHeldPos], 900'000);
  // Issue 57, item 7: the patterns and swings the findings read, by the hour as the phases.
  EXPECT_EQ(hours[h10].usage.high_ms, 1'350'000);
  EXPECT_EQ(hours[h10 + 2].usage.high_ms, 2'700'000);
  EXPECT_EQ(hours[h10].usage.transitions, 5);
  EXPECT_EQ(hours[h10 + 1].usage.transitions, 12);
  EXPECT_EQ(hours[h10 + 2].usage.transitions, 11);
  EXPECT_EQ(hours[h10 + 3].usage.transitions, 2);
  // Issue 62: energy by phase and its known time, by the hour as the phases; alice's energy
  // and idle-held energy over the window.
  EXPECT_EQ(hours[h10].usage.energy_mj[kProductivePos], 1'800'000 * 400);
  EXPECT_EQ(hours[h10 + 2].usage.energy_mj[kProductivePos], 3'600'000 * 400);
  EXPECT_EQ(hours[h10 + 3].usage.energy_mj[kIdleHeldPos], 900'000 * 400);
  EXPECT_EQ(hours[h10].usage.energy_known_ms, 1'800'000);
  EXPECT_EQ(hours[h10 + 3].usage.energy_known_ms, 900'000);
  EXPECT_EQ(hours[h10].usage.energy_metered_ms, 0);
  // Window figures go into the first hour: ticks, means over the held time.
  EXPECT_EQ(hours[h10].samples, 330);
  EXPECT_EQ(hours[h10].mem_known_ms, 9'300'000);
  EXPECT_EQ(hours[h10].mem_used_mib_ms, 40000LL * 9'300'000);
  EXPECT_EQ(hours[h10].power_dw_ms, 5005LL * 9'300'000);
  ASSERT_EQ(in.identities.size(), 1u);
  const IdentityRecord& alice = in.identities.begin()->second;
  EXPECT_EQ(alice.user, "alice");
  EXPECT_EQ(alice.project, "llm");
  EXPECT_EQ(alice.host, "n1");
  const IdentityHour& ih = in.hours.front().identities.at({alice.id, gpu});
  EXPECT_EQ(ih.held_ms, 9'900'000);
  EXPECT_EQ(ih.idle_held_ms, 900'000);
  EXPECT_EQ(ih.attributed_ms[kProductivePos], 9'000'000);
  EXPECT_EQ(ih.attributed_ms[kIdleHeldPos], 900'000);
  EXPECT_EQ(ih.energy_mj, 9'900'000LL * 400);
  EXPECT_EQ(ih.idle_held_energy_mj, 900'000LL * 400);
  // Its dollars as its daemon priced them when it credited the time: the GPU is priced by its
  // daemon, so Who reads them (a host's GPUs may differ in price).
  EXPECT_EQ(ih.cost, 11'000'000);
  EXPECT_TRUE(in.identity_costs);
  ASSERT_TRUE(in.gpu_prices.count(gpu));
  EXPECT_EQ(in.gpu_prices.at(gpu).per_gpu_hour, 4'000'000);
  EXPECT_THAT(in.gpu_prices.at(gpu).source, HasSubstr("the daemon on n1: catalog: p5"));
  EXPECT_FALSE(in.has_sessions);
  EXPECT_EQ(in.hostname, "1 host (n1)");

  // Each run of evenly spaced times came in one range query: the counters' values at 10:30 and
  // 11:00, then at 12:00 and 13:00 (13:15 alone); the restarts in the hour to 12:00 and the one
  // to 13:00 (the half hour to 11:00 and the quarter to 13:15 alone).
  std::vector<std::string> ranges;
  for (const ServedRequest& r : fake.seen()) {
    if (r.path != "/api/v1/query_range") continue;
    const std::string& q = r.query.at("query");
    const bool resets = q.find("resets(cgov_ticks_total[3900000ms])") != std::string::npos;
    ranges.push_back(fmt::format(
        "{} {}+{}", resets ? "resets" : q.substr(q.find("(last_over_time(") + 16, 17),
        FormatRfc3339Utc(std::llround(TimeParam(r.query.at("start")) * 1e9)), r.query.at("step")));
    if (!resets) {
      EXPECT_THAT(q, HasSubstr("_total[1h]))"));
    }
    EXPECT_DOUBLE_EQ(TimeParam(r.query.at("end")) - TimeParam(r.query.at("start")),
                     StepParam(r.query.at("step")))
        << q;
  }
  std::sort(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges,
            (std::vector<std::string>{"cgov_gpu_busy_sec 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_busy_sec 2026-11-16T12:00:00.000Z+3600000ms",
                                      "cgov_gpu_energy_s 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_energy_s 2026-11-16T12:00:00.000Z+3600000ms",
                                      "cgov_gpu_pattern_ 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_pattern_ 2026-11-16T12:00:00.000Z+3600000ms",
                                      "cgov_gpu_phase_en 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_phase_en 2026-11-16T12:00:00.000Z+3600000ms",
                                      "cgov_gpu_phase_se 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_phase_se 2026-11-16T12:00:00.000Z+3600000ms",
                                      "cgov_gpu_swings_t 2026-11-16T10:30:00.000Z+1800000ms",
                                      "cgov_gpu_swings_t 2026-11-16T12:00:00.000Z+3600000ms",
                                      "resets 2026-11-16T12:00:00.000Z+3600000ms"}));

  // The summary of it: the heatmap has Monday 10-13, prices are the daemon's.
  HistoryOptions options;
  Result<HistorySummary> summary = SummarizeHistory(in, options);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->heatmap[0][10].has_value());
  EXPECT_TRUE(summary->heatmap[0][13].has_value());
  EXPECT_FALSE(summary->heatmap[0][14].has_value());
  EXPECT_EQ(summary->gpus.at(0).price.per_gpu_hour, 4'000'000);
}

TEST(FleetLoad, PartialAndWholeHoursIdentitiesPricesAndMeans) {
  CheckPartialAndWholeHoursIdentitiesPricesAndMeans(1);
  CheckPartialAndWholeHoursIdentitiesPricesAndMeans(4);
}

// --opencost-prices: OpenCost's node_gpu_hourly_cost for node n1 prices n1's GPU; none at all
// in the window is an error that says what is missing.
TEST(FleetLoad, OpenCostPricesTheGpusOfItsNodes) {
  FakePrometheus fake;
  auto server = Serve([&](const ServedRequest& r) { return fake.Answer(r); });
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server) + "/");
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> loaded = LoadFleet(*prom, kSince, kUntil, {.opencost_prices = true});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->gpu_prices.size(), 1u);
  const ResolvedPrice& p = loaded->gpu_prices.begin()->second;
  EXPECT_EQ(p.per_gpu_hour, 2'500'000) << "OpenCost's price, not the daemon's $4";
  EXPECT_EQ(p.source, "OpenCost: node_gpu_hourly_cost{node=\"n1\"}");
  fake.opencost_ = false;
  loaded = LoadFleet(*prom, kSince, kUntil, {.opencost_prices = true});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("no node_gpu_hourly_cost"));
}

// Issue 47: series a scrape renamed (exported_pod: the Prometheus Operator without
// honorLabels) are refused with the job, the host and the fix named, before anything is loaded.
TEST(FleetLoad, SeriesWhoseLabelsTheScrapeRenamedAreRefusedByName) {
  FakePrometheus fake;
  fake.renamed_ = true;
  auto server = Serve([&](const ServedRequest& r) { return fake.Answer(r); });
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server) + "/");
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> loaded = LoadFleet(*prom, kSince, kUntil);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("the scrape of job cgov (host n1) renamed"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("honorLabels: true"));
  const std::vector<ServedRequest> seen = fake.seen();
  ASSERT_EQ(seen.size(), 1u) << "nothing else asked";
  const std::string q = seen[0].query.at("query");
  for (const char* label : {"exported_namespace", "exported_pod", "exported_container"}) {
    EXPECT_THAT(q, HasSubstr(fmt::format("cgov_honor_labels_check{{{}!=\"\"}}[9900000ms]", label)));
    EXPECT_THAT(q, HasSubstr(fmt::format("cgov_identity_held_seconds_total{{{}!=\"\"}}", label)));
  }
}

TEST(FleetLoad, AnswersThatAreNotPrometheusOrFailedQueriesAreClearErrors) {
  auto html = Serve([](const ServedRequest&) {
    ServedResponse answer;
    answer.content_type = "text/html";
    answer.body = "<html>Grafana</html>";
    return answer;
  });
  ASSERT_NE(html, nullptr);
  auto prom = PrometheusSource::Open(Url(*html));
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> r = LoadFleet(*prom, kSince, kUntil);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("is not a Prometheus query API"));
  EXPECT_THAT(r.status().message(), HasSubstr(Url(*html)));

  auto failing = Serve([](const ServedRequest&) {
    ServedResponse answer;
    answer.status = 400;
    answer.body = R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})";
    return answer;
  });
  ASSERT_NE(failing, nullptr);
  prom = PrometheusSource::Open(Url(*failing));
  r = LoadFleet(*prom, kSince, kUntil);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("the query failed (HTTP 400): bad_data: parse error"));
  EXPECT_THAT(r.status().message(), HasSubstr("query: group by (Hostname, job)"))
      << "the first query, the honor-labels check, names itself";

  // Valid JSON nested far past any answer's depth: refused as not Prometheus', not read into
  // a stack that grows with the answer.
  auto deep = Serve([](const ServedRequest&) {
    ServedResponse answer;
    answer.content_type = "application/json";
    answer.body = R"({"status":"success","data":{"resultType":"vector","result":)" +
                  std::string(100'000, '[') + std::string(100'000, ']') + "}}";
    return answer;
  });
  ASSERT_NE(deep, nullptr);
  prom = PrometheusSource::Open(Url(*deep));
  r = LoadFleet(*prom, kSince, kUntil);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("is not a Prometheus query API"));

  EXPECT_FALSE(PrometheusSource::Open("127.0.0.1:9090").ok()) << "a URL needs its scheme";
}

// Long-term stores behind the same query API (docs/fleet.md, "Long-term stores"): every query
// asks for a whole answer; a partial one is refused whatever the store calls it; a frontend's own
// error is quoted. The answers are shaped after each store's documentation, not captured.
TEST(PrometheusSource, PartialAnswersAreRefusedAndStoresErrorsQuoted) {
  struct Case {
    const char* store;
    int status;
    std::string content_type, body, expect;  // expect "": the answer is taken
  };
  const std::string empty = R"j("data":{"resultType":"vector","result":[]})j";
  const std::vector<Case> cases = {
      {"Thanos Query, a store down and partial responses allowed", 200, "application/json",
       R"j({"status":"success",)j" + empty +
           R"j(,"warnings":["fetch series for {cluster=\"eu\"} )j"
           R"j(receive-0:10901: rpc error: code = Unavailable desc = connection refused"]})j",
       "may be incomplete: fetch series for {cluster=\"eu\"} receive-0:10901: rpc error"},
      {"VictoriaMetrics cluster, a vmstorage node down", 200, "application/json",
       R"j({"status":"success","isPartial":true,)j" + empty + "}",
       "the answer is partial (isPartial"},
      {"Mimir, a query limit", 422, "application/json",
       R"j({"status":"error","errorType":"execution","error":"the query exceeded the maximum )j"
       R"j(number of chunks fetched (limit: 2000000) (err-mimir-max-chunks-per-query)"})j",
       "the query failed (HTTP 422): execution: the query exceeded the maximum number of chunks"},
      {"a query frontend's queue full", 429, "text/plain", "too many outstanding requests\n",
       "/api/v1/query answered HTTP 429: too many outstanding requests"},
      {"a gateway", 502, "text/html", "<html><body>Bad Gateway</body></html>\nmore",
       "answered HTTP 502: <html><body>Bad Gateway</body></html>"},
      {"Prometheus, an info annotation", 200, "application/json",
       R"j({"status":"success",)j" + empty +
           R"j(,"warnings":["PromQL info: metric might not be a )j"
           R"j(counter, name does not end in _total/_sum/_count/_bucket: \"cgov_x\""]})j",
       ""},
  };
  for (const Case& c : cases) {
    std::mutex mu;
    std::map<std::string, std::string> asked;
    auto server = Serve([&](const ServedRequest& r) {
      {
        std::lock_guard lock(mu);
        asked = r.query;
      }
      ServedResponse answer;
      answer.status = c.status;
      answer.content_type = c.content_type;
      answer.body = c.body;
      return answer;
    });
    ASSERT_NE(server, nullptr);
    auto prom = PrometheusSource::Open(Url(*server));
    ASSERT_TRUE(prom.ok());
    Result<std::vector<PromSeries>> r = prom->Query("sum(cgov_gpu_phase_seconds_total)", 1e9);
    if (c.expect.empty()) {
      EXPECT_TRUE(r.ok()) << c.store << ": " << r.status().message();
    } else {
      ASSERT_FALSE(r.ok()) << c.store;
      EXPECT_THAT(r.status().message(), HasSubstr(c.expect)) << c.store;
    }
    std::lock_guard lock(mu);
    EXPECT_EQ(asked["partial_response"], "false") << c.store << ": Thanos' switch";
    EXPECT_EQ(asked["deny_partial_response"], "1") << c.store << ": VictoriaMetrics' switch";
    EXPECT_EQ(asked["nocache"], "1") << c.store << ": VictoriaMetrics' latency offset off";
    EXPECT_EQ(asked["query"], "sum(cgov_gpu_phase_seconds_total)");
  }
}

// Answers are read as they are parsed, not into a document: what each shape gives. Keys in any
// order, samples with a number or a string, fields cgov does not know (a native histogram, stats,
// nested objects in a label's place) passed over, a point that is not a finite number left out,
// a scalar refused, truncated JSON not taken.
TEST(PrometheusSource, AnswersAreReadWhateverTheirKeyOrderAndExtraFields) {
  struct Case {
    std::string body;
    size_t series = 0;
    std::string labels, points;  // "k=v,..." and "t:v,..." of the last series
    std::string error;           // "" = taken
  };
  const std::vector<Case> cases = {
      {R"({"data":{"result":[{"value":[1,"2.5"],"metric":{"a":"x","b":"y"}}],)"
       R"("resultType":"vector"},"status":"success"})",
       1, "a=x,b=y,", "1:2.5,", ""},
      {R"({"status":"success","data":{"resultType":"matrix","result":[)"
       R"({"metric":{},"values":[[1,"1"],[2,"NaN"],[3,4]]},)"
       R"({"metric":{"n":"z","odd":{"deep":["x"]}},"values":[[5,"+Inf"]],)"
       R"("histograms":[[6,{"count":"1","buckets":[[0,"1","2","3"]]}]]}]},)"
       R"("stats":{"timings":{"evalTotalTime":0.1}},"warnings":[]})",
       1, "", "1:1,3:4,", ""},
      {R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})", 0, "", "",
       "expected a vector or matrix, got 'scalar'"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{})", 0, "", "",
       "not a Prometheus query API"},
      {R"(["status","success"])", 0, "", "", "not a Prometheus query API"},
      {R"({"status":"success","warnings":[{"code":7}],"data":{"resultType":"vector","result":[]}})",
       0, "", "", "incomplete: (a warning that is not text)"},
  };
  for (const Case& c : cases) {
    auto server = Serve([&](const ServedRequest&) {
      ServedResponse answer;
      answer.content_type = "application/json";
      answer.body = c.body;
      return answer;
    });
    ASSERT_NE(server, nullptr);
    auto prom = PrometheusSource::Open(Url(*server));
    Result<std::vector<PromSeries>> r = prom->Query("up", 1e9);
    if (!c.error.empty()) {
      ASSERT_FALSE(r.ok()) << c.body;
      EXPECT_THAT(r.status().message(), HasSubstr(c.error)) << c.body;
      continue;
    }
    ASSERT_TRUE(r.ok()) << c.body << ": " << r.status().message();
    ASSERT_EQ(r->size(), c.series) << c.body;
    std::string labels, points;
    for (const auto& [k, v] : r->back().Labels()) labels += fmt::format("{}={},", k, v);
    for (const auto& [t, v] : r->back().points) points += fmt::format("{}:{},", t, v);
    EXPECT_EQ(labels, c.labels) << c.body;
    EXPECT_EQ(points, c.points) << c.body;
    // NaN and +Inf are no measurements (issue 57, 11): the NaN point is left out, and the series
    // whose one point was +Inf with it.
  }
}

// Mimir's and Cortex's tenant: sent as X-Scope-OrgID when given, never otherwise; an ID Mimir
// would refuse (or one that would split the header line) is refused before anything is sent.
TEST(PrometheusSource, ATenantIsSentAsXScopeOrgId) {
  FakeHttpServer server(200, R"({"status":"success","data":{"resultType":"vector","result":[]}})");
  auto tenant = PrometheusSource::Open(server.url(""), std::chrono::seconds(5), "team-a_(eu)");
  ASSERT_TRUE(tenant.ok()) << tenant.status().message();
  ASSERT_TRUE(tenant->Query("up", 1e9).ok());
  auto plain = PrometheusSource::Open(server.url(""));
  ASSERT_TRUE(plain->Query("up", 1e9).ok());
  const std::vector<std::string> heads = server.requests();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_THAT(heads[0], HasSubstr("X-Scope-OrgID: team-a_(eu)\r\n"));
  EXPECT_THAT(heads[1], Not(HasSubstr("X-Scope-OrgID")));
  for (const std::string& bad :
       std::vector<std::string>{"a b", "x\r\nEvil: 1", "é", std::string(151, 'a')}) {
    auto refused = PrometheusSource::Open(server.url(""), std::chrono::seconds(5), bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("--prometheus-tenant"));
  }
}

// --prometheus-timeout: the server is told it too (its `timeout` parameter, so it stops when the
// report does), a server slower than it is a named error rather than a bare transport one, and a
// server's own timeout error says what to change.
TEST(PrometheusSource, ATimeoutIsSentAndAnsweredByName) {
  const std::string empty = R"({"status":"success","data":{"resultType":"vector","result":[]}})";
  FakeHttpServer quick(200, empty);
  auto prom = PrometheusSource::Open(quick.url(""), std::chrono::milliseconds(1500));
  ASSERT_TRUE(prom.ok()) << prom.status().message();
  ASSERT_TRUE(prom->Query("up", 1e9).ok());
  ASSERT_TRUE(prom->QueryRange("up", 1e9, 1e9 + 60, 60).ok());
  const std::vector<std::string> heads = quick.requests();
  ASSERT_EQ(heads.size(), 2u);
  for (const std::string& head : heads) EXPECT_THAT(head, HasSubstr("timeout=1500ms"));

  FakeHttpServer slow(200, empty, /*delay_ms=*/3000);
  prom = PrometheusSource::Open(slow.url(""), std::chrono::milliseconds(400));
  auto late = prom->Query("sum(cgov_gpu_phase_seconds_total)", 1e9);
  ASSERT_FALSE(late.ok());
  EXPECT_THAT(late.status().message(),
              HasSubstr("no whole answer in 0.4 s (--prometheus-timeout)"));
  EXPECT_THAT(late.status().message(), HasSubstr("query: sum(cgov_gpu_phase_seconds_total)"));

  FakeHttpServer limited(503, R"({"status":"error","errorType":"timeout",)"
                              R"("error":"query timed out in expression evaluation"})");
  prom = PrometheusSource::Open(limited.url(""));
  auto refused = prom->Query("up", 1e9);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("timeout: query timed out in expression evaluation (the server's own "
                        "limit, its --query.timeout, or --prometheus-timeout"));
}

// Labels packed into one string: in name order whatever order they came in, a name's first
// value kept, lengths past one byte, and any byte in a value.
TEST(PromSeries, LabelsArePackedInNameOrder) {
  const std::string long_value(300, 'v');  // its length takes two bytes
  const std::string with_nul("x\0y", 3);
  PromSeries a, b, c;
  a.AddLabel("z", "1");
  a.AddLabel("a", long_value);
  a.AddLabel("m", with_nul);
  a.AddLabel("a", "second");
  b.AddLabel("m", with_nul);
  b.AddLabel("a", long_value);
  b.AddLabel("z", "1");
  EXPECT_EQ(a.LabelKey(), b.LabelKey());
  EXPECT_EQ(a.Label("a"), long_value);
  EXPECT_EQ(a.Label("m"), with_nul);
  EXPECT_EQ(a.Label("z"), "1");
  EXPECT_EQ(a.Label("b"), "");
  EXPECT_EQ(a.Label("zz"), "");
  std::vector<std::string> names;
  for (const auto& [name, value] : a.Labels()) names.emplace_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "m", "z"}));
  c.AddLabel("z", "1");
  c.AddLabel("m", with_nul);
  EXPECT_NE(c.LabelKey(), a.LabelKey());
  c.AddLabel("a", "");
  EXPECT_NE(c.LabelKey(), a.LabelKey()) << "an empty value is not another value";
  EXPECT_EQ(c.Label("a"), "");
  EXPECT_EQ(c.Labels().size(), 3u);
}

// The answer to request n of a batch: "fail(n)" is refused, anything else a one-series vector
// labelled n.
std::string NumberedAnswer(const std::string& q, int n) {
  return q.starts_with("fail")
             ? json{{"status", "error"},
                    {"errorType", "bad_data"},
                    {"error", fmt::format("request {} refused", n)}}
                   .dump()
             : Vector({{{{"n", std::to_string(n)}}, static_cast<double>(n)}}).dump();
}

// A batch answers each request with its own answer, whatever order they finish in, with up to
// parallel() in flight at once; a failure fails the batch, and with one at a time nothing after
// it is sent.
TEST(PrometheusSource, ABatchAnswersInOrderAndStopsAtItsFirstFailure) {
  std::atomic<int> in_flight{0}, most{0}, served{0};
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  o.threads = 4;
  auto started = HttpServer::Start(o, [&](const ServedRequest& r) {
    const int now = ++in_flight;
    for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
    }
    ++served;
    const std::string q = r.query.at("query");
    const int n = std::stoi(q.substr(q.find('(') + 1));
    // Later requests answer sooner, so that they finish out of order.
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * (12 - n)));
    ServedResponse out;
    out.content_type = "application/json";
    out.body = NumberedAnswer(q, n);
    --in_flight;
    return out;
  });
  ASSERT_TRUE(started.ok()) << started.status().message();
  auto prom = PrometheusSource::Open(Url(**started));
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(4);
  std::vector<PromRequest> requests;
  for (int n = 0; n < 12; ++n) {
    requests.push_back({.expr = fmt::format("vector({})", n), .time_s = 1e9});
  }
  Result<std::vector<std::vector<PromSeries>>> answers = prom->QueryAll(requests);
  ASSERT_TRUE(answers.ok()) << answers.status().message();
  ASSERT_EQ(answers->size(), 12u);
  for (int n = 0; n < 12; ++n) {
    ASSERT_EQ((*answers)[n].size(), 1u);
    EXPECT_EQ((*answers)[n][0].Label("n"), std::to_string(n));
  }
  EXPECT_GE(most.load(), 2) << "requests in flight together";
  EXPECT_LE(most.load(), 4) << "never more than parallel()";

  requests[5].expr = "fail(5)";
  requests[9].expr = "fail(9)";
  answers = prom->QueryAll(requests);
  ASSERT_FALSE(answers.ok());
  EXPECT_THAT(answers.status().message(), HasSubstr("request 5 refused"))
      << "the first failure in the order asked";
  prom->set_parallel(1);
  served = 0;
  answers = prom->QueryAll(requests);
  ASSERT_FALSE(answers.ok());
  EXPECT_THAT(answers.status().message(), HasSubstr("request 5 refused"));
  EXPECT_EQ(served.load(), 6) << "nothing after the failure is sent";
  EXPECT_TRUE(prom->QueryAll({}).ok());
}

// QueryEach hands each answer over in the order asked while later ones are in flight, sends no
// request more than 2 x parallel() ahead of the last answer taken (a slow taker holds a few
// answers, not the batch), and stops at the first error its taker returns.
TEST(PrometheusSource, EachAnswerIsTakenInOrderWithFewWaiting) {
  std::atomic<int> served{0};
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  o.threads = 4;
  auto started = HttpServer::Start(o, [&](const ServedRequest& r) {
    ++served;
    const std::string q = r.query.at("query");
    const int n = std::stoi(q.substr(q.find('(') + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(n % 3 == 0 ? 20 : 1));
    ServedResponse out;
    out.content_type = "application/json";
    out.body = Vector({{{{"n", std::to_string(n)}}, static_cast<double>(n)}}).dump();
    return out;
  });
  ASSERT_TRUE(started.ok()) << started.status().message();
  auto prom = PrometheusSource::Open(Url(**started));
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(2);
  std::vector<PromRequest> requests;
  for (int n = 0; n < 20; ++n) {
    requests.push_back({.expr = fmt::format("vector({})", n), .time_s = 1e9});
  }
  std::vector<size_t> order;
  int most_ahead = 0;
  Status status = prom->QueryEach(requests, [&](size_t i, std::vector<PromSeries> answer) {
    order.push_back(i);
    EXPECT_EQ(answer.size(), 1u);
    if (!answer.empty()) {
      EXPECT_EQ(answer[0].Label("n"), std::to_string(i));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a slow taker
    most_ahead = std::max(most_ahead, served.load() - static_cast<int>(i) - 1);
    return Status::Ok();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<size_t> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  EXPECT_GE(most_ahead, 1) << "later requests in flight while one is taken";
  EXPECT_LE(most_ahead, 4) << "never more than 2 x parallel() ahead of the last taken";
  served = 0;
  order.clear();
  status = prom->QueryEach(requests, [&](size_t i, std::vector<PromSeries>) {
    order.push_back(i);
    return i == 3 ? InvalidArgument("taker refused 3") : Status::Ok();
  });
  EXPECT_EQ(status.message(), "taker refused 3");
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_LE(served.load(), 8) << "nothing sent beyond the look-ahead of the refused one";
}

// An early request is sent with the batch's first ones and its answer still taken in its place;
// where it fails before the requests ahead of it were sent, the batch ends with its failure and
// sends nothing more.
TEST(PrometheusSource, EarlyRequestsAreSentFirstAndTakenInTheirPlace) {
  std::mutex mu;
  std::vector<int> arrived;
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  o.threads = 4;
  auto started = HttpServer::Start(o, [&](const ServedRequest& r) {
    const std::string q = r.query.at("query");
    const int n = std::stoi(q.substr(q.find('(') + 1));
    {
      std::lock_guard lock(mu);
      arrived.push_back(n);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ServedResponse out;
    out.content_type = "application/json";
    out.body = NumberedAnswer(q, n);
    return out;
  });
  ASSERT_TRUE(started.ok()) << started.status().message();
  auto prom = PrometheusSource::Open(Url(**started));
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(1);  // one at a time: the order sent is the order served
  std::vector<PromRequest> requests;
  for (int n = 0; n < 12; ++n) {
    requests.push_back({.expr = fmt::format("vector({})", n), .time_s = 1e9});
  }
  requests[10].early = true;
  requests[7].early = true;
  std::vector<size_t> taken;
  Status status = prom->QueryEach(requests, [&](size_t i, std::vector<PromSeries> answer) {
    taken.push_back(i);
    EXPECT_EQ(answer.size(), 1u);
    if (!answer.empty()) {
      EXPECT_EQ(answer[0].Label("n"), std::to_string(i));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(arrived, (std::vector<int>{7, 10, 0, 1, 2, 3, 4, 5, 6, 8, 9, 11}));
  std::vector<size_t> in_order(12);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_EQ(taken, in_order);

  arrived.clear();
  taken.clear();
  requests[10].expr = "fail(10)";
  status = prom->QueryEach(requests, [&](size_t i, std::vector<PromSeries>) {
    taken.push_back(i);
    return Status::Ok();
  });
  EXPECT_THAT(status.message(), HasSubstr("request 10 refused"));
  EXPECT_TRUE(taken.empty()) << "request 0 was never sent, so nothing was taken";
  EXPECT_EQ(arrived, (std::vector<int>{7, 10})) << "nothing sent after the failure";
}

// Rule evaluations at :07:30 past the hour (Prometheus' offset for the group), one skipped (the
// 14:07:30 one) and two after a restart moved the schedule to :40: the report reads each run of
// evaluations exactly an hour apart from the rules and everything else from the raw counters,
// with no second counted twice or left out.
// A Prometheus with one GPU's productive time, a second every second, and hourly rule
// evaluations at `marks`; each instant query is recorded in `asked` as (query, time).
struct RulesFake {
  std::vector<double> marks;
  bool fleet_rules = false;      // cgov:fleet_gpu_phase_seconds:increase1h answers too
  std::vector<double> versions;  // the evaluations that recorded version 2 (the owners' rules)
  std::vector<std::pair<double, int>> days;  // daily evaluations and the hours each summed
  // Held seconds by pod at a raw span's two ends (a range query): alice's pod a (100 s at the
  // start, 160 s at the end), b (born in the span: 30 s at the end), c (ended long before: 500 s
  // at the start only); bob's pod d on n2 fell from 50 s to 20 s (a restart).
  bool pods_at_edges = false;
  std::mutex mu;
  std::vector<std::pair<std::string, double>> asked;
  std::vector<std::string> ranges;  // each range query's expression
  std::unique_ptr<HttpServer> server;
};

void ServeRules(RulesFake* fake) {
  fake->server = Serve([fake](const ServedRequest& r) {
    std::mutex& mu = fake->mu;
    std::vector<std::pair<std::string, double>>& asked = fake->asked;
    const std::vector<double>& marks = fake->marks;
    ServedResponse out;
    out.content_type = "application/json";
    const std::string q = r.query.count("query") ? r.query.at("query") : "";
    const double at = (r.query.count("time") ? TimeParam(r.query.at("time")) : 0.0);
    {
      std::lock_guard lock(mu);
      if (r.path == "/api/v1/query") asked.emplace_back(q, at);
      if (r.path == "/api/v1/query_range") fake->ranges.push_back(q);
    }
    const bool version = q.starts_with("cgov:hourly_rules:version[");
    const size_t open = q.find('[');
    if (q.starts_with("cgov:daily_rules:")) {
      json values = json::array();
      for (const auto& [t, hours] : fake->days) {
        values.push_back({t, q.starts_with("cgov:daily_rules:hours[") ? std::to_string(hours)
                                                                      : std::to_string(t)});
      }
      out.body = json{{"status", "success"},
                      {"data",
                       {{"resultType", "matrix"},
                        {"result", {{{"metric", json::object()}, {"values", values}}}}}}}
                     .dump();
    } else if (q.find(":increase1d[") != std::string::npos) {
      // A daily rule's sum: a day of each of the GPU's productive time and alice's held time
      // for each daily evaluation in the range (both ends in it, as in Prometheus 2).
      const double range = std::stod(q.substr(open + 1)) / 1000;
      double seconds = 0;
      for (const auto& [t, hours] : fake->days) seconds += t >= at - range && t <= at ? 86400 : 0;
      const bool gpu = q.find("cgov:gpu_phase_seconds:increase1d") != std::string::npos;
      const bool held = q.find("cgov:owner_held_seconds:increase1d") != std::string::npos;
      out.body =
          Vector(gpu || held ? std::vector<std::pair<json, double>>{{gpu ? GpuLabels("productive")
                                                                         : Identity(),
                                                                     seconds}}
                             : std::vector<std::pair<json, double>>{})
              .dump();
    } else if (q.starts_with("cgov:hourly_rules:evaluation_time_seconds[") || version) {
      json values = json::array();
      for (double t : version ? fake->versions : marks) {
        values.push_back({t, version ? "2" : std::to_string(t)});
      }
      out.body = json{{"status", "success"},
                      {"data",
                       {{"resultType", "matrix"},
                        {"result", {{{"metric", json::object()}, {"values", values}}}}}}}
                     .dump();
    } else if (fake->pods_at_edges && r.path == "/api/v1/query_range" &&
               q.find("(last_over_time(cgov_identity_held_seconds_total[") != std::string::npos) {
      const double start = TimeParam(r.query.at("start")), end = TimeParam(r.query.at("end"));
      auto pod = [](const char* host, const char* user, const char* name) {
        return json{{"Hostname", host}, {"user", user}, {"project", "llm"}, {"pod", name}};
      };
      json result = json::array();
      for (const auto& [labels, values] : std::vector<std::pair<json, json>>{
               {pod("n1", "alice", "a"), {{start, "100"}, {end, "160"}}},
               {pod("n1", "alice", "b"), {{end, "30"}}},
               {pod("n1", "alice", "c"), {{start, "500"}}},
               {pod("n2", "bob", "d"), {{start, "50"}, {end, "20"}}}}) {
        result.push_back({{"metric", labels}, {"values", values}});
      }
      out.body =
          json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}
              .dump();
    } else if (q.find("(sum_over_time(cgov:identity_held_seconds:increase1h[") !=
                   std::string::npos ||
               q.find("(sum_over_time(cgov:owner_held_seconds:increase1h[") != std::string::npos) {
      // Alice holds a GPU every second of each rule run.
      const double ms = std::stod(q.substr(q.find('[') + 1));
      out.body = Vector({{Identity(), ms / 1000 + 1800}}).dump();
    } else if (q.find("cgov_gpu_phase_seconds_total") != std::string::npos ||
               q.find("cgov:gpu_phase_seconds:increase1h") != std::string::npos ||
               (fake->fleet_rules &&
                q.find("cgov:fleet_gpu_phase_seconds:increase1h") != std::string::npos)) {
      // Each raw segment and each rule run: one second of productive time per second it spans.
      json result = json::array();
      if (r.path == "/api/v1/query_range") {  // whole hours, one point each
        // The rule's hours; the raw counter's value at each boundary (a second a second).
        const double start = TimeParam(r.query.at("start")), end = TimeParam(r.query.at("end"));
        const bool raw = q.find("last_over_time(cgov_") != std::string::npos;
        const double step = StepParam(r.query.at("step"));
        json values = json::array();
        for (double t = start; t <= end + 0.001; t += step) {
          values.push_back({t, std::to_string(raw ? t - S("2026-11-16T00:00Z") : 3600)});
        }
        result.push_back({{"metric", GpuLabels("productive")}, {"values", values}});
        out.body =
            json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}
                .dump();
      } else {
        if (q.find("(last_over_time(cgov_gpu_phase_seconds_total[1h]))") != std::string::npos) {
          out.body = Vector({{GpuLabels("productive"), at - S("2026-11-16T00:00Z")}}).dump();
          return out;  // the raw counter's value
        }
        // The range of the rule sum's selector is the run it covers, half an hour short of it
        // (which the rule's hours make up).
        const double ms = std::stod(q.substr(open + 1));
        const bool rules = q.find("sum_over_time") != std::string::npos;
        out.body = Vector({{GpuLabels("productive"), rules ? ms / 1000 + 1800 : ms / 1000}}).dump();
      }
    } else {
      out.body = Vector({}).dump();
    }
    return out;
  });
}

TEST(FleetLoad, RecordingRuleRunsAndTheRawCountersAroundThem) {
  const int64_t since = *ParseTimestampMs("2026-11-16T10:00:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-17T10:00:00Z");
  std::vector<double> marks;
  for (const char* t : {"2026-11-16T11:07:30Z", "2026-11-16T12:07:30Z", "2026-11-16T13:07:30Z",
                        "2026-11-16T15:07:30Z", "2026-11-16T16:07:30Z", "2026-11-16T16:40:00Z",
                        "2026-11-16T17:40:00Z", "2026-11-17T09:40:00Z"}) {
    marks.push_back(S(t));
  }
  marks.push_back(1e300);  // not a time: ignored, not overflowed
  RulesFake fake;
  fake.marks = marks;
  ServeRules(&fake);
  const std::unique_ptr<HttpServer>& server = fake.server;
  std::vector<std::pair<std::string, double>>& asked = fake.asked;
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server));
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until);  // a day: auto reads the rules
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  int64_t productive = 0;
  for (const HourBucket& b : loaded->hours) {
    for (const auto& [id, g] : b.gpus) {
      productive += g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
    }
  }
  EXPECT_EQ(productive, until - since);  // every second of the day, once
  // The runs: 10:07:30-13:07:30 (3 h), 14:07:30-16:07:30 (2 h: the 14:07:30 evaluation was
  // skipped, so 13:07:30-14:07:30 is raw), 16:40-17:40 (1 h; the 16:40 evaluation's hour
  // overlaps 16:07:30's and is left out), 08:40-09:40 (1 h); raw between and around them.
  std::vector<std::pair<std::string, double>> rule_sums;
  for (const auto& [q, at] : asked) {
    if (q.starts_with("sum by (Hostname, UUID") &&
        q.find("sum_over_time(cgov:gpu_phase_seconds") != std::string::npos) {
      rule_sums.emplace_back(q.substr(q.find('[')), at);
    }
  }
  const std::vector<std::pair<std::string, double>> expected = {
      {"[9000000ms])) > 0", S("2026-11-16T13:07:30Z")},
      {"[5400000ms])) > 0", S("2026-11-16T16:07:30Z")},
      {"[1800000ms])) > 0", S("2026-11-16T17:40:00Z")},
      {"[1800000ms])) > 0", S("2026-11-17T09:40:00Z")}};
  EXPECT_EQ(rule_sums, expected);
  bool noted = false;
  for (const std::string& n : loaded->notes) {
    noted |=
        n.find("7 of the window's 24 hours from the hourly recording rules") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  // Three queries at once: the same figures.
  prom->set_parallel(3);
  Result<HistoryInput> parallel = LoadFleet(*prom, since, until);
  ASSERT_TRUE(parallel.ok()) << parallel.status().message();
  int64_t productive_parallel = 0;
  for (const HourBucket& b : parallel->hours) {
    for (const auto& [id, g] : b.gpus) {
      productive_parallel += g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
    }
  }
  EXPECT_EQ(productive_parallel, until - since);
  prom->set_parallel(1);
  // Off: no marker asked for, no rule read.
  asked.clear();
  ASSERT_TRUE(LoadFleet(*prom, since, until, {.rules = RecordingRules::kOff}).ok());
  for (const auto& [q, at] : asked) EXPECT_EQ(q.find("cgov:"), std::string::npos) << q;
}

// Regression: evaluations taken at a fraction of a second (promtool's backfill took them at
// :34:20.490). Prometheus reads a decimal step as float seconds and truncates it (2060.490 s is
// 2060489 ms), so a raw stretch's range came back with its last point a millisecond early, was
// not matched to the time asked for, and that stretch was lost (FleetRulesE2E, now and then).
TEST(FleetLoad, EvaluationsAtAFractionOfASecondLoseNoRawStretch) {
  const int64_t since = *ParseTimestampMs("2026-11-16T09:59:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-17T10:00:00Z");
  RulesFake fake;
  for (int hour : {11, 12, 13, 16, 17, 18}) {  // 14 and 15 skipped: a raw stretch between
    fake.marks.push_back(S("2026-11-16T00:34:20.490Z") + hour * 3600.0);
  }
  ServeRules(&fake);
  ASSERT_NE(fake.server, nullptr);
  auto prom = PrometheusSource::Open(Url(*fake.server));
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  int64_t productive = 0;
  for (const HourBucket& b : loaded->hours) {
    for (const auto& [id, g] : b.gpus) {
      productive += g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
    }
  }
  EXPECT_EQ(productive, until - since) << "every second of the window, once";
}

// A rule file upgraded within the window: the evaluations from 20:00 on record version 2 and the
// owners' rules. Without pods, the run ends there: identities come from the pods' rules before
// and from the owners' after, each hour once. With pods, one run, all from the pods' rules.
TEST(FleetLoad, OwnersRulesAreReadForTheHoursThatRecordedThem) {
  const int64_t since = *ParseTimestampMs("2026-11-16T10:00:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-17T10:00:00Z");
  for (bool pods : {false, true}) {
    SCOPED_TRACE(pods ? "pods" : "without pods");
    RulesFake fake;
    for (int hour = 11; hour <= 34; ++hour) {
      fake.marks.push_back(S("2026-11-16T00:00:00Z") + hour * 3600.0);
      if (hour >= 20) fake.versions.push_back(fake.marks.back());
    }
    ServeRules(&fake);
    ASSERT_NE(fake.server, nullptr);
    auto prom = PrometheusSource::Open(Url(*fake.server));
    ASSERT_TRUE(prom.ok());
    Result<HistoryInput> loaded = LoadFleet(*prom, since, until, {.pods = pods});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const auto [productive, held] = ProductiveAndHeldMs(*loaded);
    EXPECT_EQ(productive, until - since);
    EXPECT_EQ(held, until - since) << "alice's every second, once";
    // Each identity rule sum: (rule, its range, when).
    std::vector<std::tuple<std::string, std::string, double>> sums;
    for (const auto& [q, at] : fake.asked) {
      const size_t rule = q.find("(sum_over_time(cgov:");
      if (rule == std::string::npos || q.find("held_seconds") == std::string::npos ||
          q.find("idle_held") != std::string::npos) {
        continue;
      }
      const size_t open = q.find('[', rule);
      sums.emplace_back(q.substr(rule + 15, open - rule - 15), q.substr(open), at);
    }
    using Sums = std::vector<std::tuple<std::string, std::string, double>>;
    if (pods) {
      EXPECT_EQ(sums, (Sums{{"cgov:identity_held_seconds:increase1h", "[84600000ms])) > 0",
                             S("2026-11-17T10:00:00Z")}}));
    } else {
      EXPECT_EQ(sums, (Sums{{"cgov:identity_held_seconds:increase1h", "[30600000ms])) > 0",
                             S("2026-11-16T19:00:00Z")},
                            {"cgov:owner_held_seconds:increase1h", "[52200000ms])) > 0",
                             S("2026-11-17T10:00:00Z")}}));
    }
  }
}

// Days from the daily rules: a daily evaluation that summed 24 hourly ones, each an hour after
// the one before and all in a run of the owners' rules, stands for those hours (consecutive
// days make one run, read once); the rest of the run comes from the hourly rules. A day that
// summed fewer hours, or that follows another daily evaluation within half a day (the run's
// sum would take that one in), is read by the hour. With pods, no daily rule is asked.
TEST(FleetLoad, DaysComeFromTheDailyRulesWhereTheySummedTheWholeDay) {
  const int64_t since = *ParseTimestampMs("2026-11-16T00:00:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-20T00:00:00Z");
  struct Case {
    const char* name;
    bool pods;
    std::vector<std::pair<const char*, int>> days;
    // Each daily or owners' held-time sum: (rule, its range, when).
    std::vector<std::tuple<std::string, std::string, double>> sums;
  };
  const std::vector<Case> cases = {
      {"two whole days, then one of 23 hours",
       false,
       {{"2026-11-17T00:45:00Z", 24}, {"2026-11-18T00:45:00Z", 24}, {"2026-11-19T00:45:00Z", 23}},
       {{"cgov:owner_held_seconds:increase1d", "[129600000ms])) > 0", S("2026-11-18T00:45Z")},
        {"cgov:owner_held_seconds:increase1h", "[171000000ms])) > 0", S("2026-11-20T00:00Z")}}},
      {"a daily evaluation 4 h 45 min before the first whole day",
       false,
       {{"2026-11-16T20:00:00Z", 20}, {"2026-11-17T00:45:00Z", 24}, {"2026-11-18T00:45:00Z", 24}},
       {{"cgov:owner_held_seconds:increase1h", "[84600000ms])) > 0", S("2026-11-17T00:00Z")},
        {"cgov:owner_held_seconds:increase1d", "[43200000ms])) > 0", S("2026-11-18T00:45Z")},
        {"cgov:owner_held_seconds:increase1h", "[171000000ms])) > 0", S("2026-11-20T00:00Z")}}},
      {"pods", true, {{"2026-11-17T00:45:00Z", 24}}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RulesFake fake;
    for (int hour = 1; hour <= 96; ++hour) {
      fake.marks.push_back(S("2026-11-16T00:00:00Z") + hour * 3600.0);
      fake.versions.push_back(fake.marks.back());
    }
    for (const auto& [t, hours] : c.days) fake.days.emplace_back(S(t), hours);
    ServeRules(&fake);
    ASSERT_NE(fake.server, nullptr);
    auto prom = PrometheusSource::Open(Url(*fake.server));
    ASSERT_TRUE(prom.ok());
    Result<HistoryInput> loaded =
        LoadFleet(*prom, since, until, {.pods = c.pods, .hourly_point_budget = 0});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const auto [productive, held] = ProductiveAndHeldMs(*loaded);
    EXPECT_EQ(productive, until - since) << "every second of the window, once";
    if (!c.pods) {
      EXPECT_EQ(held, until - since) << "alice's every second, once";
    }
    std::vector<std::tuple<std::string, std::string, double>> sums;
    bool daily_asked = false;
    for (const auto& [q, at] : fake.asked) {
      daily_asked |= q.find("daily_rules") != std::string::npos;
      const size_t rule = q.find("(sum_over_time(cgov:owner_held_seconds");
      if (rule == std::string::npos) continue;
      const size_t open = q.find('[', rule);
      sums.emplace_back(q.substr(rule + 15, open - rule - 15), q.substr(open), at);
    }
    EXPECT_EQ(sums, c.sums);
    EXPECT_EQ(daily_asked, !c.pods);
  }
}

// A run too long to read by GPU and hour (a budget of no points here): each GPU as its total,
// and the heatmap's hours from the fleet rules, or from the GPUs' rules summed by phase where
// the fleet rules are missing (a rule file that predates them).
TEST(FleetLoad, ALargeRunsHeatmapComesFromTheFleetRulesOrElseTheGpusRules) {
  const int64_t since = *ParseTimestampMs("2026-11-16T10:00:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-16T18:00:00Z");
  for (bool fleet_rules : {true, false}) {
    SCOPED_TRACE(fleet_rules ? "fleet rules" : "no fleet rules");
    RulesFake fake;
    fake.fleet_rules = fleet_rules;
    for (int hour = 11; hour <= 18; ++hour) {
      fake.marks.push_back(S("2026-11-16T00:00:00Z") + hour * 3600.0);
    }
    ServeRules(&fake);
    ASSERT_NE(fake.server, nullptr);
    auto prom = PrometheusSource::Open(Url(*fake.server));
    ASSERT_TRUE(prom.ok());
    Result<HistoryInput> loaded =
        LoadFleet(*prom, since, until, {.rules = RecordingRules::kOn, .hourly_point_budget = 0});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    int64_t productive = 0, heatmap = 0;
    for (const HourBucket& b : loaded->hours) {
      for (const auto& [id, g] : b.gpus) {
        productive += g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
      }
    }
    for (const auto& [hour, u] : loaded->heatmap_hours) {
      heatmap += u.phase_ms[static_cast<size_t>(Phase::kProductive)];
    }
    EXPECT_EQ(productive, until - since);
    EXPECT_EQ(heatmap, until - since);
    EXPECT_EQ(loaded->heatmap_hours.size(), 8u);
    bool by_gpu = false;
    for (const std::string& q : fake.ranges) {
      by_gpu |= q == "sum by (phase) (last_over_time(cgov:gpu_phase_seconds:increase1h[30m]))";
    }
    EXPECT_EQ(by_gpu, !fleet_rules) << "the GPUs' rules are summed only without the fleet's";
  }
}

}  // namespace
// A raw edge of a rule run (at most an hour) is one stretch: each GPU counter is read at the
// edge's two ends in one range query, not also at the hour boundary inside it, and its time is
// filed under the clock hour holding most of it, as a rule's hour is. Without rules, the same
// window is still split at each hour boundary.
TEST(FleetLoad, ARuleRunsRawEdgesAreOneStretchEach) {
  const int64_t since = *ParseTimestampMs("2026-11-16T09:59:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-16T11:30:00Z");
  RulesFake fake;
  fake.marks = {S("2026-11-16T11:07:30Z")};  // the run 10:07:30-11:07:30
  ServeRules(&fake);
  ASSERT_NE(fake.server, nullptr);
  auto prom = PrometheusSource::Open(Url(*fake.server));
  ASSERT_TRUE(prom.ok());
  auto productive_by_hour = [](const HistoryInput& in) {
    std::map<int64_t, int64_t> out;
    for (const HourBucket& b : in.hours) {
      for (const auto& [id, g] : b.gpus) {
        const int64_t ms = g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)];
        if (ms != 0) out[b.hour] += ms;
      }
    }
    return out;
  };
  const int64_t nine = since / 3'600'000;
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until, {.rules = RecordingRules::kOn});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  // 09:59-10:07:30 under 10:00, the rule's hour under 10:00 (most of it), 11:07:30-11:30 under
  // 11:00: every second once, none under 09:00.
  const std::map<int64_t, int64_t> with_rules = {{nine + 1, 510'000 + 3'600'000},
                                                 {nine + 2, 1'350'000}};
  EXPECT_EQ(productive_by_hour(*loaded), with_rules);
  for (const auto& [q, at] : fake.asked) {
    EXPECT_EQ(q.find("last_over_time(cgov_gpu_phase_seconds_total"), std::string::npos)
        << "an edge read by an instant query too: " << q;
  }
  int raw_reads = 0;
  for (const std::string& q : fake.ranges) {
    raw_reads += q.find("last_over_time(cgov_gpu_phase_seconds_total[1h])") != std::string::npos;
  }
  EXPECT_EQ(raw_reads, 2) << "one range query of two points per edge";
  fake.asked.clear();
  loaded = LoadFleet(*prom, since, until, {.rules = RecordingRules::kOff});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const std::map<int64_t, int64_t> raw = {
      {nine, 60'000}, {nine + 1, 3'600'000}, {nine + 2, 1'800'000}};
  EXPECT_EQ(productive_by_hour(*loaded), raw);
}

// At a raw edge of a rule run, each identity counter is one range query of its series by pod at
// the edge's two ends, differenced by series and then summed: a pod born in the edge counts from
// zero, one that ended more than an hour before it (only in the start's lookback) not at all,
// and a host with a series that fell is read again with increase().
TEST(FleetLoad, ARuleRunsRawEdgesReadEachIdentitySeriesAtBothEndsOnce) {
  const int64_t since = *ParseTimestampMs("2026-11-16T09:59:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-16T11:30:00Z");
  RulesFake fake;
  fake.marks = {S("2026-11-16T11:07:30Z")};  // the run 10:07:30-11:07:30, raw edges around it
  fake.pods_at_edges = true;
  ServeRules(&fake);
  ASSERT_NE(fake.server, nullptr);
  auto prom = PrometheusSource::Open(Url(*fake.server));
  ASSERT_TRUE(prom.ok());
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until, {.rules = RecordingRules::kOn});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  std::map<std::string, int64_t> held;  // by user
  for (const HourBucket& b : loaded->hours) {
    for (const auto& [key, h] : b.identities) {
      held[loaded->identities.at(key.first).user] += h.held_ms;
    }
  }
  // The run's hour (the fake's rule: every second of it), and 60 + 30 s at each edge.
  EXPECT_EQ(held["alice"], 3'600'000 + 2 * 90'000);
  EXPECT_EQ(held.count("bob"), 0u) << "n2 fell: read again with increase() (none here)";
  int reread = 0;
  for (const auto& [q, at] : fake.asked) {
    EXPECT_EQ(q.find("(last_over_time(cgov_identity_held_seconds_total["), std::string::npos)
        << "an edge read by instant queries: " << q;
    reread +=
        q.find("increase(cgov_identity_held_seconds_total{Hostname=~\"n2\"}") != std::string::npos;
  }
  EXPECT_EQ(reread, 2) << "n2's held seconds read again at each edge";
  int by_pod = 0;
  for (const std::string& q : fake.ranges) {
    by_pod += q == "sum by (Hostname, user, project, team, namespace, pod, container, pod_uid, "
                   "slurm_job) (last_over_time(cgov_identity_held_seconds_total[4110000ms]))" ||
              q == "sum by (Hostname, user, project, team, namespace, pod, container, pod_uid, "
                   "slurm_job) (last_over_time(cgov_identity_held_seconds_total[4950000ms]))";
  }
  EXPECT_EQ(by_pod, 2) << "one range query by pod at each edge, reaching an hour before it";
  // Each edge's GPU seconds by pod, the slowest identity reads, go out first (one at a time
  // here, so in the order sent), not after every GPU read.
  ASSERT_GE(fake.ranges.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_TRUE(fake.ranges[k].starts_with(
        "sum by (Hostname, user, project, team, namespace, pod, container, pod_uid, slurm_job, "
        "phase) (last_over_time(cgov_identity_gpu_seconds_total["))
        << fake.ranges[k];
  }
}

// Whole hours read as the counters' values at each boundary, differenced: a daemon restart seen
// by its tick counter's resets (n2, 12:00-13:00) or by a counter that fell within an hour
// (n1.example) has that hour read with Increase() for those hosts alone (their names quoted
// for a regex); a counter that fell while its host went unscraped (n3) counts from zero.
void CheckRestartedDaemonsHoursAreReadAgainForThoseHosts(int parallel) {
  SCOPED_TRACE(fmt::format("{} at once", parallel));
  const int64_t since = *ParseTimestampMs("2026-11-16T10:00:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-16T14:00:00Z");
  auto labels = ProductiveGpuOn;
  auto matrix = [](json result) {
    return json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}
        .dump();
  };
  std::mutex mu;
  std::vector<std::pair<std::string, double>> again;  // the Increase() queries for some hosts
  auto server = Serve([&](const ServedRequest& r) {
    ServedResponse out;
    out.content_type = "application/json";
    const std::string q = r.query.count("query") ? r.query.at("query") : "";
    if (r.path == "/api/v1/query_range" && q.find("resets(cgov_ticks_total[") != q.npos) {
      out.body =
          matrix({{{"metric", {{"Hostname", "n2"}}}, {"values", {{S("2026-11-16T13:00Z"), "1"}}}}});
    } else if (r.path == "/api/v1/query_range" &&
               q.find("last_over_time(cgov_gpu_phase_seconds_total[1h])") != q.npos) {
      auto at = [](const char* hour, const char* value) { return json{S(hour), value}; };
      out.body = matrix({{{"metric", labels("n1.example")},
                          {"values",
                           {at("2026-11-16T11:00Z", "3600"), at("2026-11-16T12:00Z", "7200"),
                            at("2026-11-16T13:00Z", "1000"), at("2026-11-16T14:00Z", "4600")}}},
                         {{"metric", labels("n2")},
                          {"values",
                           {at("2026-11-16T11:00Z", "100"), at("2026-11-16T12:00Z", "3700"),
                            at("2026-11-16T13:00Z", "50"), at("2026-11-16T14:00Z", "3650")}}},
                         {{"metric", labels("n3")},
                          {"values",
                           {at("2026-11-16T11:00Z", "500"), at("2026-11-16T13:00Z", "200"),
                            at("2026-11-16T14:00Z", "3800")}}}});
    } else if (q.find("cgov_gpu_phase_seconds_total{Hostname=~") != q.npos) {
      {
        std::lock_guard lock(mu);
        again.emplace_back(q, TimeParam(r.query.at("time")));
      }
      out.body =
          Vector({{labels("n1.example"), 2800}, {labels("n2"), 3400}, {labels("n9"), 999}}).dump();
    } else {
      out.body = Vector({}).dump();
    }
    return out;
  });
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server));
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(parallel);
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until, {.rules = RecordingRules::kOff});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto seconds = ProductiveSecondsByHost(*loaded, since / kHourMs);  // host -> hour -> s
  using Hours = std::map<int64_t, int64_t>;
  // 10:00-11:00: no value at 10:00, so each counts from zero (born in the window).
  EXPECT_EQ(seconds["n1.example"], (Hours{{0, 3600}, {1, 3600}, {2, 2800}, {3, 3600}}));
  EXPECT_EQ(seconds["n2"], (Hours{{0, 100}, {1, 3600}, {2, 3400}, {3, 3600}}));
  EXPECT_EQ(seconds["n3"], (Hours{{0, 500}, {2, 200}, {3, 3600}}));
  EXPECT_EQ(seconds.count("n9"), 0u) << "a host not asked for is not taken";
  ASSERT_EQ(again.size(), 1u);
  EXPECT_THAT(again[0].first,
              HasSubstr("cgov_gpu_phase_seconds_total{Hostname=~\"n1\\\\.example|n2\"}"));
  EXPECT_DOUBLE_EQ(again[0].second, S("2026-11-16T13:00Z"));
}

TEST(FleetLoad, RestartedDaemonsHoursAreReadAgainForThoseHosts) {
  CheckRestartedDaemonsHoursAreReadAgainForThoseHosts(1);
  CheckRestartedDaemonsHoursAreReadAgainForThoseHosts(4);
}

// A daemon that restarted within a rule run: the run's sums take care of the reset, and the raw
// stretches either side are read from the counters' own values there. n2's daemon starts at
// 09:45 and restarts at 10:05; its counter at 14:30 (15,900 s) stands above what its value at
// 10:00 plus the run's sums would make it (15,300), so a report that carried values over the run
// instead of reading them would have to tell the restart from its ticks.
TEST(FleetLoad, ADaemonRestartWithinARunIsCountedOnce) {
  const int64_t since = *ParseTimestampMs("2026-11-16T09:30:00Z");
  const int64_t until = *ParseTimestampMs("2026-11-16T14:30:00Z");
  const double t0 = S("2026-11-16T09:00Z");
  // Each host's counter (and tick counter: one tick a second) at time t; nullopt before its
  // daemon started.
  auto value = [&](const std::string& host, double t) -> std::optional<double> {
    if (host == "n1") return t - t0;
    if (t < S("2026-11-16T09:45Z")) return std::nullopt;
    return t < S("2026-11-16T10:05Z") ? t - S("2026-11-16T09:45Z") : t - S("2026-11-16T10:05Z");
  };
  auto gpu = ProductiveGpuOn;
  auto server = Serve([&](const ServedRequest& r) {
    ServedResponse out;
    out.content_type = "application/json";
    const std::string q = r.query.count("query") ? r.query.at("query") : "";
    const bool range = r.path == "/api/v1/query_range";
    const double at = range ? 0 : TimeParam(r.query.at("time"));
    // One answer: each host's series from `of(host, t)` at the times asked.
    auto answer = [&](const std::function<json(const std::string&)>& labels,
                      const std::function<std::optional<double>(const std::string&, double)>& of) {
      json result = json::array();
      for (const std::string host : {"n1", "n2"}) {
        json values = json::array();
        const double start = range ? TimeParam(r.query.at("start")) : at;
        const double end = range ? TimeParam(r.query.at("end")) : at;
        const double step = range ? StepParam(r.query.at("step")) : 1;
        for (double t = start; t <= end + 1e-3; t += step) {
          if (std::optional<double> v = of(host, t)) values.push_back({t, std::to_string(*v)});
        }
        if (values.empty()) continue;
        if (range) {
          result.push_back({{"metric", labels(host)}, {"values", values}});
        } else {
          result.push_back({{"metric", labels(host)}, {"value", values[0]}});
        }
      }
      return json{{"status", "success"},
                  {"data", {{"resultType", range ? "matrix" : "vector"}, {"result", result}}}}
          .dump();
    };
    auto host_only = [](const std::string& host) { return json{{"Hostname", host}}; };
    auto identity = [](const std::string& host) {
      return json{{"Hostname", host}, {"user", host == "n1" ? "alice" : "bob"}};
    };
    auto constant = [](double v) {
      return [v](const std::string&, double) -> std::optional<double> { return v; };
    };
    if (q.starts_with("cgov:hourly_rules:evaluation_time_seconds[")) {
      json values = json::array();
      for (const char* t :
           {"2026-11-16T11:00Z", "2026-11-16T12:00Z", "2026-11-16T13:00Z", "2026-11-16T14:00Z"}) {
        values.push_back({S(t), std::to_string(S(t))});
      }
      out.body = json{{"status", "success"},
                      {"data",
                       {{"resultType", "matrix"},
                        {"result", {{{"metric", json::object()}, {"values", values}}}}}}}
                     .dump();
    } else if (q.find("cgov_gpu_phase_seconds_total{Hostname=~") != q.npos) {
      out.body = answer(gpu, [&](const std::string& host, double) -> std::optional<double> {
        if (host == "n2") return 1800;  // what it added from 14:00 to 14:30
        return std::nullopt;
      });
    } else if (q.find("cgov_identity_held_seconds_total{Hostname=~") != q.npos) {
      out.body = answer(identity, [&](const std::string& host, double) -> std::optional<double> {
        if (host == "n2") return 1800;
        return std::nullopt;
      });
    } else if (q.find("last_over_time(cgov_gpu_phase_seconds_total[1h])") != q.npos) {
      out.body = answer(gpu, value);
    } else if (q.find("(last_over_time(cgov_identity_held_seconds_total[") != q.npos) {
      out.body = answer(identity, value);  // an identity's held time: its host's every second
    } else if (q.find("sum_over_time(cgov:identity_held_seconds:increase1h[") != q.npos) {
      out.body = answer(identity, constant(14400));
    } else if (q.find("last_over_time(cgov_ticks_total[1h])") != q.npos) {
      out.body = answer(host_only, value);
    } else if (q.find("sum_over_time(cgov:gpu_phase_seconds:increase1h[") != q.npos) {
      out.body = answer(gpu, constant(14400));  // the run's 4 h, the restart taken care of
    } else if (q.find("sum_over_time(cgov:ticks:increase1h[") != q.npos) {
      out.body = answer(host_only, constant(14400));
    } else if (range && q == "last_over_time(cgov:gpu_phase_seconds:increase1h[30m])") {
      out.body = answer(gpu, constant(3600));
    } else {
      out.body = Vector({}).dump();
    }
    return out;
  });
  ASSERT_NE(server, nullptr);
  auto prom = PrometheusSource::Open(Url(*server));
  ASSERT_TRUE(prom.ok());
  prom->set_parallel(3);
  Result<HistoryInput> loaded = LoadFleet(*prom, since, until, {.rules = RecordingRules::kOn});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  std::map<std::string, int64_t> seconds;
  for (const auto& [host, hours] : ProductiveSecondsByHost(*loaded, 0)) {
    for (const auto& [hour, s] : hours) seconds[host] += s;
  }
  EXPECT_EQ(seconds["n1"], 18000) << "09:30 to 14:30";
  EXPECT_EQ(seconds["n2"], 17100) << "09:45 to 14:30";
  // The identities' sums the same way.
  std::map<std::string, int64_t> held;
  for (const auto& [key, h] : loaded->hours.front().identities) {
    held[loaded->identities.at(key.first).user] += h.held_ms / 1000;
  }
  EXPECT_EQ(held, (std::map<std::string, int64_t>{{"alice", 18000}, {"bob", 17100}}));
}

}  // namespace cgov
