// zlib, loaded at run time by the first gzip-compressed bill read or the first /metrics scrape
// that asks for gzip (src/os/shared_library.h), so that no other cgov process maps it
// (docs/benchmarks.md). Its functions, typed as zlib.h declares them, and gzip compression.
#ifndef CGOV_OS_ZLIB_LIBRARY_H_
#define CGOV_OS_ZLIB_LIBRARY_H_

#include <zlib.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

struct ZlibLibrary {
  decltype(&inflateInit2_) inflate_init2 = nullptr;  // inflateInit2() is a macro over it
  decltype(&::inflate) inflate_step = nullptr;
  decltype(&inflateEnd) inflate_end = nullptr;
  decltype(&deflateInit2_) deflate_init2 = nullptr;  // deflateInit2() likewise
  decltype(&::deflate) deflate_step = nullptr;
  decltype(&deflateEnd) deflate_end = nullptr;
  decltype(&deflateBound) deflate_bound = nullptr;
};

// libz.so.1 (or the file CGOV_LIBZ names: tests), opened once per process; or Unavailable saying
// what needs it and that the Debian package zlib1g installs it.
Result<const ZlibLibrary*> LoadZlib();

// `data` as one gzip member (RFC 1952) at zlib's `level` (1 fastest to 9 smallest).
Result<std::string> GzipCompress(const ZlibLibrary& zlib, std::string_view data, int level);

}  // namespace cgov

#endif  // CGOV_OS_ZLIB_LIBRARY_H_
