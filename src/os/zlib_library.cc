#include "os/zlib_library.h"

#include <fmt/format.h>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<ZlibLibrary> OpenZlib() {
  return OpenLibrary<ZlibLibrary>(
      {"zlib", "libz.so.1", "CGOV_LIBZ",
       "reading a gzip-compressed bill or serving gzip-compressed /metrics", "zlib1g"},
      [](SymbolResolver& resolve, ZlibLibrary& lib) {
        resolve(&lib.inflate_init2, "inflateInit2_");
        resolve(&lib.inflate_step, "inflate");
        resolve(&lib.inflate_end, "inflateEnd");
        resolve(&lib.deflate_init2, "deflateInit2_");
        resolve(&lib.deflate_step, "deflate");
        resolve(&lib.deflate_end, "deflateEnd");
        resolve(&lib.deflate_bound, "deflateBound");
      });
}

}  // namespace

Result<const ZlibLibrary*> LoadZlib() { return LoadOnce(&OpenZlib); }

Result<std::string> GzipCompress(const ZlibLibrary& zlib, std::string_view data, int level) {
  if (data.size() > (1u << 30)) return InvalidArgument("gzip: more than 1 GiB at once");
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer rather than zlib's; memLevel 8 is zlib's
  // default.
  int rc = zlib.deflate_init2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                              ZLIB_VERSION, static_cast<int>(sizeof(z_stream)));
  if (rc != Z_OK) return Internal(fmt::format("zlib deflateInit2: error {}", rc));
  std::string out(zlib.deflate_bound(&stream, static_cast<uLong>(data.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  rc = zlib.deflate_step(&stream, Z_FINISH);
  const size_t written = out.size() - stream.avail_out;
  zlib.deflate_end(&stream);
  if (rc != Z_STREAM_END) return Internal(fmt::format("zlib deflate: error {}", rc));
  out.resize(written);
  return out;
}

}  // namespace cgov
