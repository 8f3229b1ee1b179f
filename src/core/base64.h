// Base64 (RFC 4648 section 4, the standard alphabet, '=' padding): HTTP basic auth's
// credentials and the HTML report's CSP hashes.
#ifndef CGOV_CORE_BASE64_H_
#define CGOV_CORE_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace cgov {

std::string Base64Encode(std::string_view bytes);

// Strict: padding required, no whitespace, nothing outside the alphabet; nullopt otherwise.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace cgov

#endif  // CGOV_CORE_BASE64_H_
