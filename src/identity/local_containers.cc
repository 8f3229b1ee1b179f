#include "identity/local_containers.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_stream.h"
#include "core/text.h"

namespace cgov {
namespace {

using nlohmann::json;

bool IsContainerId(std::string_view id) {
  if (id.size() != 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A runtime's state is read as a stream (core/json_stream.h), keeping only the few strings
// wanted, each cut where it is kept: memory follows what is kept, not the file's size or depth
// (what lies deeper than any runtime writes is read past, one byte a level, and never kept).
class StateReader : public JsonEvents {
 public:
  static constexpr size_t kMaxDepth = 16;

  bool Null() override { return Scalar(nullptr); }
  bool Boolean(bool) override { return Scalar(nullptr); }
  bool Number(double) override { return Scalar(nullptr); }
  bool String(std::string_view value) override { return Scalar(&value); }
  bool Key(std::string_view key) override {
    if (depth_ <= kMaxDepth && !path_.empty()) path_.back() = std::string(key.substr(0, 64));
    return true;
  }
  bool StartObject() override { return Open('{'); }
  bool StartArray() override { return Open('['); }
  bool EndObject() override { return Close(); }
  bool EndArray() override { return Close(); }
  char top() const { return top_; }  // '{' or '[': what the document is

 protected:
  // A scalar at path (the keys of the objects it is in; "" for an array's items).
  virtual void Found(const std::vector<std::string>& path, const std::string_view* text) = 0;
  virtual void Opened(size_t /*depth*/) {}
  virtual void Closed(size_t /*depth*/) {}
  bool kept() const { return depth_ <= kMaxDepth; }

 private:
  bool Scalar(const std::string_view* text) {
    if (kept()) Found(path_, text);
    return true;
  }
  bool Open(char kind) {
    if (top_ == 0) top_ = kind;
    ++depth_;
    if (kept()) {
      path_.emplace_back();
      Opened(depth_);
    }
    return true;
  }
  bool Close() {
    if (kept()) {
      Closed(depth_);
      path_.pop_back();
    }
    --depth_;
    return true;
  }
  std::vector<std::string> path_;  // at most kMaxDepth
  size_t depth_ = 0;
  char top_ = 0;
};

bool ReadState(std::string_view text, StateReader* reader) {
  JsonStream stream(reader);
  return stream.Feed(text) && stream.Finish();
}

// Docker's config.v2.json: "Name" and "Config": {"Labels": {...}}.
class DockerConfigReader : public StateReader {
 public:
  std::optional<std::string> name;
  json labels = json::object();

  bool Key(std::string_view key) override {
    if (kept()) key_ = SafeTextCut(key, kMaxContainerName);
    return StateReader::Key(key);
  }

 protected:
  void Found(const std::vector<std::string>& path, const std::string_view* text) override {
    if (text == nullptr) return;
    if (path.size() == 1 && path[0] == "Name" && !name) {
      std::string_view n = *text;
      if (!n.empty() && n.front() == '/') n.remove_prefix(1);
      name = SafeTextCut(n, kMaxContainerName);
    } else if (path.size() == 3 && path[0] == "Config" && path[1] == "Labels" &&
               labels.size() < kMaxContainerLabels) {
      labels[key_] = SafeTextCut(*text, kMaxContainerName);
    }
  }

 private:
  std::string key_;  // the key the next value is read under
};

// containers/storage's containers.json: [{"id": ..., "names": [first, ...]}, ...].
class PodmanReader : public StateReader {
 public:
  std::map<std::string, std::string> names;

 protected:
  void Opened(size_t depth) override {
    if (depth != 2) return;
    id_.clear();
    name_.reset();
  }
  void Closed(size_t depth) override {
    if (depth == 2 && IsContainerId(id_) && name_) names[id_] = *name_;
  }
  void Found(const std::vector<std::string>& path, const std::string_view* text) override {
    if (text == nullptr) return;
    if (path.size() == 2 && path[1] == "id") id_ = std::string(text->substr(0, 65));
    if (path.size() == 3 && path[1] == "names" && !name_) {
      name_ = SafeTextCut(*text, kMaxContainerName);
    }
  }

 private:
  std::string id_;
  std::optional<std::string> name_;
};

}  // namespace

Result<LocalContainer> ParseDockerConfig(std::string_view text, const KubeLabelMap& labels) {
  DockerConfigReader reader;
  if (!ReadState(text, &reader) || reader.top() != '{') {
    return InvalidArgument("config.v2.json: not a JSON object");
  }
  LocalContainer c;
  c.runtime = "docker";
  c.name = reader.name.value_or("");
  if (!reader.labels.empty()) {
    LabelOwners owners = OwnersFromLabels(labels, reader.labels);
    c.project = std::move(owners.project);
    c.team = std::move(owners.team);
    c.user = std::move(owners.user);
  }
  if (c.name.empty()) return InvalidArgument("config.v2.json: no Name");
  return c;
}

Result<std::map<std::string, std::string>> ParsePodmanContainers(std::string_view text) {
  PodmanReader reader;
  if (!ReadState(text, &reader) || reader.top() != '[') {
    return InvalidArgument("containers.json: not a JSON array");
  }
  return std::move(reader.names);
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

// The file's text is held only while it is read (a member buffer would keep its largest size).
std::optional<LocalContainer> LocalContainers::Read(const std::string& id) {
  std::string text;
  if (files_
          ->ReadRegular(fmt::format("{}/containers/{}/config.v2.json", docker_root_, id),
                        kMaxStateBytes, &text)
          .ok()) {
    if (Result<LocalContainer> c = ParseDockerConfig(text, labels_); c.ok()) return *c;
  }
  if (files_
          ->ReadRegular(podman_root_ + "/overlay-containers/containers.json", kMaxStateBytes, &text)
          .ok()) {
    Result<std::map<std::string, std::string>> names = ParsePodmanContainers(text);
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
