#include "identity/local_containers.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace cgov {
namespace {

using nlohmann::json;

// A string member of an object, "" when absent or not a string.
std::string StringOf(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool IsContainerId(std::string_view id) {
  if (id.size() != 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<LocalContainer> ParseDockerConfig(std::string_view text, const KubeLabelMap& labels) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return InvalidArgument("config.v2.json: not a JSON object");
  LocalContainer c;
  c.runtime = "docker";
  std::string name = StringOf(doc, "Name");
  if (!name.empty() && name.front() == '/') name.erase(0, 1);
  c.name = SafeText(name);
  auto config = doc.find("Config");
  if (config != doc.end() && config->is_object()) {
    auto found = config->find("Labels");
    if (found != config->end() && found->is_object()) {
      LabelOwners owners = OwnersFromLabels(labels, *found);
      c.project = std::move(owners.project);
      c.team = std::move(owners.team);
      c.user = std::move(owners.user);
    }
  }
  if (c.name.empty()) return InvalidArgument("config.v2.json: no Name");
  return c;
}

Result<std::map<std::string, std::string>> ParsePodmanContainers(std::string_view text) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return InvalidArgument("containers.json: not a JSON array");
  std::map<std::string, std::string> names;
  for (const json& c : doc) {
    if (!c.is_object()) continue;
    const std::string id = StringOf(c, "id");
    auto list = c.find("names");
    if (!IsContainerId(id) || list == c.end() || !list->is_array() || list->empty() ||
        !list->front().is_string()) {
      continue;
    }
    names[id] = SafeText(list->front().get<std::string>());
  }
  return names;
}

std::optional<LocalContainer> LocalContainers::Find(const std::string& id) {
  if (!IsContainerId(id)) return std::nullopt;  // never a path of its own making
  auto it = found_.find(id);
  if (it == found_.end()) it = found_.emplace(id, Read(id)).first;
  return it->second;
}

// A runtime's state file: a regular file only (a FIFO there would stall the tick, /dev/zero would
// never end), and bounded (a config.v2.json is a few KiB; containers.json ~1 KiB a container).
constexpr size_t kMaxStateBytes = 16 << 20;

std::optional<LocalContainer> LocalContainers::Read(const std::string& id) {
  if (files_->ReadRegular(fmt::format("{}/containers/{}/config.v2.json", docker_root_, id),
                          kMaxStateBytes, &buffer_)
          .ok()) {
    if (Result<LocalContainer> c = ParseDockerConfig(buffer_, labels_); c.ok()) return *c;
  }
  if (files_->ReadRegular(podman_root_ + "/overlay-containers/containers.json", kMaxStateBytes,
                          &buffer_)
          .ok()) {
    Result<std::map<std::string, std::string>> names = ParsePodmanContainers(buffer_);
    if (names.ok()) {
      if (auto found = names->find(id); found != names->end()) {
        LocalContainer c;
        c.runtime = "podman";
        c.name = found->second;
        return c;
      }
    }
  }
  return std::nullopt;
}

}  // namespace cgov
