#include "core/text.h"

#include <cstdint>

namespace cgov {

size_t Utf8Length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t lead = b(0);
  if (lead < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

namespace {

// A control character: C0, DEL, or C1 (U+0080-U+009F, encoded C2 80-C2 9F).
bool IsControl(std::string_view text, size_t i, size_t n) {
  const auto lead = static_cast<uint8_t>(text[i]);
  if (n == 1) return lead < 0x20 || lead == 0x7F;
  return n == 2 && lead == 0xC2 && static_cast<uint8_t>(text[i + 1]) < 0xA0;
}

template <typename OnSafe, typename OnEscape>
void Walk(std::string_view text, OnSafe on_safe, OnEscape on_escape) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      on_escape(static_cast<uint8_t>(text[i]));
      ++i;
    } else if (IsControl(text, i, n)) {
      for (size_t k = 0; k < n; ++k) on_escape(static_cast<uint8_t>(text[i + k]));
      i += n;
    } else {
      on_safe(text.substr(i, n));
      i += n;
    }
  }
}

}  // namespace

bool IsSafeText(std::string_view text) {
  bool safe = true;
  Walk(text, [](std::string_view) {}, [&](uint8_t) { safe = false; });
  return safe;
}

std::string SafeText(std::string_view text) {
  if (IsSafeText(text)) return std::string(text);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 16);
  Walk(
      text, [&](std::string_view ok) { out.append(ok); },
      [&](uint8_t byte) {
        out += "\\x";
        out.push_back(kHex[byte >> 4]);
        out.push_back(kHex[byte & 0xF]);
      });
  return out;
}

}  // namespace cgov
