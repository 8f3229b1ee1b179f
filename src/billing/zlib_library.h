// zlib, loaded at run time by the first gzip-compressed bill read (src/os/shared_library.h), so
// that no other cgov process maps it (docs/benchmarks.md). Its functions, typed as zlib.h
// declares them.
#ifndef CGOV_BILLING_ZLIB_LIBRARY_H_
#define CGOV_BILLING_ZLIB_LIBRARY_H_

#include <zlib.h>

#include "core/status.h"

namespace cgov {

struct ZlibLibrary {
  decltype(&inflateInit2_) inflate_init2 = nullptr;  // inflateInit2() is a macro over it
  decltype(&::inflate) inflate_step = nullptr;
  decltype(&inflateEnd) inflate_end = nullptr;
};

// libz.so.1 (or the file CGOV_LIBZ names: tests), opened once per process; or Unavailable saying
// what needs it and that the Debian package zlib1g installs it.
Result<const ZlibLibrary*> LoadZlib();

}  // namespace cgov

#endif  // CGOV_BILLING_ZLIB_LIBRARY_H_
