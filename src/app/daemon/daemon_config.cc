#include "app/daemon/daemon_config.h"

#include "app/price_flags.h"
#include "os/env.h"

namespace cgov {

Result<std::string> ReadDaemonFile(Env& env, const std::string& path, std::string_view flag,
                                   size_t max_bytes) {
  Result<std::string> text = env.ReadUserFile(path, max_bytes, flag);
  if (!text.ok()) return text.status().WithContext("cgov daemon");
  return text;
}

Status LoadCoreFiles(const std::string& price_text, const std::string& kube_labels,
                     DaemonOptions* o) {
  if (Status s = ApplyPriceFlags(o->catalog_path, price_text, &o->price, &o->catalog); !s.ok()) {
    return s.WithContext("cgov daemon");
  }
  // --kube-labels: pods' labels with --kubernetes, Docker containers' labels with or without.
  if (!kube_labels.empty()) {
    Result<KubeLabelMap> map = ParseKubeLabelMap(kube_labels);
    if (!map.ok()) return map.status().WithContext("cgov daemon");
    o->kube_labels = std::move(map).value();
  }
  return Status::Ok();
}

}  // namespace cgov
