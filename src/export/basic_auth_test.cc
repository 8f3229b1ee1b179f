#include "export/basic_auth.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/fake_clock.h"

namespace cgov {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Published vectors, made by other bcrypt implementations: the hash of "test" in Prometheus'
// basic-auth guide (cost 12, $2b$), and two of jBCrypt's / OpenBSD's test vectors ($2a$, cost 6).
constexpr char kPrometheusDocsTest[] =
    "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";
constexpr char kJbcryptEmpty[] = "$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s.";
constexpr char kJbcryptAbc[] = "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i";

TEST(Bcrypt, HashShapeIsChecked) {
  EXPECT_TRUE(CheckBcryptHash(kPrometheusDocsTest).ok());
  EXPECT_TRUE(CheckBcryptHash(kJbcryptEmpty).ok());
  const std::string h = kJbcryptAbc;
  for (const std::string& bad :
       {std::string("test"), std::string("$1$abcdefgh$0123456789012345678901"),
        "$2x$" + h.substr(4), "$2a$3" + h.substr(5), "$2a$03" + h.substr(6), "$2a$32" + h.substr(6),
        h.substr(0, 59), h + "x", h.substr(0, 20) + "!" + h.substr(21)}) {
    EXPECT_FALSE(CheckBcryptHash(bad).ok()) << bad;
  }
  // The error does not echo the hash.
  EXPECT_THAT(std::string(CheckBcryptHash("secretish").message()), Not(HasSubstr("secretish")));
}

// Issue 46 item 2: a cost-31 hash was accepted, and one wrong password then held a server thread
// for days (and SIGTERM waited for it). Costs above 12 are refused, saying why and what to do.
TEST(Bcrypt, CostsAboveTwelveAreRefusedSayingWhatEachGuessWouldCost) {
  const std::string tail = std::string(kJbcryptAbc).substr(6);
  EXPECT_TRUE(CheckBcryptHash("$2a$12" + tail).ok());
  EXPECT_EQ(std::string(CheckBcryptHash("$2a$13" + tail).message()),
            "bcrypt cost 13 is more than 12, the most cgov accepts: every wrong password would "
            "cost the server ~0.4 s of one core (docs/security.md); re-hash it, e.g. `htpasswd "
            "-nBC 10 USER`");
  EXPECT_THAT(std::string(CheckBcryptHash("$2a$31" + tail).message()),
              HasSubstr("cost 31 is more than 12, the most cgov accepts: every wrong password "
                        "would cost the server ~29 h of one core"));
}

TEST(Bcrypt, MatchesPublishedVectorsAndNothingElse) {
  EXPECT_EQ(BcryptMatches("test", kPrometheusDocsTest).value(), true);
  EXPECT_EQ(BcryptMatches("Test", kPrometheusDocsTest).value(), false);
  EXPECT_EQ(BcryptMatches("", kJbcryptEmpty).value(), true);
  EXPECT_EQ(BcryptMatches("abc", kJbcryptAbc).value(), true);
  EXPECT_EQ(BcryptMatches("abd", kJbcryptAbc).value(), false);
  // What crypt_r would cut short is refused, not matched: "abc\0x" is not "abc".
  EXPECT_EQ(BcryptMatches(std::string("abc\0x", 5), kJbcryptAbc).value(), false);
  EXPECT_EQ(BcryptMatches(std::string(73, 'a'), kJbcryptAbc).value(), false);
}

TEST(BasicAuthChecker, PlainAndBcryptUsers) {
  BasicAuthChecker none({});
  EXPECT_FALSE(none.enabled());
  BasicAuthChecker c({{"alice", kPrometheusDocsTest, true}, {"bob", "hunter2", false}});
  EXPECT_TRUE(c.enabled());
  // kBusy when the bcrypt budget is spent: wait for it to refill.
  auto check = [&](std::string_view user, std::string_view password) {
    AuthVerdict v;
    while ((v = c.Check(user, password)) == AuthVerdict::kBusy) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return v;
  };
  EXPECT_EQ(check("alice", "test"), AuthVerdict::kOk);
  EXPECT_EQ(check("alice", "test"), AuthVerdict::kOk);
  EXPECT_EQ(check("alice", "tes"), AuthVerdict::kDenied);
  EXPECT_EQ(check("alice", "hunter2"), AuthVerdict::kDenied);
  EXPECT_EQ(check("bob", "hunter2"), AuthVerdict::kOk);
  EXPECT_EQ(check("bob", "test"), AuthVerdict::kDenied);
  EXPECT_EQ(check("carol", "test"), AuthVerdict::kDenied);
  EXPECT_EQ(check("", ""), AuthVerdict::kDenied);
  EXPECT_EQ(c.bcrypt_checks(), 3u) << "alice's right and two wrong passwords; bob is plain";
}

// Issue 46 item 2: 16 wrong passwords against a cost-14 hash held both server threads for 7.7 s.
// Verdicts are remembered, wrong ones too, and a check that needs bcrypt while another runs, or
// once the bcrypt budget is spent, is kBusy (429) instead of a thread's time. (By the fake
// clocks a check takes no time: the budget is never spent here.)
// A CPU clock read twice a check (before and after bcrypt), each read moving both clocks on: a
// check costs `cpu_step` of CPU, and the wall clock moves 2 x `wall_step` from its start to its
// end (a checker charging wall time would charge that).
class SteppingClock : public FakeClock {
 public:
  int64_t ThreadCpuNs() override {
    AdvanceNs(wall_step.count());
    AdvanceCpuNs(cpu_step.count());
    return FakeClock::ThreadCpuNs();
  }
  std::chrono::nanoseconds cpu_step{0}, wall_step{0};
};

TEST(BasicAuthChecker, BcryptRunsOneAtATimeAtMostHalfTheTimeAndVerdictsAreRemembered) {
  FakeClock clock;
  BasicAuthChecker c({{"alice", kJbcryptAbc, true}}, &clock);
  EXPECT_EQ(c.Check("alice", "wrong1"), AuthVerdict::kDenied);  // takes 0 s by the fake clock
  EXPECT_EQ(c.bcrypt_checks(), 1u);
  EXPECT_EQ(c.Check("alice", "wrong1"), AuthVerdict::kDenied) << "remembered";
  EXPECT_EQ(c.bcrypt_checks(), 1u);
  EXPECT_EQ(c.Check("alice", "abc"), AuthVerdict::kOk);
  EXPECT_EQ(c.Check("alice", "abc"), AuthVerdict::kOk);
  EXPECT_EQ(c.bcrypt_checks(), 2u);
  // Only kWrongRemembered wrong passwords are kept: the oldest is checked again.
  for (size_t i = 0; i < BasicAuthChecker::kWrongRemembered; ++i) {
    EXPECT_EQ(c.Check("alice", "guess" + std::to_string(i)), AuthVerdict::kDenied);
  }
  EXPECT_EQ(c.bcrypt_checks(), 2u + BasicAuthChecker::kWrongRemembered);
  EXPECT_EQ(c.Check("alice", "wrong1"), AuthVerdict::kDenied);
  EXPECT_EQ(c.bcrypt_checks(), 3u + BasicAuthChecker::kWrongRemembered);
  EXPECT_EQ(c.Check("alice", "abc"), AuthVerdict::kOk) << "a match is kept apart from the wrong";
}

// The budget is charged the CPU a check spent, not the wall time it took: on a busy host a
// check that took 2 s of wall time for 25 ms of CPU leaves the next wrong password a 401 (it
// was a 429: the whole budget and more charged for one check). Checks of 300 ms of CPU each
// spend it on the third, however little wall time passes.
TEST(BasicAuthChecker, TheBudgetIsChargedTheCpuACheckSpent) {
  using std::chrono::milliseconds;
  SteppingClock clock;
  clock.wall_step = milliseconds(1000);
  clock.cpu_step = milliseconds(25);
  BasicAuthChecker slow({{"alice", kJbcryptAbc, true}}, &clock);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(slow.Check("alice", "guess" + std::to_string(i)), AuthVerdict::kDenied) << i;
  }
  EXPECT_EQ(slow.bcrypt_checks(), 5u);

  clock.wall_step = milliseconds(0);
  clock.cpu_step = milliseconds(300);
  BasicAuthChecker costly({{"alice", kJbcryptAbc, true}}, &clock);
  EXPECT_EQ(costly.Check("alice", "a"), AuthVerdict::kDenied);  // 0.5 s -> 0.2 s left
  EXPECT_EQ(costly.Check("alice", "b"), AuthVerdict::kDenied);  // 0.2 s -> -0.1 s
  EXPECT_EQ(costly.Check("alice", "c"), AuthVerdict::kBusy);
  clock.AdvanceNs(
      std::chrono::nanoseconds(milliseconds(400)).count());  // refilled by 0.2 s: 0.1 s left
  EXPECT_EQ(costly.Check("alice", "c"), AuthVerdict::kDenied);
  EXPECT_EQ(costly.bcrypt_checks(), 3u);
}

TEST(BasicAuthChecker, ABcryptCheckWhileAnotherRunsIsBusy) {
  BasicAuthChecker c({{"alice", kPrometheusDocsTest, true}});  // cost 12: ~0.2 s a check
  std::atomic<int> busy = 0, denied = 0, ready = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      // All four ask at once (a thread started late on a loaded machine would find the first
      // check over, and run its own).
      ready.fetch_add(1);
      while (ready.load() < 4) std::this_thread::yield();
      const AuthVerdict v = c.Check("alice", "guess" + std::to_string(i));
      (v == AuthVerdict::kBusy ? busy : denied).fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(c.bcrypt_checks(), static_cast<uint64_t>(denied.load()));
  EXPECT_GE(busy.load(), 1);
  EXPECT_GE(denied.load(), 1);
  // Back to back, the budget (0.5 s of CPU, refilled at half the wall time passing) is spent
  // after a few checks of ~0.2 s of CPU; a wrong password or two in a row (a person mistyping)
  // are still 401. The wall clock stands still here: on a loaded machine a check takes a second
  // or more, and the refill would rightly keep up with checks that cost a fifth of a core.
  // The wall clock stands still; the CPU clock is the thread's own.
  class StillClock : public FakeClock {
   public:
    int64_t ThreadCpuNs() override { return real_.ThreadCpuNs(); }

   private:
    SystemClock real_;
  } still_clock;
  BasicAuthChecker still({{"alice", kPrometheusDocsTest, true}}, &still_clock);
  int checked = 0;
  while (checked < 20 &&
         still.Check("alice", "again" + std::to_string(checked)) != AuthVerdict::kBusy) {
    ++checked;
  }
  EXPECT_GE(checked, 1);
  EXPECT_LT(checked, 20) << "the budget was never spent";
}

TEST(WebConfig, ReadsUsersAndTlsFilesRelativeToTheConfig) {
  const std::string yaml = std::string(
                               "# as Prometheus' exporters take it\n"
                               "tls_server_config:\n"
                               "  cert_file: tls/cert.pem\n"
                               "  key_file: /etc/cgov/key.pem\n"
                               "basic_auth_users:\n"
                               "  prometheus: ") +
                           kPrometheusDocsTest +
                           "\n"
                           "  'grafana': \"" +
                           kJbcryptAbc + "\"\n";
  Result<WebConfig> c = ParseWebConfig(yaml, "/etc/cgov/web.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->users.size(), 2u);
  EXPECT_EQ(c->users[0].name, "prometheus");
  EXPECT_EQ(c->users[0].secret, kPrometheusDocsTest);
  EXPECT_TRUE(c->users[0].bcrypt);
  EXPECT_EQ(c->users[1].name, "grafana");
  EXPECT_EQ(c->tls_cert_file, "/etc/cgov/tls/cert.pem");
  EXPECT_EQ(c->tls_key_file, "/etc/cgov/key.pem");
  // Users alone (plain HTTP behind a proxy that terminates TLS).
  c = ParseWebConfig(std::string("basic_auth_users: {u: '") + kJbcryptEmpty + "'}\n", "w.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->users.size(), 1u);
  EXPECT_TRUE(c->tls_cert_file.empty());
}

// Issue 46 item 3: a web config nested 300,000 deep (600 KB, under the 1 MiB cap) took minutes to
// parse. Nesting past 16 is refused, at once, naming where.
TEST(WebConfig, DeepNestingIsRefusedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  Result<WebConfig> deep = ParseWebConfig(
      "basic_auth_users: " + std::string(300'000, '[') + std::string(300'000, ']') + "\n",
      "web.yml");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(std::string(deep.status().message()),
            "web.yml:1:34: nested more than 16 deep; the web config needs 3");
  EXPECT_LT(seconds, 5.0);
  Result<WebConfig> block = ParseWebConfig(
      [] {
        std::string yaml;
        for (int i = 0; i < 20; ++i) yaml += std::string(2 * i, ' ') + "k:\n";
        return yaml;
      }(),
      "web.yml");
  ASSERT_FALSE(block.ok());
  EXPECT_THAT(std::string(block.status().message()), HasSubstr("web.yml:17:"));
  EXPECT_THAT(std::string(block.status().message()), HasSubstr("nested more than 16 deep"));
  // 16 deep is only refused for what it holds, not its depth.
  Result<WebConfig> sixteen = ParseWebConfig(
      "basic_auth_users: " + std::string(15, '[') + std::string(15, ']') + "\n", "web.yml");
  EXPECT_THAT(std::string(sixteen.status().message()), Not(HasSubstr("deep")));
}

TEST(WebConfig, ErrorsNameFileLineAndKey) {
  auto error = [](const std::string& yaml) {
    Result<WebConfig> c = ParseWebConfig(yaml, "web.yml");
    return c.ok() ? std::string("(accepted)") : std::string(c.status().message());
  };
  const std::string hash = kJbcryptAbc;
  EXPECT_EQ(error("basic_auth_users:\n  a: " + hash + "\n  b: plaintext\n"),
            "web.yml:3: basic_auth_users.b: not a bcrypt hash (expected $2y$, $2b$ or $2a$, a "
            "two-digit cost, '$' and 53 characters, as `htpasswd -nBC 10 USER` prints after the "
            "colon)");
  EXPECT_THAT(error("basic_auth_users:\n  a: " + hash + "\n  a: " + hash + "\n"),
              HasSubstr("web.yml:3: basic_auth_users.a: given twice"));
  EXPECT_THAT(error("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n"),
              HasSubstr("web.yml:4: tls_server_config.client_ca_file: not supported by cgov"));
  EXPECT_THAT(error("tls_server_config:\n  cert_file: c\n"),
              HasSubstr("needs both cert_file and key_file"));
  EXPECT_THAT(error("http_server_config:\n  http2: false\n"),
              HasSubstr("web.yml:1: http_server_config: not supported"));
  EXPECT_THAT(error("basic_auth_user:\n  a: " + hash + "\n"),
              HasSubstr("web.yml:1: basic_auth_user: unknown key"));
  EXPECT_THAT(error("basic_auth_users: [a, b]\n"),
              HasSubstr("web.yml:1: basic_auth_users: expected a mapping"));
  EXPECT_THAT(error("basic_auth_users:\n  a: " + hash + "\n   b: x\n"), HasSubstr("web.yml:3:"));
  EXPECT_THAT(error("basic_auth_users:\n  a: [" + hash + "]\n"),
              HasSubstr("basic_auth_users.a: expected a hash"));
  EXPECT_THAT(error("basic_auth_users:\n  'a:b': " + hash + "\n"), HasSubstr("no ':'"));
  EXPECT_THAT(error(""), HasSubstr("web.yml: empty"));
  EXPECT_THAT(error("basic_auth_users:\n  a: " + hash + "\n---\nhttp_server_config: {}\n"),
              HasSubstr("web.yml:4: a second YAML document"));
  EXPECT_THAT(error("basic_auth_users:\n"), HasSubstr("nothing to serve differently"));
}

}  // namespace
}  // namespace cgov
