// Basic auth: the --basic-auth-file an operator writes, and the Authorization header any client
// sends. Properties: what the file holds is exactly what a client must send (encoded, it parses
// back to the same user and password, NULs and colons included), and a header decodes to a user
// without a colon.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base64.h"
#include "export/http_server.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(basic_auth_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto header = ParseBasicAuthorization(text)) {
    FUZZ_CHECK(header->first.find(':') == std::string::npos);
  }
  if (auto file = ParseBasicAuthFile(text); file.ok()) {
    FUZZ_CHECK(!file->first.empty() && !file->second.empty());
    FUZZ_CHECK(file->first.find(':') == std::string::npos);
    FUZZ_CHECK(file->first.find('\n') == std::string::npos);
    for (std::string_view scheme : {"Basic ", "basic ", "BASIC  "}) {
      auto sent = ParseBasicAuthorization(std::string(scheme) +
                                          Base64Encode(file->first + ":" + file->second));
      FUZZ_CHECK(sent && sent->first == file->first && sent->second == file->second);
    }
  }
  return 0;
}
