// Libraries loaded at run time by the one feature that needs them, so that every other cgov
// process (a `cgov run` wrapping a job, a daemon without --listen) neither maps nor initialises
// them: libcurl for `report --prometheus`, libmicrohttpd for `daemon --listen`, GnuTLS for
// `--tls-cert` (docs/architecture.md, "Dependencies"). Each is opened once and kept open for the
// process.
#ifndef CGOV_OS_SHARED_LIBRARY_H_
#define CGOV_OS_SHARED_LIBRARY_H_

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// What to load, and what to tell a user who lacks it.
struct SharedLibrarySpec {
  const char* library;     // "libcurl"
  const char* soname;      // "libcurl.so.4"
  const char* env;         // a variable naming another file to load instead (tests), or null
  const char* needed_for;  // "--prometheus"
  const char* package;     // the Debian package that installs it: "libcurl4"
};

// dlopen()s the library with RTLD_NOW and sets *opened_name to the file it tried; on failure
// Unavailable says what needs it and which package to install.
Result<void*> OpenSharedLibrary(const SharedLibrarySpec& spec, std::string* opened_name);

// Resolves symbols of an opened library into typed slots, remembering the first one missing.
class SymbolResolver {
 public:
  explicit SymbolResolver(void* handle) : handle_(handle) {}
  template <typename T>
  void operator()(T** slot, const char* symbol) {
    *slot = reinterpret_cast<T*>(dlsym(handle_, symbol));
    if (*slot == nullptr && missing_.empty()) missing_ = symbol;
  }
  // Ok, or Unavailable naming the library and the first symbol it lacked.
  Status Check(const std::string& library) const;

 private:
  void* handle_;
  std::string missing_;
};

// Opens `spec`'s library and fills a Library by `bind(resolve, lib)`, which resolves each of its
// symbols with the SymbolResolver; Unavailable when the library or any symbol is missing (the
// library is closed again then). A library returned stays open for the process. *opened_name,
// when given: the file opened, for messages.
template <typename Library, typename Bind>
Result<Library> OpenLibrary(const SharedLibrarySpec& spec, Bind bind,
                            std::string* opened_name = nullptr) {
  std::string name;
  CGOV_ASSIGN_OR_RETURN(void* handle, OpenSharedLibrary(spec, &name));
  Library lib;
  SymbolResolver resolve(handle);
  bind(resolve, lib);
  if (Status s = resolve.Check(name); !s.ok()) {
    dlclose(handle);
    return s;
  }
  if (opened_name != nullptr) *opened_name = name;
  return lib;
}

// Calls `open` once per process (per Library type) and returns its answer to every caller: the
// loaded table of functions, or why it could not be loaded. Thread-safe.
template <typename Library>
Result<const Library*> LoadOnce(Result<Library> (*open)()) {
  static std::once_flag once;
  static Result<Library> loaded = Unavailable("not loaded");
  std::call_once(once, [open] { loaded = open(); });
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace cgov

#endif  // CGOV_OS_SHARED_LIBRARY_H_
