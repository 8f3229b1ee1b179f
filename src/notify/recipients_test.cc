#include "notify/recipients.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "notify/mail_message.h"

namespace cgov {
namespace {

constexpr char kPeople[] = R"(# who is who
domain = "corp.example"
fallback = "gpu-admins@corp.example"
[[person]]
users = ["bob", "bsmith"]   # his login and his Kubernetes user label
address = "robert@corp.example"
team = "vision"
[[person]]
users = ["carol"]
address = "c.jones@corp.example"
[[team]]
name = "vision"
leads = ["vera@corp.example", "vic@corp.example"]
)";

std::vector<std::string> AddressesOf(const std::vector<Recipient>& rs) {
  std::vector<std::string> out;
  for (const Recipient& r : rs) out.push_back(r.address);
  return out;
}

TEST(Recipients, APersonsRowThenTheDomainThenTheFallback) {
  auto file = ParseRecipientsFile(kPeople, "people.toml");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const Recipients people(std::move(*file));
  using V = std::vector<std::string>;
  EXPECT_EQ(AddressesOf(people.Owner("bob")), V{"robert@corp.example"});
  EXPECT_EQ(AddressesOf(people.Owner("bsmith")), V{"robert@corp.example"}) << "any of his names";
  EXPECT_EQ(people.Owner("bob").front().via, Recipient::Via::kPerson);
  EXPECT_EQ(AddressesOf(people.Owner("alice")), V{"alice@corp.example"});
  EXPECT_EQ(people.Owner("alice").front().via, Recipient::Via::kDomain);
  EXPECT_EQ(AddressesOf(people.Leads("bsmith")), (V{"vera@corp.example", "vic@corp.example"}));
  // What no rule answers: root (domain_except's default), a uid without a name, no user at
  // all, a name that is no local part; a person without a team has no lead.
  for (const char* unknown : {"root", "1001", "", "bad name", "x\r\nBcc: evil@x.y"}) {
    const std::vector<Recipient> r = people.Owner(unknown);
    ASSERT_EQ(r.size(), 1u) << unknown;
    EXPECT_EQ(r[0].address, "gpu-admins@corp.example") << unknown;
    EXPECT_EQ(r[0].via, Recipient::Via::kFallback);
  }
  EXPECT_EQ(AddressesOf(people.Leads("carol")), V{"gpu-admins@corp.example"});
  EXPECT_EQ(AddressesOf(people.Leads("alice")), V{"gpu-admins@corp.example"});
}

TEST(Recipients, TheShippedExampleParses) {
  const std::string path =
      std::string(CGOV_FIXTURES_DIR) + "/../../deploy/notify/recipients.example.toml";
  auto file = ReadRecipientsFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->people.size(), 2u);
  EXPECT_EQ(file->leads.at("platform").size(), 2u);
  const Recipients people(std::move(*file));
  EXPECT_EQ(AddressesOf(people.Owner("gdm")), std::vector<std::string>{"gpu-admins@example.com"});
}

TEST(Recipients, APersonWhoOptedOutGetsNothingAndTheirLeadsStillDo) {
  auto file = ParseRecipientsFile(
      "domain = \"x.y\"\nfallback = \"ops@x.y\"\n[[person]]\n"
      "users = [\"bob\"]\naddress = \"bob@x.y\"\nteam = \"t\"\n"
      "opt_out = \"on leave\"\n[[team]]\nname = \"t\"\n"
      "leads = [\"lead@x.y\"]\n",
      "p");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->people[0].opt_out, "on leave");
  const Recipients people(std::move(*file));
  EXPECT_TRUE(people.Owner("bob").empty()) << "neither their address, the domain nor the fallback";
  EXPECT_EQ(AddressesOf(people.Leads("bob")), std::vector<std::string>{"lead@x.y"});
  auto bad = ParseRecipientsFile(
      "[[person]]\nusers = [\"bob\"]\naddress = \"bob@x.y\"\n"
      "opt_out = \"\"\n",
      "p");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("p:4:11: opt_out: expected the reason"), std::string::npos)
      << bad.status().message();
}

TEST(Recipients, WithoutDomainOrFallbackTheUnknownGetNothing) {
  auto file = ParseRecipientsFile("[[person]]\nusers = [\"bob\"]\naddress = \"bob@x.y\"\n", "p");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const Recipients people(std::move(*file));
  EXPECT_EQ(people.Owner("bob").size(), 1u);
  EXPECT_TRUE(people.Owner("alice").empty());
  EXPECT_TRUE(people.Leads("bob").empty());
  auto except = ParseRecipientsFile("domain = \"x.y\"\ndomain_except = []\n", "p");
  ASSERT_TRUE(except.ok()) << except.status().message();
  EXPECT_EQ(AddressesOf(Recipients(std::move(*except)).Owner("root")),
            std::vector<std::string>{"root@x.y"})
      << "an empty domain_except excepts no one";
}

TEST(Recipients, ErrorsNameTheLineAndTheKey) {
  struct Bad {
    const char* text;
    const char* want;
  };
  for (const Bad& bad : {
           Bad{"domain = \"a b\"\n", "p:1:10: domain: expected a mail domain"},
           Bad{"domain = \"@x.y\"\n", "p:1:10: domain: expected a mail domain"},
           Bad{"fallback = \"ops\"\n", "p:1:12: fallback: expected a plain address"},
           Bad{"owner = \"x@y.z\"\n", "p:1:1: owner: unknown key"},
           Bad{"[[person]]\naddress = \"a@b.c\"\n", "p:1:1: users: a [[person]] needs"},
           Bad{"[[person]]\nusers = [\"a\"]\n", "p:1:1: address: a [[person]] needs"},
           Bad{"[[person]]\nusers = [\"a\"]\naddress = \"a@b.c\"\nphone = \"1\"\n",
               "p:4:1: phone: unknown key"},
           Bad{"[[person]]\nusers = [\"a\", \"a\"]\naddress = \"a@b.c\"\n",
               "p:2:15: users: \"a\" is listed twice"},
           Bad{"[[team]]\nname = \"t\"\n", "p:1:1: leads: a [[team]] needs"},
           Bad{"[[team]]\nname = \"t\"\nleads = [\"x@y.z\", \"Boss <b@y.z>\"]\n",
               "p:3:19: leads: expected a plain address"},
           Bad{"[[team]]\nname = \"t\"\nleads = [\"x@y.z\"]\n[[team]]\nname = \"t\"\n"
               "leads = [\"x@y.z\"]\n",
               "p:4:1: name: a second team \"t\""},
           Bad{"[[group]]\n", "p:1:1: group: unknown table"},
       }) {
    auto f = ParseRecipientsFile(bad.text, "p");
    ASSERT_FALSE(f.ok()) << bad.text;
    EXPECT_NE(f.status().message().find(bad.want), std::string::npos)
        << bad.text << " -> " << f.status().message();
  }
}

// Whatever the file and whatever name a notice carries (a pod's label is anyone's to write),
// what comes back is a plain address, one the file gives or the domain rule makes for a name
// that is a valid local part, and the same answer twice.
TEST(Recipients, EveryAnswerIsAPlainAddressOnGeneratedFilesAndNames) {
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("CGOV_RECIPIENTS_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("CGOV_RECIPIENTS_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  static constexpr char kAlphabet[] = "abcxyz019._-+@ \r\n<>,\"'\\;:\x01\xc3\xa9";
  auto name = [&] {
    std::string s;
    const size_t length = random() % 10;
    for (size_t k = 0; k < length; ++k) s += kAlphabet[random() % (sizeof kAlphabet - 1)];
    return s;
  };
  for (int round = 0; round < 300; ++round) {
    std::string text;
    if (random() % 2) text += "domain = \"corp.example\"\n";
    if (random() % 2) text += "fallback = \"ops@corp.example\"\n";
    std::vector<std::string> users;
    for (int p = 0, n = random() % 5; p < n; ++p) {
      std::string u = "u" + std::to_string(p), quoted;
      for (char c : name()) {
        if (c >= 0x20 && c < 0x7f) u += c;  // TOML refuses control characters, UTF-8 halves
      }
      for (char c : u) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
      users.push_back(u);
      text += "[[person]]\nusers = [\"" + quoted + "\"]\naddress = \"p" + std::to_string(p) +
              "@corp.example\"\n";
      if (random() % 2) text += "team = \"t\"\n";
    }
    text += "[[team]]\nname = \"t\"\nleads = [\"lead@corp.example\"]\n";
    auto file = ParseRecipientsFile(text, "gen");
    ASSERT_TRUE(file.ok()) << "seed " << seed << ": " << file.status().message() << "\n" << text;
    const Recipients people(std::move(*file));
    std::vector<std::string> asked = users;
    for (int k = 0; k < 20; ++k) asked.push_back(name());
    for (const std::string& u : asked) {
      for (const auto& found : {people.Owner(u), people.Leads(u)}) {
        EXPECT_LE(found.size(), 1u) << u << ": one person, one lead, or the fallback";
        for (const Recipient& r : found) {
          EXPECT_TRUE(IsMailAddress(r.address)) << "seed " << seed << ": " << r.address;
          if (r.via == Recipient::Via::kDomain) {
            EXPECT_EQ(r.address, u + "@corp.example");
          }
        }
      }
      EXPECT_EQ(AddressesOf(people.Owner(u)), AddressesOf(people.Owner(u))) << u;
    }
  }
}

}  // namespace
}  // namespace cgov
