// --listen: serves /metrics and /health, and keeps the registry (DaemonMetrics) that the core
// and the other modules report to through the context.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "analysis/history_aggregator.h"
#include "app/daemon/daemon_config.h"
#include "app/daemon/daemon_modules.h"
#include "app/daemon/web_files.h"
#include "export/http_server.h"
#include "os/log.h"

namespace cgov {
namespace {

// How often the GPU energy counter behind DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is read.
constexpr std::chrono::milliseconds kEnergyPeriod{10'000};
// Not dcgm-exporter's 9400: both run on GPU nodes (docs/metrics.md, "Beside dcgm-exporter").
constexpr char kDefaultListen[] = "127.0.0.1:9474";
constexpr char kMetricsHeading[] = "Prometheus /metrics (--listen)";

// What the metrics module's flags say, typed and read.
struct MetricsConfig {
  HttpServerOptions http;
  bool dcgm_names = false;       // --metrics-names dcgm
  bool process_series = false;   // --metrics-processes
  std::string slurm_accounting;  // --slurm-accounting, re-read on SIGHUP ("": none)
  std::optional<SlurmJobs> slurm_jobs;
};

// --slurm-accounting's file (sacct --parsable2 or scontrol output), as read at start and on
// SIGHUP, through `env` (its reads and its log).
Result<SlurmJobs> ReadSlurmAccountingFile(Env& env, const std::string& path) {
  Result<std::string> text = ReadDaemonFile(env, path, "--slurm-accounting", 64 << 20);
  if (!text.ok()) return text.status();
  std::vector<std::string> skipped;
  Result<SlurmJobs> jobs = ParseSlurmAccounting(*text, path, &skipped);
  if (!jobs.ok()) return jobs.status().WithContext("cgov daemon: --slurm-accounting");
  // A malformed record is one job's, never the daemon's end (at start as on SIGHUP).
  for (const std::string& why : skipped) LogWarning(env, "--slurm-accounting: {}", why);
  return jobs;
}

class MetricsModule : public DaemonModule {
 public:
  MetricsModule(DaemonContext* d, MetricsConfig config) : d_(*d), config_(std::move(config)) {}
  std::string_view name() const override { return "metrics"; }
  Status Start() override;
  Status AfterWrite(DaemonTick* tick) override;
  bool wants_credits() const override { return true; }
  void OnCredit(const TickCredit& credit) override;
  void Reload(std::string* what) override;
  void OnDaemonSelf(const DaemonSelf& self) override {
    if (metrics_) metrics_->SetDaemonSelf(self);
  }
  void Stop() override { server_.reset(); }  // no scrape reads the state while it goes away

 private:
  std::vector<MetricsGpu> MetricsGpus();
  std::vector<std::vector<MetricsGpuPod>> GpuPods(const StoredTick& stored);
  ServedResponse Serve(const ServedRequest& request);
  // The identity ids the registry remembers name the records of the database opened last.
  void FollowHistory();

  DaemonContext& d_;
  MetricsConfig config_;
  uint64_t history_opens_ = 0;  // d_.history_opens() when the registry last forgot its ids
  std::unique_ptr<DaemonMetrics> metrics_;
  std::unique_ptr<HttpServer> server_;
  std::vector<TickHolder> holders_;  // GpuPods' scratch
  TickByGpu by_gpu_;
};

Status MetricsModule::Start() {
  const DaemonOptions& o = d_.options();
  // The energy counter serves /metrics alone, and one read costs milliseconds of CPU on a real
  // driver: read it at most every kEnergyPeriod (a counter: a scrape sees it that much late).
  if (d_.nvml() != nullptr) d_.nvml()->SetEnergyPeriod(kEnergyPeriod.count() * 1'000'000);
  MetricsOptions mo;
  mo.hostname = d_.hostname();
  mo.instance_id = o.instance_id;
  mo.interval_ms = o.interval.count();
  mo.dcgm_names = config_.dcgm_names;
  mo.process_series = config_.process_series;
  metrics_ = std::make_unique<DaemonMetrics>(mo);
  metrics_->SetGpus(MetricsGpus());
  for (const auto& section : d_.metrics_sections) metrics_->AddSection(section);
  if (config_.slurm_jobs) {
    metrics_->SetSlurmJobs(std::make_shared<const SlurmJobs>(std::move(*config_.slurm_jobs)));
    config_.slurm_jobs.reset();
  }
  d_.metrics = metrics_.get();
  CGOV_ASSIGN_OR_RETURN(
      server_, HttpServer::Start(config_.http,
                                 [this](const ServedRequest& request) { return Serve(request); }));
  const ListenAddress& a = config_.http.address;
  // An IPv6 address in a URL is bracketed, the port after the bracket: http://[::1]:9400.
  LogInfo(d_.env(), "serving /metrics on {}://{}{}{}:{}",
          config_.http.tls_cert_pem.empty() ? "http" : "https", a.ipv6 ? "[" : "", a.host,
          a.ipv6 ? "]" : "", server_->port());
  if (!a.IsLoopback() && config_.http.users.empty()) {
    LogWarning(d_.env(),
               "/metrics is open to the network without authentication (--web-config or "
               "--basic-auth-file); it names users, projects and processes");
  }
  return Status::Ok();
}

// SIGHUP: the GPUs priced again, and --slurm-accounting re-read (a file that no longer parses is
// reported and the jobs in use kept).
void MetricsModule::Reload(std::string* what) {
  metrics_->SetGpus(MetricsGpus());
  const std::string& path = config_.slurm_accounting;
  if (path.empty()) return;
  Result<SlurmJobs> jobs = ReadSlurmAccountingFile(d_.env(), path);
  if (!jobs.ok()) {
    LogWarning(d_.env(), "SIGHUP: keeping the Slurm jobs in use: {}", jobs.status().message());
    return;
  }
  *what += fmt::format(", --slurm-accounting {} re-read ({} jobs)", path, jobs->size());
  metrics_->SetSlurmJobs(std::make_shared<const SlurmJobs>(std::move(jobs).value()));
}

// The budgets' credits come first (the budgets module is added before this one): the metrics'
// Credit marks the exposition changed, so a scrape after it sees both.
void MetricsModule::OnCredit(const TickCredit& credit) {
  FollowHistory();
  if (metrics_) metrics_->Credit(credit, [this](uint32_t id) { return d_.IdentityOf(id); });
}

void MetricsModule::FollowHistory() {
  if (!metrics_ || d_.history_opens() == history_opens_) return;
  history_opens_ = d_.history_opens();
  metrics_->ForgetIdentityIds();
}

// Hands the tick to /metrics: readings, processes with their users, collector health.
Status MetricsModule::AfterWrite(DaemonTick* tick) {
  FollowHistory();
  const TickSample& sample = tick->sample;
  MetricsTick t;
  t.wall_ms = sample.wall_ns / 1'000'000;
  t.gpus = sample.gpu_fast;
  for (const GpuSlowSample& g : sample.gpu_slow) {
    t.gpm.push_back(g.gpm);
    t.memory_health.push_back(g.memory_health);
  }
  t.nvml_ok = d_.nvml() != nullptr;
  for (const GpuFastSample& g : sample.gpu_fast) t.nvml_ok = t.nvml_ok && !g.lost;
  t.processes_ok = d_.nvml() != nullptr;
  for (const GpuSlowSample& g : sample.gpu_slow) {
    t.processes_ok = t.processes_ok && g.processes_known;
  }
  t.host_ok = tick->host_ok;
  if (tick->built) {
    for (const StoredProcess& p : tick->stored.processes) {
      MetricsProcess& m = t.processes.emplace_back();
      m.gpu_pos = p.gpu_pos;
      m.pid = p.pid;
      m.compute = p.compute;
      if (p.mem_used_mib) m.used_memory_bytes = uint64_t{*p.mem_used_mib} << 20;
      if (const IdentityRecord* id = d_.IdentityOf(p.identity_id)) m.user = id->user;
      m.command = d_.CommandOf(p.command_id);
    }
  }
  if (tick->built && config_.dcgm_names) t.gpu_pods = GpuPods(tick->stored);
  metrics_->RecordTick(std::move(t));
  // The tick the history took last: the counters count it up to the scrape (SetPending), as a
  // report of the history ending then would.
  if (tick->built && tick->written) {
    metrics_->SetPending(tick->stored, sample.wall_ns / 1'000'000,
                         [this](uint32_t id) { return d_.IdentityOf(id); });
  } else {
    metrics_->ClearPending();
  }
  return Status::Ok();
}

// Each GPU's compute holders grouped by pod (names from --kubernetes; processes outside a named
// pod share one group with empty names), with their shares of the GPU's time split as the
// identity counters split it: dcgm-exporter's pod labels.
std::vector<std::vector<MetricsGpuPod>> MetricsModule::GpuPods(const StoredTick& stored) {
  constexpr int64_t kWhole = 1'000'000;
  std::vector<std::vector<MetricsGpuPod>> pods(stored.gpus.size());
  by_gpu_.Index(stored);
  for (size_t i = 0; i < stored.gpus.size(); ++i) {
    SplitGpuTime(by_gpu_, i, /*busy=*/true, kWhole, &holders_);
    for (const TickHolder& h : holders_) {
      if (!h.compute) continue;
      MetricsGpuPod pod;
      const IdentityRecord* id = d_.IdentityOf(h.identity_id);
      if (id != nullptr && !id->kube_pod_name.empty()) {
        pod.namespace_name = id->kube_namespace;
        pod.pod = id->kube_pod_name;
        pod.container = id->kube_container_name;
      }
      pod.share = static_cast<double>(h.share_ms) / kWhole;
      auto same = std::find_if(pods[i].begin(), pods[i].end(), [&](const MetricsGpuPod& p) {
        return std::tie(p.namespace_name, p.pod, p.container) ==
               std::tie(pod.namespace_name, pod.pod, pod.container);
      });
      if (same != pods[i].end()) {
        same->share += pod.share;
      } else {
        pods[i].push_back(std::move(pod));
      }
    }
  }
  return pods;
}

ServedResponse MetricsModule::Serve(const ServedRequest& request) {
  ServedResponse r;
  const int64_t now_ms = d_.NowMs();  // the system clock, which is thread-safe
  if (request.path == "/metrics") {
    const ExpositionFormat format = NegotiateFormat(request.accept);
    r.content_type = ContentTypeOf(format);
    // This process's own figures (process_*), read at the scrape from the real /proc.
    std::unique_ptr<FileReader> own = d_.env().NewFileReader("/");
    Result<SelfStats> self = ReadSelfStats(*own);
    r.body = metrics_->Render(format, now_ms, self.ok() ? &*self : nullptr);
  } else if (request.path == "/health" || request.path == "/healthz" || request.path == "/livez") {
    // Healthy while sampling keeps up and the history is safe; a stuck or failing sampler, or a
    // database file removed under the daemon, shows as 503. /health (readiness) also shows a
    // daemon that records no GPU; /livez (liveness) does not: restarting it would not load a
    // driver that is not there, only lose the host samples it keeps recording.
    const bool fresh = metrics_->SamplerFresh(now_ms);
    std::string problem = metrics_->HistoryDbProblem();
    if (problem.empty() && request.path != "/livez") problem = d_.no_gpu_problem();
    r.status = fresh && problem.empty() ? 200 : 503;
    r.body = !problem.empty() ? problem + "\n"
             : fresh          ? "ok\n"
                              : "stale: no sample within the staleness limit\n";
    // Healthy, but recording less than it could: said on a line of its own.
    const EnvironAccess& access = d_.environ_access();
    if (!access.others_readable) r.body += "warning: " + access.warning + "\n";
  } else if (request.path == "/") {
    r.content_type = "text/html; charset=utf-8";
    r.body =
        "<!doctype html><title>cgov daemon</title><h1>cgov daemon</h1>"
        "<p><a href=\"/metrics\">/metrics</a> &middot; <a href=\"/health\">/health</a></p>\n";
  } else {
    r.status = 404;
    r.body = "not found: try /metrics or /health\n";
  }
  return r;
}

// The GPUs as /metrics labels and prices them.
std::vector<MetricsGpu> MetricsModule::MetricsGpus() {
  std::vector<MetricsGpu> gpus;
  const std::vector<GpuInfo>& infos = d_.gpus();
  const std::vector<uint32_t>& ids = d_.gpu_ids();
  for (size_t i = 0; i < infos.size() && i < ids.size(); ++i) {
    MetricsGpu& g = gpus.emplace_back();
    g.gpu_id = ids[i];
    g.index = infos[i].index;
    g.uuid = infos[i].uuid.empty() ? fmt::format("index:{}", infos[i].index) : infos[i].uuid;
    g.name = infos[i].name;
    if (const std::optional<MigInstance>& mig = infos[i].mig) {  // labelled as dcgm-exporter does
      if (!mig->parent_uuid.empty()) g.uuid = mig->parent_uuid;
      if (!mig->parent_name.empty()) g.name = mig->parent_name;
      g.gpu_instance_id = mig->gpu_instance_id;
      g.mig_profile = mig->profile;
    }
    g.pci_bus_id = infos[i].pci_bus_id;
    g.memory_reserved_bytes = infos[i].memory_reserved_bytes;
    if (Result<ResolvedPrice> price = d_.PriceOf(infos[i]); price.ok()) {
      g.price_per_gpu_hour = price->per_gpu_hour;
      g.price_source = price->Label();  // the history and `cgov prices` keep the whole story
    }
  }
  return gpus;
}

class MetricsKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "metrics"; }
  void AddFlags(CLI::App* app) override;
  Status Configure(const CLI::App& app, const DaemonOptions& core) override;
  bool enabled() const override { return listen_; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<MetricsModule>(context, std::move(config_));
  }

 private:
  bool listen_ = false;
  std::string address_, names_ = "cgov";
  WebFiles files_;
  MetricsConfig config_;
};

void MetricsKind::AddFlags(CLI::App* app) {
  const std::string heading = kMetricsHeading;
  app->add_option("--listen,--web.listen-address", address_,
                  fmt::format("off unless given: serve Prometheus /metrics and /health on "
                              "HOST:PORT (alone: {}; another address only when named; "
                              "docs/metrics.md)",
                              kDefaultListen))
      ->expected(0, 1)
      ->default_str(kDefaultListen)
      ->group(heading);
  app->add_option("--metrics-names", names_,
                  "cgov: GPU readings under cgov's own names only, safe beside dcgm-exporter; "
                  "dcgm: under dcgm-exporter's DCGM_FI_* names too, for a node without "
                  "dcgm-exporter whose dashboards expect them (docs/metrics.md)")
      ->check(CLI::IsMember({"cgov", "dcgm"}))
      ->capture_default_str()
      ->group(heading);
  app->add_flag("--metrics-processes", config_.process_series,
                "also serve one series per GPU process (its pid a label: a new series with every "
                "process; off by default, docs/metrics.md \"Series budget\")")
      ->group(heading);
  app->add_option("--basic-auth-file", files_.basic_auth,
                  "require HTTP basic auth: a file with one line USER:PASSWORD")
      ->group(heading);
  app->add_option("--web-config,--web.config.file", files_.web_config,
                  "a Prometheus web configuration file (the exporters' format): "
                  "basic_auth_users with bcrypt hashes, tls_server_config's cert_file and "
                  "key_file (docs/metrics.md)")
      ->group(heading);
  app->add_option("--tls-cert", files_.tls_cert,
                  "serve HTTPS with this PEM certificate (with --tls-key)")
      ->group(heading);
  app->add_option("--tls-key", files_.tls_key, "the PEM private key of --tls-cert")->group(heading);
  app->add_option("--slurm-accounting", config_.slurm_accounting,
                  "with --listen: Slurm jobs' accounts and partitions (sacct --parsable2 "
                  "--format=JobID,User,Account,Partition, or scontrol show job) as the identity "
                  "series' slurm_account and slurm_partition labels; re-read on SIGHUP")
      ->group(heading);
}

Status MetricsKind::Configure(const CLI::App& app, const DaemonOptions& /*core*/) {
  listen_ = FlagGiven(app, "--listen");
  if (!listen_) {
    if (!files_.basic_auth.empty() || !files_.tls_cert.empty() || !files_.tls_key.empty() ||
        !files_.web_config.empty() || FlagGiven(app, "--metrics-names") || config_.process_series) {
      return InvalidArgument(
          "cgov daemon: --basic-auth-file, --web-config, --tls-cert, --tls-key, --metrics-names "
          "and --metrics-processes need --listen");
    }
    if (!config_.slurm_accounting.empty()) {
      return InvalidArgument(
          "cgov daemon: --slurm-accounting labels /metrics: it goes with --listen (a report "
          "reads accounts with `cgov report --slurm-accounting`)");
    }
    return Status::Ok();
  }
  CGOV_ASSIGN_OR_RETURN(config_.http.address,
                        ParseListenAddress(address_.empty() ? kDefaultListen : address_));
  // Probes send no credentials; these say no secret.
  config_.http.open_paths = {"/health", "/healthz", "/livez"};
  config_.dcgm_names = names_ == "dcgm";
  CGOV_RETURN_IF_ERROR(LoadWebFiles(files_, &config_.http));
  if (!config_.slurm_accounting.empty()) {
    CGOV_ASSIGN_OR_RETURN(config_.slurm_jobs,
                          ReadSlurmAccountingFile(*Env::Default(), config_.slurm_accounting));
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<DaemonModuleKind> NewMetricsModuleKind() { return std::make_unique<MetricsKind>(); }

}  // namespace cgov
