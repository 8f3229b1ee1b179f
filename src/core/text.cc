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
  Walk(
      text, [](std::string_view) {}, [&](uint8_t) { safe = false; });
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

std::string SafeTextCut(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return IsSafeText(text) ? std::string(text) : SafeText(text);
  std::string_view cut = text.substr(0, max_bytes);
  // Not inside a UTF-8 sequence: back to the start of the character the cut fell in.
  while (!cut.empty() && (static_cast<unsigned char>(text[cut.size()]) & 0xc0) == 0x80) {
    cut.remove_suffix(1);
  }
  return SafeText(cut);
}

namespace {

uint32_t CodePoint(std::string_view text, size_t i, size_t length) {
  const auto b = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(text[i + k]));
  };
  if (length < 2 || length > 4) return b(0);
  // The lead byte's payload, then six bits from each continuation byte.
  uint32_t c = b(0) & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < length; ++k) c = (c << 6) | (b(k) & 0x3f);
  return c;
}

struct Range {
  uint32_t first, last;
};

constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489},  {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A},  {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},
    {0x2028, 0x202E}, {0x2060, 0x2064},  {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF}};

constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x18AFF},
    {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E},
    {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF},
    {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x3FFFD}};

template <size_t N>
bool In(const Range (&ranges)[N], uint32_t c) {
  for (const Range& r : ranges) {
    if (c >= r.first && c <= r.last) return true;
  }
  return false;
}

}  // namespace

size_t CharWidth(std::string_view text, size_t i, size_t length) {
  if (length < 2) return 1;
  const uint32_t c = CodePoint(text, i, length);
  if (In(kZeroWidth, c)) return 0;
  return In(kWide, c) ? 2 : 1;
}

size_t DisplayWidth(std::string_view text) {
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    size_t length = Utf8Length(text, i);
    if (length == 0) length = 1;
    columns += CharWidth(text, i, length);
    i += length;
  }
  return columns;
}

std::string HtmlEscaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
      case '\t':
        out += c;
        break;
      default:
        // Control characters are not allowed in HTML text: shown as U+FFFD, never passed on.
        if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace cgov
