// The policy file, the guards the engine applies, and reading a process's credentials.
#include <fstream>

#include <gtest/gtest.h>

#include "policy/policy_engine.h"
#include "policy/policy_file.h"
#include "policy/process_credentials.h"

namespace cgov {
namespace {

TEST(PolicyFile, ParsesAPolicyWithItsDefaults) {
  Result<PolicyFile> f = ParsePolicyFile(
      "# a shared box\n[[policy]]\nname = \"notebooks\"\nidle_held_for = \"4h\"\n"
      "groups = [\"students\"]\ncommands = [\"jupyter*\", \"python*\"]\n"
      "allow_users = [\"alice\"]\nallow_commands = [\"train*\"]\n"
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
      {"[[policy]]\nusers = [\"a\"]\nidle_held_for = \"1h\"\n", "p.toml:1:1: policy: give its name"},
      {base + "users = [\"a\", \"a\"]\n", "p.toml:4:15: users: \"a\" is listed twice"},
      {base + "users = []\n", "p.toml:4:9: users: expected a list"},
      {base + "users = [\"a\"]\ngrace = \"0s\"\n", "p.toml:5:9: grace: 0s is out of range"},
      {base + "users = [\"a\"]\nsignal = \"HUP\"\n", "p.toml:5:1: signal: unknown key"},
      {base + "users = [\"a\"]\n" + base + "users = [\"b\"]\n",
       "p.toml:5:1: policy: a second policy named \"p\""},
      {"[[policy]]\nname = \"p q\"\n", "p.toml:2:8: name: expected a name"},
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

PolicyRule Rule(std::string name, std::vector<std::string> users, std::vector<std::string> groups = {}) {
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
  p.uid = uid;
  p.user = std::move(user);
  p.groups = {"students"};
  p.command = "jupyter-lab";
  p.idle_held = true;
  return p;
}

// The pids the engine decides on over ticks 0..to_ms, every second, with `procs` each tick.
std::vector<std::pair<int64_t, PolicyDecision>> Ticks(PolicyEngine& e, std::vector<PolicyProcess> procs,
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
  allow_command.allow_commands = {"jupyter*"};
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

TEST(ProcessCredentials, GroupsFromStatusAndTheGroupFile) {
  EXPECT_EQ(ParseStatusGids("Name:\tsleep\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
                            "Groups:\t27 100 1001 \n"),
            (std::vector<uint32_t>{100, 27, 1001}));
  EXPECT_EQ(ParseStatusGids("Gid:\t5\t5\t5\t5\nGroups:\n"), (std::vector<uint32_t>{5}));
  const auto names = ParseGroupFile("root:x:0:\nsudo:x:27:bob\nbroken\nstudents:x:1001:bob,carol\n"
                                    ":x:5:\nbad:x:z:\n");
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names.at(27), "sudo");
  EXPECT_EQ(names.at(1001), "students");
}

}  // namespace
}  // namespace cgov
