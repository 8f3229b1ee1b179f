#include "telemetry/gpu_json.h"

#include <cmath>

namespace cgov {

using nlohmann::json;

json MigInstanceJson(const MigInstance& mig) {
  return {{"gpu_instance_id", mig.gpu_instance_id},
          {"compute_instance_id", mig.compute_instance_id},
          {"profile", mig.profile},
          {"slices", mig.slices},
          {"parent_uuid", mig.parent_uuid},
          {"parent_name", mig.parent_name},
          {"parent_memory_total_bytes",
           mig.parent_memory_total_bytes ? json(*mig.parent_memory_total_bytes) : json(nullptr)},
          {"price_share", std::round(mig.price_share * 1e6) / 1e6}};
}

json MemoryHealthJson(const MemoryHealth& h) {
  if (h.row_remapping) {
    return {{"kind", "remapped_rows"},
            {"remapped_rows_correctable", h.remapped_correctable},
            {"remapped_rows_uncorrectable", h.remapped_uncorrectable},
            {"remap_pending", h.remap_pending},
            {"remap_failure", h.remap_failure},
            {"needs_action", h.NeedsAction()}};
  }
  return {{"kind", "retired_pages"},
          {"retired_pages_sbe", h.retired_sbe},
          {"retired_pages_dbe", h.retired_dbe},
          {"retired_pages_pending", h.retired_pending},
          {"needs_action", h.NeedsAction()}};
}

}  // namespace cgov
