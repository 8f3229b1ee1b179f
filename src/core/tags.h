// Tags: KEY=VALUE labels on a run (`--tag project=vision`, `CGOV_TAGS="project=x,team=y"`).
// `project`, `team` and `user` are the keys reports group by.
#ifndef CGOV_CORE_TAGS_H_
#define CGOV_CORE_TAGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

using Tags = std::map<std::string, std::string>;

// One "KEY=VALUE". KEY: 1-64 of [a-z0-9_.-], starting with a letter. VALUE: 1-256 printable
// ASCII characters without ',' (so that CGOV_TAGS can hold several). `source` names where it came
// from in the error ("--tag", "CGOV_TAGS").
Status ParseTag(std::string_view text, std::string_view source, Tags* tags);

// Tags from CGOV_TAGS (comma-separated; empty items ignored), then from --tag flags, which win.
// The value of `key` in a stored "k=v,k=v" list ("" when absent).
std::string TagOf(std::string_view stored, std::string_view key);

Result<Tags> MergeTags(std::string_view env_value, const std::vector<std::string>& flags);

}  // namespace cgov

#endif  // CGOV_CORE_TAGS_H_
