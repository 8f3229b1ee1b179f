// End-to-end: cgov deployed the way a Kubernetes cluster runs it (issue 47). One daemon with
// --kubernetes and --metrics-names dcgm on the fake API server, scraped every second by two
// real Prometheus servers whose scrape configs reproduce the Prometheus Operator's relabelling
// of a ServiceMonitor target (namespace, pod, container, service, endpoint and job set from the
// target): one with honor_labels (the operator overlay's ServiceMonitor: honorLabels: true), one
// without (the Operator's default). With it, `cgov report --prometheus --by pod` gives each pod
// the GPU-seconds `cgov report --db --by pod` gives it, and OpenCost's GPU-usage query, run
// verbatim, returns each pod's utilization; without it, the report refuses by name. GPU 3 is
// busy and shared by two processes at 90 % and 10 % SM: charged 90/10 in the report, the JSON
// and /metrics.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/time_format.h"
#include "e2e_helpers.h"
#include "kube_fixture.h"
#include "os/http_get.h"
#include "process_runner.h"
#include "store/prometheus_source.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// OpenCost's GPU-usage query (opencost/opencost pkg/costmodel/allocation.go, queryFmtGPUsUsageAvg,
// commit 5f6533303e3850c8635796a74bb22802d16e9090), its window and cluster label filled in as
// OpenCost fills them (cluster_id: its default PROM_CLUSTER_ID_LABEL).
constexpr char kOpenCostGpuUsage[] =
    "avg(avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{container!=\"\"}[%s])) by (container, pod, "
    "namespace, %s)";

std::string OpenCostQuery(const std::string& window) {
  std::string q = kOpenCostGpuUsage;
  q.replace(q.find("%s"), 2, window);
  q.replace(q.find("%s"), 2, "cluster_id");
  return q;
}

// A scrape config as the Prometheus Operator renders a ServiceMonitor's endpoint, on a static
// target: the target labels it sets from the Kubernetes service discovery, set here by
// relabel_configs (cgov's own DaemonSet pod is the target).
std::string OperatorStyleConfig(int target_port, bool honor_labels) {
  return "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
         "scrape_configs:\n"
         "  - job_name: serviceMonitor/cgov/cgov/0\n" +
         std::string(honor_labels ? "    honor_labels: true\n" : "") +
         "    static_configs:\n      - targets: [\"127.0.0.1:" + std::to_string(target_port) +
         "\"]\n"
         "    relabel_configs:\n"
         "      - {target_label: namespace, replacement: cgov}\n"
         "      - {target_label: service, replacement: cgov}\n"
         "      - {target_label: pod, replacement: cgov-7x2kq}\n"
         "      - {target_label: container, replacement: cgov}\n"
         "      - {target_label: endpoint, replacement: metrics}\n"
         "      - {target_label: job, replacement: cgov}\n";
}

class OperatorE2E : public ::testing::Test {
 protected:
  void TearDown() override {
    for (Started* p : {&daemon_, &api_.process}) {
      if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        WaitProgram(*p, 5);
      }
    }
    for (Started& p : prometheus_) {
      if (p.pid > 0) {
        kill(p.pid, SIGTERM);
        WaitProgram(p, 10);
      }
    }
  }

  std::string StartPrometheus(const std::string& name, int target_port, bool honor_labels) {
    const int port = FreePort();
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    WriteFile(dir_ / (name + ".yml"), OperatorStyleConfig(target_port, honor_labels));
    prometheus_.push_back(
        StartProgram({kPrometheus, "--config.file=" + (dir_ / (name + ".yml")),
                      "--storage.tsdb.path=" + (dir_ / (name + "-tsdb")),
                      "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
                     {}));
    EXPECT_TRUE(WaitFor(
        [&] {
          auto ready = HttpGet(url + "/-/ready", {}, std::chrono::seconds(1));
          return ready.ok() && ready->status == 200;
        },
        60))
        << name << " did not become ready";
    return url;
  }

  TempDir dir_;
  FakeApi api_;
  Started daemon_;
  std::vector<Started> prometheus_;
};

TEST_F(OperatorE2E, HonoredLabelsMatchTheNodeOpenCostReadsPodsAndARenamingScrapeIsRefused) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required "
                                             "(scripts/install-deps installs it)";
  // What deploy/ ships keeps cgov's labels: the ServiceMonitor (validated against the Operator's
  // CRD by KubernetesE2E.DeployManifestsValidateAndAskForLittle) and the plain scrape config,
  // which promtool accepts.
  EXPECT_NE(ReadFile(DocsFile("../deploy/kubernetes/overlays/operator/servicemonitor.yaml"))
                .find("honorLabels: true"),
            std::string::npos);
  const std::string scrape_config = DocsFile("../deploy/prometheus/prometheus.yml");
  EXPECT_NE(ReadFile(scrape_config).find("honor_labels: true"), std::string::npos);
  RunResult checked = RunProgram({kPromtool, "check", "config", scrape_config}, {}, 30);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  json scenario = {
      {"node", "gpu-node-1"},
      {"token", nullptr},
      {"resource_version", 900},
      {"pods",
       {Pod(kPodA, "ml", "train-0", "trainer", std::string(64, 'a'), {{"project-id", "llm"}}),
        Pod(kPodB, "notebooks", "nb-bob", "notebook", std::string(64, 'b'), {}),
        Pod(kPodC, "ml", "vision-0", "worker", kContainerC, {{"project-id", "vision"}})}},
      {"watches", {{{"events", json::array()}, {"then", "hold"}}}}};
  api_ = StartFakeApi(dir_, scenario);
  const int port = FreePort();
  // Both Prometheus servers first: the first scrape comes within a second of the daemon's start.
  const std::string honoring = StartPrometheus("honoring", port, true);
  const std::string renaming = StartPrometheus("renaming", port, false);
  const std::string db = dir_ / "node.db";
  daemon_ = StartProgram({CgovBinary(),
                          "daemon",
                          "--db",
                          db,
                          "--interval",
                          "1s",
                          "--commit-every",
                          "1s",
                          "--nvml-lib",
                          FakeNvml("full"),
                          "--host-root",
                          KubeBox(dir_),
                          "--kubernetes",
                          "--kube-api",
                          api_.url,
                          "--kube-token-file",
                          "",
                          "--kube-ca-file",
                          "",
                          "--node-name",
                          "gpu-node-1",
                          "--hostname",
                          "gpu-node-1",
                          "--metrics-names",
                          "dcgm",
                          "--listen",
                          "127.0.0.1:" + std::to_string(port)},
                         {{"CGOV_FAKE_NVML_SCENARIO", Scenario("k8s_shared")}});
  auto prom = PrometheusSource::Open(honoring, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  // Scraped a few times with the pods named (bounded: 60 s).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto seen = prom->Query(
            "count_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod=\"vision-0\"}[1m]) >= 8", NowS());
        return seen.ok() && !seen->empty();
      },
      60))
      << "Prometheus did not scrape the daemon with its pods named";
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");

  // OpenCost's query, verbatim, on the honoring Prometheus: each pod's utilization. train-0
  // has GPU 0 (80 %); vision-0 its 90 % share of GPU 3 (100 % busy); nb-bob's GPU is idle.
  // gdm's 10 % of GPU 3 is in no container: not OpenCost's.
  auto usage = prom->Query(OpenCostQuery("1m"), NowS());
  ASSERT_TRUE(usage.ok()) << usage.status().message();
  std::map<std::string, double> by_pod;
  for (const PromSeries& s : *usage) {
    by_pod[s.Label("namespace") + "/" + s.Label("pod") + "/" + s.Label("container")] =
        s.points.at(0).second;
  }
  EXPECT_NEAR(by_pod["ml/train-0/trainer"], 0.8, 1e-9) << usage->size();
  EXPECT_NEAR(by_pod["ml/vision-0/worker"], 0.9, 0.02);  // its share of the last tick split
  EXPECT_NEAR(by_pod["notebooks/nb-bob/notebook"], 0.0, 1e-9);
  EXPECT_EQ(by_pod.size(), 3u) << "no series of cgov's own pod";

  // Stop the daemon (its database is final); let both servers see it go.
  ASSERT_EQ(kill(daemon_.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon_, 15);
  daemon_.pid = -1;
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  sleep(2);
  const int64_t until_ms = static_cast<int64_t>(std::ceil(NowS())) * 1000;
  const std::string until = FormatRfc3339Utc(until_ms * 1'000'000);
  auto report = [&](const std::vector<std::string>& source) {
    std::vector<std::string> argv = {CgovBinary(), "report",  "--format", "json", "--since",
                                     "10m",        "--until", until,      "--by", "pod"};
    argv.insert(argv.end(), source.begin(), source.end());
    return RunProgram(argv, {}, 60);
  };

  // Without honor_labels the scrape renamed cgov's labels: refused, naming job, host and fix.
  RunResult refused = report({"--prometheus", renaming});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_EQ(refused.out, "") << "no partial report";
  EXPECT_NE(refused.err.find("the scrape of job cgov (host gpu-node-1) renamed"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("honorLabels: true"), std::string::npos) << refused.err;

  // With it: every pod's GPU-seconds as on the node, within what was not scraped yet (the
  // ticks after the last scrape, plus the one whose credit waits for the next tick: 1 s each).
  RunResult fleet_run = report({"--prometheus", honoring});
  ASSERT_EQ(fleet_run.exit_code, 0) << fleet_run.err;
  const json fleet = json::parse(fleet_run.out);
  RunResult node_run = report({"--db", db});
  ASSERT_EQ(node_run.exit_code, 0) << node_run.err;
  const json node = json::parse(node_run.out);
  auto last_scraped = prom->Query("max_over_time(cgov_ticks_total[2m])", until_ms / 1e3);
  ASSERT_TRUE(last_scraped.ok() && !last_scraped->empty());
  const double unscraped = static_cast<double>(QueryDb(db, "SELECT count(*) FROM tick")) -
                           last_scraped->at(0).points.at(0).second + 1;
  ASSERT_GE(unscraped, 1);
  auto attributed = [](const json& doc) {
    std::map<std::string, double> out;
    for (const json& w : doc["who"]) {
      double s = 0;
      for (const auto& [phase, v] : w["attributed_seconds"].items()) s += v.get<double>();
      out[w["key"]] = s;
    }
    return out;
  };
  const std::map<std::string, double> from_fleet = attributed(fleet), from_node = attributed(node);
  for (const char* pod : {"ml/train-0", "ml/vision-0", "notebooks/nb-bob"}) {
    ASSERT_TRUE(from_node.count(pod)) << node["who"].dump(1);
    ASSERT_TRUE(from_fleet.count(pod)) << pod << " missing from " << fleet["who"].dump(1);
    EXPECT_GT(from_node.at(pod), 4) << pod;
    EXPECT_GE(from_node.at(pod) + 1e-6, from_fleet.at(pod)) << pod;
    EXPECT_LE(from_node.at(pod) - from_fleet.at(pod), unscraped + 1e-6) << pod;
  }
  for (const auto& [key, seconds] : from_fleet) {
    EXPECT_EQ(key.find("cgov-7x2kq"), std::string::npos) << "cgov's own pod charged " << seconds;
  }

  // GPU 3, busy and shared at 90 % / 10 % SM: 90/10 in the report and its JSON...
  double gpu3 = 0;
  for (const json& g : node["gpus"]) {
    if (g["index"] == 3) {
      for (const auto& [phase, v] : g["phase_seconds"].items()) gpu3 += v.get<double>();
    }
  }
  ASSERT_GT(gpu3, 4) << node["gpus"].dump(1);
  // To 2 % of the GPU's time: each tick is split to the millisecond, the rounding's remainder
  // to one holder (a tick of 1,003 ms gives 902 and 101 ms), and a loaded machine's ticks are
  // not whole tens of milliseconds. The unit test
  // HistoryAggregator.ABusySharedGpuIsSplitByPerProcessUtilization checks the split exactly.
  EXPECT_NEAR(from_node.at("ml/vision-0"), 0.9 * gpu3, 0.02 * gpu3);
  EXPECT_NEAR(from_node.at(""), 0.1 * gpu3, 0.02 * gpu3) << "gdm's process outside any pod";
  EXPECT_NEAR(from_node.at("ml/vision-0") + from_node.at(""), gpu3, 1e-3) << "all of it, once";
  const double by_util = node["shared_gpus"]["by_utilization_gpu_seconds"].get<double>();
  EXPECT_NEAR(by_util + node["shared_gpus"]["evenly_gpu_seconds"].get<double>(), gpu3, 1e-3);
  EXPECT_GE(by_util, 0.9 * gpu3) << "split by utilization, but where a tick had no reading";
  RunResult text = RunProgram(
      {CgovBinary(), "report", "--db", db, "--since", "10m", "--until", until, "--by", "pod"}, {},
      60);
  EXPECT_NE(text.out.find("split by utilization"), std::string::npos) << text.out;
  // ... and on /metrics (scraped while it ran): the two holders' seconds are 90 to 10.
  double vision = 0, outside = 0;
  for (size_t at = metrics.find("cgov_identity_gpu_seconds_total{"); at != std::string::npos;
       at = metrics.find("cgov_identity_gpu_seconds_total{", at + 1)) {
    const std::string line = metrics.substr(at, metrics.find('\n', at) - at);
    const double v = std::stod(line.substr(line.rfind(' ')));
    if (line.find("pod=\"vision-0\"") != std::string::npos) vision += v;
    if (line.find("user=\"gdm\"") != std::string::npos) outside += v;
  }
  ASSERT_GT(outside, 0) << metrics;
  EXPECT_NEAR(vision / (vision + outside), 0.9, 0.02);
  EXPECT_NE(metrics.find("pod_uid=\"" + std::string(kPodC) + "\""), std::string::npos);
}

}  // namespace
}  // namespace cgov::e2e
