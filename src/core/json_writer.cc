#include "core/json_writer.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cgov {

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_->push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_->push_back('}');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_->push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_->push_back(']');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_->push_back('"');
  out_->append(key);
  out_->append("\":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  fmt::format_to(std::back_inserter(*out_), "{}", value);
  return *this;
}

JsonWriter& JsonWriter::UInt(uint64_t value) {
  BeforeValue();
  fmt::format_to(std::back_inserter(*out_), "{}", value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return Null();
  BeforeValue();
  // nlohmann's own number formatting (shortest round-trip digits; fixed notation up to 1e17
  // with ".0" on whole numbers), so that the two writers agree byte for byte: the function its
  // serializer calls for a double, into a buffer of its size. Building a json and dumping it
  // cost an allocation and a localeconv() call per number, ~5 % of `cgov run`'s 1 Hz tick.
  char digits[64];
  const char* end = nlohmann::detail::to_chars(digits, digits + sizeof(digits), value);
  out_->append(digits, static_cast<size_t>(end - digits));
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_->push_back('"');
  for (char c : value) {
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\b':
        out_->append("\\b");
        break;
      case '\f':
        out_->append("\\f");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(*out_), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out_->push_back(c);
        }
    }
  }
  out_->push_back('"');
  return *this;
}

double Round3(double value) { return std::round(value * 1000.0) / 1000.0; }
double Round6(double value) { return std::round(value * 1e6) / 1e6; }
double RoundTo(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace cgov
