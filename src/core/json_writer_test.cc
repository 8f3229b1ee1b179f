#include "core/json_writer.h"

#include <cmath>
#include <cstring>
#include <ios>
#include <limits>
#include <vector>

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
  w.Key("a")
      .BeginArray()
      .Int(1)
      .Int(-2)
      .BeginObject()
      .EndObject()
      .BeginArray()
      .EndArray()
      .EndArray();
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
  // Edges of the format (sign of zero, subnormals, the largest double, the switch to exponent
  // notation) and 20,000 arbitrary bit patterns, each against nlohmann's dump of the same double.
  std::vector<double> values = {-0.0,
                                5e-324,
                                2.2250738585072014e-308,
                                1.7976931348623157e308,
                                1e17,
                                1e16,
                                9.999999999999999e16,
                                1e-5,
                                1e-4,
                                0.30000000000000004};
  uint64_t bits = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 20000; ++i) {
    bits ^= bits << 13;
    bits ^= bits >> 7;
    bits ^= bits << 17;
    double v = 0;
    std::memcpy(&v, &bits, sizeof(v));
    values.push_back(v);
  }
  for (double v : values) {
    std::string written;
    JsonWriter(&written).Double(v);
    EXPECT_EQ(written, std::isfinite(v) ? nlohmann::json(v).dump() : "null") << std::hexfloat << v;
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
