// Writing a whole file so that readers see the old content or the new one, never a part.
#ifndef CGOV_CORE_ATOMIC_FILE_H_
#define CGOV_CORE_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// Writes `content` to a temporary file beside `path`, fsyncs it, renames it over `path` and
// fsyncs the directory. On any error the temporary file is removed, `path` is untouched, and the
// Status names the path and the failing step. A new file gets 0666 less the umask; a replaced
// one keeps its mode.
//
// Only a regular file (or no file) is replaced. Anything else at `path` — a symlink such as
// /dev/stdout, a device, a FIFO with a reader — is written through, not atomically (the link and
// the node stay); a directory, or a FIFO without a reader, is an error.
//
// `sync_directory` false leaves the directory's fsync to the caller (SyncDirectory), who writes
// several files into one directory and syncs it once after the last: each fsync of a directory
// is a journal commit (~0.2-0.4 ms on an ext4 VM disk, docs/benchmarks.md).
Status WriteFileAtomically(const std::string& path, std::string_view content,
                           bool sync_directory = true);

// fsyncs directory `dir`: the renames into it are durable once it returns ok.
Status SyncDirectory(const std::string& dir);

}  // namespace cgov

#endif  // CGOV_CORE_ATOMIC_FILE_H_
