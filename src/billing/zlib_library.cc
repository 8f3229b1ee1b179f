#include "billing/zlib_library.h"

#include <string>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<ZlibLibrary> OpenZlib() {
  return OpenLibrary<ZlibLibrary>(
      {"zlib", "libz.so.1", "CGOV_LIBZ", "reading a gzip-compressed bill", "zlib1g"},
      [](SymbolResolver& resolve, ZlibLibrary& lib) {
        resolve(&lib.inflate_init2, "inflateInit2_");
        resolve(&lib.inflate_step, "inflate");
        resolve(&lib.inflate_end, "inflateEnd");
      });
}

}  // namespace

Result<const ZlibLibrary*> LoadZlib() { return LoadOnce(&OpenZlib); }

}  // namespace cgov
