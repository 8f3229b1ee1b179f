// Basic auth: the --basic-auth-file an operator writes, and the Authorization header any client
// sends. Properties: what the file holds is exactly what a client must send (encoded, it parses
// back to the same user and password, NULs and colons included), and a header decodes to a user
// without a colon.
#include <cstdint>
#include <string>
#include <string_view>

#include "export/http_server.h"
#include "fuzz_check.h"

using namespace cgov;

namespace {

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t bits = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) bits |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) bits |= static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(bits >> 18) & 63];
    out += kAlphabet[(bits >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(bits >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[bits & 63] : '=';
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto header = ParseBasicAuthorization(text)) {
    FUZZ_CHECK(header->first.find(':') == std::string::npos);
  }
  if (auto file = ParseBasicAuthFile(text); file.ok()) {
    FUZZ_CHECK(!file->first.empty() && !file->second.empty());
    FUZZ_CHECK(file->first.find(':') == std::string::npos);
    FUZZ_CHECK(file->first.find('\n') == std::string::npos);
    for (std::string_view scheme : {"Basic ", "basic ", "BASIC  "}) {
      auto sent = ParseBasicAuthorization(std::string(scheme) + Base64(file->first + ":" +
                                                                        file->second));
      FUZZ_CHECK(sent && sent->first == file->first && sent->second == file->second);
    }
  }
  return 0;
}
