// The budgets file (docs/budgets.md): the TOML subset of core/toml_subset.h, then what each key
// of a budget means.
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/budget.h"
#include "core/text.h"
#include "core/toml_subset.h"

namespace cgov {
namespace {

constexpr size_t kMaxNameBytes = 256;
constexpr double kMaxAmountUsd = 1e12;

const char* const kScopeKeys[] = {"project", "team", "namespace", "user"};
const HistoryBy kScopes[] = {HistoryBy::kProject, HistoryBy::kTeam, HistoryBy::kNamespace,
                             HistoryBy::kUser};

Status ParseName(const std::string& path, const TomlValue& v, std::string_view key, Budget* b) {
  if (v.kind != TomlValue::Kind::kString || v.text.empty() || v.text.size() > kMaxNameBytes) {
    return TomlErrorAt(
        path, v, key,
        fmt::format("expected the {}'s name, a string of 1 to {} bytes", key, kMaxNameBytes));
  }
  if (!IsSafeText(v.text)) {
    return TomlErrorAt(path, v, key, "a name is UTF-8 text without control characters");
  }
  b->name = v.text;
  return Status::Ok();
}

Status ParseAmount(const std::string& path, const TomlValue& v, std::string_view key, Budget* b) {
  const bool number = v.kind == TomlValue::Kind::kInteger || v.kind == TomlValue::Kind::kFloat;
  // At least a cent: a smaller budget rounds to $0.00 and every share of it is undefined.
  if (!number || !std::isfinite(v.number) || v.number < 0.01 || v.number > kMaxAmountUsd) {
    return TomlErrorAt(
        path, v, key,
        fmt::format("expected a number of dollars from 0.01 (a cent) to {:.0f}", kMaxAmountUsd));
  }
  b->amount = std::llround(v.number * static_cast<double>(kMicroPerUsd));
  b->period = key == "weekly_usd" ? BudgetPeriod::kWeek : BudgetPeriod::kMonth;
  return Status::Ok();
}

Status ParseAlerts(const std::string& path, const TomlValue& v, Budget* b) {
  if (v.kind != TomlValue::Kind::kList) {
    return TomlErrorAt(path, v, "alerts_pct", "expected a list of percentages");
  }
  std::set<int> pcts;
  for (const TomlValue& item : v.items) {
    if (item.kind != TomlValue::Kind::kInteger || item.integer < 1 || item.integer > 1000) {
      return TomlErrorAt(path, item, "alerts_pct",
                         "expected whole percentages from 1 to 1000 (50, 80, 100)");
    }
    if (!pcts.insert(static_cast<int>(item.integer)).second) {
      return TomlErrorAt(path, item, "alerts_pct", fmt::format("{} is listed twice", item.integer));
    }
  }
  b->alert_pcts.assign(pcts.begin(), pcts.end());
  return Status::Ok();
}

// One key of a [[budget]] table; `scope_at` and `amount_at` remember where the one-of keys were.
Status ParseBudgetKey(const std::string& path, const TomlEntry& e, Budget* b,
                      const TomlValue** scope_at, const TomlValue** amount_at) {
  for (size_t i = 0; i < std::size(kScopeKeys); ++i) {
    if (e.key != kScopeKeys[i]) continue;
    if (*scope_at != nullptr) {
      return TomlErrorAt(path, e.value, e.key,
                         "a budget is for one project, team, namespace or user: give one of them");
    }
    *scope_at = &e.value;
    b->scope = kScopes[i];
    return ParseName(path, e.value, e.key, b);
  }
  if (e.key == "monthly_usd" || e.key == "weekly_usd") {
    if (*amount_at != nullptr) {
      return TomlErrorAt(path, e.value, e.key, "give one of monthly_usd and weekly_usd");
    }
    *amount_at = &e.value;
    return ParseAmount(path, e.value, e.key, b);
  }
  if (e.key == "alerts_pct") return ParseAlerts(path, e.value, b);
  return TomlErrorAt(path, e.line, e.column, e.key,
                     "unknown key (a budget takes project, team, namespace or user; monthly_usd or "
                     "weekly_usd; alerts_pct)");
}

Result<Budget> ParseBudget(const std::string& path, const TomlTable& table) {
  if (table.name != "budget") {
    return TomlErrorAt(path, table.line, table.column, table.name,
                       "unknown table (the file takes [[budget]] tables)");
  }
  Budget b;
  b.line = table.line;
  b.alert_pcts.assign(std::begin(kDefaultAlertPcts), std::end(kDefaultAlertPcts));
  const TomlValue* scope_at = nullptr;
  const TomlValue* amount_at = nullptr;
  for (const TomlEntry& e : table.entries) {
    CGOV_RETURN_IF_ERROR(ParseBudgetKey(path, e, &b, &scope_at, &amount_at));
  }
  if (scope_at == nullptr) {
    return TomlErrorAt(path, table.line, table.column, "budget",
                       "name what it is for: project, team, namespace or user = \"NAME\"");
  }
  if (amount_at == nullptr) {
    return TomlErrorAt(path, table.line, table.column, "budget",
                       "give its amount: monthly_usd or weekly_usd");
  }
  return b;
}

Status ParseTop(const std::string& path, const TomlTable& top, BudgetFile* file) {
  for (const TomlEntry& e : top.entries) {
    if (e.key != "forecast_days") {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (the file takes forecast_days and [[budget]] tables)");
    }
    if (e.value.kind != TomlValue::Kind::kInteger || e.value.integer < 1 || e.value.integer > 90) {
      return TomlErrorAt(path, e.value, "forecast_days", "expected whole days from 1 to 90");
    }
    file->forecast_days = static_cast<int>(e.value.integer);
  }
  return Status::Ok();
}

}  // namespace

Result<BudgetFile> ParseBudgets(std::string_view text, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::vector<TomlTable> tables, ParseTomlSubset(text, path));
  BudgetFile file;
  file.path = path;
  CGOV_RETURN_IF_ERROR(ParseTop(path, tables.front(), &file));
  if (tables.size() - 1 > kMaxBudgets) {
    return TomlErrorAt(path, tables[kMaxBudgets + 1].line, tables[kMaxBudgets + 1].column, "budget",
                       fmt::format("more than {} budgets", kMaxBudgets));
  }
  std::map<std::tuple<HistoryBy, std::string, BudgetPeriod>, int> seen;
  for (size_t i = 1; i < tables.size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(Budget b, ParseBudget(path, tables[i]));
    auto [it, fresh] = seen.emplace(std::tuple(b.scope, b.name, b.period), b.line);
    if (!fresh) {
      return TomlErrorAt(
          path, tables[i].line, tables[i].column, "budget",
          fmt::format("{} {:?} has a {}ly budget already (line {})", HistoryByName(b.scope), b.name,
                      BudgetPeriodName(b.period), it->second));
    }
    file.budgets.push_back(std::move(b));
  }
  return file;
}

}  // namespace cgov
