#include "os/curl_library.h"

#include <string>

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

}  // namespace cgov
