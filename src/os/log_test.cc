#include "os/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cgov {
namespace {

constexpr int64_t kAt = 1'795'000'000'123'000'000;  // 2026-11-18T11:06:40.123Z

TEST(Log, EachFormatIsOneLineWithTheLevel) {
  LogOptions o;
  EXPECT_EQ(FormatLogLine(o, LogLevel::kWarning, "disk full\nretrying", kAt),
            "cgov daemon: warning: disk full; retrying\n");
  EXPECT_EQ(FormatLogLine(o, LogLevel::kWarning,
                          "no library could be loaded:\n  a: gone\n  b: gone", kAt),
            "cgov daemon: warning: no library could be loaded: a: gone; b: gone\n");
  EXPECT_EQ(FormatLogLine(o, LogLevel::kInfo, "recording 8 GPU(s)\n", kAt),
            "cgov daemon: info: recording 8 GPU(s)\n");
  o.format = LogFormat::kLogfmt;
  EXPECT_EQ(FormatLogLine(o, LogLevel::kError, "a \"quoted\" C:\\path\nand more", kAt),
            "ts=2026-11-18T11:06:40.123Z level=error msg=\"a \\\"quoted\\\" C:\\\\path\\nand "
            "more\"\n");
  o.format = LogFormat::kJson;
  const std::string line = FormatLogLine(o, LogLevel::kDebug, "tab\there \x01 \"q\"", kAt);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const nlohmann::json parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["level"], "debug");
  EXPECT_EQ(parsed["ts"], "2026-11-18T11:06:40.123Z");
  EXPECT_EQ(parsed["msg"], "tab\there \\x01 \"q\"");
}

// Issue 58, 4: a progress path with ESC, BEL and CR reached the text log raw.
TEST(Log, NoFormatCarriesAnEscapeSequenceOrABrokenCharacter) {
  const std::string hostile = "pid 7: /jobs/\x1b]0;pwned\x07\x1b[2J\rok\xc2\x9b\xff.log";
  for (LogFormat format : {LogFormat::kText, LogFormat::kLogfmt, LogFormat::kJson}) {
    LogOptions o;
    o.format = format;
    const std::string line = FormatLogLine(o, LogLevel::kWarning, hostile, kAt);
    for (char c : {'\x1b', '\x07', '\r', '\xff'}) {
      EXPECT_EQ(line.find(c), std::string::npos) << static_cast<int>(format) << ": " << line;
    }
    EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << "a C1 CSI: " << line;
    EXPECT_NE(line.find("x1b]0;pwned"), std::string::npos) << line;
  }
}

TEST(Log, TheJournalPrefixCarriesTheSyslogPriority) {
  LogOptions o;
  o.journald_prefix = true;
  EXPECT_EQ(FormatLogLine(o, LogLevel::kError, "x", kAt), "<3>cgov daemon: error: x\n");
  EXPECT_EQ(FormatLogLine(o, LogLevel::kWarning, "x", kAt), "<4>cgov daemon: warning: x\n");
  EXPECT_EQ(FormatLogLine(o, LogLevel::kInfo, "x", kAt), "<6>cgov daemon: info: x\n");
  EXPECT_EQ(FormatLogLine(o, LogLevel::kDebug, "x", kAt), "<7>cgov daemon: debug: x\n");
  o.format = LogFormat::kLogfmt;
  EXPECT_TRUE(FormatLogLine(o, LogLevel::kWarning, "x", kAt).starts_with("<4>ts="));
}

TEST(Log, LevelsAndFormatsParseAndNameWhatTheyAccept) {
  EXPECT_EQ(*ParseLogLevel("warn"), LogLevel::kWarning);
  EXPECT_EQ(*ParseLogLevel("warning"), LogLevel::kWarning);
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogFormat("logfmt"), LogFormat::kLogfmt);
  EXPECT_EQ(ParseLogLevel("loud").status().message(),
            "--log.level loud: expected debug, info, warn or error");
  EXPECT_FALSE(ParseLogFormat("xml").ok());
}

TEST(Log, ALevelBelowTheThresholdIsNotEnabled) {
  const LogOptions saved = CurrentLogOptions();
  LogOptions o;
  o.level = LogLevel::kWarning;
  SetLogOptions(o);
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  SetLogOptions(saved);
}

}  // namespace
}  // namespace cgov
