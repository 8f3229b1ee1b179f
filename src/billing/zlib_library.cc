#include "billing/zlib_library.h"

#include <string>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<ZlibLibrary> OpenZlib() {
  std::string name;
  CGOV_ASSIGN_OR_RETURN(void* handle,
                        OpenSharedLibrary({"zlib", "libz.so.1", "CGOV_LIBZ",
                                           "reading a gzip-compressed bill", "zlib1g"},
                                          &name));
  ZlibLibrary lib;
  SymbolResolver resolve(handle);
  resolve(&lib.inflate_init2, "inflateInit2_");
  resolve(&lib.inflate_step, "inflate");
  resolve(&lib.inflate_end, "inflateEnd");
  if (Status s = resolve.Check(name); !s.ok()) {
    dlclose(handle);
    return s;
  }
  return lib;
}

}  // namespace

Result<const ZlibLibrary*> LoadZlib() { return LoadOnce(&OpenZlib); }

}  // namespace cgov
