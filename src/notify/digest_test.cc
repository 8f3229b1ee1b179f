#include "notify/digest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <set>

#include "core/money.h"
#include "local_zone.h"
#include "notify/mail_message.h"

namespace cgov {
namespace {

constexpr int64_t kDigestNov16 = 1'794'787'200'000;  // Monday 2026-11-16T00:00:00Z
constexpr int64_t kDigestHourMs = 3'600'000, kDigestDayMs = 24 * kDigestHourMs;

using DigestWeekTest = LocalZoneTest;  // tests/support/local_zone.h

TEST_F(DigestWeekTest, TheWeekIsTheSevenLocalDaysBeforeTheSendDay) {
  Zone("UTC0");
  DigestConfig monday;  // 08:00
  DigestWeek w = LatestDigestWeek(monday, kDigestNov16 + 9 * kDigestHourMs);
  EXPECT_EQ(w.send_ms, kDigestNov16 + 8 * kDigestHourMs);
  EXPECT_EQ(w.until_ms, kDigestNov16);
  EXPECT_EQ(w.since_ms, kDigestNov16 - 7 * kDigestDayMs);
  EXPECT_EQ(w.prior_since_ms, kDigestNov16 - 14 * kDigestDayMs);
  EXPECT_EQ(w.key, "digest/2026-11-09");
  EXPECT_EQ(LatestDigestWeek(monday, kDigestNov16 + 8 * kDigestHourMs).key, "digest/2026-11-09")
      << "due at its minute";
  EXPECT_EQ(LatestDigestWeek(monday, kDigestNov16 + 8 * kDigestHourMs - 1).key, "digest/2026-11-02")
      << "the day, not yet the time: last week's";
  EXPECT_EQ(LatestDigestWeek(monday, kDigestNov16 - kDigestHourMs).key, "digest/2026-11-02")
      << "Sunday";
  EXPECT_EQ(LatestDigestWeek(monday, kDigestNov16 + 6 * kDigestDayMs).key, "digest/2026-11-09");
  const DigestWeek next = NextDigestWeek(monday, w);
  EXPECT_EQ(next.send_ms, kDigestNov16 + 7 * kDigestDayMs + 8 * kDigestHourMs);
  EXPECT_EQ(next.since_ms, w.until_ms) << "weeks follow each other";
  EXPECT_EQ(next.key, "digest/2026-11-16");
  DigestConfig friday;
  friday.weekday = 4;
  friday.at_min = 17 * 60 + 30;
  const DigestWeek f = LatestDigestWeek(friday, kDigestNov16 + 9 * kDigestHourMs);
  EXPECT_EQ(f.send_ms, kDigestNov16 - 3 * kDigestDayMs + 17 * kDigestHourMs + 30 * 60'000);
  EXPECT_EQ(f.until_ms, kDigestNov16 - 3 * kDigestDayMs);
  EXPECT_EQ(f.key, "digest/2026-11-06");
}

TEST_F(DigestWeekTest, AWeekAcrossAChangeOfTheClocksHasItsLocalMidnights) {
  // Central Europe: summer time ends on Sunday 2026-10-25 at 03:00 CEST.
  Zone("CET-1CEST,M3.5.0,M10.5.0/3");
  DigestConfig monday;
  const int64_t oct26_local_midnight =
      kDigestNov16 - 21 * kDigestDayMs - kDigestHourMs;  // 2026-10-25T23:00Z
  const DigestWeek w = LatestDigestWeek(monday, oct26_local_midnight + 9 * kDigestHourMs);
  EXPECT_EQ(w.until_ms, oct26_local_midnight);
  EXPECT_EQ(w.since_ms, oct26_local_midnight - 7 * kDigestDayMs - kDigestHourMs)
      << "19 Oct 00:00 CEST";
  EXPECT_EQ(w.until_ms - w.since_ms, 7 * kDigestDayMs + kDigestHourMs)
      << "the week has its extra hour";
  EXPECT_EQ(w.send_ms, oct26_local_midnight + 8 * kDigestHourMs);
  EXPECT_EQ(w.key, "digest/2026-10-19");
  EXPECT_EQ(NextDigestWeek(monday, w).until_ms - w.until_ms, 7 * kDigestDayMs);
}

WhoRow DigestWho(const std::string& user, MicroUsd cost, MicroUsd idle_cost, int64_t idle_ms) {
  WhoRow w;
  w.key = user;
  w.cost = cost;
  w.idle_held_cost = idle_cost;
  w.idle_held_ms = idle_ms;
  w.attributed_ms[static_cast<size_t>(Phase::kProductive)] = 2 * idle_ms + kDigestHourMs;
  return w;
}

HabitRow DigestHabit(const std::string& user, const std::string& command, MicroUsd cost) {
  HabitRow h;
  h.user = user;
  h.command = command;
  h.kind = "notebook";
  h.gpu_index = 3;
  h.sessions = 4;
  h.days = 3;
  h.window_days = 7;
  h.idle_held_ms = 10 * kDigestHourMs;
  h.idle_held_cost = cost;
  h.advice = "shut the kernel down when done";
  return h;
}

RecipientsFile DigestPeople() {
  Result<RecipientsFile> f = ParseRecipientsFile(
      "domain = \"corp.example\"\ndomain_except = [\"root\", \"gdm\"]\n"
      "fallback = \"admins@corp.example\"\n"
      "[[person]]\nusers = [\"bob\", \"bsmith\"]\naddress = \"robert@corp.example\"\n"
      "team = \"vision\"\n"
      "[[person]]\nusers = [\"erin\"]\naddress = \"erin@corp.example\"\nteam = \"vision\"\n"
      "opt_out = \"reads the dashboard\"\n"
      "[[person]]\nusers = [\"vic\"]\naddress = \"vic@corp.example\"\nteam = \"vision\"\n"
      "[[team]]\nname = \"vision\"\nleads = [\"vera@corp.example\"]\n",
      "people.toml");
  EXPECT_TRUE(f.ok()) << f.status().message();
  return *f;
}

const DigestMail* FindDigest(const std::vector<DigestMail>& mails, const std::string& who) {
  for (const DigestMail& m : mails) {
    if (m.who == who) return &m;
  }
  return nullptr;
}

TEST(Digest, EachPersonGetsTheirRowsTheTeamLeadTheTeamAndNoOneElseIsMailed) {
  const Recipients people(DigestPeople());
  HistorySummary week, prior;
  week.idle_held_min_ms = 30 * 60'000;
  week.who = {DigestWho("bob", 10'004'999, 4'000'000, 5 * kDigestHourMs),  // $10.00
              DigestWho("bsmith", 2'005'000, 1'000'000, kDigestHourMs),    // $2.01 (half a cent up)
              DigestWho("carol", 7'000'000, 0, 0),  // the domain rule, no team
              DigestWho("erin", 30'000'000, 20'000'000, 8 * kDigestHourMs),  // opted out
              DigestWho("gdm", 50'000'000, 0, 0),  // domain_except: no one's
              DigestWho("dan", 500'000, 0, 0),     // under min_usd
              DigestWho("", 90'000'000, 0, 0)};    // no identity
  week.habits = {DigestHabit("erin", "jupyter-lab", 20'000'000),
                 DigestHabit("bob", "ipykernel", 4'000'000)};
  week.habits[1].advice = "ask bob to shut kernels down when done";
  prior.who = {DigestWho("bob", 8'000'000, 0, 0), DigestWho("vic", 3'000'000, 0, 0)};
  DigestInput in{&week, &prior, &people, DigestConfig{}, {}, "gpu-box-7"};
  in.window.key = "digest/2026-11-09";
  in.window.since_ms = kDigestNov16 - 7 * kDigestDayMs;
  in.window.until_ms = kDigestNov16;
  const std::vector<DigestMail> mails = ComposeDigests(in);
  std::set<std::string> whom;
  for (const DigestMail& m : mails) whom.insert(m.who);
  EXPECT_EQ(whom, (std::set<std::string>{"bob", "carol", "team vision"}))
      << "erin opted out, gdm is no one's mailbox, dan is under $1, vic spent nothing";
  const DigestMail* bob = FindDigest(mails, "bob");
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(bob->to, std::vector<std::string>{"robert@corp.example"});
  EXPECT_EQ(bob->cost, 12'010'000) << "his two users' rows, each to the cent";
  EXPECT_EQ(bob->idle_held_cost, 5'000'000);
  EXPECT_EQ(bob->idle_held_ms, 6 * kDigestHourMs);
  EXPECT_EQ(bob->rank, 2) << "erin held more idle";
  EXPECT_EQ(bob->members, 3);
  EXPECT_NE(bob->subject.find("$12.01, 6.0 h idle-held ($5.00)"), std::string::npos)
      << bob->subject;
  EXPECT_NE(bob->text.find("up 50 % from $8.00 the week before"), std::string::npos) << bob->text;
  EXPECT_NE(bob->text.find("2nd of 3 in team vision"), std::string::npos) << bob->text;
  EXPECT_NE(bob->text.find("Your top habit: ipykernel (notebook) on GPU 3"), std::string::npos)
      << "his own habit, not erin's costlier one:\n"
      << bob->text;
  EXPECT_NE(bob->text.find("What to do: shut kernels down when done"), std::string::npos)
      << "the advice said to him:\n"
      << bob->text;
  EXPECT_NE(bob->html.find("What to do: shut kernels down when done"), std::string::npos);
  const DigestMail* carol = FindDigest(mails, "carol");
  ASSERT_NE(carol, nullptr);
  EXPECT_EQ(carol->to, std::vector<std::string>{"carol@corp.example"});
  EXPECT_EQ(carol->rank, 0) << "no team";
  EXPECT_NE(carol->text.find("no GPU time the week before"), std::string::npos);
  EXPECT_NE(carol->text.find("No idle-held stretch of 30 min"), std::string::npos);
  const DigestMail* team = FindDigest(mails, "team vision");
  ASSERT_NE(team, nullptr);
  EXPECT_EQ(team->to, std::vector<std::string>{"vera@corp.example"});
  EXPECT_EQ(team->cost, 12'010'000 + 30'000'000)
      << "bob and erin (opted out of mail, not of the team); vic spent nothing";
  EXPECT_EQ(team->members, 3);
  EXPECT_NE(team->text.find("erin: jupyter-lab (notebook)"), std::string::npos) << team->text;
  EXPECT_LT(team->text.find("erin: jupyter-lab"), team->text.find("bob: ipykernel"))
      << "the biggest waste first";
  EXPECT_NE(team->text.find("$42.01"), std::string::npos) << team->text;
  EXPECT_EQ(team->html.find("<script"), std::string::npos);
}

TEST(Digest, ANameIsEscapedInHtmlAndSafeInText) {
  Result<RecipientsFile> f = ParseRecipientsFile(
      "domain = \"corp.example\"\n[[person]]\nusers = [\"<b>x\"]\naddress = \"x@corp.example\"\n"
      "team = \"t\"\n[[team]]\nname = \"t\"\nleads = [\"l@corp.example\"]\n",
      "p.toml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  const Recipients people(std::move(*f));
  HistorySummary week, prior;
  week.who = {DigestWho("<b>x", 5'000'000, 1'000'000, kDigestHourMs)};
  week.habits = {DigestHabit("<b>x", "evil\x1b[2J<script>", 1'000'000)};
  const std::vector<DigestMail> mails =
      ComposeDigests({&week, &prior, &people, DigestConfig{}, {}, "box"});
  ASSERT_EQ(mails.size(), 2u);
  for (const DigestMail& m : mails) {
    EXPECT_EQ(m.html.find("<script>"), std::string::npos) << m.html;
    EXPECT_EQ(m.html.find("<b>x"), std::string::npos) << m.html;
    EXPECT_EQ(m.text.find('\x1b'), std::string::npos) << "an escape sequence in the text";
  }
}

// On generated weeks: each digest states the sums of its person's (or team's) rows as the
// report shows them, goes only to that person's own address or the team's leads, and never to
// anyone who opted out or to the fallback; ranks are those of the team's idle-held dollars.
TEST(Digest, FiguresAreTheRowsSumsAndMailGoesOnlyToItsOwnersOnGeneratedWeeks) {
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("CGOV_DIGEST_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("CGOV_DIGEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  for (int round = 0; round < 200; ++round) {
    std::string text = "domain = \"corp.example\"\nfallback = \"fallback@corp.example\"\n";
    const int persons = static_cast<int>(random() % 6), teams = 1 + static_cast<int>(random() % 3);
    std::map<std::string, int> person_of;  // user -> person
    std::map<int, std::string> team_of, address_of;
    std::set<int> opted_out;
    int next_user = 0;
    for (int p = 0; p < persons; ++p) {
      std::string users;
      for (int k = 0, n = 1 + static_cast<int>(random() % 2); k < n; ++k) {
        const std::string u = "u" + std::to_string(next_user++);
        person_of[u] = p;
        users += (k ? ", \"" : "\"") + u + "\"";
      }
      address_of[p] = "p" + std::to_string(p) + "@corp.example";
      text += "[[person]]\nusers = [" + users + "]\naddress = \"" + address_of[p] + "\"\n";
      if (random() % 3) {
        team_of[p] = "t" + std::to_string(random() % teams);
        text += "team = \"" + team_of[p] + "\"\n";
      }
      if (random() % 4 == 0) {
        opted_out.insert(p);
        text += "opt_out = \"no\"\n";
      }
    }
    for (int t = 0; t < teams; ++t) {
      text += "[[team]]\nname = \"t" + std::to_string(t) + "\"\nleads = [\"lead" +
              std::to_string(t) + "@corp.example\"]\n";
    }
    Result<RecipientsFile> file = ParseRecipientsFile(text, "gen.toml");
    ASSERT_TRUE(file.ok()) << file.status().message() << "\n" << text;
    const Recipients people(std::move(*file));
    HistorySummary week, prior;
    const int users = next_user + 3;  // three without a row: the domain rule
    for (int u = 0; u < users; ++u) {
      if (random() % 4 == 0) continue;
      const MicroUsd cost = static_cast<MicroUsd>(random() % 5'000'000'000);
      const MicroUsd idle = cost == 0 ? 0 : static_cast<MicroUsd>(random() % (cost + 1));
      week.who.push_back(DigestWho("u" + std::to_string(u), cost, idle,
                                   static_cast<int64_t>(random() % (100 * kDigestHourMs))));
      if (random() % 2) week.habits.push_back(DigestHabit("u" + std::to_string(u), "python", idle));
      if (random() % 2) prior.who.push_back(DigestWho("u" + std::to_string(u), cost / 2, 0, 0));
    }
    std::sort(week.habits.begin(), week.habits.end(), [](const HabitRow& a, const HabitRow& b) {
      return a.idle_held_cost > b.idle_held_cost;
    });
    DigestConfig config;
    config.min_usd = static_cast<double>(random() % 3);
    const std::vector<DigestMail> mails =
        ComposeDigests({&week, &prior, &people, config, {}, "box"});
    // Expected: each person's (or row-less user's) sums, to the cent.
    std::map<std::string, MicroUsd> cost, idle_cost;
    std::map<std::string, int64_t> idle_ms;
    std::map<std::string, std::string> team;
    for (const WhoRow& w : week.who) {
      auto p = person_of.find(w.key);
      const std::string holder = p != person_of.end() ? "p" + std::to_string(p->second) : w.key;
      cost[holder] += RoundToCent(w.cost);
      idle_cost[holder] += RoundToCent(w.idle_held_cost);
      idle_ms[holder] += w.idle_held_ms;
      if (p != person_of.end() && team_of.count(p->second)) team[holder] = team_of[p->second];
    }
    std::set<std::string> ids;
    for (const DigestMail& m : mails) {
      ASSERT_TRUE(ids.insert(m.id).second) << "two digests with one id " << m.id;
      ASSERT_EQ(m.to.size(), 1u);
      EXPECT_TRUE(IsMailAddress(m.to[0]));
      EXPECT_NE(m.to[0], "fallback@corp.example") << "a digest is its owner's";
      EXPECT_NE(m.text.find(FormatUsd(m.cost)), std::string::npos) << m.text;
      if (m.who.starts_with("team ")) {
        const std::string t = m.who.substr(5);
        EXPECT_EQ(m.to[0], "lead" + t.substr(1) + "@corp.example");
        MicroUsd sum = 0;
        for (const auto& [holder, c] : cost) sum += team.count(holder) && team[holder] == t ? c : 0;
        EXPECT_EQ(m.cost, sum) << "seed " << seed << " round " << round << " " << m.who;
        EXPECT_GE(static_cast<double>(m.cost), config.min_usd * kMicroPerUsd);
        continue;
      }
      auto p = person_of.find(m.who);
      const std::string holder = p != person_of.end() ? "p" + std::to_string(p->second) : m.who;
      if (p != person_of.end()) {
        EXPECT_EQ(opted_out.count(p->second), 0u) << m.who << " opted out";
        EXPECT_EQ(m.to[0], address_of[p->second]);
      } else {
        EXPECT_EQ(m.to[0], m.who + "@corp.example");
      }
      EXPECT_EQ(m.cost, cost[holder]) << "seed " << seed << " round " << round << " " << m.who;
      EXPECT_EQ(m.idle_held_cost, idle_cost[holder]);
      EXPECT_EQ(m.idle_held_ms, idle_ms[holder]);
      EXPECT_GE(static_cast<double>(m.cost), config.min_usd * kMicroPerUsd);
      EXPECT_GT(m.cost, 0);
      if (team.count(holder) == 0) {
        EXPECT_EQ(m.rank, 0);
        continue;
      }
      int members = 0, above = 0;
      for (const auto& [p2, t2] : team_of) {
        if (t2 != team[holder]) continue;
        ++members;
        above += idle_cost["p" + std::to_string(p2)] > idle_cost[holder];
      }
      EXPECT_EQ(m.members, members);
      EXPECT_EQ(m.rank, 1 + above);
    }
    // Everyone over min_usd with an address of their own got one.
    for (const auto& [holder, c] : cost) {
      if (c == 0 || static_cast<double>(c) < config.min_usd * kMicroPerUsd) continue;
      const bool row = holder[0] == 'p';
      if (row && opted_out.count(std::stoi(holder.substr(1)))) continue;
      const std::string address =  // a lambda cannot capture a structured binding (clang)
          row ? address_of[std::stoi(holder.substr(1))] : holder + "@corp.example";
      const bool got = std::any_of(mails.begin(), mails.end(),
                                   [&](const DigestMail& m) { return m.to[0] == address; });
      EXPECT_TRUE(got) << "seed " << seed << " round " << round << ": " << holder << " got none";
    }
  }
}

}  // namespace
}  // namespace cgov
