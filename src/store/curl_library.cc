#include "store/curl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace cgov {
namespace {

Result<CurlLibrary> Load() {
  const char* env = std::getenv("CGOV_LIBCURL");
  const std::string name = env != nullptr && *env != '\0' ? env : "libcurl.so.4";
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unavailable(fmt::format(
        "--prometheus needs libcurl, which is loaded only for it: {} ({}); install the Debian "
        "package libcurl4", name, why ? why : "not found"));
  }
  CurlLibrary lib;
  bool missing = false;
  std::string which;
  auto resolve = [&](auto* slot, const char* symbol) {
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(handle, symbol));
    if (*slot == nullptr && !missing) {
      missing = true;
      which = symbol;
    }
  };
  resolve(&lib.global_init, "curl_global_init");
  resolve(&lib.easy_init, "curl_easy_init");
  resolve(&lib.easy_cleanup, "curl_easy_cleanup");
  resolve(&lib.easy_setopt, "curl_easy_setopt");
  resolve(&lib.easy_perform, "curl_easy_perform");
  resolve(&lib.easy_getinfo, "curl_easy_getinfo");
  resolve(&lib.easy_strerror, "curl_easy_strerror");
  resolve(&lib.easy_escape, "curl_easy_escape");
  resolve(&lib.free, "curl_free");
  if (missing) {
    dlclose(handle);
    return Unavailable(fmt::format("{}: not a usable libcurl (no {})", name, which));
  }
  // The handle stays open for the process: libcurl keeps global state.
  if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Unavailable(fmt::format("{}: curl_global_init failed", name));
  }
  return lib;
}

}  // namespace

Result<const CurlLibrary*> LoadCurl() {
  static std::once_flag once;
  static Result<CurlLibrary> loaded = Unavailable("not loaded");
  std::call_once(once, [] { loaded = Load(); });
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace cgov
