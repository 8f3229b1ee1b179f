// A JSON reader fed in pieces, as a download arrives: each piece is read where it lies and the
// document's events go to a handler, so a large answer is never held whole. It accepts exactly
// the documents nlohmann::json's strict parser accepts (RFC 8259, UTF-8 checked, a number that
// overflows a double refused, one optional byte-order mark) and reports the same events, which
// fuzz/json_stream_fuzz.cc checks against nlohmann on every input it finds. One difference: a
// NUL byte outside a string is refused, where nlohmann takes it for the end of the input.
#ifndef CGOV_CORE_JSON_STREAM_H_
#define CGOV_CORE_JSON_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cgov {

// The events of a document, in order. A string or key is only valid during its call. Returning
// false stops the reading (Feed and Finish then return false).
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual bool Null() = 0;
  virtual bool Boolean(bool value) = 0;
  virtual bool Number(double value) = 0;  // integers too, as nlohmann's doubles of them
  virtual bool String(std::string_view value) = 0;
  virtual bool Key(std::string_view key) = 0;
  virtual bool StartObject() = 0;
  virtual bool EndObject() = 0;
  virtual bool StartArray() = 0;
  virtual bool EndArray() = 0;
};

class JsonStream {
 public:
  // `max_token`: the longest string or number accepted, in bytes as sent (a longer one makes the
  // document not JSON here, so that a hostile one cannot grow memory to its own size).
  explicit JsonStream(JsonEvents* events, size_t max_token = SIZE_MAX)
      : events_(events), max_token_(max_token) {}

  // Reads the next piece. False once the document is not JSON (or the handler stopped); every
  // later call then returns false too.
  bool Feed(std::string_view piece);
  // The end of the input: true when it held exactly one whole document.
  bool Finish();

 private:
  enum Expect : uint8_t { kValue, kValueOrEnd, kKeyOrEnd, kKey, kColon, kCommaOrEnd, kDone };
  enum Partial : uint8_t { kNone, kString, kBare };

  bool Fail() {
    failed_ = true;
    return false;
  }
  bool Structural(char c);
  bool Token(std::string_view text, bool quoted, bool simple);
  bool Value(std::string_view text, bool quoted, bool simple);
  void AfterValue();

  JsonEvents* events_;
  size_t max_token_;
  std::vector<char> open_;  // '{' and '[' of the containers the reading is inside
  Expect expect_ = kValue;
  Partial partial_ = kNone;
  bool escaped_ = false;  // in a string cut by a piece's end: its last byte was a lone backslash
  bool simple_ = true;    // that string so far: no escape, control or non-ASCII byte
  bool failed_ = false;
  int bom_ = 0;        // bytes of a byte-order mark matched, 3 once past the start
  std::string carry_;  // a string or bare token cut by a piece's end, so far
  std::string text_;   // a string's text with its escapes undone
};

// A double from `text` as strtod reads it (NaN, Inf, +Inf included), without strtod's copy and
// locale where std::from_chars reads the whole text alike.
double ParseDouble(std::string_view text);

}  // namespace cgov

#endif  // CGOV_CORE_JSON_STREAM_H_
