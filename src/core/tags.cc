#include "core/tags.h"

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {
namespace {

bool ValidKey(std::string_view key) {
  if (key.empty() || key.size() > 64 || key[0] < 'a' || key[0] > 'z') return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool ValidValue(std::string_view value) {
  if (value.empty() || value.size() > 256) return false;
  for (char c : value) {
    if (c < 0x20 || c > 0x7e || c == ',') return false;
  }
  return true;
}

}  // namespace

Status ParseTag(std::string_view text, std::string_view source, Tags* tags) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument(fmt::format("{}: bad tag '{}': write KEY=VALUE, e.g. project=vision",
                                       source, SafeText(text)));
  }
  std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
  if (!ValidKey(key)) {
    return InvalidArgument(fmt::format(
        "{}: bad tag key '{}': 1-64 characters of a-z 0-9 _ . -, starting with a letter", source,
        SafeText(key)));
  }
  if (!ValidValue(value)) {
    return InvalidArgument(fmt::format(
        "{}: bad value for tag '{}': 1-256 printable characters, no comma", source, key));
  }
  (*tags)[std::string(key)] = std::string(value);
  return Status::Ok();
}

Result<Tags> MergeTags(std::string_view env_value, const std::vector<std::string>& flags) {
  Tags tags;
  size_t start = 0;
  while (start <= env_value.size()) {
    size_t comma = env_value.find(',', start);
    if (comma == std::string_view::npos) comma = env_value.size();
    std::string_view item = env_value.substr(start, comma - start);
    if (!item.empty()) CGOV_RETURN_IF_ERROR(ParseTag(item, "CGOV_TAGS", &tags));
    start = comma + 1;
  }
  for (const std::string& flag : flags) CGOV_RETURN_IF_ERROR(ParseTag(flag, "--tag", &tags));
  return tags;
}

std::string TagOf(std::string_view stored, std::string_view key) {
  while (!stored.empty()) {
    const size_t comma = stored.find(',');
    const std::string_view item = stored.substr(0, comma);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && item.substr(0, eq) == key) {
      return std::string(item.substr(eq + 1));
    }
    if (comma == std::string_view::npos) break;
    stored.remove_prefix(comma + 1);
  }
  return "";
}

}  // namespace cgov
