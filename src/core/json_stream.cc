#include "core/json_stream.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/from_chars.h"
#include "core/text.h"

namespace cgov {
namespace {

// The bytes that end a bare token (a number, true, false, null) outside a string.
constexpr std::array<bool, 256> kEndsBare = [] {
  std::array<bool, 256> ends{};
  for (const unsigned char c : std::string_view(" \t\n\r,:[]{}\"")) ends[c] = true;
  return ends;
}();

// Where the bare token from `at` ends: its first delimiter, or `size` when the piece ends first.
size_t BareEnd(const char* bytes, size_t at, size_t size) {
  while (at < size && !kEndsBare[static_cast<unsigned char>(bytes[at])]) ++at;
  return at;
}

// Scans a string's bytes from `at` to its closing quote, or to `size` when the piece ends first.
// `escaped` carries a backslash left at a piece's end; `simple` turns false at any escape, control
// byte or non-ASCII byte (the string then needs DecodeString).
size_t ScanString(const char* bytes, size_t at, size_t size, bool* escaped, bool* simple) {
  for (; at < size; ++at) {
    const auto c = static_cast<unsigned char>(bytes[at]);
    if (*escaped) {
      *escaped = false;
    } else if (c == '"') {
      return at;
    } else if (c == '\\') {
      *escaped = true;
      *simple = false;
    } else if (c < 0x20 || c >= 0x80) {
      *simple = false;
    }
  }
  return size;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the four hex digits after "\u" at `raw[at]`, or -1.
long CodeUnit(std::string_view raw, size_t at) {
  if (at + 6 > raw.size() || raw[at] != '\\' || raw[at + 1] != 'u') return -1;
  long unit = 0;
  for (size_t k = at + 2; k < at + 6; ++k) {
    const int digit = HexDigit(raw[k]);
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

void PutUtf8(long code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// A string's text with its escapes undone, into `out`; false when it is not valid JSON text. A
// backslash in `raw` is never its last byte (ScanString ends a string only at an unescaped quote).
bool DecodeString(std::string_view raw, std::string* out) {
  out->clear();
  for (size_t at = 0; at < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[at]);
    if (c >= 0x80) {
      const size_t length = Utf8Length(raw, at);  // as nlohmann checks it: RFC 3629
      if (length == 0) return false;
      out->append(raw.substr(at, length));
      at += length;
      continue;
    }
    if (c < 0x20) return false;
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      ++at;
      continue;
    }
    const char escape = raw[at + 1];
    switch (escape) {
      case '"':
      case '\\':
      case '/':
        out->push_back(escape);
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        long code = CodeUnit(raw, at);
        if (code < 0 || (code >= 0xDC00 && code <= 0xDFFF)) return false;
        if (code >= 0xD800 && code <= 0xDBFF) {  // the high half of a pair: the low must follow
          const long low = CodeUnit(raw, at + 6);
          if (low < 0xDC00 || low > 0xDFFF) return false;
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          at += 6;
        }
        PutUtf8(code, out);
        at += 6;
        continue;
      }
      default:
        return false;
    }
    at += 2;
  }
  return true;
}

// RFC 8259's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; `integer` says it has
// neither fraction nor exponent.
bool IsJsonNumber(std::string_view text, bool* integer) {
  size_t at = 0;
  const auto digits = [&] {
    const size_t from = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return at > from;
  };
  if (at < text.size() && text[at] == '-') ++at;
  if (at < text.size() && text[at] == '0') {
    ++at;
  } else if (!digits()) {
    return false;
  }
  *integer = true;
  if (at < text.size() && text[at] == '.') {
    *integer = false;
    ++at;
    if (!digits()) return false;
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    *integer = false;
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    if (!digits()) return false;
  }
  return at == text.size();
}

}  // namespace

double ParseDouble(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = FromChars(text.data(), end, value);
  if (error == std::errc() && stop == end) return value;
  const std::string copy(text);  // strtod reads to a NUL
  return std::strtod(copy.c_str(), nullptr);
}

bool JsonStream::Feed(std::string_view piece) {
  if (failed_) return false;
  const char* bytes = piece.data();
  const size_t size = piece.size();
  size_t at = 0;
  while (bom_ < 3 && at < size) {  // a UTF-8 byte-order mark, as nlohmann skips it
    static constexpr unsigned char kBom[3] = {0xEF, 0xBB, 0xBF};
    const auto c = static_cast<unsigned char>(bytes[at]);
    if (bom_ == 0 && c != kBom[0]) {
      bom_ = 3;
      break;
    }
    if (c != kBom[bom_]) return Fail();
    ++bom_;
    ++at;
  }
  if (partial_ == kString) {  // a string the last piece cut: on to its closing quote
    const size_t end = ScanString(bytes, at, size, &escaped_, &simple_);
    if (carry_.size() + (end - at) > max_token_) return Fail();
    carry_.append(bytes + at, end - at);
    if (end == size) return true;
    partial_ = kNone;
    if (!Token(carry_, true, simple_)) return false;
    at = end + 1;
  } else if (partial_ == kBare) {
    const size_t end = BareEnd(bytes, at, size);
    if (carry_.size() + (end - at) > max_token_) return Fail();
    carry_.append(bytes + at, end - at);
    if (end == size) return true;
    partial_ = kNone;
    if (!Token(carry_, false, true)) return false;
    at = end;
  }
  while (at < size) {
    const char c = bytes[at];
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        ++at;
        break;
      case '{':
      case '}':
      case '[':
      case ']':
      case ':':
      case ',':
        if (!Structural(c)) return false;
        ++at;
        break;
      case '"': {
        bool escaped = false, simple = true;
        const size_t end = ScanString(bytes, at + 1, size, &escaped, &simple);
        if (end == size) {
          partial_ = kString;
          carry_.assign(bytes + at + 1, size - at - 1);
          escaped_ = escaped;
          simple_ = simple;
          return true;
        }
        if (!Token(std::string_view(bytes + at + 1, end - at - 1), true, simple)) return false;
        at = end + 1;
        break;
      }
      default: {
        const size_t end = BareEnd(bytes, at, size);
        if (end == size) {
          partial_ = kBare;
          carry_.assign(bytes + at, size - at);
          return true;
        }
        if (!Token(std::string_view(bytes + at, end - at), false, true)) return false;
        at = end;
      }
    }
  }
  return true;
}

bool JsonStream::Finish() {
  if (failed_) return false;
  if (partial_ == kString || (bom_ > 0 && bom_ < 3)) return Fail();
  if (partial_ == kBare) {  // a document that is one number, say, ends with the input
    partial_ = kNone;
    if (!Token(carry_, false, true)) return false;
  }
  return expect_ == kDone || Fail();
}

bool JsonStream::Structural(char c) {
  const bool in_object = !open_.empty() && open_.back() == '{';
  bool go_on = true;
  switch (c) {
    case '{':
    case '[':
      if (expect_ != kValue && expect_ != kValueOrEnd) return Fail();
      open_.push_back(c);
      expect_ = c == '{' ? kKeyOrEnd : kValueOrEnd;
      go_on = c == '{' ? events_->StartObject() : events_->StartArray();
      break;
    case '}':
      if (expect_ != kKeyOrEnd && !(expect_ == kCommaOrEnd && in_object)) return Fail();
      open_.pop_back();
      go_on = events_->EndObject();
      AfterValue();
      break;
    case ']':
      if (expect_ != kValueOrEnd && !(expect_ == kCommaOrEnd && !in_object)) return Fail();
      open_.pop_back();
      go_on = events_->EndArray();
      AfterValue();
      break;
    case ':':
      if (expect_ != kColon) return Fail();
      expect_ = kValue;
      break;
    default:  // ','
      if (expect_ != kCommaOrEnd) return Fail();
      expect_ = in_object ? kKey : kValue;
  }
  return go_on || Fail();
}

bool JsonStream::Token(std::string_view text, bool quoted, bool simple) {
  if (text.size() > max_token_) return Fail();
  bool go_on = false;
  if (quoted && (expect_ == kKeyOrEnd || expect_ == kKey)) {
    if (!simple && !DecodeString(text, &text_)) return Fail();
    go_on = events_->Key(simple ? text : std::string_view(text_));
    expect_ = kColon;
  } else if (expect_ == kValue || expect_ == kValueOrEnd) {
    go_on = Value(text, quoted, simple);
    AfterValue();
  }
  carry_.clear();
  return go_on || Fail();
}

bool JsonStream::Value(std::string_view text, bool quoted, bool simple) {
  if (quoted) {
    if (!simple && !DecodeString(text, &text_)) return false;
    return events_->String(simple ? text : std::string_view(text_));
  }
  if (text == "true" || text == "false") return events_->Boolean(text == "true");
  if (text == "null") return events_->Null();
  bool integer = false;
  if (!IsJsonNumber(text, &integer)) return false;
  double value = ParseDouble(text);
  if (integer && value == 0) value = 0;  // "-0": nlohmann reads an integer, so no sign
  return std::isfinite(value) && events_->Number(value);  // nlohmann refuses an overflow too
}

void JsonStream::AfterValue() { expect_ = open_.empty() ? kDone : kCommaOrEnd; }

}  // namespace cgov
