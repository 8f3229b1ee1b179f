// Strings from outside (process names a user sets with prctl, environment values, job
// arguments, host names, imported databases, the driver) made safe to print and to serialise:
// valid UTF-8, no control characters. Applied where such a string enters Cost Governor
// (docs/security.md) and again by every JSON and Prometheus writer.
#ifndef CGOV_CORE_TEXT_H_
#define CGOV_CORE_TEXT_H_

#include <string>
#include <string_view>

namespace cgov {

// `text` with each byte that is not part of valid UTF-8, and each control character (C0, DEL,
// C1), written as the four characters \xNN; everything else unchanged. So the result is valid
// UTF-8 that cannot move a terminal's cursor or break a JSON or Prometheus line, and different
// inputs stay distinguishable. A string that is already safe comes back as it was.
std::string SafeText(std::string_view text);

// True when SafeText(text) == text (no copy needed).
bool IsSafeText(std::string_view text);

// Length of the valid UTF-8 sequence at text[i] (1-4), or 0 when the byte there does not start
// one (overlong forms, surrogates and code points above U+10FFFF are invalid, as in RFC 3629).
// REQUIRES: i < text.size().
size_t Utf8Length(std::string_view text, size_t i);

}  // namespace cgov

#endif  // CGOV_CORE_TEXT_H_
