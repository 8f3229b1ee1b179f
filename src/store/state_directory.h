// Where the history database lives when no --db is given: systemd's StateDirectory= for the
// service ($STATE_DIRECTORY, set by systemd for the unit), else /var/lib/cgov (the Filesystem
// Hierarchy Standard's place for a program's state). `cgov daemon` creates that directory when
// it is the default and missing; a --db named by the user is never given a directory.
#ifndef CGOV_STORE_STATE_DIRECTORY_H_
#define CGOV_STORE_STATE_DIRECTORY_H_

#include <string>

#include "core/status.h"

namespace cgov {

inline constexpr char kDefaultStateDirectory[] = "/var/lib/cgov";
inline constexpr char kHistoryDbName[] = "history.db";

// The state directory: the first of $STATE_DIRECTORY's colon-separated paths when set and
// absolute, else kDefaultStateDirectory.
std::string StateDirectory(const char* state_directory_env);

// StateDirectory(getenv("STATE_DIRECTORY")) + "/history.db".
std::string DefaultHistoryDb();

// Creates `dir` (mode 0750; its parent must exist) unless it is there; says what stands in the
// way by name (a missing parent, permission, a file in its place).
Status CreateStateDirectory(const std::string& dir);

}  // namespace cgov

#endif  // CGOV_STORE_STATE_DIRECTORY_H_
