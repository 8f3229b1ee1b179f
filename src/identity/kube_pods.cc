#include "identity/kube_pods.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace cgov {
namespace {

using json = nlohmann::json;

// Kubernetes' label-key syntax: [prefix/]name, name 1-63 characters of [A-Za-z0-9._-] beginning
// and ending alphanumeric, prefix a DNS subdomain (<= 253).
bool IsLabelKey(std::string_view key) {
  const size_t slash = key.find('/');
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  const std::string_view prefix = slash == std::string_view::npos ? "" : key.substr(0, slash);
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back())) {
    return false;
  }
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  if (slash != std::string_view::npos) {
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' && c != '.') return false;
    }
  }
  return true;
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringAt(const json& object, const char* key) {
  const json* v = Member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// "containerd://abc" -> "abc" (the id the cgroup path carries).
std::string ContainerId(std::string_view id) {
  const size_t scheme = id.find("://");
  return std::string(scheme == std::string_view::npos ? id : id.substr(scheme + 3));
}

}  // namespace

KubeLabelMap DefaultKubeLabelMap() {
  return {{"project-id", "app.kubernetes.io/part-of", "app.kubernetes.io/name"},
          {"team-id"},
          {"user-id"}};
}

Result<KubeLabelMap> ParseKubeLabelMap(std::string_view text) {
  KubeLabelMap map;
  std::vector<std::string> given;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string field(part.substr(0, eq));
    std::vector<std::string>* keys = field == "project" ? &map.project
                                     : field == "team"  ? &map.team
                                     : field == "user"  ? &map.user
                                                        : nullptr;
    if (eq == std::string_view::npos || keys == nullptr) {
      return InvalidArgument(
          fmt::format("--kube-labels: \"{}\": expected project=KEY[,KEY...], team=... or user=...",
                      SafeText(part)));
    }
    if (std::find(given.begin(), given.end(), field) != given.end()) {
      return InvalidArgument(fmt::format("--kube-labels: {} given twice", field));
    }
    given.push_back(field);
    std::string_view list = part.substr(eq + 1);
    size_t at = 0;
    while (at <= list.size()) {
      const size_t comma = std::min(list.find(',', at), list.size());
      const std::string_view key = list.substr(at, comma - at);
      at = comma + 1;
      if (!IsLabelKey(key)) {
        return InvalidArgument(fmt::format(
            "--kube-labels: {}: \"{}\" is not a Kubernetes label key", field, SafeText(key)));
      }
      keys->emplace_back(key);
    }
  }
  if (given.empty()) return InvalidArgument("--kube-labels: empty");
  // What was not given keeps its default (what was given holds at least one key).
  const KubeLabelMap defaults = DefaultKubeLabelMap();
  if (map.project.empty()) map.project = defaults.project;
  if (map.team.empty()) map.team = defaults.team;
  if (map.user.empty()) map.user = defaults.user;
  return map;
}

KubePodDirectory::KubePodDirectory(KubeLabelMap map, size_t max_pods, int64_t deleted_grace_ms)
    : map_(std::move(map)), max_pods_(max_pods), deleted_grace_ms_(deleted_grace_ms) {}

LabelOwners OwnersFromLabels(const KubeLabelMap& map, const json& labels) {
  auto first = [&](const std::vector<std::string>& keys) {
    for (const std::string& key : keys) {
      const std::string v = labels.is_object() ? StringAt(labels, key.c_str()) : "";
      if (!v.empty()) return SafeText(v);
    }
    return std::string();
  };
  return {first(map.project), first(map.team), first(map.user)};
}

Status KubePodDirectory::Upsert(const json& pod, int64_t now_ms, bool deleted) {
  const json* meta = Member(pod, "metadata");
  if (meta == nullptr || !meta->is_object()) return InvalidArgument("a pod without metadata");
  KubePod p;
  p.uid = StringAt(*meta, "uid");
  if (p.uid.empty()) return InvalidArgument("a pod without metadata.uid");
  p.namespace_name = SafeText(StringAt(*meta, "namespace"));
  p.name = SafeText(StringAt(*meta, "name"));
  if (const json* labels = Member(*meta, "labels"); labels != nullptr && labels->is_object()) {
    LabelOwners owners = OwnersFromLabels(map_, *labels);
    p.project = std::move(owners.project);
    p.team = std::move(owners.team);
    p.user = std::move(owners.user);
  }
  if (const json* status = Member(pod, "status"); status != nullptr) {
    for (const char* list :
         {"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"}) {
      const json* statuses = Member(*status, list);
      if (statuses == nullptr || !statuses->is_array()) continue;
      for (const json& c : *statuses) {
        const std::string id = ContainerId(StringAt(c, "containerID"));
        if (!id.empty()) p.containers[id] = SafeText(StringAt(c, "name"));
      }
    }
  }
  std::lock_guard lock(mu_);
  p.list_epoch = list_epoch_;
  auto it = pods_.find(p.uid);
  if (deleted) {
    if (it != pods_.end() && it->second.deleted_ms == 0) {
      it->second.deleted_ms = now_ms;
      ++generation_;
    }
    return Status::Ok();
  }
  if (it == pods_.end()) {
    if (pods_.size() >= max_pods_) {
      ++dropped_;
      return Status::Ok();
    }
    pods_.emplace(p.uid, std::move(p));
  } else {
    it->second = std::move(p);
  }
  ++generation_;
  return Status::Ok();
}

Result<std::string> KubePodDirectory::ApplyListPage(std::string_view text, bool first_page,
                                                    int64_t now_ms) {
  json list = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_object() || StringAt(list, "kind") != "PodList") {
    return InvalidArgument("the pod list is not a PodList object");
  }
  if (first_page) {
    std::lock_guard lock(mu_);
    ++list_epoch_;
  }
  if (const json* items = Member(list, "items"); items != nullptr && items->is_array()) {
    for (const json& pod : *items) CGOV_RETURN_IF_ERROR(Upsert(pod, now_ms, false));
  }
  const json* meta = Member(list, "metadata");
  const std::string next = meta != nullptr ? StringAt(*meta, "continue") : "";
  std::lock_guard lock(mu_);
  if (meta != nullptr) resource_version_ = StringAt(*meta, "resourceVersion");
  if (next.empty()) {
    // The list is complete: a pod it no longer has was deleted while nobody watched.
    for (auto& [uid, pod] : pods_) {
      if (pod.list_epoch != list_epoch_ && pod.deleted_ms == 0) {
        pod.deleted_ms = now_ms;
        ++generation_;
      }
    }
  }
  return next;
}

Status KubePodDirectory::ApplyEvent(std::string_view line, int64_t now_ms) {
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) return InvalidArgument("a watch event that is not a JSON object");
  const std::string type = StringAt(event, "type");
  const json* object = Member(event, "object");
  if (object == nullptr || !object->is_object()) {
    return InvalidArgument(fmt::format("a {} event without an object", SafeText(type)));
  }
  if (type == "ERROR") {  // a metav1.Status
    const json* code = Member(*object, "code");
    const std::string message = SafeText(StringAt(*object, "message"));
    if (code != nullptr && code->is_number_integer() && code->get<int64_t>() == 410) {
      return NotFound(fmt::format("410 Gone: {}", message));
    }
    return Unavailable(fmt::format("watch error {}: {}",
                                   code != nullptr ? code->dump() : std::string("?"), message));
  }
  const json* meta = Member(*object, "metadata");
  const std::string version = meta != nullptr ? StringAt(*meta, "resourceVersion") : "";
  if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
    CGOV_RETURN_IF_ERROR(Upsert(*object, now_ms, type == "DELETED"));
  } else if (type != "BOOKMARK") {
    return InvalidArgument(fmt::format("a watch event of unknown type \"{}\"", SafeText(type)));
  }
  std::lock_guard lock(mu_);
  if (!version.empty()) resource_version_ = version;
  return Status::Ok();
}

std::optional<KubePod> KubePodDirectory::Find(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::optional<KubePod> KubePodDirectory::FindByName(std::string_view namespace_name,
                                                    std::string_view name) const {
  std::lock_guard lock(mu_);
  const KubePod* best = nullptr;
  for (const auto& [uid, pod] : pods_) {
    if (pod.name != name || pod.namespace_name != namespace_name) continue;
    // A live pod over a deleted one of the same name (a StatefulSet's replacement); of deleted
    // ones, the last deleted.
    if (best == nullptr ||
        (best->deleted_ms != 0 && (pod.deleted_ms == 0 || pod.deleted_ms > best->deleted_ms))) {
      best = &pod;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

uint64_t KubePodDirectory::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

std::string KubePodDirectory::resource_version() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

size_t KubePodDirectory::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

uint64_t KubePodDirectory::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void KubePodDirectory::Expire(int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (it->second.deleted_ms != 0 && now_ms - it->second.deleted_ms > deleted_grace_ms_) {
      it = pods_.erase(it);
      ++generation_;
    } else {
      ++it;
    }
  }
}

}  // namespace cgov
