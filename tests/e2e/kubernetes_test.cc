// End-to-end: a Kubernetes GPU node. The daemon (--kubernetes) lists and watches this node's
// pods on a fake API server (tests/fake_kube/api_server.py, shaped as the real one) and names
// each GPU process's namespace, pod and container, with the project/team/user its pod's labels
// give; the history keeps the names, `cgov report --by namespace|pod|container|project` splits
// the GPU time by them ("(unlabelled)" for a pod without the label), and /metrics labels its
// identity series with them. With RBAC denying the pod list, the daemon says so and records
// pod UIDs. With --pod-resources, a GPU the kubelet allocated to a pod is charged to it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "kube_fixture.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(KubernetesE2E, PodsAreNamedAndLabelledInTheHistoryTheReportAndMetrics) {
  TempDir dir;
  json scenario = {
      {"node", "gpu-node-1"},
      {"token", "t0ken"},
      {"resource_version", 900},
      {"pods",
       {Pod(kPodA, "ml", "train-0", "trainer", std::string(64, 'a'),
            {{"project-id", "llm-k8s"}, {"team-id", "research"}, {"user-id", "alice"}}),
        Pod(kPodB, "notebooks", "nb-bob", "notebook", std::string(64, 'b'), {{"team-id", "lab"}}),
        Pod(kPodC, "ml", "vision-0", "worker", kContainerC,
            {{"project-id", "vision"}, {"team-id", "applied"}, {"user-id", "carol"}}),
        Pod("33333333-4444-4555-8666-777777777777", "ml", "elsewhere", "x", std::string(64, 'c'),
            {{"project-id", "other"}}, "gpu-node-2")}},
      {"watches", {{{"events", json::array()}, {"then", "hold"}}}}};
  FakeApi api = StartFakeApi(dir, scenario);
  WriteFile(dir / "token", "t0ken\n");
  const std::string db = dir / "h.db";
  const int port = FreePort();
  Started daemon = StartProgram({CgovBinary(),
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
                                 KubeBox(dir),
                                 "--kubernetes",
                                 "--kube-api",
                                 api.url,
                                 "--kube-token-file",
                                 dir / "token",
                                 "--kube-ca-file",
                                 "",
                                 "--node-name",
                                 "gpu-node-1",
                                 "--listen",
                                 "127.0.0.1:" + std::to_string(port)},
                                {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor(TicksTaken(port, 4), 30));
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  kill(api.process.pid, SIGKILL);
  WaitProgram(api.process, 5);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("--kubernetes: 3 pod(s) on node gpu-node-1"), std::string::npos)
      << stopped.err;

  // /metrics: the identity series carry namespace, pod and container as dcgm-exporter does.
  EXPECT_NE(metrics.find("cgov_identity_held_seconds_total{Hostname=\""), std::string::npos);
  EXPECT_NE(metrics.find("cgov_collector_success{collector=\"kubernetes\",Hostname=\"vm\"} 1"),
            std::string::npos)
      << metrics;
  // `pod` is the name (kube-state-metrics' join key), the UID is `pod_uid` (issue 47).
  EXPECT_NE(metrics.find("user=\"alice\",project=\"llm-k8s\",team=\"research\",namespace=\"ml\","
                         "pod=\"train-0\",container=\"trainer\",pod_uid=\"" +
                         std::string(kPodA) + "\",slurm_job=\"\"}"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("project=\"\",team=\"lab\",namespace=\"notebooks\",pod=\"nb-bob\","
                         "container=\"notebook\",pod_uid=\"" +
                         std::string(kPodB) + "\""),
            std::string::npos)
      << metrics;

  // /metrics and the history agree by namespace: the scrape came before the daemon's last ticks,
  // so the report may hold at most those few ticks more (1 s each, per holder).
  std::map<std::string, double> scraped;
  for (size_t at = metrics.find("cgov_identity_held_seconds_total{"); at != std::string::npos;
       at = metrics.find("cgov_identity_held_seconds_total{", at + 1)) {
    const std::string line = metrics.substr(at, metrics.find('\n', at) - at);
    const size_t ns = line.find("namespace=\"") + 11;
    scraped[line.substr(ns, line.find('"', ns) - ns)] += std::stod(line.substr(line.rfind(' ')));
  }

  // The history keeps the names; the report splits by them.
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM kube_pod"), 3);
  const std::vector<std::string> base = {"--db", db, "--since", "1h"};
  auto report = [&](const std::string& by) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--by", by});
    return ReportJson(args);
  };
  const json by_user = report("user"), by_ns = report("namespace"), by_pod = report("pod"),
             by_project = report("project"), by_container = report("container");
  std::map<std::string, double> user = HeldByKey(by_user), ns = HeldByKey(by_ns),
                                pod = HeldByKey(by_pod), project = HeldByKey(by_project),
                                container = HeldByKey(by_container);
  ASSERT_GT(pod["ml/train-0"], 0) << by_pod["who"].dump(1);
  ASSERT_GT(pod["notebooks/nb-bob"], 0);
  ASSERT_GT(pod["ml/vision-0"], 0);
  EXPECT_DOUBLE_EQ(ns["ml"], pod["ml/train-0"] + pod["ml/vision-0"]) << by_ns["who"].dump(1);
  EXPECT_DOUBLE_EQ(ns["notebooks"], pod["notebooks/nb-bob"]);
  EXPECT_DOUBLE_EQ(container["ml/train-0/trainer"], pod["ml/train-0"]);
  // Labels win over the process's own CGOV_PROJECT (llm); a pod without project-id is shown
  // as unlabelled with the GPU time it carries.
  EXPECT_DOUBLE_EQ(project["llm-k8s"], pod["ml/train-0"]) << by_project["who"].dump(1);
  EXPECT_EQ(project.count("llm"), 0u);
  EXPECT_DOUBLE_EQ(project["(unlabelled)"], pod["notebooks/nb-bob"]);
  EXPECT_DOUBLE_EQ(user["carol"], pod["ml/vision-0"]) << "user-id label";
  // The ticks the history has beyond the scrape's, plus the one whose credit waits for the
  // next tick: at most that many seconds more per holder (the interval is 1 s).
  const double later_ticks = static_cast<double>(QueryDb(db, "SELECT count(*) FROM tick")) -
                             Sample(metrics, "cgov_ticks_total") + 1;
  ASSERT_GE(later_ticks, 1);
  for (const char* name : {"ml", "notebooks"}) {
    const double holders = std::string(name) == "ml" ? 2 : 1;
    EXPECT_GT(scraped[name], 0) << name;
    EXPECT_GE(ns[name], scraped[name]) << name;
    EXPECT_LE(ns[name] - scraped[name], later_ticks * holders + 1e-9) << name;
  }
  // Every view adds up to the same total.
  for (const json* r : {&by_ns, &by_pod, &by_project, &by_container}) {
    EXPECT_EQ((*r)["held_gpu_seconds"], by_user["held_gpu_seconds"]);
  }
  // What cgov asked the API server: this node's pods, with the token.
  std::ifstream log(api.log);
  int requests = 0;
  for (std::string line; std::getline(log, line); ++requests) {
    json r = json::parse(line);
    EXPECT_TRUE(r["authorized"].get<bool>());
    EXPECT_EQ(r["query"]["fieldSelector"], "spec.nodeName=gpu-node-1");
  }
  EXPECT_GE(requests, 2) << "a list and a watch";
}

// The kubelet's pod-resources API (a real gRPC server: tests/fake_kube/pod_resources_server.py)
// says which GPUs each container was given. A pod allocated GPU 2, which none of its processes
// uses (only Xorg draws on it), is charged for it: GPU 2 is idle-held, not truly idle, and its
// time is the pod's by namespace, pod and project, in the report and on /metrics alike. A pod
// whose process is seen on its GPU is not charged twice.
TEST(KubernetesE2E, AGpuAllocatedToAPodAndLeftIdleIsChargedToIt) {
  TempDir dir;
  constexpr char kPodD[] = "44444444-5555-4666-8777-888888888888";
  json scenario = {{"node", "gpu-node-1"},
                   {"token", nullptr},
                   {"resource_version", 900},
                   {"pods",
                    {Pod(kPodA, "ml", "train-0", "trainer", std::string(64, 'a'),
                         {{"project-id", "llm-k8s"}, {"team-id", "research"}}),
                     Pod(kPodB, "notebooks", "nb-bob", "notebook", std::string(64, 'b'),
                         {{"project-id", "nb"}, {"team-id", "lab"}}),
                     Pod(kPodC, "ml", "vision-0", "worker", kContainerC,
                         {{"project-id", "vision"}, {"team-id", "applied"}}),
                     Pod(kPodD, "notebooks", "reserved-0", "main", std::string(64, 'd'),
                         {{"project-id", "reserve"}, {"team-id", "lab"}})}},
                   {"watches", {{{"events", json::array()}, {"then", "hold"}}}}};
  FakeApi api = StartFakeApi(dir, scenario);
  const std::string gpu = "GPU-fa4e0000-0000-4000-8000-00000000000";
  WriteFile(dir / "answer.textproto",
            "pod_resources { name: \"train-0\" namespace: \"ml\" containers { name: \"trainer\" "
            "devices { resource_name: \"nvidia.com/gpu\" device_ids: \"" +
                gpu +
                "0\" } } }\n"
                "pod_resources { name: \"reserved-0\" namespace: \"notebooks\" containers { name: "
                "\"main\" devices { resource_name: \"nvidia.com/gpu\" device_ids: \"" +
                gpu +
                "2\" } } }\n"
                "pod_resources { name: \"coredns-0\" namespace: \"kube-system\" containers { name: "
                "\"coredns\" } }\n");
  const std::string socket = dir / "kubelet.sock";
  Started kubelet =
      StartProgram({"/usr/bin/python3", DocsFile("../tests/fake_kube/pod_resources_server.py"),
                    socket, dir / "answer.textproto", dir / "kubelet.log"},
                   {});
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(socket); }, 20))
      << "python3-grpcio and protoc come from scripts/install-deps";
  const std::string db = dir / "h.db";
  const int port = FreePort();
  Started daemon = StartProgram({CgovBinary(),
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
                                 KubeBox(dir),
                                 "--kubernetes",
                                 "--kube-api",
                                 api.url,
                                 "--kube-token-file",
                                 "",
                                 "--kube-ca-file",
                                 "",
                                 "--node-name",
                                 "gpu-node-1",
                                 "--pod-resources",
                                 "--pod-resources-socket",
                                 socket,
                                 "--listen",
                                 "127.0.0.1:" + std::to_string(port)},
                                {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor(TicksTaken(port, 4), 30));
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  for (Started* p : {&api.process, &kubelet}) {
    kill(p->pid, SIGKILL);
    WaitProgram(*p, 5);
  }
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("--pod-resources: 2 device(s) allocated to containers"),
            std::string::npos)
      << stopped.err;
  EXPECT_NE(metrics.find("cgov_collector_success{collector=\"pod_resources\",Hostname=\"vm\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(ReadFile(dir / "kubelet.log").find("/v1.PodResourcesLister/List"), std::string::npos);

  const std::vector<std::string> base = {"--db", db, "--since", "1h"};
  auto report = [&](const std::string& by) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--by", by});
    return ReportJson(args);
  };
  const json by_pod = report("pod"), by_ns = report("namespace"), by_project = report("project");
  std::map<std::string, double> pod = HeldByKey(by_pod), ns = HeldByKey(by_ns),
                                project = HeldByKey(by_project);
  // GPU 2: idle-held for all of its time, all of it the reserved pod's.
  const json* gpu2 = nullptr;
  for (const json& g : by_pod["gpus"]) {
    if (g["index"] == 2) gpu2 = &g;
  }
  ASSERT_NE(gpu2, nullptr);
  const double gpu2_seconds = (*gpu2)["held_seconds"].get<double>();
  ASSERT_GT(gpu2_seconds, 0);
  EXPECT_EQ((*gpu2)["phase_seconds"]["idle_held"].get<double>(), gpu2_seconds) << gpu2->dump(1);
  EXPECT_EQ((*gpu2)["phase_seconds"]["truly_idle"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(pod["notebooks/reserved-0"], gpu2_seconds) << by_pod["who"].dump(1);
  for (const json& w : by_pod["who"]) {
    if (w["key"] != "notebooks/reserved-0") continue;
    EXPECT_EQ(w["idle_held_seconds"].get<double>(), gpu2_seconds);
    EXPECT_EQ(w["attributed_seconds"]["idle_held"].get<double>(), gpu2_seconds);
  }
  // train-0's own process is on GPU 0: charged once, as before.
  for (const json& g : by_pod["gpus"]) {
    if (g["index"] == 0) {
      EXPECT_DOUBLE_EQ(pod["ml/train-0"], g["held_seconds"].get<double>());
    }
  }
  // By namespace and by project, the same seconds.
  EXPECT_DOUBLE_EQ(ns["notebooks"], pod["notebooks/nb-bob"] + pod["notebooks/reserved-0"]);
  EXPECT_DOUBLE_EQ(ns["ml"], pod["ml/train-0"] + pod["ml/vision-0"]);
  EXPECT_DOUBLE_EQ(project["reserve"], pod["notebooks/reserved-0"]) << by_project["who"].dump(1);
  EXPECT_DOUBLE_EQ(project["nb"], pod["notebooks/nb-bob"]);
  EXPECT_EQ(by_ns["held_gpu_seconds"], by_pod["held_gpu_seconds"]);
  EXPECT_EQ(by_project["held_gpu_seconds"], by_pod["held_gpu_seconds"]);

  // The action list names the pod's idle allocation (no pid: no process; ReportJson checks the
  // report's schema).
  const json actions = ReportJson({"--db", db, "--since", "1h", "--idle-held-min", "1s"});
  bool listed = false;
  for (const json& x : actions["idle_held_sessions"]["sessions"]) {
    if (x["command"] != "(allocated to notebooks/reserved-0)") continue;
    listed = true;
    EXPECT_TRUE(x["pid"].is_null()) << x.dump();
    EXPECT_EQ(x["gpu_index"], 2);
    EXPECT_EQ(x["idle_held_seconds"].get<double>(), gpu2_seconds);
    EXPECT_NE(x["advice"].get<std::string>().find("kubectl delete pod -n notebooks reserved-0"),
              std::string::npos)
        << x.dump();
  }
  EXPECT_TRUE(listed) << actions["idle_held_sessions"].dump(1);

  // /metrics: the reserved pod's idle-held seconds under its names, as the history has them to
  // the tick (the scrape came before the daemon's last ticks).
  const std::string series = "cgov_identity_idle_held_seconds_total{";
  double scraped = -1;
  for (size_t at = metrics.find(series); at != std::string::npos;
       at = metrics.find(series, at + 1)) {
    const std::string line = metrics.substr(at, metrics.find('\n', at) - at);
    if (line.find("namespace=\"notebooks\",pod=\"reserved-0\",container=\"main\"") !=
        std::string::npos) {
      EXPECT_NE(line.find("project=\"reserve\",team=\"lab\""), std::string::npos) << line;
      scraped = std::stod(line.substr(line.rfind(' ')));
    }
  }
  ASSERT_GT(scraped, 0) << metrics;
  const double later_ticks = static_cast<double>(QueryDb(db, "SELECT count(*) FROM tick")) -
                             Sample(metrics, "cgov_ticks_total") + 1;
  EXPECT_GE(gpu2_seconds, scraped);
  EXPECT_LE(gpu2_seconds - scraped, later_ticks + 1e-9);

  // Without --kubernetes, --pod-resources cannot name pods: refused.
  RunResult r =
      RunProgram({CgovBinary(), "daemon", "--db", dir / "x.db", "--pod-resources"}, {}, 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("go with --kubernetes"), std::string::npos) << r.err;
}

TEST(KubernetesE2E, RbacDeniedIsSaidAndPodsKeepTheirUids) {
  TempDir dir;
  FakeApi api = StartFakeApi(dir, json{{"node", "gpu-node-1"}, {"token", nullptr}, {"deny", true}});
  const std::string db = dir / "h.db";
  const int port = FreePort();
  Started daemon = StartProgram({CgovBinary(),
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
                                 KubeBox(dir),
                                 "--kubernetes",
                                 "--kube-api",
                                 api.url,
                                 "--kube-token-file",
                                 "",
                                 "--kube-ca-file",
                                 "",
                                 "--node-name",
                                 "gpu-node-1",
                                 "--listen",
                                 "127.0.0.1:" + std::to_string(port)},
                                {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 2; }, 40));
  EXPECT_NE(Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics")
                .find("cgov_collector_success{collector=\"kubernetes\",Hostname=\"vm\"} 0"),
            std::string::npos)
      << "a failing pod watch is a failing collector";
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  kill(api.process.pid, SIGKILL);
  WaitProgram(api.process, 5);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("HTTP 403: pods is forbidden"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("needs get, list and watch on pods"), std::string::npos);
  const json by_pod = ReportJson({"--db", db, "--since", "1h", "--by", "pod"});
  EXPECT_GT(HeldByKey(by_pod)[kPodA], 0) << by_pod["who"].dump(1);

  // Flags that need --kubernetes, and a node name that is not one.
  RunResult r =
      RunProgram({CgovBinary(), "daemon", "--db", dir / "x.db", "--kube-api", api.url}, {}, 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("go with --kubernetes"), std::string::npos) << r.err;
  r = RunProgram({CgovBinary(), "daemon", "--db", dir / "x.db", "--kubernetes", "--kube-api",
                  api.url, "--node-name", "Bad_Node"},
                 {}, 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a Kubernetes node name"), std::string::npos) << r.err;
  r = RunProgram(
      {CgovBinary(), "daemon", "--db", dir / "x.db", "--kubernetes", "--node-name", "n1"},
      {{"KUBERNETES_SERVICE_HOST", ""}}, 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give the API server with --kube-api"), std::string::npos) << r.err;
}

// deploy/kubernetes's base asks for no more than docs/kubernetes.md argues, and validates against
// the Kubernetes API's schema; a manifest with a wrong field type, a broader role, the node's
// whole filesystem or no seccomp profile is refused.
TEST(KubernetesE2E, DeployManifestsValidateAndAskForLittle) {
  const std::string node = access("/usr/bin/node", X_OK) == 0 ? "/usr/bin/node" : "node";
  const std::string check = std::string(CGOV_NODE_TOOLS_DIR) + "/check_manifests.mjs";
  const std::string manifest = std::string(CGOV_SOURCE_DIR) + "/deploy/kubernetes/base/cgov.yaml";
  RunResult r = RunProgram({node, check, manifest}, {}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err
                            << "\n(the test tools come from scripts/install-deps: npm ci)";
  EXPECT_NE(r.out.find("ok apps/v1/DaemonSet cgov"), std::string::npos) << r.out;

  TempDir dir;
  const std::string original = ReadFile(manifest);
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string text = original;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    WriteFile(dir / "broken.yaml", text);
    return RunProgram({node, check, dir / "broken.yaml"}, {}, 60);
  };
  r = broken("containerPort: 9474", "containerPort: \"nine\"");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("DaemonSet cgov"), std::string::npos) << r.err;
  r = broken("verbs: [get, list, watch]", "verbs: [get, list, watch, delete]");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("beyond get/list/watch on pods"), std::string::npos) << r.err;
  r = broken("hostPath: {path: /proc, type: Directory}", "hostPath: {path: /}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("whole filesystem"), std::string::npos) << r.err;
  r = broken("mountPath: /var/lib/kubelet/pod-resources", "mountPath: /kubelet");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--pod-resources without the kubelet's"), std::string::npos) << r.err;
  r = broken("add: [SYS_PTRACE]", "add: [SYS_PTRACE, DAC_READ_SEARCH]");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("capabilities beyond SYS_PTRACE"), std::string::npos) << r.err;
  r = broken("seccompProfile: {type: RuntimeDefault}", "seccompProfile: {type: Unconfined}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no seccompProfile RuntimeDefault"), std::string::npos) << r.err;
}

// Issue 60, item 3: the overlays users apply, rendered by `kubectl kustomize` and validated object
// by object (Kubernetes' schemas; prometheus-operator's CRD schemas for the ServiceMonitor and
// PrometheusRule): the plain-Prometheus overlay scrapes by annotations and holds no Operator
// object; the Operator overlay carries the ServiceMonitor with kube-prometheus-stack's `release`
// label, the rules and the dashboard equal to their files; a user's overlay on top sets the
// image, runtime class, node selector and tolerations.
TEST(KubernetesE2E, OverlaysRenderAndValidate) {
  if (access("/usr/bin/kubectl", X_OK) != 0) {
    GTEST_SKIP() << "kubectl is not installed (it is on this project's machines; Debian has no "
                    "package of it): the overlays are not rendered";
  }
  const std::string node = access("/usr/bin/node", X_OK) == 0 ? "/usr/bin/node" : "node";
  const std::string check = std::string(CGOV_NODE_TOOLS_DIR) + "/check_manifests.mjs";
  const std::string root = std::string(CGOV_SOURCE_DIR);
  const std::string overlays = root + "/deploy/kubernetes/overlays";
  TempDir dir;
  auto render = [&](const std::string& path, const std::string& out) {
    RunResult k = RunProgram({"/usr/bin/kubectl", "kustomize", path}, {}, 60);
    EXPECT_EQ(k.exit_code, 0) << path << ": " << k.err;
    WriteFile(dir / out, k.out);
    return k.out;
  };
  const std::string plain = render(overlays + "/prometheus", "prometheus.yaml");
  RunResult r = RunProgram({node, check, dir / "prometheus.yaml"}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok networking.k8s.io/v1/NetworkPolicy cgov"), std::string::npos) << r.out;
  EXPECT_NE(plain.find("prometheus.io/scrape: \"true\""), std::string::npos) << plain;
  EXPECT_NE(plain.find("prometheus.io/port: \"9474\""), std::string::npos);
  EXPECT_EQ(plain.find("monitoring.coreos.com"), std::string::npos)
      << "the Operator's objects are the operator overlay's only";

  const std::string operated = render(overlays + "/operator", "operator.yaml");
  r = RunProgram({node, check, "--rules", root + "/deploy/prometheus/cgov-rules.yml", "--dashboard",
                  root + "/deploy/grafana/cgov-dashboard.json", dir / "operator.yaml"},
                 {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << "\n(scripts/gen-kube-objects regenerates)";
  for (const char* object : {"ok monitoring.coreos.com/v1/ServiceMonitor cgov",
                             "ok monitoring.coreos.com/v1/PrometheusRule cgov",
                             "ok v1/ConfigMap cgov-dashboard", "10 objects valid"}) {
    EXPECT_NE(r.out.find(object), std::string::npos) << object << "\n" << r.out;
  }
  EXPECT_NE(operated.find("release: kube-prometheus-stack"), std::string::npos);
  EXPECT_NE(operated.find("honorLabels: true"), std::string::npos);
  EXPECT_NE(operated.find("grafana_dashboard: \"1\""), std::string::npos);

  // A user's overlay on the Operator one: their image, runtime class, nodes and tolerations.
  // (kustomize takes a base by a relative path only.)
  std::filesystem::create_directories(dir / "mine");
  const std::string base =
      std::filesystem::relative(std::filesystem::canonical(overlays + "/operator"),
                                std::filesystem::canonical(dir / "mine"))
          .string();
  WriteFile(
      dir / "mine/kustomization.yaml",
      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
      "resources:\n  - " +
          base +
          "\n"
          "images:\n  - name: cgov\n    newName: registry.corp.example/gpu/cgov\n"
          "    newTag: \"0.1.0\"\n"
          "patches:\n  - target: {kind: DaemonSet, name: cgov}\n    patch: |-\n"
          "      - {op: replace, path: /spec/template/spec/runtimeClassName, value: nvidia-cdi}\n"
          "      - op: replace\n        path: /spec/template/spec/nodeSelector\n"
          "        value: {node.kubernetes.io/pool: a100}\n"
          "      - op: add\n        path: /spec/template/spec/tolerations/-\n"
          "        value: {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n");
  const std::string mine = render(dir / "mine", "mine.yaml");
  r = RunProgram({node, check, dir / "mine.yaml"}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* set :
       {"image: registry.corp.example/gpu/cgov:0.1.0", "runtimeClassName: nvidia-cdi",
        "node.kubernetes.io/pool: a100", "key: dedicated", "key: nvidia.com/gpu"}) {
    EXPECT_NE(mine.find(set), std::string::npos) << set << "\n" << mine.substr(0, 4000);
  }
  EXPECT_EQ(mine.find("image: cgov\n"), std::string::npos) << "the placeholder is replaced";
}

}  // namespace
}  // namespace cgov::e2e
