#include "app/fleet/fleet_load.h"

#include "app/fleet/fleet_builder.h"

namespace cgov {

std::optional<RecordingRules> ParseRecordingRules(std::string_view text) {
  if (text == "auto") return RecordingRules::kAuto;
  if (text == "on") return RecordingRules::kOn;
  if (text == "off") return RecordingRules::kOff;
  return std::nullopt;
}

Result<HistoryInput> LoadFleet(const PromQuery& prometheus, int64_t since_ms, int64_t until_ms,
                               FleetOptions options) {
  return fleet_detail::FleetBuilder(prometheus, since_ms, until_ms, options).Build();
}

}  // namespace cgov
