// `cgov top`: the box now, full screen, from a daemon's history database; `--once` prints one
// frame (text or JSON) for scripts and tests.
#include "cli/top.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/top/fleet_top_source.h"
#include "app/top/live_recorder.h"
#include "app/top/top_source.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/duration.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/terminal.h"
#include "os/tty.h"
#include "policy/policy_file.h"
#include "report/top_view.h"
#include "store/state_directory.h"

namespace cgov::cli {
namespace {

constexpr char kKeys[] = "q quit · s sort · f filter · p processes · h help";

std::string SortName(TopLayout::Sort s) {
  switch (s) {
    case TopLayout::Sort::kWaste:
      return "waste";
    case TopLayout::Sort::kUser:
      return "user";
    case TopLayout::Sort::kGpu:
      break;
  }
  return "gpu";
}

using OpenFrames = std::function<Result<std::unique_ptr<TopFrames>>()>;

// The interactive view until q or a signal.
int Interactive(const OpenFrames& open, TopLayout layout, std::chrono::milliseconds every) {
  Result<std::unique_ptr<TtySession>> tty = TtySession::Open();
  if (!tty.ok()) {
    fmt::print(stderr, "cgov top: {}\n", tty.status().message());
    return kExitUsage;
  }
  TtySession& t = **tty;
  layout.style.color = TerminalWantsColor(STDOUT_FILENO);
  bool help = false, typing = false;
  std::string typed;
  std::unique_ptr<TopFrames> frames;  // opened at the first frame it can be (and kept)
  Env* env = Env::Default();
  auto next = env->SteadyNow();
  std::string status;
  for (;;) {
    if (t.Stopped()) return kExitOk;
    const auto now = env->SteadyNow();
    if (now >= next) {
      const int64_t mono_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
      Result<TopFrame> frame = NotFound("");
      if (!frames) {
        Result<std::unique_ptr<TopFrames>> opened = open();
        if (opened.ok())
          frames = std::move(opened).value();
        else
          frame = opened.status();
      }
      if (frames) frame = frames->Frame(mono_ms);
      layout.width = static_cast<size_t>(t.Size().first);
      std::string text = frame.ok() ? RenderTopText(*frame, layout)
                                    : fmt::format("cgov top: {}\n", frame.status().message());
      std::string footer;
      if (typing) {
        footer = "filter: " + typed + "_  (Enter to apply, Esc to cancel)";
      } else {
        footer = fmt::format("sort {} · filter {} · {}", SortName(layout.sort),
                             layout.filter.empty() ? "none" : "\"" + layout.filter + "\"",
                             help ? kKeys : "h help · q quit");
      }
      t.Draw(text, footer);
      next = now + every;
    }
    const int wait = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next - env->SteadyNow()).count());
    std::optional<char> key = t.ReadKey(std::max(wait, 0));
    if (!key) continue;
    if (typing) {
      if (*key == '\n' || *key == '\r') {
        layout.filter = typed;
        typing = false;
      } else if (*key == 27) {
        typing = false;
      } else if (*key == 127 || *key == 8) {
        if (!typed.empty()) typed.pop_back();
      } else if (static_cast<unsigned char>(*key) >= 0x20) {
        typed += *key;
      }
    } else if (*key == 'q' || *key == 'Q') {
      return kExitOk;
    } else if (*key == 's') {
      layout.sort = layout.sort == TopLayout::Sort::kGpu     ? TopLayout::Sort::kWaste
                    : layout.sort == TopLayout::Sort::kWaste ? TopLayout::Sort::kUser
                                                             : TopLayout::Sort::kGpu;
    } else if (*key == 'f' || *key == '/') {
      typing = true;
      typed = layout.filter;
    } else if (*key == 'p') {
      layout.processes = !layout.processes;
    } else if (*key == 'h' || *key == '?') {
      help = !help;
    }
    next = env->SteadyNow();  // redraw at once after a key
  }
}

// cgov top's flags, as parsed.
struct TopFlags {
  TopSourceOptions source;
  FleetTopOptions fleet;
  LiveRecorderOptions recorder;
  TopLayout layout;
  std::string format = "text", interval = "1s", sort = "gpu", policy;
  bool once = false, no_processes = false, live = false;
  size_t width = 0;
};

void AddTopFlags(CLI::App& app, TopFlags* f) {
  app.add_option(
      "--db", f->source.db,
      fmt::format("the daemon's history database (default: {}/{}, or under $STATE_DIRECTORY)",
                  kDefaultStateDirectory, kHistoryDbName));
  app.add_flag("--live", f->live,
               "sample NVML and /proc here, as the daemon would, into a private database for as "
               "long as cgov top runs (the default when there is no daemon's database)");
  app.add_option("--nvml-lib", f->recorder.nvml_lib, "with --live: the NVML library to load")
      ->envname("CGOV_NVML_LIB");
  app.add_option("--policy", f->policy,
                 "the daemon's policy file (docs/policy.md): show what it would do to each "
                 "idle-held process the daemon recorded no step for");
  app.add_option("--host-root", f->recorder.host_root,
                 "with --live or --policy: read /proc and /etc under this directory (a host "
                 "mounted into a container)")
      ->envname("CGOV_HOST_ROOT")
      ->check(CLI::ExistingDirectory);
  app.add_option("--prometheus", f->fleet.report.prometheus,
                 "a fleet: the Prometheus that scrapes its daemons (a row per node, the users "
                 "wasting most today)");
  app.add_option("--prometheus-tenant", f->fleet.report.prometheus_tenant,
                 "with --prometheus: sent as X-Scope-OrgID (Mimir, Cortex)");
  app.add_option("--prometheus-timeout", f->fleet.report.prometheus_timeout,
                 "with --prometheus: each query's limit")
      ->capture_default_str();
  app.add_flag("--once", f->once, "print one frame and exit (for scripts: --format json)");
  app.add_option("--format", f->format, "with --once: text or json (docs/top.md)")
      ->check(CLI::IsMember({"text", "json"}))
      ->type_name("text|json")
      ->capture_default_str();
  app.add_option("--interval", f->interval,
                 "time between frames, 200ms to 1h (5s with --prometheus)")
      ->capture_default_str();
  app.add_option("--sort", f->sort, "the GPUs' order: gpu, waste (idle GPUs' price first) or user")
      ->check(CLI::IsMember({"gpu", "waste", "user"}))
      ->type_name("gpu|waste|user")
      ->capture_default_str();
  app.add_option("--filter", f->layout.filter,
                 "only GPUs and idle-held holders whose user or project contains this (with "
                 "--prometheus: nodes by name, wasters by user)");
  app.add_flag("--no-processes", f->no_processes, "no line per GPU process under each GPU");
  app.add_option("--width", f->width,
                 "with --once: the text's width in columns (default: the terminal's, else 100)");
  AddColorFlag(app);
}

// The source and the flags that go with it checked, the default source chosen, --policy read.
// A usage error is said; its exit status returned.
std::optional<int> ResolveTopFlags(const CLI::App& app, TopFlags* f) {
  auto usage = [](const std::string& message) {
    fmt::print(stderr, "cgov top: {}\n", message);
    return kExitUsage;
  };
  const bool prometheus = !f->fleet.report.prometheus.empty();
  if (f->live + !f->source.db.empty() + prometheus > 1) {
    return usage("--db, --live or --prometheus: one source");
  }
  if (!prometheus &&
      (!f->fleet.report.prometheus_tenant.empty() || f->fleet.report.prometheus_timeout != "2m")) {
    return usage("--prometheus-tenant and --prometheus-timeout go with --prometheus URL");
  }
  if (prometheus && (!f->policy.empty() || app.count("--host-root") > 0)) {
    return usage("--policy and --host-root read this host; --prometheus reads a fleet");
  }
  if (prometheus) {
    // The URL and --prometheus-timeout checked now, as `cgov report` checks them.
    if (Result<PrometheusSource> p = OpenReportPrometheus(f->fleet.report); !p.ok()) {
      return usage(p.status().message());
    }
  }
  if (!f->live && !prometheus && f->source.db.empty()) {
    // The daemon's database when it is there (one that cannot be looked at is opened anyway,
    // so that the error says why); else sampling here.
    std::error_code ec;
    if (std::filesystem::exists(DefaultHistoryDb(), ec) || ec) {
      f->source.db = DefaultHistoryDb();
    } else {
      f->live = true;
    }
  }
  // A fleet's figures change at Prometheus's scrape interval (15 s by default), not every
  // second: 5 s is fresh enough and asks it a fifth as often.
  if (prometheus && app.count("--interval") == 0) f->interval = "5s";
  if (!f->policy.empty()) {
    Result<std::string> text = Env::Default()->ReadUserFile(f->policy, 1 << 20, "--policy");
    if (!text.ok()) return usage(text.status().message());
    Result<PolicyFile> file = ParsePolicyFile(*text, f->policy);
    if (!file.ok()) return usage("--policy: " + file.status().message());
    f->source.policy = std::move(file).value();
  }
  if (!f->recorder.host_root.empty()) f->source.host_root = f->recorder.host_root;
  f->layout.sort = f->sort == "waste"  ? TopLayout::Sort::kWaste
                   : f->sort == "user" ? TopLayout::Sort::kUser
                                       : TopLayout::Sort::kGpu;
  f->layout.processes = !f->no_processes;
  return std::nullopt;
}

// One frame on stdout (--once).
int PrintOnce(const OpenFrames& open, TopFlags& f) {
  Result<std::unique_ptr<TopFrames>> frames = open();
  Result<TopFrame> frame = frames.ok() ? (*frames)->Frame(0) : Result<TopFrame>(frames.status());
  if (!frame.ok()) {
    fmt::print(stderr, "cgov top: {}\n", frame.status().message());
    return kExitFailure;
  }
  if (f.format == "json") {
    fmt::print("{}", RenderTopJson(*frame));
    return kExitOk;
  }
  f.layout.width = f.width > 0 ? f.width : 100;
  f.layout.style.color = TerminalWantsColor(STDOUT_FILENO);
  fmt::print("{}", RenderTopText(*frame, f.layout));
  return kExitOk;
}

}  // namespace

int RunTop(int argc, char** argv) {
  TopFlags f;
  CLI::App app{
      "Who is wasting which GPU right now, for how long, and what it has cost today: a full-screen "
      "view of a daemon's history database (or of a fleet's Prometheus), refreshed every "
      "--interval (keys: q quit, s sort, f filter, p processes, h help).",
      "cgov top"};
  AddTopFlags(app, &f);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  if (std::optional<int> exit = ResolveTopFlags(app, &f)) return *exit;
  Result<std::chrono::milliseconds> every = ParseDuration(f.interval);
  if (!every.ok() || *every < std::chrono::milliseconds(200) || *every > std::chrono::hours(1)) {
    fmt::print(stderr, "cgov top: --interval {}: expected a duration from 200ms to 1h\n",
               f.interval);
    return kExitUsage;
  }
  std::unique_ptr<LiveRecorder> sampling;
  if (f.live) {
    f.recorder.interval = *every;
    Result<std::unique_ptr<LiveRecorder>> started = LiveRecorder::Start(f.recorder);
    if (!started.ok()) {
      fmt::print(stderr, "cgov top: --live: {}\n", started.status().message());
      return kExitFailure;
    }
    sampling = std::move(started).value();
    f.source.db = sampling->db();
    f.source.source_name = "live";
    // Two ticks, so that the first frame has a phase for every GPU and a sparkline to start.
    sampling->WaitForTicks(2, *every * 4 + std::chrono::seconds(2));
  }
  const OpenFrames open = [&]() -> Result<std::unique_ptr<TopFrames>> {
    if (!f.fleet.report.prometheus.empty()) {
      CGOV_ASSIGN_OR_RETURN(std::unique_ptr<FleetTopSource> fleet, FleetTopSource::Open(f.fleet));
      return std::unique_ptr<TopFrames>(std::move(fleet));
    }
    CGOV_ASSIGN_OR_RETURN(std::unique_ptr<TopSource> db, TopSource::Open(f.source));
    return std::unique_ptr<TopFrames>(std::move(db));
  };
  if (!f.once) return Interactive(open, f.layout, *every);
  return PrintOnce(open, f);
}

}  // namespace cgov::cli
