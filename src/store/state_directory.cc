#include "store/state_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace cgov {

std::string StateDirectory(const char* state_directory_env) {
  if (state_directory_env != nullptr) {
    std::string first(state_directory_env);
    first = first.substr(0, first.find(':'));
    while (first.size() > 1 && first.back() == '/') first.pop_back();
    if (first.starts_with('/')) return first;
  }
  return kDefaultStateDirectory;
}

std::string DefaultHistoryDb() {
  return StateDirectory(std::getenv("STATE_DIRECTORY")) + "/" + kHistoryDbName;
}

Status CreateStateDirectory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return InvalidArgument(
        fmt::format("{}: not a directory (cgov keeps its history database there; give --db PATH to "
                    "put it elsewhere)",
                    dir));
  }
  if (::mkdir(dir.c_str(), 0750) == 0 || errno == EEXIST) return Status::Ok();
  const int err = errno;
  const std::string parent = std::filesystem::path(dir).parent_path().string();
  if (err == ENOENT) {
    return IoError(fmt::format("cannot create {}: its parent {} does not exist (give --db PATH)",
                               dir, parent));
  }
  if (err == EACCES || err == EPERM || err == EROFS) {
    return IoError(
        fmt::format("cannot create {}: {} (uid {}): run as root once, create it for this user, or "
                    "give --db PATH",
                    dir, std::strerror(err), ::geteuid()));
  }
  return IoError(fmt::format("cannot create {}: {}", dir, std::strerror(err)));
}

}  // namespace cgov
