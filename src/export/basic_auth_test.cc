#include "export/basic_auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cgov {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_TRUE(c.Check("alice", "test"));
  EXPECT_TRUE(c.Check("alice", "test")) << "remembered: the same answer without bcrypt";
  EXPECT_FALSE(c.Check("alice", "tes"));
  EXPECT_FALSE(c.Check("alice", "hunter2"));
  EXPECT_TRUE(c.Check("bob", "hunter2"));
  EXPECT_FALSE(c.Check("bob", "test"));
  EXPECT_FALSE(c.Check("carol", "test"));
  EXPECT_FALSE(c.Check("", ""));
}

TEST(WebConfig, ReadsUsersAndTlsFilesRelativeToTheConfig) {
  const std::string yaml = std::string(
      "# as Prometheus' exporters take it\n"
      "tls_server_config:\n"
      "  cert_file: tls/cert.pem\n"
      "  key_file: /etc/cgov/key.pem\n"
      "basic_auth_users:\n"
      "  prometheus: ") + kPrometheusDocsTest + "\n"
      "  'grafana': \"" + kJbcryptAbc + "\"\n";
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
