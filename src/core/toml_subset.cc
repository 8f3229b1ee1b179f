#include "core/toml_subset.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/from_chars.h"
#include "core/text.h"

namespace cgov {
namespace {

constexpr int kMaxListDepth = 16;

bool Digit(char c) { return c >= '0' && c <= '9'; }
bool BareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || Digit(c) || c == '_' || c == '-';
}
bool NumberChar(char c) { return BareKeyChar(c) || c == '+' || c == '.'; }

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    *out += static_cast<char>(code);
  } else if (code < 0x800) {
    *out += static_cast<char>(0xC0 | (code >> 6));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    *out += static_cast<char>(0xE0 | (code >> 12));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (code >> 18));
    *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Result<std::vector<TomlTable>> Parse() {
    std::vector<TomlTable> tables(1);
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = line_start_ = 3;  // a UTF-8 byte-order mark
    while (!AtEnd()) {
      SkipBlanks();
      if (Peek() == '\r' && Peek(1) == '\n') ++pos_;
      if (AtEnd()) break;
      if (Peek() == '\n') {
        Advance();
      } else if (Peek() == '#') {
        SkipComment();
      } else if (Peek() == '[') {
        CGOV_RETURN_IF_ERROR(Header(&tables));
      } else {
        CGOV_RETURN_IF_ERROR(Entry(&tables.back()));
      }
    }
    return tables;
  }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  void Advance() {
    if (text_[pos_] == '\n') line_start_ = pos_ + 1, ++line_;
    ++pos_;
  }
  int Column() const { return static_cast<int>(pos_ - line_start_ + 1); }
  Status Error(std::string_view message) const { return Error(line_, Column(), message); }
  Status Error(int line, int column, std::string_view message) const {
    return InvalidArgument(fmt::format("{}:{}:{}: {}", path_, line, column, message));
  }
  void SkipBlanks() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }
  void SkipComment() {
    if (Peek() == '#') {
      while (!AtEnd() && Peek() != '\n') ++pos_;
    }
  }
  // After a header or a value: blanks, an optional comment, then the line's end.
  Status EndOfLine() {
    SkipBlanks();
    SkipComment();
    if (Peek() == '\r' && Peek(1) == '\n') ++pos_;
    if (AtEnd()) return Status::Ok();
    if (Peek() != '\n') return Error("expected the line to end here (or a # comment)");
    Advance();
    return Status::Ok();
  }

  Result<std::string> Key() {
    const size_t start = pos_;
    while (BareKeyChar(Peek())) ++pos_;
    if (pos_ == start) {
      return Error(Peek() == '"' || Peek() == '\''
                       ? "expected a key: letters, digits, '_' and '-' (quoted keys are not part "
                         "of this format)"
                       : "expected a key: letters, digits, '_' and '-'");
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  Status Header(std::vector<TomlTable>* tables) {
    const int line = line_, column = Column();
    if (Peek(1) != '[') {
      return Error("expected [[name]]: plain [tables] are not part of this format");
    }
    pos_ += 2;
    SkipBlanks();
    CGOV_ASSIGN_OR_RETURN(std::string name, Key());
    SkipBlanks();
    if (Peek() != ']' || Peek(1) != ']') return Error("expected ]] to close the table's name");
    pos_ += 2;
    CGOV_RETURN_IF_ERROR(EndOfLine());
    tables->push_back({std::move(name), line, column, {}});
    return Status::Ok();
  }

  Status Entry(TomlTable* table) {
    const int line = line_, column = Column();
    CGOV_ASSIGN_OR_RETURN(std::string key, Key());
    SkipBlanks();
    if (Peek() == '.') return Error("dotted keys are not part of this format");
    if (Peek() != '=') return Error(fmt::format("expected '=' after the key {}", key));
    ++pos_;
    SkipBlanks();
    for (const TomlEntry& e : table->entries) {
      if (e.key == key) {
        return Error(line, column,
                     fmt::format("{}: given twice in the same table (line {})", key, e.line));
      }
    }
    CGOV_ASSIGN_OR_RETURN(TomlValue value, Value(0));
    CGOV_RETURN_IF_ERROR(EndOfLine());
    table->entries.push_back({std::move(key), line, column, std::move(value)});
    return Status::Ok();
  }

  Result<TomlValue> Value(int depth) {
    TomlValue v;
    v.line = line_, v.column = Column();
    const char c = Peek();
    if ((c == '"' || c == '\'') && Peek(1) == c && Peek(2) == c) {
      return Error("multi-line strings are not part of this format");
    }
    if (c == '"' || c == '\'') {
      CGOV_RETURN_IF_ERROR(String(c, &v));
    } else if (c == '[') {
      if (depth >= kMaxListDepth) return Error("lists nested too deep");
      CGOV_RETURN_IF_ERROR(List(depth + 1, &v));
    } else if (Digit(c) || c == '+' || c == '-' || c == 'i' || c == 'n') {
      CGOV_RETURN_IF_ERROR(Number(&v));
    } else if (AtEnd() || c == '\n' || c == '\r' || c == '#') {
      return Error("expected a value");
    } else {
      return Error(
          "expected a string, a number or a list (booleans, dates and inline tables are not part "
          "of this format)");
    }
    return v;
  }

  // A one-line string; a basic one ("...") with TOML's escapes.
  Status String(char quote, TomlValue* v) {
    ++pos_;
    v->kind = TomlValue::Kind::kString;
    for (;;) {
      if (AtEnd() || Peek() == '\n') return Error("the string is not closed on its line");
      const char c = Peek();
      if (c == quote) {
        ++pos_;
        return Status::Ok();
      }
      if (c == '\\' && quote == '"') {
        CGOV_RETURN_IF_ERROR(Escape(&v->text));
        continue;
      }
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F) {
        return Error("a control character in a string (write it as an escape)");
      }
      v->text += c;
      ++pos_;
    }
  }

  Status Escape(std::string* out) {
    const char e = Peek(1);
    static constexpr std::string_view kFrom = "btnfr\"\\", kTo = "\b\t\n\f\r\"\\";
    if (const size_t k = kFrom.find(e); e != '\0' && k != std::string_view::npos) {
      *out += kTo[k];
      pos_ += 2;
      return Status::Ok();
    }
    if (e != 'u' && e != 'U') return Error("an unknown escape in a string");
    const size_t digits = e == 'u' ? 4 : 8;
    uint32_t code = 0;
    const char* first = text_.data() + pos_ + 2;
    if (pos_ + 2 + digits > text_.size() ||
        std::from_chars(first, first + digits, code, 16).ptr != first + digits) {
      return Error(fmt::format("expected {} hexadecimal digits after \\{}", digits, e));
    }
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return Error("the escape is not a Unicode scalar value");
    }
    AppendUtf8(code, out);
    pos_ += 2 + digits;
    return Status::Ok();
  }

  Status Number(TomlValue* v) {
    const size_t start = pos_;
    while (NumberChar(Peek())) ++pos_;
    const std::string_view token = text_.substr(start, pos_ - start);
    std::string digits;  // underscores go between digits
    for (size_t i = 0; i < token.size(); ++i) {
      if (token[i] != '_') {
        digits += token[i];
      } else if (i == 0 || i + 1 == token.size() || !Digit(token[i - 1]) || !Digit(token[i + 1])) {
        return Error(v->line, v->column, "an underscore in a number goes between digits");
      }
    }
    std::string_view body = digits;
    if (body.starts_with('+')) body.remove_prefix(1);
    const char* end = body.data() + body.size();
    if (!body.empty() && body[0] != '+' && !(body[0] == '-' && token[0] == '+')) {
      if (auto [at, bad] = std::from_chars(body.data(), end, v->integer);
          at == end && bad == std::errc() && end != body.data()) {
        v->kind = TomlValue::Kind::kInteger;
        v->number = static_cast<double>(v->integer);
        return Status::Ok();
      }
      auto [ptr, ec] = FromChars(body.data(), end, v->number);
      if (ptr == end && ec == std::errc()) {
        v->kind = TomlValue::Kind::kFloat;
        return Status::Ok();
      }
    }
    return Error(v->line, v->column, "expected a number");
  }

  // Blanks, comments and line breaks between a list's items.
  void SkipInList() {
    for (;;) {
      SkipBlanks();
      SkipComment();
      if (Peek() == '\r' && Peek(1) == '\n') ++pos_;
      if (Peek() != '\n') return;
      Advance();
    }
  }

  Status List(int depth, TomlValue* v) {
    ++pos_;
    v->kind = TomlValue::Kind::kList;
    for (;;) {
      SkipInList();
      if (AtEnd()) return Error("the list is not closed");
      if (Peek() == ']') break;
      CGOV_ASSIGN_OR_RETURN(TomlValue item, Value(depth));
      v->items.push_back(std::move(item));
      SkipInList();
      if (Peek() == ']') break;
      if (Peek() != ',') return Error("expected ',' or ']' in the list");
      ++pos_;
    }
    ++pos_;
    return Status::Ok();
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0, line_start_ = 0;
  int line_ = 1;
};

}  // namespace

Result<std::vector<TomlTable>> ParseTomlSubset(std::string_view text, const std::string& path) {
  return Parser(text, path).Parse();
}

Status TomlErrorAt(const std::string& path, int line, int column, std::string_view key,
                   std::string_view message) {
  return InvalidArgument(fmt::format("{}:{}:{}: {}: {}", path, line, column, key, message));
}

Status TomlErrorAt(const std::string& path, const TomlValue& at, std::string_view key,
                   std::string_view message) {
  return TomlErrorAt(path, at.line, at.column, key, message);
}

Result<int64_t> TomlDurationMs(const std::string& path, const TomlValue& v, std::string_view key,
                               int64_t min_ms, int64_t max_ms) {
  const std::string range =
      fmt::format("from {} to {}", FormatDuration(std::chrono::milliseconds(min_ms)),
                  FormatDuration(std::chrono::milliseconds(max_ms)));
  if (v.kind != TomlValue::Kind::kString) {
    return TomlErrorAt(path, v, key,
                       fmt::format("expected a duration in quotes (\"90s\", \"2h\"), {}", range));
  }
  Result<std::chrono::milliseconds> d = ParseDuration(v.text);
  if (!d.ok()) return TomlErrorAt(path, v, key, d.status().message());
  if (d->count() < min_ms || d->count() > max_ms) {
    return TomlErrorAt(path, v, key, fmt::format("{} is out of range: {}", v.text, range));
  }
  return d->count();
}

Result<std::string> TomlName(const std::string& path, const TomlValue& v, std::string_view key) {
  const bool ok =
      v.kind == TomlValue::Kind::kString && !v.text.empty() && v.text.size() <= 64 &&
      std::all_of(v.text.begin(), v.text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!ok) {
    return TomlErrorAt(path, v, key, "expected a name of 1 to 64 letters, digits, '-', '_' or '.'");
  }
  return v.text;
}

Result<std::vector<std::string>> TomlStrings(const std::string& path, const TomlValue& v,
                                             std::string_view key) {
  if (v.kind != TomlValue::Kind::kList || v.items.empty()) {
    return TomlErrorAt(path, v, key, "expected a list of strings, [\"a\", \"b\"]");
  }
  std::vector<std::string> out;
  for (const TomlValue& item : v.items) {
    if (item.kind != TomlValue::Kind::kString || item.text.empty() || item.text.size() > 256 ||
        !IsSafeText(item.text)) {
      return TomlErrorAt(path, item, key,
                         "expected UTF-8 text of 1 to 256 bytes without control characters");
    }
    if (std::find(out.begin(), out.end(), item.text) != out.end()) {
      return TomlErrorAt(path, item, key, fmt::format("{:?} is listed twice", item.text));
    }
    out.push_back(item.text);
  }
  return out;
}

}  // namespace cgov
