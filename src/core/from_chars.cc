#include "core/from_chars.h"

#include <locale.h>
#include <stdlib.h>

#include <cerrno>
#include <cmath>
#include <string>

namespace cgov {
namespace {

bool StartsANumber(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'i' || c == 'I' || c == 'n' || c == 'N';
}

}  // namespace

std::from_chars_result FromCharsViaStrtod(const char* first, const char* last, double& value) {
  const char* p = first;
  if (p != last && *p == '-') ++p;
  // strtod also skips spaces and takes '+' and hexadecimal; from_chars takes none of them.
  if (p == last || !StartsANumber(*p)) return {first, std::errc::invalid_argument};
  if (last - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    value = p == first ? 0.0 : -0.0;  // from_chars reads "0x1" as 0, stopping at the x
    return {p + 1, std::errc()};
  }
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", nullptr);
  const std::string text(first, last);  // strtod reads to a NUL
  char* end = nullptr;
  errno = 0;
  const double read = strtod_l(text.c_str(), &end, c_locale);
  const int error = errno;
  if (end == text.c_str()) return {first, std::errc::invalid_argument};
  const char* stop = first + (end - text.c_str());
  // glibc says ERANGE for a subnormal result too, which from_chars returns as it is.
  if (error == ERANGE && (read == 0 || std::isinf(read))) {
    return {stop, std::errc::result_out_of_range};
  }
  value = read;
  return {stop, std::errc()};
}

std::from_chars_result FromChars(const char* first, const char* last, double& value) {
#if defined(__cpp_lib_to_chars)
  return std::from_chars(first, last, value);
#else
  return FromCharsViaStrtod(first, last, value);
#endif
}

}  // namespace cgov
