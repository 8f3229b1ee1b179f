// `cgov daemon`'s command line: the core's flags, each module kind's own (its heading in --help,
// its environment variable, the flags it goes with), and a module from outside the list, which
// owns its flag, is configured by the same parse and ticks in a core: what adding a module takes.
#include "cli/daemon.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_core.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_env.h"
#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"
#include "fakes/nvml_testing.h"

namespace cgov::cli {
namespace {

// docs/architecture.md's example: --greeting TEXT says it once a tick.
class GreetingModule : public DaemonModule {
 public:
  GreetingModule(DaemonContext* d, std::string greeting) : d_(*d), greeting_(std::move(greeting)) {}
  std::string_view name() const override { return "greeting"; }
  Status AfterWrite(DaemonTick* tick) override {
    LogInfo(d_.env(), "{} ({} GPU(s), written: {})", greeting_, tick->sample.gpu_fast.size(),
            tick->written);
    return Status::Ok();
  }

 private:
  DaemonContext& d_;
  std::string greeting_;
};

class GreetingKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "greeting"; }
  void AddFlags(CLI::App* app) override {
    app->add_option("--greeting", greeting_, "say this once a tick")
        ->group("Greeting (--greeting)");
  }
  Status Configure(const CLI::App& /*app*/, const DaemonOptions& /*core*/) override {
    if (greeting_.size() > 80) return InvalidArgument("cgov daemon: --greeting: at most 80 bytes");
    return Status::Ok();
  }
  bool enabled() const override { return !greeting_.empty(); }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<GreetingModule>(context, greeting_);
  }

 private:
  std::string greeting_;
};

class DaemonCommandLineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_daemon_cli_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Always with --db in the test's directory: the default would create /var/lib/cgov.
  Result<DaemonCommandLine> Parse(std::vector<std::string> args,
                                  DaemonModuleKinds kinds = AllDaemonModuleKinds()) {
    args.insert(args.begin(), {"daemon", "--db", dir_ + "/h.db"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    help_exit_ = -1;
    return ParseDaemonCommandLine(static_cast<int>(argv.size()), argv.data(), std::move(kinds),
                                  &help_exit_);
  }
  static std::vector<std::string> Enabled(const DaemonCommandLine& line) {
    std::vector<std::string> names;
    for (const auto& kind : line.modules) {
      if (kind->enabled()) names.emplace_back(kind->name());
    }
    return names;
  }
  std::string File(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string PolicyFile() {
    return File("policy.toml",
                "[[policy]]\nname = \"stale\"\nidle_held_for = \"4h\"\ngroups = [\"students\"]\n");
  }

  std::string dir_;
  int help_exit_ = -1;
};

using Names = std::vector<std::string>;

TEST_F(DaemonCommandLineTest, TheCoreTypesItsFlagsAndEachModuleIsAskedForByItsOwn) {
  Result<DaemonCommandLine> bare = Parse({});
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(Enabled(*bare), Names({"driver_events"}));  // the one without a flag
  EXPECT_EQ(bare->options.interval, std::chrono::seconds(30));

  Result<DaemonCommandLine> line =
      Parse({"--interval", "5s", "--price-per-gpu-hour", "2.5", "--listen", "127.0.0.1:0",
             "--log-ticks", "--policy", PolicyFile(), "--policy-dry-run"});
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(line->options.db, dir_ + "/h.db");
  EXPECT_EQ(line->options.interval, std::chrono::seconds(5));
  ASSERT_TRUE(line->options.price.price_per_gpu_hour);
  EXPECT_EQ(*line->options.price.price_per_gpu_hour, 2'500'000);
  // In the order the core calls them: the work module with --listen, having no flag of its own.
  EXPECT_EQ(Enabled(*line), Names({"metrics", "work", "policy", "driver_events", "tick_log"}));
}

TEST_F(DaemonCommandLineTest, AModulesFlagsAreReadFromTheEnvironmentAndTheCommandLineWins) {
  setenv("CGOV_LOG_TICKS", "true", 1);
  setenv("CGOV_LISTEN", "127.0.0.1:0", 1);
  Result<DaemonCommandLine> line = Parse({});
  unsetenv("CGOV_LOG_TICKS");
  unsetenv("CGOV_LISTEN");
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(Enabled(*line), Names({"metrics", "work", "driver_events", "tick_log"}));

  // The command line wins: the environment's policy file does not exist, the flag's does.
  setenv("CGOV_POLICY", (dir_ + "/missing.toml").c_str(), 1);
  Result<DaemonCommandLine> policy = Parse({"--policy", PolicyFile()});
  unsetenv("CGOV_POLICY");
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ(Enabled(*policy), Names({"policy", "driver_events"}));

  // A flag set false in the environment is not given: --pod-resources still needs --kubernetes.
  setenv("CGOV_KUBERNETES", "false", 1);
  Result<DaemonCommandLine> off = Parse({"--pod-resources"});
  unsetenv("CGOV_KUBERNETES");
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.status().message().find("go with --kubernetes"), std::string::npos)
      << off.status().message();
}

TEST_F(DaemonCommandLineTest, AModulesFlagsGoWithTheFlagsTheyNeed) {
  const std::string budgets = File("budgets.toml", "");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--policy-dry-run"}, "--policy-dry-run goes with --policy"},
      {{"--pod-resources"}, "--pod-resources and --pod-resources-socket go with --kubernetes"},
      {{"--kubernetes", "--kube-api", "https://k", "--pod-resources-socket", "/s"},
       "--pod-resources-socket goes with --pod-resources"},
      {{"--node-name", "n1"}, "--kube-ca-file go with --kubernetes"},
      {{"--budgets", budgets}, "--budgets does something with --listen"},
      {{"--tls-cert", "c.pem"}, "need --listen"},
      {{"--metrics-processes"}, "need --listen"},
      {{"--slurm-accounting", "jobs.txt"}, "it goes with --listen"},
      {{"--notify-state", "s"}, "--notify-state goes with --notify"},
      {{"--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
  };
  for (const auto& [args, said] : cases) {
    Result<DaemonCommandLine> line = Parse(args);
    ASSERT_FALSE(line.ok()) << args[0];
    EXPECT_EQ(help_exit_, -1) << args[0];  // a checked error, not CLI11's usage error
    EXPECT_NE(line.status().message().find(said), std::string::npos)
        << args[0] << ": " << line.status().message();
  }
}

TEST_F(DaemonCommandLineTest, EachModulesFlagsAreUnderItsOwnHeadingOfHelp) {
  ::testing::internal::CaptureStdout();
  (void)Parse({"--help"});
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(help_exit_, 0);
  for (const char* heading :
       {"Budgets (--budgets):", "Prometheus /metrics (--listen):", "Policy (--policy):",
        "Notifications (--notify):", "Kubernetes (--kubernetes):",
        "Kubelet pod-resources (--pod-resources):", "Tick log (--log-ticks):"}) {
    EXPECT_NE(help.find(std::string("\n") + heading + "\n"), std::string::npos) << heading;
  }
  // A module's flag sits under its heading, after the core's (which end with --log.format).
  const size_t core_end = help.find("--log.format");
  const size_t heading = help.find("Policy (--policy):");
  ASSERT_NE(core_end, std::string::npos);
  EXPECT_LT(core_end, heading);
  EXPECT_GT(help.find("--policy-dry-run"), heading);
}

// What adding a module takes: its kind and its module, nothing in the core, DaemonOptions or
// the command line's code. The kind is handed to the same parse as the others.
TEST_F(DaemonCommandLineTest, AModuleOutsideTheListOwnsItsFlagAndRunsInTheCore) {
  auto with_greeting = [] {
    DaemonModuleKinds kinds = AllDaemonModuleKinds();
    kinds.push_back(std::make_unique<GreetingKind>());
    return kinds;
  };
  ::testing::internal::CaptureStdout();
  (void)Parse({"--help"}, with_greeting());
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(help.find("Greeting (--greeting):\n  --greeting TEXT (Env:CGOV_GREETING)"),
            std::string::npos)
      << help;

  Result<DaemonCommandLine> long_one = Parse({"--greeting", std::string(81, 'x')}, with_greeting());
  ASSERT_FALSE(long_one.ok());
  EXPECT_EQ(long_one.status().message(), "cgov daemon: --greeting: at most 80 bytes");

  setenv("CGOV_GREETING", "from the environment", 1);
  Result<DaemonCommandLine> line =
      Parse({"--nvml-lib", testing::FakeNvmlPath("full")}, with_greeting());
  unsetenv("CGOV_GREETING");
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(Enabled(*line), Names({"driver_events", "greeting"}));

  // On the fake driver and the shared box's files, a tick: the module says its greeting.
  testing::FakeNvml nvml("full", R"({"driver_version": "550.54.15", "gpus": [{
    "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
    "timeline": [{"t": 0, "util_gpu": 0, "util_mem": 0, "power_w": 60}]}]})");
  FakeClock clock;
  FakeFileReader files;
  ASSERT_TRUE(files.LoadTree(testing::FixturePath("proc/shared-box"), "").ok());
  FakeEnv env;
  env.set_clock(&clock);
  env.set_files(&files);
  env.capture_log();
  line->options.commit_every = std::chrono::milliseconds(0);
  DaemonCore core(std::move(line->options), &env);
  AddDaemonModules(line->modules, &core);
  ASSERT_TRUE(core.Start().ok());
  core.Tick();
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(core.module_failures().count("greeting"), 1u);
  bool said = false;
  for (const auto& [level, message] : env.logged()) {
    said |= message == "from the environment (1 GPU(s), written: true)";
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace cgov::cli
