#include "fakes/fake_file_reader.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace cgov {

Status FakeFileReader::LoadTree(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    Set(prefix + "/" + std::filesystem::relative(it->path(), dir).string(), content.str());
  }
  if (ec) return IoError("cannot load " + dir + ": " + ec.message());
  return Status::Ok();
}

Status FakeFileReader::Read(std::string_view path, std::string* out) {
  std::string key(path);
  reads_.push_back(key);
  if (auto e = errors_.find(key); e != errors_.end()) return e->second;
  auto it = files_.find(key);
  if (it == files_.end()) return NotFound("cannot open " + key + ": No such file or directory");
  *out = it->second;
  return Status::Ok();
}

Status FakeFileReader::ReadHot(std::string_view path, std::string* out) {
  Status status = Read(path, out);
  reads_.back() = "hot:" + reads_.back();
  return status;
}

Status FakeFileReader::ListDir(std::string_view path, std::vector<std::string>* names) {
  names->clear();
  std::string dir(path);
  if (auto e = errors_.find(dir); e != errors_.end()) return e->second;
  if (dir.empty() || dir.back() != '/') dir += '/';
  std::set<std::string> entries;
  for (auto it = files_.lower_bound(dir); it != files_.end(); ++it) {
    if (it->first.compare(0, dir.size(), dir) != 0) break;
    std::string rest = it->first.substr(dir.size());
    entries.insert(rest.substr(0, rest.find('/')));
  }
  if (entries.empty()) return NotFound("cannot list " + std::string(path));
  names->assign(entries.begin(), entries.end());
  return Status::Ok();
}

}  // namespace cgov

namespace cgov {

Status FakeFileReader::ListDirHot(std::string_view path, std::vector<std::string>* names) {
  reads_.push_back("list:" + std::string(path));
  return ListDir(path, names);
}

}  // namespace cgov
