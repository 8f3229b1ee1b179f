// The policy file, the guards the engine applies, and reading a process's credentials.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "policy/policy_engine.h"
#include "policy/policy_executor.h"
#include "policy/policy_file.h"
#include "policy/process_credentials.h"
#include "scratch_dir.h"
#include "telemetry/procfs_pid.h"

namespace cgov {
namespace {

TEST(PolicyFile, ParsesAPolicyWithItsDefaults) {
  Result<PolicyFile> f = ParsePolicyFile(
      "# a shared box\n[[policy]]\nname = \"notebooks\"\nidle_held_for = \"4h\"\n"
      "groups = [\"students\"]\ncommands = [\"jupyter*\", \"python*\"]\n"
      "allow_users = [\"alice\"]\nallow_commands = [\"/opt/train/bin/*\"]\n"
      "[[policy]]\nname = \"all\"\nidle_held_for = \"1d\"\ngrace = \"30s\"\nusers = [\"*\"]\n",
      "p.toml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->rules.size(), 2u);
  EXPECT_EQ(f->rules[0].idle_held_ms, 4 * 3'600'000);
  EXPECT_EQ(f->rules[0].grace_ms, 300'000);  // the default
  EXPECT_EQ(f->rules[0].commands.size(), 2u);
  EXPECT_EQ(f->rules[1].grace_ms, 30'000);
}

TEST(PolicyFile, TheShippedExampleParses) {
  const std::string path =
      std::string(CGOV_FIXTURES_DIR) + "/../../deploy/policy/policy.example.toml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<PolicyFile> f = ParsePolicyFile(text, path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->rules.size(), 2u);
  EXPECT_EQ(f->rules[0].idle_held_ms, 4 * 3'600'000);
  EXPECT_EQ(f->rules[1].users, std::vector<std::string>{"*"});
}

TEST(PolicyFile, ErrorsNameTheLineColumnAndKey) {
  const std::string base = "[[policy]]\nname = \"p\"\nidle_held_for = \"4h\"\n";
  struct Case {
    std::string text, error;
  } cases[] = {
      {"", "p.toml:1:1: policy: the file has no [[policy]]"},
      {"mode = 1\n", "p.toml:1:1: mode: unknown key"},
      {"[[rule]]\n", "p.toml:1:1: rule: unknown table"},
      {base, "p.toml:1:1: policy: give its scope"},
      {"[[policy]]\nusers = [\"a\"]\nidle_held_for = \"1h\"\n",
       "p.toml:1:1: policy: give its name"},
      {base + "users = [\"a\", \"a\"]\n", "p.toml:4:15: users: \"a\" is listed twice"},
      {base + "users = []\n", "p.toml:4:9: users: expected a list"},
      {base + "users = [\"a\"]\ngrace = \"0s\"\n", "p.toml:5:9: grace: 0s is out of range"},
      {base + "users = [\"a\"]\nsignal = \"HUP\"\n", "p.toml:5:1: signal: unknown key"},
      {base + "users = [\"a\"]\n" + base + "users = [\"b\"]\n",
       "p.toml:5:1: policy: a second policy named \"p\""},
      {"[[policy]]\nname = \"p q\"\n", "p.toml:2:8: name: expected a name"},
      // Issue 46 item 8: a process name exempted whoever renamed a process to it.
      {base + "users = [\"a\"]\nallow_commands = [\"/opt/x\", \"train*\"]\n",
       "p.toml:5:1: allow_commands: \"train*\" would exempt by process name, which its owner can "
       "change (prctl, exec -a): give the executable's path instead"},
  };
  for (const Case& c : cases) {
    Result<PolicyFile> f = ParsePolicyFile(c.text, "p.toml");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_NE(f.status().message().find(c.error), std::string::npos)
        << c.text << "\n-> " << f.status().message();
  }
}

TEST(PolicyFile, CommandGlobs) {
  EXPECT_TRUE(CommandMatches("jupyter*", "jupyter-lab"));
  EXPECT_TRUE(CommandMatches("py?hon", "python"));
  EXPECT_FALSE(CommandMatches("jupyter*", "python"));
  EXPECT_FALSE(CommandMatches("python", "python3"));
}

PolicyRule Rule(std::string name, std::vector<std::string> users,
                std::vector<std::string> groups = {}) {
  PolicyRule r;
  r.name = std::move(name);
  r.idle_held_ms = 2'000;
  r.grace_ms = 1'000;
  r.users = std::move(users);
  r.groups = std::move(groups);
  return r;
}

PolicyProcess Proc(uint32_t pid, std::string user, uint32_t uid = 1000) {
  PolicyProcess p;
  p.pid = pid;
  p.start_ticks = 100 + pid;
  p.uid = p.euid = p.suid = uid;
  p.user = std::move(user);
  p.groups = {"students"};
  p.command = "jupyter-lab";
  p.exe = "/usr/bin/python3.11";
  p.exe_trusted = true;
  p.idle_held = true;
  return p;
}

// The pids the engine decides on over ticks 0..to_ms, every second, with `procs` each tick.
std::vector<std::pair<int64_t, PolicyDecision>> Ticks(PolicyEngine& e,
                                                      std::vector<PolicyProcess> procs,
                                                      int64_t to_ms = 5'000) {
  std::vector<std::pair<int64_t, PolicyDecision>> out;
  for (int64_t t = 0; t <= to_ms; t += 1'000) {
    for (PolicyDecision& d : e.Evaluate(t, procs)) out.emplace_back(t, std::move(d));
  }
  return out;
}

TEST(PolicyEngine, StopsAnIdleHeldProcessInScopeOnceAfterItsIdleTime) {
  PolicyEngine e({"p.toml", {Rule("p", {"bob"})}});
  auto d = Ticks(e, {Proc(42, "bob")});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].first, 2'000);
  EXPECT_EQ(d[0].second.kind, PolicyDecision::Kind::kStop);
  EXPECT_EQ(d[0].second.process.pid, 42u);
  EXPECT_EQ(d[0].second.idle_since_ms, 0);
}

TEST(PolicyEngine, EachGuardKeepsItsProcessAlone) {
  struct Case {
    const char* guard;
    PolicyRule rule;
    PolicyProcess process;
  };
  PolicyProcess unknown_uid = Proc(1, "bob");
  unknown_uid.uid.reset();
  PolicyProcess unknown_user = Proc(2, "");
  PolicyProcess computing = Proc(3, "bob");
  computing.used_gpu = true;
  PolicyProcess not_idle = Proc(4, "bob");
  not_idle.idle_held = false;
  PolicyProcess no_start = Proc(5, "bob");
  no_start.start_ticks = 0;
  PolicyRule allow_user = Rule("p", {"*"});
  allow_user.allow_users = {"bob"};
  PolicyRule allow_command = Rule("p", {"bob"});
  allow_command.allow_commands = {"/usr/bin/python3*"};
  PolicyRule other_command = Rule("p", {"bob"});
  other_command.commands = {"python*"};
  const Case cases[] = {
      {"uid unknown", Rule("p", {"*"}), unknown_uid},
      {"user unknown", Rule("p", {"*"}), unknown_user},
      {"used a GPU this tick", Rule("p", {"bob"}), computing},
      {"not idle-held", Rule("p", {"bob"}), not_idle},
      {"no start time", Rule("p", {"bob"}), no_start},
      {"another user", Rule("p", {"alice"}), Proc(6, "bob")},
      {"another group", Rule("p", {}, {"staff"}), Proc(7, "bob")},
      {"allow-listed user", allow_user, Proc(8, "bob")},
      {"allow-listed command", allow_command, Proc(9, "bob")},
      {"a command not named", other_command, Proc(10, "bob")},
      {"root under *", Rule("p", {"*"}), Proc(11, "root", 0)},
  };
  for (const Case& c : cases) {
    PolicyEngine e({"p.toml", {c.rule}});
    EXPECT_TRUE(Ticks(e, {c.process}).empty()) << c.guard;
  }
  // In scope by group; root named on purpose is refused, and said so once.
  PolicyEngine by_group({"p.toml", {Rule("p", {}, {"students"})}});
  EXPECT_EQ(Ticks(by_group, {Proc(12, "bob")}).size(), 1u);
  PolicyEngine named_root({"p.toml", {Rule("p", {"root"})}});
  auto d = Ticks(named_root, {Proc(13, "root", 0)});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].second.kind, PolicyDecision::Kind::kRefused);
  EXPECT_NE(d[0].second.why.find("root"), std::string::npos);
}

// Issue 46 item 8: allow_commands matched the process name, which its owner can set: a user
// exempted herself by renaming her process. Only a trusted executable's path exempts now; a
// name (or a path in a directory its owner can write) does not.
TEST(PolicyEngine, OnlyATrustedExecutableIsExemptNeverAName) {
  PolicyRule rule = Rule("p", {"bob"});
  rule.allow_commands = {"/opt/serving/bin/*"};
  PolicyProcess served = Proc(1, "bob");
  served.command = "server";
  served.exe = "/opt/serving/bin/server";
  PolicyProcess renamed = Proc(2, "bob");
  renamed.command = "server";             // prctl(PR_SET_NAME, "server")
  PolicyProcess copied = Proc(3, "bob");  // her copy, where she can write
  copied.exe = "/opt/serving/bin/server";
  copied.exe_trusted = false;
  PolicyProcess unknown = Proc(4, "bob");
  unknown.exe.clear();
  unknown.exe_trusted = false;
  PolicyEngine e({"p.toml", {rule}});
  std::set<uint32_t> stopped;
  for (const auto& [t, d] : Ticks(e, {served, renamed, copied, unknown})) {
    stopped.insert(d.process.pid);
  }
  EXPECT_EQ(stopped, (std::set<uint32_t>{2, 3, 4}));
  // `commands` narrows by name or by path; a name it misses is a process it does not aim at.
  PolicyRule by_path = Rule("p", {"bob"});
  by_path.commands = {"/usr/bin/python3*"};
  PolicyEngine paths({"p.toml", {by_path}});
  EXPECT_EQ(Ticks(paths, {Proc(5, "bob")}).size(), 1u);
}

// Issue 46 item 9: the root guard read the real uid only, so a setuid-root program run by
// alice was signalled. Root's rights in any of the real, effective or saved uid (or one not
// known) are refused, and every uid goes on the record.
TEST(PolicyEngine, RootsRightsInAnyUidAreRefusedAndEveryUidIsRecorded) {
  PolicyProcess setuid_root = Proc(1, "alice");
  setuid_root.euid = 0;
  setuid_root.suid = 0;
  setuid_root.loginuid = 1000;
  PolicyProcess saved_root = Proc(2, "alice");
  saved_root.suid = 0;
  PolicyProcess unknown = Proc(3, "alice");
  unknown.euid.reset();
  for (const PolicyRule& rule : {Rule("p", {"alice"}), Rule("p", {}, {"students"})}) {
    PolicyEngine e({"p.toml", {rule}});
    auto d = Ticks(e, {setuid_root, saved_root, unknown});
    ASSERT_EQ(d.size(), 3u);
    for (const auto& [t, decision] : d) {
      EXPECT_EQ(decision.kind, PolicyDecision::Kind::kRefused) << decision.process.pid;
      EXPECT_EQ(decision.why,
                "a process with root's rights (real, effective or saved uid 0) is never stopped");
    }
  }
  PolicyEngine everyone({"p.toml", {Rule("p", {"*"})}});
  EXPECT_TRUE(Ticks(everyone, {setuid_root}).empty()) << "* leaves root's rights out";
  EXPECT_EQ(UidsText(setuid_root), "uid 1000 euid 0 suid 0 login 1000");
  EXPECT_EQ(UidsText(unknown), "uid 1000 euid ? suid 1000");
}

TEST(PolicyEngine, ATickOfUseStartsTheIdleTimeAgainAndAReusedPidIsANewProcess) {
  PolicyEngine e({"p.toml", {Rule("p", {"bob"})}});
  PolicyProcess p = Proc(42, "bob");
  EXPECT_TRUE(e.Evaluate(0, {p}).empty());
  EXPECT_TRUE(e.Evaluate(1'000, {p}).empty());
  PolicyProcess busy = p;
  busy.idle_held = false;  // it computed
  EXPECT_TRUE(e.Evaluate(2'000, {busy}).empty());
  EXPECT_TRUE(e.Evaluate(3'000, {p}).empty());
  EXPECT_TRUE(e.Evaluate(4'000, {p}).empty());
  ASSERT_EQ(e.Evaluate(5'000, {p}).size(), 1u);
  EXPECT_TRUE(e.Evaluate(6'000, {p}).empty());  // once
  PolicyProcess reused = p;
  reused.start_ticks += 1;  // the pid now names another process
  EXPECT_TRUE(e.Evaluate(7'000, {reused}).empty());
  EXPECT_TRUE(e.Evaluate(8'000, {reused}).empty());
  EXPECT_EQ(e.Evaluate(9'000, {reused}).size(), 1u);
}

TEST(PolicyEngine, TheFirstPolicyThatTakesTheProcessDecides) {
  PolicyRule slow = Rule("slow", {"bob"});
  slow.idle_held_ms = 4'000;
  PolicyEngine e({"p.toml", {slow, Rule("fast", {"bob"})}});
  auto d = Ticks(e, {Proc(42, "bob")});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].second.rule->name, "slow");
  EXPECT_EQ(d[0].first, 4'000);
}

TEST(ProcessCredentials, EveryUidFromStatus) {
  auto uids = ParseStatusUids("Name:\tping\nUid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\n");
  ASSERT_TRUE(uids.ok());
  EXPECT_EQ(*uids, (std::array<uint32_t, 3>{1000, 0, 0}));
  EXPECT_FALSE(ParseStatusUids("Uid:\t1000\n").ok());
  EXPECT_FALSE(ParseStatusUids("Gid:\t1\t1\t1\t1\n").ok());
}

// What allow_commands trusts: root's file in root's directory, read through /proc/PID.
TEST(ProcessCredentials, AnExecutableIsTrustedOnlyWhenRootsAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "making files of another owner needs root";
  const std::string dir = ::testing::TempDir() + "cgov_exe_" + std::to_string(getpid());
  std::filesystem::create_directories(dir + "/open");
  std::filesystem::create_directories(dir + "/closed");
  std::filesystem::permissions(dir + "/open", std::filesystem::perms::all);
  std::filesystem::permissions(dir + "/closed", std::filesystem::perms(0755));
  std::filesystem::copy_file("/bin/sleep", dir + "/open/sleep");
  std::filesystem::copy_file("/bin/sleep", dir + "/closed/sleep");
  std::filesystem::copy_file("/bin/sleep", dir + "/closed/theirs");
  ASSERT_EQ(chown((dir + "/closed/theirs").c_str(), 65534, 65534), 0);
  auto run = [](const std::string& path) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl(path.c_str(), path.c_str(), "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    usleep(100'000);
    ProcessExecutable e = ReadExecutable("/proc", static_cast<uint32_t>(pid));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return e;
  };
  const ProcessExecutable system = run("/bin/sleep");
  EXPECT_TRUE(system.trusted) << system.path;
  EXPECT_TRUE(system.path.ends_with("/sleep")) << system.path;
  const ProcessExecutable closed = run(dir + "/closed/sleep");
  EXPECT_TRUE(closed.trusted) << "root's file in a directory only root writes";
  EXPECT_EQ(closed.path, std::filesystem::canonical(dir + "/closed/sleep").string());
  EXPECT_FALSE(run(dir + "/open/sleep").trusted) << "in a directory anyone may write";
  EXPECT_FALSE(run(dir + "/closed/theirs").trusted) << "a file root does not own";
  EXPECT_EQ(ReadExecutable("/proc", 3'999'999).path, "");
  std::filesystem::remove_all(dir);
}

TEST(ProcessCredentials, GroupsFromStatusAndTheGroupFile) {
  EXPECT_EQ(ParseStatusGids("Name:\tsleep\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
                            "Groups:\t27 100 1001 \n"),
            (std::vector<uint32_t>{100, 27, 1001}));
  EXPECT_EQ(ParseStatusGids("Gid:\t5\t5\t5\t5\nGroups:\n"), (std::vector<uint32_t>{5}));
  const auto names = ParseGroupFile(
      "root:x:0:\nsudo:x:27:bob\nbroken\nstudents:x:1001:bob,carol\n"
      ":x:5:\nbad:x:z:\n");
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names.at(27), "sudo");
  EXPECT_EQ(names.at(1001), "students");
}

// A child that ignores SIGTERM and sleeps, and a /proc of the test's own making for it: its real
// stat, and a status that says what the test wants its rights to be now.
class ExecutorFixture {
 public:
  ExecutorFixture() {
    child_ = fork();
    if (child_ == 0) {
      signal(SIGTERM, SIG_IGN);
      for (;;) pause();
    }
    usleep(20'000);
    std::ifstream in("/proc/" + std::to_string(child_) + "/stat");
    std::getline(in, stat_);
    std::filesystem::create_directories(dir());
    std::ofstream(dir() + "/stat") << stat_ << "\n";
    SetStatus("1000\t1000\t1000\t1000", "0000000000000000");
  }
  ~ExecutorFixture() {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
  }
  std::string dir() const { return proc_.path() + "/" + std::to_string(child_); }
  void SetStatus(const std::string& uids, const std::string& cap_eff) {
    std::ofstream(dir() + "/status") << "Name:\tsleeper\nUid:\t" << uids
                                     << "\nGid:\t1000\t1000\t1000\t1000\nCapInh:\t0000000000000000"
                                        "\nCapPrm:\t0000000000000000\nCapEff:\t"
                                     << cap_eff << "\nCapAmb:\t0000000000000000\n";
  }
  PolicyDecision Decision(const PolicyRule* rule) const {
    PolicyDecision d;
    d.rule = rule;
    d.process.pid = static_cast<uint32_t>(child_);
    d.process.start_ticks = ParsePidStat(stat_)->start_ticks;
    d.process.uid = d.process.euid = d.process.suid = 1000;
    d.process.user = "alice";
    d.process.command = "sleeper";
    return d;
  }
  bool Alive() const { return waitpid(child_, nullptr, WNOHANG) == 0; }
  const std::string& proc_root() const { return proc_.path(); }

 private:
  ScratchDir proc_;
  pid_t child_ = -1;
  std::string stat_;
};

// Issue 58, 6: a process that execs a setuid-root program after it was sampled still got SIGTERM
// (and the grace's SIGKILL while its euid was 0), and the record showed stale credentials.
TEST(PolicyExecutor, AProcessWithRootsRightsNowIsNeverSignalled) {
  PolicyRule rule;
  rule.name = "stale";
  rule.grace_ms = 1000;
  for (const auto& [uids, caps] : std::vector<std::pair<std::string, std::string>>{
           {"1000\t0\t0\t0", "0000000000000000"},              // ran a setuid-root program
           {"1000\t1000\t1000\t0", "0000000000000000"},        // only its file-system uid
           {"1000\t1000\t1000\t1000", "0000000000200000"}}) {  // CAP_SYS_ADMIN
    ExecutorFixture child;
    child.SetStatus(uids, caps);
    std::vector<PolicyActionRecord> records;
    PolicyExecutor executor(
        false, [&](const PolicyActionRecord& r) { records.push_back(r); }, child.proc_root());
    executor.Act(child.Decision(&rule), 1000);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].action, "refused") << uids << " " << caps << ": " << records[0].outcome;
    EXPECT_NE(records[0].uids.find("fsuid"), std::string::npos) << "what was read at the "
                                                                   "decision: "
                                                                << records[0].uids;
    EXPECT_EQ(executor.pending(), 0u);
    usleep(50'000);
    EXPECT_TRUE(child.Alive()) << uids << " " << caps;
  }
  // Its rights were a user's at SIGTERM and are root's when the grace ends: no SIGKILL.
  ExecutorFixture child;
  std::vector<PolicyActionRecord> records;
  PolicyExecutor executor(
      false, [&](const PolicyActionRecord& r) { records.push_back(r); }, child.proc_root());
  executor.Act(child.Decision(&rule), 1000);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].action, "sigterm") << records[0].outcome;
  child.SetStatus("1000\t0\t0\t0", "000001ffffffffff");
  executor.Tick(3000, {});
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].action, "refused") << records[1].outcome;
  EXPECT_NE(records[1].uids.find("euid 0"), std::string::npos) << records[1].uids;
  usleep(50'000);
  EXPECT_TRUE(child.Alive());
}

}  // namespace
}  // namespace cgov
