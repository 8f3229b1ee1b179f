#include "notify/mail_message.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base64.h"

namespace cgov {
namespace {

TEST(IsMailAddress, TakesPlainAddressesOnly) {
  for (const char* good :
       {"ops@example.com", "a.b+tag@sub.example.org", "x@y.z", "o'neil@a-b.io"}) {
    EXPECT_TRUE(IsMailAddress(good)) << good;
  }
  for (const char* bad :
       {"", "@example.com", "ops@", "ops", "a@b@c", "Ops <ops@example.com>", "ops@example.com\r\n",
        "ops@exa mple.com", "ops@example.com, evil@x.y", ".ops@example.com", "ops.@example.com",
        "o..ps@example.com", "ops@.example.com", "ops@example..com", "ops@-example.com",
        "ops@exam_ple.com", "\"quoted\"@example.com"}) {
    EXPECT_FALSE(IsMailAddress(bad)) << bad;
  }
  EXPECT_FALSE(IsMailAddress(std::string(65, 'a') + "@example.com"));
  EXPECT_FALSE(IsMailAddress("a@" + std::string(253, 'b')));
}

// The headers of `m` (up to the blank line), and the decoded part of type `type`.
std::string HeadersOf(const std::string& m) { return m.substr(0, m.find("\r\n\r\n") + 2); }
std::string PartOf(const std::string& m, const std::string& type) {
  const size_t at = m.find("Content-Type: " + type);
  const size_t body = m.find("\r\n\r\n", at) + 4;
  std::string encoded;
  for (char c : m.substr(body, m.find("\r\n--", body) - body)) {
    if (c != '\r' && c != '\n') encoded += c;
  }
  return Base64Decode(encoded).value_or("(not base64)");
}

TEST(ComposeMail, HeadersPartsAndLineEndsAreWhatSmtpCarries) {
  const std::string text = "GPU 3 idle for 2 h.\nStop the notebook.\n.\nA line alone with a dot.";
  const std::string html = "<p>" + std::string(3000, 'x') + "</p>";
  const std::string m = ComposeMail({"cgov@box.example",
                                     {"ops@example.com", "bob@example.com"},
                                     "Idle GPU",
                                     1'795'964'430'150,
                                     "vm/idle_held/GPU-1/42/1"},
                                    text, html);
  const std::string headers = HeadersOf(m);
  EXPECT_TRUE(headers.starts_with("Date: Sun, 29 Nov 2026 15:00:30 +0000\r\n")) << headers;
  EXPECT_NE(headers.find("\r\nFrom: cgov@box.example\r\n"), std::string::npos);
  EXPECT_NE(headers.find("\r\nTo: ops@example.com, bob@example.com\r\n"), std::string::npos);
  EXPECT_NE(headers.find("\r\nSubject: Idle GPU\r\n"), std::string::npos);
  EXPECT_NE(headers.find("\r\nMessage-ID: <vm.idle_held.GPU-1.42.1@cgov>\r\n"), std::string::npos)
      << headers;
  // Ids that differ only where their separators are stay different messages.
  const std::string other = ComposeMail({"cgov@box.example",
                                         {"ops@example.com"},
                                         "Idle GPU",
                                         1'795'964'430'150,
                                         "vm/idle_held/GPU-1/4/21"},
                                        text, html);
  EXPECT_NE(other.find("\r\nMessage-ID: <vm.idle_held.GPU-1.4.21@cgov>\r\n"), std::string::npos);
  EXPECT_NE(headers.find("\r\nMIME-Version: 1.0\r\n"), std::string::npos);
  EXPECT_EQ(PartOf(m, "text/plain"), text);
  EXPECT_EQ(PartOf(m, "text/html"), html);
  size_t start = 0;
  for (size_t at = m.find('\n'); at != std::string::npos; at = m.find('\n', start)) {
    ASSERT_EQ(m[at - 1], '\r') << "a bare LF at " << at;
    EXPECT_LE(at - start, 78u) << "line at " << start;
    start = at + 1;
  }
  EXPECT_TRUE(m.ends_with("--\r\n"));
}

TEST(ComposeMail, ASubjectCanNeitherAddAHeaderNorBreakOnUtf8) {
  const std::string m =
      ComposeMail({"a@b.c", {"x@y.z"}, "hi\r\nBcc: evil@x.y\r\n", 0, "n"}, "t", "h");
  EXPECT_EQ(HeadersOf(m).find("\r\nBcc:"), std::string::npos) << m;
  EXPECT_NE(m.find("\r\nSubject: hiBcc: evil@x.y\r\n"), std::string::npos) << m;
  // Not ASCII: encoded words of whole characters, each decoding to UTF-8 on its own.
  const std::string subject = "Ärger: 20 × A100 ohne Arbeit — " + std::string(40, 'x') + " ✓";
  const std::string u = ComposeMail({"a@b.c", {"x@y.z"}, subject, 0, "n"}, "t", "h");
  const size_t at = u.find("\r\nSubject: ") + 11;
  const std::string folded = u.substr(at, u.find("\r\nMessage-ID") - at);
  std::string decoded;
  size_t word = 0;
  while ((word = folded.find("=?UTF-8?B?", word)) != std::string::npos) {
    const size_t end = folded.find("?=", word + 10);
    const auto piece = Base64Decode(folded.substr(word + 10, end - word - 10));
    ASSERT_TRUE(piece.has_value());
    ASSERT_FALSE(piece->empty());
    EXPECT_NE(static_cast<unsigned char>((*piece)[0]) & 0xC0, 0x80)
        << "a word begins mid-character";
    decoded += *piece;
    word = end;
  }
  EXPECT_EQ(decoded, subject);
  // Bytes that are not UTF-8 (continuation bytes alone) and a subject past the header's room:
  // still encoded, cut, and done.
  const std::string odd =
      ComposeMail({"a@b.c", {"x@y.z"}, std::string(2000, '\x80'), 0, "n"}, "t", "h");
  const size_t odd_at = odd.find("\r\nSubject: =?UTF-8?B?");
  ASSERT_NE(odd_at, std::string::npos);
  // 900 bytes at most, in base64 words of 45: under 1,600 characters with their folds.
  EXPECT_LT(odd.find("\r\nMessage-ID") - odd_at, 1600u);
}

}  // namespace
}  // namespace cgov
