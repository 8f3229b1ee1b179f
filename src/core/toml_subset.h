// The part of TOML 1.0 that cgov's configuration files use, parsed by cgov itself: comments,
// `key = value` lines with bare keys, `[[name]]` array-of-tables headers, one-line basic
// ("...", with TOML's escapes) and literal ('...') strings, integers, floats (inf and nan
// included) and lists of those, over several lines with comments and a trailing comma. Anything
// else — plain `[tables]`, quoted or dotted keys, multi-line strings, dates, inline tables,
// booleans — is refused with its line and column. Every error is "path:line:column: message".
// A file is read whole; the input may be any bytes (a string keeps its bytes as they are:
// checking them is the caller's). Pure.
//
// Why not a TOML library: Debian 12's toml++ 3.3.0 has input-reachable assertions and
// undefined behaviour (a header "[&", most non-ASCII characters where it looks for
// whitespace; marzer/tomlplusplus#294), found by fuzzing a budgets file within seconds.
#ifndef CGOV_CORE_TOML_SUBSET_H_
#define CGOV_CORE_TOML_SUBSET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct TomlValue {
  enum class Kind { kString, kInteger, kFloat, kList };
  Kind kind = Kind::kString;
  std::string text;              // kString
  int64_t integer = 0;           // kInteger
  double number = 0;             // kFloat, and kInteger's value as a double
  std::vector<TomlValue> items;  // kList
  int line = 0, column = 0;      // where it starts (1-based; the column counts bytes)
};

struct TomlEntry {
  std::string key;
  int line = 0, column = 0;  // the key's place
  TomlValue value;
};

struct TomlTable {
  std::string name;                // "" for the keys before the first header
  int line = 1, column = 1;        // its header's place
  std::vector<TomlEntry> entries;  // in the file's order; no key twice
};

// The top-level table first, then one table per `[[name]]` header, in order.
Result<std::vector<TomlTable>> ParseTomlSubset(std::string_view text, const std::string& path);

// What the configuration files built on it (budgets, notifications, policies) share: an error
// "path:line:column: key: message", and the values they read the same way.
Status TomlErrorAt(const std::string& path, int line, int column, std::string_view key,
                   std::string_view message);
Status TomlErrorAt(const std::string& path, const TomlValue& at, std::string_view key,
                   std::string_view message);
// A quoted duration ("90s", "2h", core/duration.h) within [min_ms, max_ms].
Result<int64_t> TomlDurationMs(const std::string& path, const TomlValue& v, std::string_view key,
                               int64_t min_ms, int64_t max_ms);
// A name things are called by: 1 to 64 letters, digits, '-', '_' or '.'.
Result<std::string> TomlName(const std::string& path, const TomlValue& v, std::string_view key);
// A non-empty list of distinct strings, each 1 to 256 bytes of UTF-8 without control characters.
Result<std::vector<std::string>> TomlStrings(const std::string& path, const TomlValue& v,
                                             std::string_view key);

}  // namespace cgov

#endif  // CGOV_CORE_TOML_SUBSET_H_
