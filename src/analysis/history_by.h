// What a report groups GPU time by (--by): the key of each "Who" and showback row.
#ifndef CGOV_ANALYSIS_HISTORY_BY_H_
#define CGOV_ANALYSIS_HISTORY_BY_H_

#include <optional>
#include <string_view>

namespace cgov {

enum class HistoryBy {
  kUser,
  kProject,
  kTeam,
  kPod,
  kHost,
  kSlurmJob,
  kAccount,
  kNamespace,
  kContainer
};
const char* HistoryByName(HistoryBy by);  // "user", ...
std::optional<HistoryBy> ParseHistoryBy(std::string_view text);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_HISTORY_BY_H_
