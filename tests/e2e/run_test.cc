// `cgov run` end to end: the real binary wrapping a real job.
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// No NVML unless a test asks for the fake: a GPU machine must not change these results.
const Env kNoGpu = {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}, {"CGOV_TAGS", ""}};

std::vector<std::string> Cgov(const std::string& out, std::vector<std::string> job,
                              std::vector<std::string> flags = {}) {
  std::vector<std::string> argv = {CgovBinary(), "run", "--out", out};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.push_back(TestJob());
  argv.insert(argv.end(), job.begin(), job.end());
  return argv;
}

json ReadJson(const std::string& path) { return json::parse(ReadFile(path)); }

std::vector<json> ReadLines(const std::string& path) {
  std::vector<json> lines;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    lines.push_back(json::parse(line));
    EXPECT_EQ(SchemaErrors("samples.schema.json", lines.back()), "") << path;
  }
  return lines;
}

TEST(RunE2E, StdoutIsTheJobsAndTheReportGoesToStderr) {
  TempDir dir;
  RunResult r = RunProgram(Cgov(dir / "run", {"print", "hello from the job"}), kNoGpu);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello from the job\n") << "nothing of cgov's on stdout";
  EXPECT_TRUE(Contains(r.err, "## cgov run · ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "GPU: no GPU data (no NVML library could be loaded")) << r.err;
  EXPECT_TRUE(Contains(r.err, "job exited 0")) << r.err;
  for (const char* file : {"samples.jsonl", "summary.json", "report.md"}) {
    EXPECT_TRUE(std::ifstream(dir / ("run/" + std::string(file))).good()) << file;
  }
  EXPECT_EQ(ReadFile(dir / "run/report.md"), r.err.substr(1)) << "report.md is the terminal report";
}

TEST(RunE2E, QuietPrintsNothingOfItsOwn) {
  TempDir dir;
  RunResult r = RunProgram(Cgov(dir / "run", {"print", "x"}, {"--quiet"}), kNoGpu);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "x\n");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::ifstream(dir / "run/summary.json").good());
}

TEST(RunE2E, StdinAndEnvironmentReachTheJob) {
  TempDir dir;
  RunResult cat =
      RunProgram(Cgov(dir / "a", {"cat"}, {"--quiet"}), kNoGpu, 30, "line one\nline two\n");
  EXPECT_EQ(cat.out, "line one\nline two\n");
  Env env = kNoGpu;
  env["CGOV_E2E_MARKER"] = "value with spaces";
  RunResult e = RunProgram(Cgov(dir / "b", {"env", "CGOV_E2E_MARKER"}, {"--quiet"}), env);
  EXPECT_EQ(e.out, "value with spaces\n");
}

TEST(RunE2E, EveryExitCodePassesThrough) {
  TempDir dir;
  // Every code in the plain tree; every 17th (0, 17, ..., 255) under the sanitizers.
  for (int code = 0; code <= 255; code += kSanitized ? 17 : 1) {
    RunResult r = RunProgram(
        Cgov(dir / std::to_string(code), {"exit", std::to_string(code)}, {"--quiet"}), kNoGpu);
    ASSERT_EQ(r.exit_code, code) << r.err;
  }
  EXPECT_EQ(ReadJson(dir / "255/summary.json")["run"]["exit_code"], 255);
}

TEST(RunE2E, DeathBySignalIs128PlusN) {
  TempDir dir;
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGTERM}) {
    RunResult r = RunProgram(
        Cgov(dir / std::to_string(sig), {"signal", std::to_string(sig)}, {"--quiet"}), kNoGpu);
    EXPECT_EQ(r.exit_code, 128 + sig) << "signal " << sig << ": " << r.err;
    EXPECT_EQ(ReadJson(dir / (std::to_string(sig) + "/summary.json"))["run"]["exit_code"],
              128 + sig);
  }
}

TEST(RunE2E, CommandNotFoundIs127AndNotExecutableIs126) {
  TempDir dir;
  RunResult missing = RunProgram(
      {CgovBinary(), "run", "--out", dir / "a", "--", "cgov-no-such-command-xyz"}, kNoGpu);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_TRUE(Contains(missing.err, "cgov: command not found: cgov-no-such-command-xyz"))
      << missing.err;
  EXPECT_FALSE(std::ifstream(dir / "a/summary.json").good()) << "no run happened: no files";

  // Issue 21 item 19: a script whose interpreter is missing exists; it is not "not found".
  WriteFile(dir / "orphan.py", "#!/cgov/no-such-python -u\nprint(1)\n");
  ASSERT_EQ(chmod((dir / "orphan.py").c_str(), 0755), 0);
  RunResult interpreter =
      RunProgram({CgovBinary(), "run", "--out", dir / "i", "--", dir / "orphan.py"}, kNoGpu);
  EXPECT_EQ(interpreter.exit_code, 127) << "as a shell answers";
  EXPECT_TRUE(Contains(interpreter.err,
                       "its interpreter '/cgov/no-such-python' (line 1, #!) was not found"))
      << interpreter.err;
  EXPECT_FALSE(Contains(interpreter.err, "command not found")) << interpreter.err;

  WriteFile(dir / "script.sh", "#!/bin/sh\necho hi\n");  // not executable
  RunResult denied =
      RunProgram({CgovBinary(), "run", "--out", dir / "b", "--", dir / "script.sh"}, kNoGpu);
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_TRUE(Contains(denied.err, "cannot run")) << denied.err;
  EXPECT_TRUE(Contains(denied.err, "Permission denied")) << denied.err;

  RunResult directory =
      RunProgram({CgovBinary(), "run", "--out", dir / "c", "--", dir.path()}, kNoGpu);
  EXPECT_EQ(directory.exit_code, 126) << directory.err;
}

TEST(RunE2E, ForwardedSignalsArriveOnceEachInOrder) {
  TempDir dir;
  const std::string log = dir / "signals.log";
  Started cgov = StartProgram(Cgov(dir / "run", {"record", log, "6", "5"}, {"--quiet"}), kNoGpu);
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(log), "ready"); })) << "job never started";
  const std::vector<std::pair<int, std::string>> sent = {{SIGINT, "INT"},   {SIGTERM, "TERM"},
                                                         {SIGHUP, "HUP"},   {SIGQUIT, "QUIT"},
                                                         {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}};
  std::string expected;
  for (const auto& [sig, name] : sent) {
    ASSERT_EQ(kill(cgov.pid, sig), 0);
    expected += name + "\n";
    ASSERT_TRUE(WaitFor([&] { return ReadFile(log).ends_with(expected); }))
        << "after " << name << ": " << ReadFile(log);
  }
  RunResult r = WaitProgram(cgov);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string got = ReadFile(log);
  EXPECT_EQ(got.substr(got.find('\n') + 1), expected) << "each once, in the order sent";
}

// Issue 21 item 20: signals of one kind sent faster than they are handled coalesce (the kernel
// keeps one pending standard signal per kind, for cgov and again for the job), so a burst may
// arrive fewer times; what cgov receives it forwards once, never more.
TEST(RunE2E, ABurstOfSignalsReachesTheJobAtMostAsOftenAsSent) {
  TempDir dir;
  const std::string log = dir / "signals.log";
  Started cgov =
      StartProgram(Cgov(dir / "run", {"record", log, "1000", "1.5"}, {"--quiet"}), kNoGpu);
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(log), "ready"); })) << "job never started";
  for (int i = 0; i < 20; ++i) ASSERT_EQ(kill(cgov.pid, SIGUSR1), 0);
  RunResult r = WaitProgram(cgov);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string got = ReadFile(log);
  const auto received = std::count(got.begin(), got.end(), '\n') - 1;  // less the "ready" line
  EXPECT_GE(received, 1) << got;
  EXPECT_LE(received, 20) << got;
  EXPECT_EQ(got.find("USR2"), std::string::npos);
}

TEST(RunE2E, TerminalCtrlCReachesTheJobExactlyOnce) {
  TempDir dir;
  const std::string log = dir / "signals.log";
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  std::string slave = ptsname(master);
  std::vector<std::string> args = Cgov(dir / "run", {"record", log, "2", "1.5"}, {"--quiet"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string nvml = "CGOV_NVML_LIB=/nonexistent/libnvidia-ml.so.1";
  char* envp[] = {nvml.data(), nullptr};
  pid_t pid = fork();
  if (pid == 0) {  // a session of its own with the pty as controlling terminal, as a shell does
    setsid();
    int fd = open(slave.c_str(), O_RDWR);
    ioctl(fd, TIOCSCTTY, 0);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execve(argv[0], argv.data(), envp);
    _exit(127);
  }
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(log), "ready"); })) << "job never started";
  ASSERT_EQ(write(master, "\x03", 1), 1);  // ^C: the line discipline signals the foreground group
  int status = 0;
  bool exited = WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15);
  close(master);
  ASSERT_TRUE(exited);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::string got = ReadFile(log);
  EXPECT_EQ(got.substr(got.find('\n') + 1), "INT\n") << "once, not forwarded a second time";
}

TEST(RunE2E, SigkillOfCgovLeavesTheJobRunningAndSamplesReadable) {
  TempDir dir;
  const std::string pid_file = dir / "job.pid";
  Started cgov = StartProgram(
      Cgov(dir / "run", {"sleep", "20", pid_file}, {"--quiet", "--interval", "100ms"}), kNoGpu);
  ASSERT_TRUE(WaitFor([&] {
    std::string samples = ReadFile(dir / "run/samples.jsonl");
    return std::count(samples.begin(), samples.end(), '\n') >= 4;
  })) << "no samples written";
  ASSERT_EQ(kill(cgov.pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(cgov.pid, &status, 0), cgov.pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  pid_t job = std::stoi(ReadFile(pid_file));
  EXPECT_EQ(kill(job, 0), 0) << "the job survives its wrapper";
  kill(job, SIGKILL);  // it holds the output pipes: end it before collecting them
  cgov.pid = -2;       // already waited for
  for (int fd : {cgov.out_fd, cgov.err_fd}) close(fd);
  std::vector<json> lines = ReadLines(dir / "run/samples.jsonl");  // throws on a torn line
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0]["kind"], "header");
  EXPECT_EQ(lines[1]["kind"], "tick");
  EXPECT_FALSE(std::ifstream(dir / "run/summary.json").good()) << "no half-written summary";
}

TEST(RunE2E, SummaryValidatesForSucceedingFailingAndKilledJobs) {
  TempDir dir;
  RunResult ok = RunProgram(Cgov(dir / "ok", {"sleep", "0.3"},
                                 {"--quiet", "--interval", "100ms", "--tag", "project=vision"}),
                            kNoGpu);
  EXPECT_EQ(ok.exit_code, 0);
  RunResult failed = RunProgram(Cgov(dir / "failed", {"exit", "3"}, {"--quiet"}), kNoGpu);
  EXPECT_EQ(failed.exit_code, 3);
  const std::string pid_file = dir / "job.pid";
  Started killed =
      StartProgram(Cgov(dir / "killed", {"sleep", "20", pid_file}, {"--quiet"}), kNoGpu);
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(pid_file).empty(); }));
  kill(std::stoi(ReadFile(pid_file)), SIGTERM);
  EXPECT_EQ(WaitProgram(killed).exit_code, 128 + SIGTERM);
  for (const char* run : {"ok", "failed", "killed"}) {
    const std::string path = dir / (std::string(run) + "/summary.json");
    EXPECT_EQ(SchemaErrors("summary.schema.json", ReadJson(path)), "") << run << ":\n"
                                                                       << ReadFile(path);
  }
  json summary = ReadJson(dir / "ok/summary.json");
  EXPECT_EQ(summary["run"]["tags"]["project"], "vision");
  EXPECT_EQ(summary["gpu_data"]["available"], false);
  EXPECT_GE(summary["sampling"]["samples"].get<int>(), 2);
  EXPECT_EQ(summary["metrics"]["gpu_util_pct"], nullptr) << "unknown, not zero";
  EXPECT_NE(summary["metrics"]["mem_pct"], nullptr);
}

TEST(RunE2E, DoubleForkingJobLeavesNoZombie) {
  TempDir dir;
  RunResult r = RunProgram(Cgov(dir / "run", {"doublefork", dir / "result"}, {"--quiet"}), kNoGpu);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ReadFile(dir / "result").starts_with("reaped")) << ReadFile(dir / "result");
}

TEST(RunE2E, BadInputIsExit2AndTheJobNeverStarts) {
  TempDir dir;
  mkdir((dir / "full").c_str(), 0755);
  WriteFile(dir / "full/other", "x");
  const std::string marker = dir / "job-ran";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--bogus"}, "--bogus"},
      {{"--interval", "0"}, "--interval: bad duration '0': the unit is missing"},
      {{"--interval", "0s"}, "--interval 0s: must be between 100ms and 1h"},
      {{"--out", dir / "x", "stray"}, "unexpected 'stray' before '--'"},
      {{"--interval", "1x"}, "bad duration '1x'"},
      {{"--interval", "50ms"}, "must be between 100ms and 1h"},
      {{"--tag", "Bad Key=x"}, "bad tag key 'Bad Key'"},
      {{"--out", dir / "full"}, "is not empty"},
      {{"--out", "/proc/cgov-cannot-create"}, "cannot create output directory"},
      {{"--out", dir / "full/other"}, "exists and is not a directory"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CgovBinary(), "run"};
    bool has_out = false;
    for (const std::string& a : c.args) has_out |= a == "--out";
    if (!has_out) {
      argv.push_back("--out");
      argv.push_back(dir / "fresh");
    }
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    for (const std::string& a : {std::string("--"), TestJob(), std::string("touch"), marker}) {
      argv.push_back(a);
    }
    RunResult r = RunProgram(argv, kNoGpu);
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, c.message)) << r.err;
    EXPECT_FALSE(std::ifstream(marker).good()) << c.message << ": the job ran";
    EXPECT_EQ(r.out, "");
  }
  RunResult no_dash = RunProgram({CgovBinary(), "run", TestJob(), "touch", marker}, kNoGpu);
  EXPECT_EQ(no_dash.exit_code, 2);
  EXPECT_TRUE(Contains(no_dash.err, "missing '--' before the command")) << no_dash.err;
  RunResult nothing = RunProgram({CgovBinary(), "run", "--"}, kNoGpu);
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_TRUE(Contains(nothing.err, "no COMMAND after '--'")) << nothing.err;
  Env bad_env = kNoGpu;
  bad_env["CGOV_TAGS"] = "project";
  RunResult env = RunProgram(Cgov(dir / "e", {"touch", marker}), bad_env);
  EXPECT_EQ(env.exit_code, 2);
  EXPECT_TRUE(Contains(env.err, "CGOV_TAGS: bad tag 'project'")) << env.err;
  EXPECT_FALSE(std::ifstream(marker).good());
}

TEST(RunE2E, ForceReusesANonEmptyDirectory) {
  TempDir dir;
  ASSERT_EQ(RunProgram(Cgov(dir / "run", {"exit", "0"}, {"--quiet"}), kNoGpu).exit_code, 0);
  ASSERT_EQ(RunProgram(Cgov(dir / "run", {"exit", "4"}, {"--quiet"}), kNoGpu).exit_code, 2);
  ASSERT_EQ(RunProgram(Cgov(dir / "run", {"exit", "4"}, {"--quiet", "--force"}), kNoGpu).exit_code,
            4);
  EXPECT_EQ(ReadJson(dir / "run/summary.json")["run"]["exit_code"], 4);
}

// The three files are written at once (src/app/run/run_outputs.cc, WriteOutputs); one that cannot
// be written is a warning that the files after it, and the report on stderr, name, as when they
// were written one after the other.
TEST(RunE2E, AnOutputFileThatCannotBeWrittenIsAWarningTheOthersName) {
  TempDir dir;
  const std::string run = dir / "run";
  ASSERT_TRUE(std::filesystem::create_directories(run + "/report.html/in-the-way"));
  RunResult r = RunProgram(Cgov(run, {"exit", "5"}, {"--force"}), kNoGpu);
  EXPECT_EQ(r.exit_code, 5) << "the job's status, whatever became of the files: " << r.err;
  EXPECT_EQ(ReadJson(run + "/summary.json")["run"]["exit_code"], 5);
  EXPECT_TRUE(std::filesystem::is_directory(run + "/report.html")) << "left as it was";
  const std::string warning = "cannot write " + run + "/report.html";
  EXPECT_TRUE(Contains(ReadFile(run + "/report.md"), warning)) << ReadFile(run + "/report.md");
  EXPECT_TRUE(Contains(r.err, warning)) << r.err;
  for (const auto& entry : std::filesystem::directory_iterator(run)) {
    EXPECT_FALSE(Contains(entry.path().filename().string(), ".tmp-")) << entry.path();
  }
}

// Issue 46 item 6: on a full disk `cgov run --quiet` said nothing, though summary.json, report.md
// and report.html were not written and samples.jsonl ended mid-line; without --quiet the last
// line still named all four files. A file-size limit (ulimit -f) stands in for the full disk: it
// fails writes as ENOSPC does (cgov ignores SIGXFSZ; the job keeps its default action).
// The ticks before the first slow read ends (a process list the driver takes 300 ms over) say
// the slow fields are unknown, their age too: each line is checked against the schema, which
// once wanted a number there (a sanitizer run's first tick came before the first slow read).
TEST(RunE2E, TicksBeforeTheFirstSlowReadSayItsFieldsAreUnknown) {
  TempDir dir;
  const std::string run = dir / "run";
  RunResult r = RunProgram(Cgov(run, {"sleep", "1"}, {"--interval", "100ms"}),
                           {{"CGOV_NVML_LIB", FakeNvml("full")},
                            {"CGOV_FAKE_NVML_SCENARIO", Scenario("slow_processes")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = ReadLines(run + "/samples.jsonl");  // each against the schema
  ASSERT_GE(lines.size(), 3u);
  const json& first = lines[1]["gpus"][0];
  EXPECT_TRUE(first["processes"].is_null()) << first.dump();
  EXPECT_TRUE(first["slow_age_s"].is_null()) << first.dump();
  EXPECT_TRUE(first["pcie_rx_kbps"].is_null()) << first.dump();
  const json& last = lines.back()["gpus"][0];
  ASSERT_TRUE(last["processes"].is_array()) << last.dump();
  EXPECT_EQ(last["processes"][0]["pid"], 7);
  EXPECT_TRUE(last["slow_age_s"].is_number()) << last.dump();
}

TEST(RunE2E, AFullDiskIsSaidEvenWhenQuietAndTheLastLineNamesOnlyWhatIsThere) {
  TempDir dir;
  const Env env = {{"CGOV_NVML_LIB", FakeNvml("full")},
                   {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}};
  for (const bool quiet : {true, false}) {
    const std::string run = dir / (quiet ? "quiet" : "loud");
    std::vector<std::string> argv = Cgov(run, {"sleep", "1"}, {"--interval", "100ms"});
    if (quiet) argv.insert(argv.begin() + 2, "--quiet");
    argv.insert(argv.begin(), {"/usr/bin/prlimit", "--fsize=9000"});
    RunResult r = RunProgram(argv, env);
    EXPECT_EQ(r.exit_code, 0) << "the job's status: " << r.err;
    for (const char* file : {"samples.jsonl", "summary.json", "report.html"}) {
      EXPECT_TRUE(Contains(r.err, run + "/" + file))
          << file << " failed, and it is said: " << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(run + "/summary.json"));
    EXPECT_FALSE(std::filesystem::exists(run + "/report.html"));
    const std::string samples = ReadFile(run + "/samples.jsonl");
    ASSERT_FALSE(samples.empty());
    EXPECT_EQ(samples.back(), '\n') << "no partial last line";
    EXPECT_GE(ReadLines(run + "/samples.jsonl").size(), 1u);
    const std::string files = "Files: " + run + "/ (samples.jsonl, report.md)\n";
    EXPECT_TRUE(ReadFile(run + "/report.md").ends_with(files)) << ReadFile(run + "/report.md");
    if (quiet) {
      EXPECT_TRUE(r.err.starts_with("cgov run: warning: " + run + "/samples.jsonl: writing line"))
          << r.err;
    } else {
      EXPECT_TRUE(r.err.ends_with(files)) << r.err;
    }
  }
  // Issue 46 item 7: --db refused on a full disk left a 0-byte database behind. Nothing now:
  // no database, no run directory, and the job never started.
  RunResult db =
      RunProgram({"/usr/bin/prlimit", "--fsize=0", CgovBinary(), "run", "--db", dir / "h.db",
                  "--out", dir / "db-run", "--", TestJob(), "touch", dir / "ran"},
                 kNoGpu);
  EXPECT_EQ(db.exit_code, 2) << db.err;
  EXPECT_TRUE(Contains(db.err, "cgov run: --db " + dir / "h.db")) << db.err;
  for (const char* left : {"h.db", "h.db-journal", "h.db-wal", "db-run", "ran"}) {
    EXPECT_FALSE(std::filesystem::exists(dir / left)) << left;
  }
  // The job keeps SIGXFSZ's default action: past the limit it dies of it, as without cgov.
  RunResult job = RunProgram(
      {"/usr/bin/prlimit", "--fsize=9000", CgovBinary(), "run", "--quiet", "--out", dir / "job",
       "--", "/bin/sh", "-c", "exec head -c 20000 /dev/zero > " + dir / "big"},
      kNoGpu);
  EXPECT_EQ(job.exit_code, 128 + SIGXFSZ) << job.err;
}

TEST(RunE2E, DefaultOutputDirectoryIsTimestampedUnderCgovRuns) {
  TempDir dir;
  std::vector<std::string> argv = {
      "/bin/sh", "-c",       "cd \"$1\" && exec \"$2\" run --quiet -- \"$3\" exit 0",
      "sh",      dir.path(), CgovBinary(),
      TestJob()};
  ASSERT_EQ(RunProgram(argv, kNoGpu).exit_code, 0);
  ASSERT_EQ(RunProgram(argv, kNoGpu).exit_code, 0);
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir / "cgov-runs")) {
    names.push_back(e.path().filename());
  }
  ASSERT_EQ(names.size(), 2u) << "two runs in the same second get two directories";
  for (const std::string& n : names) {
    EXPECT_TRUE(n.find("Z-cgov_test_job") == 15) << n;
  }
}

// nvmlShutdown takes milliseconds on a real driver (~3 ms on an H200, docs/validation.md): the
// report is written while the recorder's thread shuts NVML down, not after. Here the fake's
// shutdown takes 2 s, and summary.json is there well before cgov exits.
TEST(RunE2E, TheReportIsWrittenWhileNvmlShutsDown) {
  TempDir dir;
  WriteFile(dir / "scenario.json", R"({
    "delays_ms": {"nvmlShutdown": 2000},
    "gpus": [{"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920,
              "timeline": [{"t": 0, "util_gpu": 40, "power_w": 250, "temp_c": 60}]}]})");
  Env env = {{"CGOV_NVML_LIB", FakeNvml("full")},
             {"CGOV_FAKE_NVML_SCENARIO", dir / "scenario.json"}};
  RunResult r = RunProgram(Cgov(dir / "run", {"sleep", "0.5"}, {"--quiet"}), env);
  const auto exited = std::filesystem::file_time_type::clock::now();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadJson(dir / "run/summary.json")["gpu_data"]["available"], true);
  const auto written = std::filesystem::last_write_time(dir / "run/summary.json");
  EXPECT_GT(exited - written, std::chrono::milliseconds(1000))
      << "summary.json was written as NVML shut down, not after";
}

TEST(RunE2E, FakeGpusMetricTableMatchesTheScenario) {
  TempDir dir;
  // GPU 0: 90 % until scenario t=1000 (1 s of real time at time_scale 1000), then 10 %.
  // GPUs 1-7: a steady 40 %, 250 W, 60 °C, 16 of 80 GiB used.
  WriteFile(dir / "scenario.json", R"({
    "time_scale": 1000,
    "gpus": [
      {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920,
       "timeline": [{"t": 0, "util_gpu": 90, "power_w": 600, "temp_c": 70, "mem_used_mib": 40960},
                    {"t": 1000, "util_gpu": 10, "power_w": 150, "temp_c": 50}]},
      {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81920, "copies": 7,
       "timeline": [{"t": 0, "util_gpu": 40, "power_w": 250, "temp_c": 60, "mem_used_mib": 16384}]}
    ]})");
  Env env = {{"CGOV_NVML_LIB", FakeNvml("full")},
             {"CGOV_FAKE_NVML_SCENARIO", dir / "scenario.json"}};
  RunResult r = RunProgram(Cgov(dir / "run", {"sleep", "2"}, {"--interval", "100ms"}), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "GPU: NVIDIA H100 80GB HBM3 ×8")) << r.err;
  json s = ReadJson(dir / "run/summary.json");
  ASSERT_EQ(s["gpus"].size(), 8u);
  const json& g0 = s["gpus"][0]["metrics"];
  EXPECT_EQ(g0["gpu_util_pct"]["min"], 10);
  EXPECT_EQ(g0["gpu_util_pct"]["max"], 90);
  EXPECT_EQ(g0["gpu_power_w"]["max"], 600);
  EXPECT_EQ(g0["gpu_mem_pct"]["max"], 50);
  for (int i = 1; i < 8; ++i) {
    const json& m = s["gpus"][i]["metrics"];
    for (const char* stat : {"min", "p50", "p95", "max", "mean"}) {
      EXPECT_EQ(m["gpu_util_pct"][stat], 40) << "GPU " << i << " " << stat;
      EXPECT_EQ(m["gpu_power_w"][stat], 250) << "GPU " << i << " " << stat;
      EXPECT_EQ(m["gpu_temp_c"][stat], 60) << "GPU " << i << " " << stat;
      EXPECT_EQ(m["gpu_mem_pct"][stat], 20) << "GPU " << i << " " << stat;
    }
  }
  // Over all GPU-samples: 7 of 8 GPUs sit at 40 %, so the median is 40 whatever GPU 0 does.
  EXPECT_EQ(s["metrics"]["gpu_util_pct"]["p50"], 40);
  EXPECT_EQ(s["metrics"]["gpu_util_pct"]["min"], 10);
  EXPECT_EQ(s["metrics"]["gpu_util_pct"]["max"], 90);
  // Each GPU's utilization histogram (issue 49): every sample counted once, GPU 1's all in
  // the 40-50 % bin its P50 says.
  for (const json& g : s["gpus"]) {
    uint64_t counted = 0;
    for (const json& n : g["util_histogram"]["counts"]) counted += n.get<uint64_t>();
    EXPECT_EQ(counted, g["metrics"]["gpu_util_pct"]["count"].get<uint64_t>()) << g.dump();
  }
  EXPECT_EQ(s["gpus"][1]["util_histogram"]["counts"][4],
            s["gpus"][1]["metrics"]["gpu_util_pct"]["count"]);
  EXPECT_EQ(TableRow(r.err, "| GPU Util %").rfind("| GPU Util % | 10.0 | 40.0 |", 0), 0u) << r.err;
  EXPECT_TRUE(Contains(
      r.err,
      "|   1 | NVIDIA H100 80GB HBM3 |       40.0 |        40.0 |      20.0 |        250.0 |"))
      << r.err;
  EXPECT_EQ(SchemaErrors("summary.schema.json", ReadJson(dir / "run/summary.json")), "");
  std::vector<json> lines = ReadLines(dir / "run/samples.jsonl");
  ASSERT_GE(lines.size(), 10u);
  EXPECT_EQ(lines[0]["gpus"].size(), 8u);
  EXPECT_EQ(lines[0]["nvml"]["ok"], true);
  EXPECT_EQ(lines.back()["gpus"][3]["util_gpu_pct"], 40);
}

TEST(RunE2E, NoDriverTheJobStillRunsAndTheReportSaysWhy) {
  TempDir dir;
  RunResult r = RunProgram(Cgov(dir / "run", {"touch", dir / "ran"}), kNoGpu);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(std::ifstream(dir / "ran").good());
  EXPECT_TRUE(Contains(r.err,
                       "GPU: no GPU data (no NVML library could be loaded (check the path given "
                       "with --nvml-lib / CGOV_NVML_LIB)"))
      << r.err;
  json s = ReadJson(dir / "run/summary.json");
  EXPECT_EQ(s["gpu_data"]["available"], false);
  EXPECT_TRUE(
      Contains(s["gpu_data"]["reason"].get<std::string>(), "/nonexistent/libnvidia-ml.so.1"));
  EXPECT_EQ(ReadLines(dir / "run/samples.jsonl")[0]["nvml"]["ok"], false);
}

}  // namespace
}  // namespace cgov::e2e

namespace cgov::e2e {
namespace {

TEST(RunE2E, UnreadableHostFileIsOneWarningAndTheRunGoesOn) {
  TempDir dir;
  // A captured host tree without /proc/diskstats.
  std::filesystem::copy(Fixture("proc/debian12-vm"), dir / "host",
                        std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir / "host/proc/diskstats");
  RunResult r = RunProgram({CgovBinary(), "run", "--quiet", "--out", dir / "run", "--interval",
                            "100ms", "--host-root", dir / "host", "--", TestJob(), "sleep", "0.5"},
                           kNoGpu);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json s = nlohmann::json::parse(ReadFile(dir / "run/summary.json"));
  int mentions = 0;
  for (const auto& w : s["warnings"]) mentions += Contains(w.get<std::string>(), "/proc/diskstats");
  EXPECT_EQ(mentions, 1) << "once for the run, not once per tick: " << s["warnings"].dump();
  EXPECT_GE(s["sampling"]["samples"].get<int>(), 3);
}

}  // namespace
}  // namespace cgov::e2e
