// SHA-256 (FIPS 180-4), for the hash of the HTML report's inline script and style that its
// Content-Security-Policy names (CSP Level 2 hash sources: 'sha256-BASE64').
#ifndef CGOV_CORE_SHA256_H_
#define CGOV_CORE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cgov {

std::array<uint8_t, 32> Sha256(std::string_view data);

// The digest in base64 (RFC 4648, padded), as a CSP hash source wants it.
std::string Sha256Base64(std::string_view data);

}  // namespace cgov

#endif  // CGOV_CORE_SHA256_H_
