#include "os/curl_library.h"

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<CurlLibrary> Load() {
  std::string name;
  Result<CurlLibrary> loaded = OpenLibrary<CurlLibrary>(
      {"libcurl", "libcurl.so.4", "CGOV_LIBCURL", "--prometheus or --kubernetes", "libcurl4"},
      [](SymbolResolver& resolve, CurlLibrary& lib) {
        resolve(&lib.global_init, "curl_global_init");
        resolve(&lib.easy_init, "curl_easy_init");
        resolve(&lib.easy_cleanup, "curl_easy_cleanup");
        resolve(&lib.easy_setopt, "curl_easy_setopt");
        resolve(&lib.easy_perform, "curl_easy_perform");
        resolve(&lib.easy_getinfo, "curl_easy_getinfo");
        resolve(&lib.easy_strerror, "curl_easy_strerror");
        resolve(&lib.easy_escape, "curl_easy_escape");
        resolve(&lib.free, "curl_free");
        resolve(&lib.slist_append, "curl_slist_append");
        resolve(&lib.slist_free_all, "curl_slist_free_all");
      },
      &name);
  if (!loaded.ok()) return loaded;
  // The handle stays open for the process: libcurl keeps global state.
  if (loaded->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Unavailable(fmt::format("{}: curl_global_init failed", name));
  }
  return loaded;
}

}  // namespace

Result<const CurlLibrary*> LoadCurl() { return LoadOnce(&Load); }

namespace {

// Both by number: an older curl.h lacks the first, a newer one marks the second deprecated.
constexpr auto kProtocolsByName = static_cast<CURLoption>(CURLOPTTYPE_STRINGPOINT + 318);
constexpr auto kProtocolsByBit = static_cast<CURLoption>(CURLOPTTYPE_LONG + 181);

// The bits of the names this fallback knows; 0 when one is unknown.
long ProtocolBits(std::string_view names) {
  long bits = 0;
  for (size_t at = 0; at <= names.size();) {
    const size_t comma = std::min(names.find(',', at), names.size());
    const std::string_view name = names.substr(at, comma - at);
    if (name == "http") {
      bits |= CURLPROTO_HTTP;
    } else if (name == "https") {
      bits |= CURLPROTO_HTTPS;
    } else if (name == "smtp") {
      bits |= CURLPROTO_SMTP;
    } else if (name == "smtps") {
      bits |= CURLPROTO_SMTPS;
    } else {
      return 0;
    }
    at = comma + 1;
  }
  return bits;
}

}  // namespace

bool RestrictProtocols(const CurlLibrary& lib, CURL* curl, const char* names) {
  if (lib.easy_setopt(curl, kProtocolsByName, names) == CURLE_OK) return true;
  const long bits = ProtocolBits(names);
  return bits != 0 && lib.easy_setopt(curl, kProtocolsByBit, bits) == CURLE_OK;
}

}  // namespace cgov
