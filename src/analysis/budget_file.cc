// The budgets file (TOML, docs/budgets.md), parsed with toml++ header-only and without
// exceptions: this is the only file that includes it, so the binary links nothing new.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include "analysis/budget.h"
#include "core/text.h"

namespace cgov {
namespace {

constexpr size_t kMaxNameBytes = 256;
constexpr double kMaxAmountUsd = 1e12;

Status ErrorAt(const std::string& path, const toml::source_region& where, std::string_view field,
               std::string_view message) {
  return InvalidArgument(fmt::format("{}:{}:{}: {}: {}", path, where.begin.line,
                                     where.begin.column, field, message));
}

const char* const kScopeKeys[] = {"project", "team", "namespace", "user"};
const HistoryBy kScopes[] = {HistoryBy::kProject, HistoryBy::kTeam, HistoryBy::kNamespace,
                             HistoryBy::kUser};

Status ParseName(const std::string& path, const toml::node& node, std::string_view key,
                 Budget* b) {
  const std::optional<std::string_view> name = node.value<std::string_view>();
  if (!name || name->empty() || name->size() > kMaxNameBytes) {
    return ErrorAt(path, node.source(), key,
                   fmt::format("expected the {}'s name, a string of 1 to {} bytes", key,
                               kMaxNameBytes));
  }
  if (SafeText(*name) != *name) {  // toml++ checked the UTF-8; control characters remain
    return ErrorAt(path, node.source(), key, "control characters are not allowed in a name");
  }
  b->name = std::string(*name);
  return Status::Ok();
}

Status ParseAmount(const std::string& path, const toml::node& node, std::string_view key,
                   Budget* b) {
  const std::optional<double> usd = node.value<double>();  // an integer converts
  if (!usd || !std::isfinite(*usd) || *usd <= 0 || *usd > kMaxAmountUsd) {
    return ErrorAt(path, node.source(), key,
                   fmt::format("expected a number of dollars above 0 and at most {:.0f}",
                               kMaxAmountUsd));
  }
  b->amount = std::llround(*usd * static_cast<double>(kMicroPerUsd));
  b->period = key == "weekly_usd" ? BudgetPeriod::kWeek : BudgetPeriod::kMonth;
  return Status::Ok();
}

Status ParseAlerts(const std::string& path, const toml::node& node, Budget* b) {
  const toml::array* list = node.as_array();
  if (list == nullptr) {
    return ErrorAt(path, node.source(), "alerts_pct", "expected a list of percentages");
  }
  std::set<int> pcts;
  for (const toml::node& item : *list) {
    const std::optional<int64_t> pct = item.value_exact<int64_t>();
    if (!pct || *pct < 1 || *pct > 1000) {
      return ErrorAt(path, item.source(), "alerts_pct",
                     "expected whole percentages from 1 to 1000 (50, 80, 100)");
    }
    if (!pcts.insert(static_cast<int>(*pct)).second) {
      return ErrorAt(path, item.source(), "alerts_pct", fmt::format("{} is listed twice", *pct));
    }
  }
  b->alert_pcts.assign(pcts.begin(), pcts.end());
  return Status::Ok();
}

// One key of a [[budget]] table; `scope_at` and `amount_at` remember where the one-of keys were.
Status ParseBudgetKey(const std::string& path, const toml::key& name, const toml::node& value,
                      Budget* b, const toml::node** scope_at, const toml::node** amount_at) {
  const std::string_view key = name.str();
  for (size_t i = 0; i < std::size(kScopeKeys); ++i) {
    if (key != kScopeKeys[i]) continue;
    if (*scope_at != nullptr) {
      return ErrorAt(path, value.source(), key, "a budget is for one project, team, namespace "
                     "or user: give one of them");
    }
    *scope_at = &value;
    b->scope = kScopes[i];
    return ParseName(path, value, key, b);
  }
  if (key == "monthly_usd" || key == "weekly_usd") {
    if (*amount_at != nullptr) {
      return ErrorAt(path, value.source(), key, "give one of monthly_usd and weekly_usd");
    }
    *amount_at = &value;
    return ParseAmount(path, value, key, b);
  }
  if (key == "alerts_pct") return ParseAlerts(path, value, b);
  return ErrorAt(path, name.source(), key,
                 "unknown key (a budget takes project, team, namespace or user; monthly_usd or "
                 "weekly_usd; alerts_pct)");
}

Result<Budget> ParseBudget(const std::string& path, const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    return ErrorAt(path, node.source(), "budget", "expected a [[budget]] table");
  }
  Budget b;
  b.line = static_cast<int>(node.source().begin.line);
  b.alert_pcts.assign(std::begin(kDefaultAlertPcts), std::end(kDefaultAlertPcts));
  const toml::node* scope_at = nullptr;
  const toml::node* amount_at = nullptr;
  for (const auto& [key, value] : *table) {
    CGOV_RETURN_IF_ERROR(ParseBudgetKey(path, key, value, &b, &scope_at, &amount_at));
  }
  if (scope_at == nullptr) {
    return ErrorAt(path, node.source(), "budget",
                   "name what it is for: project, team, namespace or user = \"NAME\"");
  }
  if (amount_at == nullptr) {
    return ErrorAt(path, node.source(), "budget", "give its amount: monthly_usd or weekly_usd");
  }
  return b;
}

Status ParseTop(const std::string& path, const toml::table& top, BudgetFile* file) {
  for (const auto& [key, value] : top) {
    if (key.str() == "forecast_days") {
      const std::optional<int64_t> days = value.value_exact<int64_t>();
      if (!days || *days < 1 || *days > 90) {
        return ErrorAt(path, value.source(), "forecast_days", "expected whole days from 1 to 90");
      }
      file->forecast_days = static_cast<int>(*days);
    } else if (key.str() != "budget") {
      return ErrorAt(path, key.source(), key.str(),
                     "unknown key (the file takes forecast_days and [[budget]] tables)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<BudgetFile> ParseBudgets(std::string_view text, const std::string& path) {
  toml::parse_result parsed = toml::parse(text, std::string_view(path));
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    // toml++ may quote the byte it stopped at: escaped, so the message is safe to print.
    return InvalidArgument(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                       e.source().begin.column, SafeText(e.description())));
  }
  BudgetFile file;
  file.path = path;
  const toml::table& top = parsed.table();
  CGOV_RETURN_IF_ERROR(ParseTop(path, top, &file));
  const toml::node* list = top.get("budget");
  if (list == nullptr) return file;  // no budgets: nothing to track
  const toml::array* budgets = list->as_array();
  if (budgets == nullptr || budgets->size() > kMaxBudgets) {
    return ErrorAt(path, list->source(), "budget",
                   fmt::format("expected up to {} [[budget]] tables", kMaxBudgets));
  }
  std::map<std::tuple<HistoryBy, std::string, BudgetPeriod>, int> seen;
  for (const toml::node& node : *budgets) {
    CGOV_ASSIGN_OR_RETURN(Budget b, ParseBudget(path, node));
    auto [it, fresh] = seen.emplace(std::tuple(b.scope, b.name, b.period), b.line);
    if (!fresh) {
      return ErrorAt(path, node.source(), "budget",
                     fmt::format("{} {:?} has a {}ly budget already (line {})",
                                 HistoryByName(b.scope), b.name, BudgetPeriodName(b.period),
                                 it->second));
    }
    file.budgets.push_back(std::move(b));
  }
  return file;
}

}  // namespace cgov
