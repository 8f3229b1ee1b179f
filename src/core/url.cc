#include "core/url.h"

#include "core/text.h"

namespace cgov {

std::string RedactedUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t authority = scheme == std::string_view::npos ? 0 : scheme + 3;
  // The authority ends at the first '/', '?' or '#' after the scheme; userinfo ends at its
  // last '@' (a password may hold an unescaped '@').
  const size_t end = std::min(url.find_first_of("/?#", authority), url.size());
  const size_t at = url.substr(authority, end - authority).rfind('@');
  if (at == std::string_view::npos) return SafeText(url);
  return SafeText(std::string(url.substr(0, authority)) + "***" +
                  std::string(url.substr(authority + at)));
}

}  // namespace cgov
