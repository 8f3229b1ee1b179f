// For tests and fuzz/json_stream_fuzz.cc only: JsonStream's events written as one line, and the
// same line from nlohmann::json's strict SAX parser, the reference JsonStream must agree with.
#ifndef CGOV_TESTS_FAKES_JSON_STREAM_CHECK_H_
#define CGOV_TESTS_FAKES_JSON_STREAM_CHECK_H_

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_stream.h"

namespace cgov {

class JsonRecorder : public JsonEvents {
 public:
  std::string log;
  int stop_after = -1;  // events to take before refusing the next; -1 for all

  bool Null() override { return Put("null"); }
  bool Boolean(bool v) override { return Put(v ? "true" : "false"); }
  bool Number(double v) override { return Put(fmt::format("n:{}", v)); }
  bool String(std::string_view v) override { return Put(fmt::format("s:{}", v)); }
  bool Key(std::string_view k) override { return Put(fmt::format("k:{}", k)); }
  bool StartObject() override { return Put("{"); }
  bool EndObject() override { return Put("}"); }
  bool StartArray() override { return Put("["); }
  bool EndArray() override { return Put("]"); }

 private:
  bool Put(const std::string& event) {
    if (stop_after == 0) return false;
    if (stop_after > 0) --stop_after;
    log += event + " ";
    return true;
  }
};

struct JsonRead {
  bool ok = false;  // one whole document
  std::string log;
};

// `text` fed to a JsonStream in the pieces that `cuts` (ascending offsets) make of it.
inline JsonRead ReadInPieces(std::string_view text, const std::vector<size_t>& cuts) {
  JsonRecorder events;
  JsonStream json(&events);
  size_t from = 0;
  bool ok = true;
  for (size_t cut : cuts) {
    ok = json.Feed(text.substr(from, cut - from)) && ok;
    from = cut;
  }
  ok = json.Feed(text.substr(from)) && ok;
  ok = json.Finish() && ok;
  return {ok, events.log};
}

inline JsonRead ReadWithNlohmann(std::string_view text) {
  class Reader : public nlohmann::json_sax<nlohmann::json> {
   public:
    JsonRecorder events;
    bool null() override { return events.Null(); }
    bool boolean(bool v) override { return events.Boolean(v); }
    bool number_integer(number_integer_t v) override {
      return events.Number(static_cast<double>(v));
    }
    bool number_unsigned(number_unsigned_t v) override {
      return events.Number(static_cast<double>(v));
    }
    bool number_float(number_float_t v, const string_t&) override { return events.Number(v); }
    bool string(string_t& v) override { return events.String(v); }
    bool binary(binary_t&) override { return false; }
    bool key(string_t& k) override { return events.Key(k); }
    bool start_object(std::size_t) override { return events.StartObject(); }
    bool end_object() override { return events.EndObject(); }
    bool start_array(std::size_t) override { return events.StartArray(); }
    bool end_array() override { return events.EndArray(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
      return false;
    }
  } reader;
  const bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &reader);
  return {ok, reader.events.log};
}

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_JSON_STREAM_CHECK_H_
