#include "core/json_stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fakes/json_stream_check.h"

namespace cgov {
namespace {

// Whole, cut at every byte in two, and byte by byte: the same answer as nlohmann's each way.
void ExpectAsNlohmann(const std::string& text) {
  SCOPED_TRACE(text);
  const JsonRead expected = ReadWithNlohmann(text);
  JsonRead got = ReadInPieces(text, {});
  EXPECT_EQ(got.ok, expected.ok);
  if (expected.ok) {
    EXPECT_EQ(got.log, expected.log);
  }
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    got = ReadInPieces(text, {cut});
    EXPECT_EQ(got.ok, expected.ok) << "cut at " << cut;
    if (expected.ok && got.ok) {
      EXPECT_EQ(got.log, expected.log) << "cut at " << cut;
    }
  }
  std::vector<size_t> every;
  for (size_t cut = 1; cut < text.size(); ++cut) every.push_back(cut);
  got = ReadInPieces(text, every);
  EXPECT_EQ(got.ok, expected.ok) << "byte by byte";
  if (expected.ok && got.ok) {
    EXPECT_EQ(got.log, expected.log) << "byte by byte";
  }
}

TEST(JsonStream, APrometheusAnswerReadsAsNlohmannReadsIt) {
  ExpectAsNlohmann(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"Hostname":)"
      R"("n1","gpu":"0","phase":"idle_held"},"values":[[1785542400,"12.5"],[1785542460.5,)"
      R"("NaN"]]},{"metric":{},"values":[[1785542400,"+Inf"]]}]},"warnings":["PromQL info: )"
      R"(x"],"isPartial":false,"stats":null})");
  ExpectAsNlohmann("  \r\n\t{ \"a\" : [ 1 , -2.5e3 , 0 , -0 , 1E+2, 0.000001 ] }\n ");
  ExpectAsNlohmann("123");
  ExpectAsNlohmann("\"text\"");
  ExpectAsNlohmann("[true,false,null,[],{},[[]],{\"\":{}}]");
  ExpectAsNlohmann("18446744073709551616");  // past uint64: a double
  ExpectAsNlohmann("-9223372036854775809");
  ExpectAsNlohmann("1e-400");                   // underflows to 0, as strtod reads it
  ExpectAsNlohmann("\xEF\xBB\xBF{\"bom\":1}");  // a byte-order mark is skipped
}

TEST(JsonStream, EscapesAndUtf8AreUndoneAsNlohmannDoes) {
  ExpectAsNlohmann(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "\u0000"])");
  ExpectAsNlohmann("[\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \x7F\"]");
  ExpectAsNlohmann(R"({"k\"ey":"v\\"})");
  // The text itself, not only that both agree.
  JsonRead got = ReadInPieces(R"(["\u00e9\ud83d\ude00\n"])", {});
  EXPECT_TRUE(got.ok);
  EXPECT_EQ(got.log, "[ s:\xC3\xA9\xF0\x9F\x98\x80\n ] ");
}

TEST(JsonStream, WhatIsNotJsonIsRefusedAsNlohmannRefusesIt) {
  for (const char* text : {
           "",
           " ",
           "{",
           "[1,]",
           "{\"a\":1,}",
           "[1 2]",
           "{\"a\" 1}",
           "{1:2}",
           "[01]",
           "[1.]",
           "[.5]",
           "[-]",
           "[+1]",
           "[1e]",
           "[1e+]",
           "[0x10]",
           "[NaN]",
           "[Infinity]",
           "[tru]",
           "[truex]",
           "[nul]",
           "{}}",
           "[]]",
           "{} {}",
           "[\"a]",
           "[\"\\x\"]",
           "[\"\\u12\"]",
           "[\"\\uZZZZ\"]",
           "[\"\\ud800\"]",
           "[\"\\ud800\\u0041\"]",
           "[\"\\udc00\"]",
           "[\"tab\there\"]",
           "[\"\x01\"]",
           "[1e400]",
           "[-1e400]",
           "['a']",
           "[1]/**/",
           "\xEF\xBB",
           "\xEF\xBB{}",
           "\xEF{}",
           "\xEF\xBB\xBF",
           "{\"a\":1]",
           "[1}",
           "[\"\xC0\xAF\"]",          // an overlong '/'
           "[\"\xED\xA0\x80\"]",      // a surrogate encoded as UTF-8
           "[\"\xF4\x90\x80\x80\"]",  // past U+10FFFF
           "[\"\xE2\x82\"]",          // cut short
           "[\"\x80\"]",
           "[\"\xFF\"]",
           "\x80",
       }) {
    ExpectAsNlohmann(text);
    EXPECT_FALSE(ReadWithNlohmann(text).ok) << text;  // the reference agrees they are not JSON
  }
  ExpectAsNlohmann(std::string("[\"a\0b\"]", 7));  // a NUL must be escaped
  ExpectAsNlohmann(std::string("[1,\0]", 5));
}

TEST(JsonStream, ANulByteOutsideAStringIsRefusedWhereNlohmannEndsTheInput) {
  const std::string text("{\"a\":1}\0garbage", 15);
  EXPECT_TRUE(ReadWithNlohmann(text).ok);
  EXPECT_FALSE(ReadInPieces(text, {}).ok);
  EXPECT_FALSE(ReadInPieces(std::string("-4\r\0", 4), {}).ok);
}

TEST(JsonStream, AStringOrNumberPastTheLongestAcceptedIsRefusedWhereverItIsCut) {
  for (const std::string& text :
       {std::string("[\"abcdefghi\"]"), std::string("[123456789]"), std::string("123456789")}) {
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      JsonRecorder events;
      JsonStream json(&events, 8);
      const bool fed = json.Feed(std::string_view(text).substr(0, cut)) &&
                       json.Feed(std::string_view(text).substr(cut));
      EXPECT_FALSE(fed && json.Finish()) << text << " cut at " << cut;
      JsonStream roomy(&events, 9);
      EXPECT_TRUE(roomy.Feed(std::string_view(text).substr(0, cut)) &&
                  roomy.Feed(std::string_view(text).substr(cut)) && roomy.Finish())
          << text << " cut at " << cut;
    }
  }
}

TEST(JsonStream, AHandlerThatStopsEndsTheReading) {
  JsonRecorder events;
  events.stop_after = 2;
  JsonStream json(&events);
  EXPECT_FALSE(json.Feed("[1,2,3]"));
  EXPECT_EQ(events.log, "[ n:1 ");
  EXPECT_FALSE(json.Feed("]"));  // and stays stopped
  EXPECT_FALSE(json.Finish());
}

TEST(JsonStream, ATokenCutByAPieceEndIsCarriedWhole) {
  JsonRecorder events;
  JsonStream json(&events);
  EXPECT_TRUE(json.Feed("{\"ke"));
  EXPECT_TRUE(json.Feed("y\\"));  // a backslash at a piece's end escapes the next piece's quote
  EXPECT_TRUE(json.Feed("\"\":12"));
  EXPECT_TRUE(json.Feed("34"));
  EXPECT_EQ(events.log, "{ k:key\" ");  // the number may go on
  EXPECT_TRUE(json.Feed(".5}"));
  EXPECT_TRUE(json.Finish());
  EXPECT_EQ(events.log, "{ k:key\" n:1234.5 } ");
}

TEST(ParseDouble, ReadsAsStrtodDoes) {
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("-2e3"), -2000);
  EXPECT_EQ(ParseDouble("1785542400.123"), 1785542400.123);
  EXPECT_TRUE(std::isnan(ParseDouble("NaN")));
  EXPECT_EQ(ParseDouble("+Inf"), HUGE_VAL);
  EXPECT_EQ(ParseDouble("-Inf"), -HUGE_VAL);
  EXPECT_EQ(ParseDouble("0x10"), 16);  // strtod's reading, not from_chars' "0"
  EXPECT_EQ(ParseDouble(" 7"), 7);
  EXPECT_EQ(ParseDouble("+3.25"), 3.25);
  EXPECT_EQ(ParseDouble("12abc"), 12);
  EXPECT_EQ(ParseDouble(""), 0);
}

}  // namespace
}  // namespace cgov
