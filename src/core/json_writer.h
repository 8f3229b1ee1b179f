// A streaming writer of compact JSON into a reused string, for records written every tick where
// building a tree of maps first would cost more than everything else the tick does.
//
// The caller emits object keys in sorted order (the output must equal nlohmann::json's dump() of
// the same document: json_writer_test checks a record against that). Doubles are written in the
// shortest form that reads back to the same value, formatted by nlohmann itself.
#ifndef CGOV_CORE_JSON_WRITER_H_
#define CGOV_CORE_JSON_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cgov {

// Not thread-safe. REQUIRES: calls nest correctly (Key before each object member's value).
// `j` as text; a string that is not valid UTF-8 (one that slipped past SafeText) is written
// with U+FFFD in place of its bad bytes instead of aborting the program. indent -1: one line.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// `value` to 3 (a record's readings), 6 (a report's fractions and hours) or `decimals`
// decimals, so that output is short and stable.
double Round3(double value);
double Round6(double value);
double RoundTo(double value, int decimals);

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) { out_->clear(); }

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);  // keys are plain ASCII names: not escaped

  JsonWriter& Null();
  JsonWriter& Bool(bool value);
  JsonWriter& Int(int64_t value);
  JsonWriter& UInt(uint64_t value);
  JsonWriter& Double(double value);  // non-finite values are written as null
  JsonWriter& String(std::string_view value);

  template <typename T>
  JsonWriter& Opt(const std::optional<T>& value) {
    if (!value) return Null();
    if constexpr (std::is_same_v<T, double>)
      return Double(*value);
    else if constexpr (std::is_same_v<T, bool>)
      return Bool(*value);
    else if constexpr (std::is_signed_v<T>)
      return Int(*value);
    else
      return UInt(*value);
  }

 private:
  void BeforeValue();

  std::string* out_;
  std::vector<bool> first_;  // per open container: no member written yet
  bool after_key_ = false;
};

}  // namespace cgov

#endif  // CGOV_CORE_JSON_WRITER_H_
