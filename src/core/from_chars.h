// std::from_chars for a double, also where the standard library lacks it: libstdc++ reads
// floating-point text from version 11 (GCC 11), and the portable build (scripts/make-portable,
// docs/install.md) compiles with Debian 11's GCC 10 so that cgov runs on glibc 2.31.
#ifndef CGOV_CORE_FROM_CHARS_H_
#define CGOV_CORE_FROM_CHARS_H_

#include <charconv>

namespace cgov {

// What std::from_chars(first, last, value) answers for chars_format::general: an optional '-',
// then a decimal number with an optional exponent, "inf", "infinity" or "nan" (any case); no
// leading space, no '+', no hexadecimal. result_out_of_range (value untouched) when the number
// overflows or underflows to zero.
std::from_chars_result FromChars(const char* first, const char* last, double& value);

// The same read with strtod_l in the C locale: what FromChars is without a floating-point
// std::from_chars. Built everywhere, so that its tests hold it to std::from_chars.
std::from_chars_result FromCharsViaStrtod(const char* first, const char* last, double& value);

}  // namespace cgov

#endif  // CGOV_CORE_FROM_CHARS_H_
