// A container runtime's state (Docker's config.v2.json, containers/storage's containers.json),
// read by a root daemon: its names and labels are whatever the container's creator chose, and
// the file may be large and deeply nested. Properties: what is kept is display-safe and cut
// (kMaxContainerName bytes, kMaxContainerLabels labels), a Podman id is a container id, and the
// reader keeps nothing of what it does not use.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "identity/local_containers.h"

using namespace cgov;

CGOV_FUZZ_TARGET(container_state_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto kept = [](const std::string& s) {
    FUZZ_CHECK(IsSafeText(s));
    FUZZ_CHECK(s.size() <= 4 * kMaxContainerName);  // each byte escaped at most as \xNN
  };
  if (Result<LocalContainer> c = ParseDockerConfig(text, DefaultKubeLabelMap()); c.ok()) {
    FUZZ_CHECK(!c->name.empty());
    for (const std::string* s : {&c->name, &c->project, &c->team, &c->user}) kept(*s);
  } else {
    FUZZ_CHECK(IsSafeText(c.status().message()));
  }
  if (auto names = ParsePodmanContainers(text); names.ok()) {
    for (const auto& [id, name] : *names) {
      FUZZ_CHECK(id.size() == 64 && id.find_first_not_of("0123456789abcdef") == std::string::npos);
      kept(name);
    }
  }
  return 0;
}
