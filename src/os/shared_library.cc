#include "os/shared_library.h"

#include <cstdlib>

#include <fmt/format.h>

namespace cgov {

Result<void*> OpenSharedLibrary(const SharedLibrarySpec& spec, std::string* opened_name) {
  const char* chosen = spec.env != nullptr ? std::getenv(spec.env) : nullptr;
  *opened_name = chosen != nullptr && *chosen != '\0' ? chosen : spec.soname;
  void* handle = dlopen(opened_name->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unavailable(fmt::format(
        "{} needs {}, which is loaded only for it: {} ({}); install the Debian package {}",
        spec.needed_for, spec.library, *opened_name, why ? why : "not found", spec.package));
  }
  return handle;
}

Status SymbolResolver::Check(const std::string& library) const {
  if (missing_.empty()) return Status::Ok();
  return Unavailable(fmt::format("{}: not a usable library (no {})", library, missing_));
}

}  // namespace cgov
