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

// SafeText of at most the first `max_bytes` of `text`, cut at a character's start: how a name
// from outside is kept (a label value, a container's name), so that memory follows what is kept
// and not what was sent.
std::string SafeTextCut(std::string_view text, size_t max_bytes);

// True when SafeText(text) == text (no copy needed).
bool IsSafeText(std::string_view text);

// Text for HTML (an element's content or a quoted attribute): & < > " ' escaped, control
// characters other than tab and line feed shown as U+FFFD. What every HTML cgov writes uses.
std::string HtmlEscaped(std::string_view text);

// Length of the valid UTF-8 sequence at text[i] (1-4), or 0 when the byte there does not start
// one (overlong forms, surrogates and code points above U+10FFFF are invalid, as in RFC 3629).
// REQUIRES: i < text.size().
size_t Utf8Length(std::string_view text, size_t i);

// The columns a terminal gives the character at text[i] (a valid UTF-8 sequence of `length`
// bytes): 2 for East Asian wide and full-width characters and emoji, 0 for combining marks,
// zero-width characters and variation selectors, 1 otherwise (Unicode 15's East Asian Width,
// the ranges wcwidth implementations agree on).
size_t CharWidth(std::string_view text, size_t i, size_t length);

// The columns `text` takes on a terminal: the sum of CharWidth; a byte that is not valid UTF-8
// takes one (SafeText would show it as four).
size_t DisplayWidth(std::string_view text);

}  // namespace cgov

#endif  // CGOV_CORE_TEXT_H_
