#include "core/json_writer.h"

#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cgov {
namespace {

// The writer's output must be exactly nlohmann's canonical dump of the same document.
void ExpectCanonical(const std::string& line) {
  EXPECT_EQ(nlohmann::json::parse(line).dump(), line);
}

TEST(JsonWriter, NestedContainersAndCommas) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("a").BeginArray().Int(1).Int(-2).BeginObject().EndObject().BeginArray().EndArray().EndArray();
  w.Key("b").Null();
  w.Key("c").BeginObject().Key("d").Bool(true).Key("e").Bool(false).EndObject();
  w.EndObject();
  EXPECT_EQ(out, R"({"a":[1,-2,{},[]],"b":null,"c":{"d":true,"e":false}})");
  ExpectCanonical(out);
}

TEST(JsonWriter, NumbersMatchNlohmann) {
  for (double v : {0.0, 2.0, -2.0, 0.1, 12.346, 95.5, 1e-3, 123456789.125, 1e21, 3.0e15,
                   85520809984.0, -0.001}) {
    std::string out;
    JsonWriter(&out).BeginArray().Double(v).EndArray();
    ExpectCanonical(out);
  }
  std::string out;
  JsonWriter(&out).BeginArray().UInt(18446744073709551615ull).Int(-9223372036854775807).EndArray();
  ExpectCanonical(out);
  std::string nan;
  JsonWriter(&nan).BeginArray().Double(std::numeric_limits<double>::quiet_NaN()).EndArray();
  EXPECT_EQ(nan, "[null]");
}

TEST(JsonWriter, StringsAreEscaped) {
  std::string out;
  JsonWriter(&out).BeginArray().String("a \"q\" \\ \n\t\x01 é").EndArray();
  EXPECT_EQ(out, "[\"a \\\"q\\\" \\\\ \\n\\t\\u0001 é\"]");
  ExpectCanonical(out);
}

TEST(JsonWriter, OptionalsAreNullWhenUnknown) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray()
      .Opt(std::optional<double>())
      .Opt(std::optional<double>(1.5))
      .Opt(std::optional<uint32_t>(7))
      .Opt(std::optional<int>(-3))
      .EndArray();
  EXPECT_EQ(out, "[null,1.5,7,-3]");
}

}  // namespace
}  // namespace cgov
