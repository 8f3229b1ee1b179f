#include "app/run/run_digests.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "os/env.h"
#include "os/input_file.h"
#include "report/summary_read.h"

namespace cgov {

using nlohmann::json;

Result<RunDigest> ReadRunDigest(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, Env::Default()->ReadUserFile(path, 64 << 20, "summary"));
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const size_t upto = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(upto), '\n');
    return InvalidArgument(fmt::format("{}:{}: not JSON ({})", path, line, SafeText(e.what())));
  }
  return DigestFromSummaryJson(doc, path);
}

Result<std::vector<std::string>> FindSummaries(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      return Status(StatusCode::kNotFound, fmt::format("{}: no such file or directory", path));
    }
    if (!std::filesystem::is_directory(status)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(
             path, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() == "summary.json" && it->is_regular_file(ec)) {
        found.push_back(it->path().string());
      }
    }
    if (ec) return Status(StatusCode::kIoError, fmt::format("{}: {}", path, ec.message()));
    if (found.empty()) return InvalidArgument(fmt::format("{}: no summary.json under it", path));
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace cgov
