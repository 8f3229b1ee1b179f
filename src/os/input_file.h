// Files a user names on the command line (a price catalog, a password file, a TLS key): read
// whole, but only when they are regular files of a sane size. A FIFO would block forever, a
// device (/dev/zero) never ends, a directory is no file; each is refused with a message that
// names the flag and the path.
#ifndef CGOV_OS_INPUT_FILE_H_
#define CGOV_OS_INPUT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// The content of `path`, at most `max_bytes`. `what` names it in errors ("--price-catalog").
// kNotFound when it does not exist; kInvalidArgument when it is not a regular file or is larger
// than max_bytes; kPermissionDenied / kIoError otherwise. Never blocks on a FIFO.
Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes, std::string_view what);

// kInvalidArgument when `path` exists and is not a regular file (a FIFO, a device, a directory):
// for files another library opens (SQLite), which would block on a FIFO or write beside a device.
Status CheckRegularOrAbsent(const std::string& path, std::string_view what);

}  // namespace cgov

#endif  // CGOV_OS_INPUT_FILE_H_
