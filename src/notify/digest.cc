#include "notify/digest.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/money.h"
#include "core/text.h"
#include "core/time_format.h"
#include "notify/mail_message.h"

namespace cgov {
namespace {

// Local midnight `days` after the local date of `day` (its year, month and day), plus `minutes`.
int64_t LocalMs(const struct tm& day, int days, int minutes) {
  struct tm t {};
  t.tm_year = day.tm_year;
  t.tm_mon = day.tm_mon;
  t.tm_mday = day.tm_mday + days;
  t.tm_hour = minutes / 60;
  t.tm_min = minutes % 60;
  t.tm_isdst = -1;  // whatever the clocks say on that day
  return static_cast<int64_t>(mktime(&t)) * 1000;
}

// The digest sent on the local date of `send_day`.
DigestWeek WeekSentOn(const DigestConfig& c, const struct tm& send_day) {
  DigestWeek w;
  w.send_ms = LocalMs(send_day, 0, c.at_min);
  w.until_ms = LocalMs(send_day, 0, 0);
  w.since_ms = LocalMs(send_day, -7, 0);
  w.prior_since_ms = LocalMs(send_day, -14, 0);
  const time_t since = static_cast<time_t>(w.since_ms / 1000);
  struct tm first {};
  localtime_r(&since, &first);
  w.key = fmt::format("digest/{:04}-{:02}-{:02}", first.tm_year + 1900, first.tm_mon + 1,
                      first.tm_mday);
  return w;
}

struct tm LocalDay(int64_t ms) {
  const time_t t = static_cast<time_t>(ms / 1000);
  struct tm day {};
  localtime_r(&t, &day);
  return day;
}

std::string DigestHours(int64_t ms) {
  return fmt::format("{:.1f}", static_cast<double>(ms) / 3'600'000.0);
}

std::string Ordinal(int n) {
  const int tens = n % 100, ones = n % 10;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : ones == 1              ? "st"
                       : ones == 2              ? "nd"
                       : ones == 3              ? "rd"
                                                : "th";
  return fmt::format("{}{}", n, suffix);
}

// One person's week: a [[person]] row's users together, or a user the domain rule names.
struct DigestHolder {
  std::string label;  // their first user name
  std::vector<std::string> users;
  std::string address;  // "" none of their own (opted out, or no rule names them)
  std::string team;
  MicroUsd cost = 0, idle_held_cost = 0, prior_cost = 0;
  int64_t attributed_ms = 0, idle_held_ms = 0;
  const HabitRow* habit = nullptr;  // their costliest habit of the week
};

DigestHolder NewDigestHolder(std::vector<std::string> users, std::string address,
                             std::string team) {
  DigestHolder h;
  h.label = users.front();
  h.users = std::move(users);
  h.address = std::move(address);
  h.team = std::move(team);
  return h;
}

// Everyone's week, and the teams: each person once, found by any of their users in one lookup,
// so that a recipients file of 100,000 people costs a few passes, never people x people.
struct DigestBook {
  std::vector<DigestHolder> holders;  // the file's people in its order, then row-less users
  std::map<std::string, std::vector<size_t>> teams;     // team -> its members
  std::map<std::string, std::vector<MicroUsd>> ranked;  // team -> members' idle-held dollars,
                                                        // the most first
};

DigestBook DigestHolders(const DigestInput& in) {
  const RecipientsFile& file = in.people->file();
  DigestBook book;
  std::vector<DigestHolder>& out = book.holders;
  for (const RecipientsFile::Person& p : file.people) {
    out.push_back(NewDigestHolder(p.users, p.opt_out.empty() ? p.address : "", p.team));
  }
  std::map<std::string, size_t> by_user;  // the users without a row, by name
  auto holder_of = [&](const std::string& user) -> DigestHolder* {
    if (user.empty()) return nullptr;  // no identity: no one to tell
    if (auto row = file.by_user.find(user); row != file.by_user.end()) return &out[row->second];
    auto [at, added] = by_user.emplace(user, out.size());
    if (added) out.push_back(NewDigestHolder({user}, in.people->DomainAddress(user), ""));
    return &out[at->second];
  };
  // Each row's dollars as the report shows them (to the cent), so that a person's and a team's
  // figures are the sums of the report's rows.
  for (const WhoRow& w : in.week->who) {
    if (DigestHolder* h = holder_of(w.key)) {
      h->cost = AddUsd(h->cost, RoundToCent(w.cost));
      h->idle_held_cost = AddUsd(h->idle_held_cost, RoundToCent(w.idle_held_cost));
      h->attributed_ms += w.AttributedMs();
      h->idle_held_ms += w.idle_held_ms;
    }
  }
  for (const WhoRow& w : in.prior->who) {
    if (DigestHolder* h = holder_of(w.key)) {
      h->prior_cost = AddUsd(h->prior_cost, RoundToCent(w.cost));
    }
  }
  for (const HabitRow& habit : in.week->habits) {  // by dollars, the costliest first
    DigestHolder* h = holder_of(habit.user);
    if (h != nullptr && h->habit == nullptr) h->habit = &habit;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].team.empty()) continue;
    book.teams[out[i].team].push_back(i);
    book.ranked[out[i].team].push_back(out[i].idle_held_cost);
  }
  for (auto& [team, idle] : book.ranked) std::sort(idle.begin(), idle.end(), std::greater<>());
  return book;
}

std::string Trend(const DigestHolder& h) {
  if (h.prior_cost == 0) return "no GPU time the week before";
  const double pct =
      100.0 * static_cast<double>(h.cost - h.prior_cost) / static_cast<double>(h.prior_cost);
  if (std::fabs(pct) < 0.5) {
    return fmt::format("unchanged from {} the week before", FormatUsd(h.prior_cost));
  }
  return fmt::format("{} {:.0f} % from {} the week before", pct > 0 ? "up" : "down", std::fabs(pct),
                     FormatUsd(h.prior_cost));
}

// "+23 %", "-40 %", "new" (nothing the week before).
std::string TrendShort(const DigestHolder& h) {
  if (h.prior_cost == 0) return h.cost == 0 ? "" : "new";
  const double pct =
      100.0 * static_cast<double>(h.cost - h.prior_cost) / static_cast<double>(h.prior_cost);
  return fmt::format("{:+.0f} %", pct);
}

std::string HabitLine(const HabitRow& h) {
  return fmt::format("{} ({}) on GPU {}: idle-held {} h in {} session(s) on {} of {} days, {}",
                     SafeText(h.command), h.kind, h.gpu_index, DigestHours(h.idle_held_ms),
                     h.sessions, h.days, h.window_days, FormatUsd(h.idle_held_cost));
}

std::string Dates(const DigestWeek& w) {
  const struct tm first = LocalDay(w.since_ms), last = LocalDay(w.until_ms - 1);
  return fmt::format("{:04}-{:02}-{:02} to {:04}-{:02}-{:02}", first.tm_year + 1900,
                     first.tm_mon + 1, first.tm_mday, last.tm_year + 1900, last.tm_mon + 1,
                     last.tm_mday);
}

std::string ReportCommand(const DigestWeek& w) {
  return fmt::format("cgov report --since {} --until {} --by user",
                     FormatRfc3339Utc(w.since_ms * 1'000'000),
                     FormatRfc3339Utc(w.until_ms * 1'000'000));
}

constexpr char kTh[] = "<th style=\"text-align:left;padding:2px 12px 2px 0;color:#59636e\">";
constexpr char kTdNum[] = "<td style=\"text-align:right;padding:2px 12px 2px 0\">";

std::string DigestFootHtml(const DigestWeek& w) {
  return "The figures are <code>" + HtmlEscaped(ReportCommand(w)) +
         "</code>'s on this host's history. cgov daemon --notify";
}

DigestMail UserDigest(const DigestInput& in, const DigestHolder& h, const DigestBook& book) {
  DigestMail m;
  m.cost = h.cost;
  m.idle_held_cost = h.idle_held_cost;
  m.idle_held_ms = h.idle_held_ms;
  const std::string who = SafeText(fmt::format("{}", fmt::join(h.users, ", ")));
  const double idle_pct =
      h.cost > 0 ? 100.0 * static_cast<double>(h.idle_held_cost) / static_cast<double>(h.cost) : 0;
  MailFacts rows = {{"GPU time", fmt::format("{} GPU-hours, {}", DigestHours(h.attributed_ms),
                                             FormatUsd(h.cost))},
                    {"idle-held", fmt::format("{} hours, {} ({:.0f} % of your dollars)",
                                              DigestHours(h.idle_held_ms),
                                              FormatUsd(h.idle_held_cost), idle_pct)},
                    {"trend", Trend(h)}};
  if (!h.team.empty()) {
    // 1 + the members who held more idle (ties share a rank).
    const std::vector<MicroUsd>& idle = book.ranked.at(h.team);
    const int rank = 1 + static_cast<int>(std::lower_bound(idle.begin(), idle.end(),
                                                           h.idle_held_cost, std::greater<>()) -
                                          idle.begin());
    const int members = static_cast<int>(idle.size());
    rows.push_back({"in your team", fmt::format("{} of {} in team {} by idle-held dollars (the "
                                                "1st held the most)",
                                                Ordinal(rank), members, SafeText(h.team))});
    m.rank = rank;
    m.members = members;
  }
  std::string habit, fix;
  if (h.habit != nullptr) {
    habit = "Your top habit: " + HabitLine(*h.habit) + ".";
    fix = "What to do: " + SafeText(SaidToItsOwner(h.habit->advice, h.habit->user));
  } else {
    habit = fmt::format("No idle-held stretch of {} min or more this week: nothing to change.",
                        in.week->idle_held_min_ms / 60'000);
  }
  m.id = fmt::format("{}/{}/user/{}", in.host, in.window.key, h.label);
  m.who = SafeText(h.label);  // for the log
  m.to = {h.address};
  m.subject =
      fmt::format("[cgov] Your GPU week on {}: {}, {} h idle-held ({})", in.host, FormatUsd(h.cost),
                  DigestHours(h.idle_held_ms), FormatUsd(h.idle_held_cost));
  const std::string title =
      fmt::format("Your GPU week on {} ({}), {}", in.host, who, Dates(in.window));
  m.text = title + ":\n\n" + MailFactsText(rows);
  m.text += "\n" + habit + "\n" + (fix.empty() ? "" : fix + "\n");
  m.text += "\nThe figures are `" + ReportCommand(in.window) +
            "`'s on this host's history.\n"
            "-- \ncgov daemon --notify (docs/notifications.md)\n";
  m.html = MailHtmlPage(title,
                        MailFactsHtml(rows) + "<p>" + HtmlEscaped(habit) + "</p>" +
                            (fix.empty() ? "" : MailCalloutHtml(fix)),
                        DigestFootHtml(in.window));
  return m;
}

std::optional<DigestMail> TeamDigest(const DigestInput& in, const std::string& team,
                                     const std::vector<std::string>& leads,
                                     const DigestBook& book) {
  std::vector<const DigestHolder*> members;
  std::set<std::string_view> users;  // the members' users
  DigestHolder total;
  auto in_team = book.teams.find(team);
  if (in_team == book.teams.end()) return std::nullopt;
  for (size_t i : in_team->second) {
    const DigestHolder& h = book.holders[i];
    members.push_back(&h);
    users.insert(h.users.begin(), h.users.end());
    total.cost = AddUsd(total.cost, h.cost);
    total.prior_cost = AddUsd(total.prior_cost, h.prior_cost);
    total.idle_held_cost = AddUsd(total.idle_held_cost, h.idle_held_cost);
    total.attributed_ms += h.attributed_ms;
    total.idle_held_ms += h.idle_held_ms;
  }
  if (members.empty() || total.cost == 0 ||
      static_cast<double>(total.cost) < in.config.min_usd * kMicroPerUsd) {
    return std::nullopt;
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const DigestHolder* a, const DigestHolder* b) { return a->cost > b->cost; });
  std::vector<const HabitRow*> wastes;  // the team's costliest habits, any of its members'
  for (const HabitRow& habit : in.week->habits) {
    if (wastes.size() == 3) break;
    if (users.count(habit.user) > 0) wastes.push_back(&habit);
  }
  DigestMail m;
  m.cost = total.cost;
  m.idle_held_cost = total.idle_held_cost;
  m.idle_held_ms = total.idle_held_ms;
  m.members = static_cast<int>(members.size());
  m.id = fmt::format("{}/{}/team/{}", in.host, in.window.key, team);
  m.who = "team " + team;
  m.to = leads;
  m.subject = fmt::format("[cgov] Team {}'s GPU week on {}: {}, {} h idle-held ({})",
                          SafeText(team), in.host, FormatUsd(total.cost),
                          DigestHours(total.idle_held_ms), FormatUsd(total.idle_held_cost));
  const std::string title =
      fmt::format("Team {}'s GPU week on {}, {}", SafeText(team), in.host, Dates(in.window));
  // The team's table, declared once: each row's cells, rendered as text and as HTML.
  using Cells = std::array<std::string, 6>;
  const auto cells = [](const std::string& name, const DigestHolder& h) {
    return Cells{name,
                 DigestHours(h.attributed_ms),
                 FormatUsd(h.cost),
                 DigestHours(h.idle_held_ms),
                 FormatUsd(h.idle_held_cost),
                 TrendShort(h)};
  };
  std::vector<Cells> table = {{"person", "GPU-h", "cost", "idle-held h", "idle-held $", "trend"}};
  for (const DigestHolder* h : members) table.push_back(cells(SafeText(h->label), *h));
  table.push_back(cells("team", total));
  m.text = title + ":\n\n";
  std::string table_html = "<table style=\"border-collapse:collapse\">";
  for (size_t r = 0; r < table.size(); ++r) {
    const Cells& c = table[r];
    m.text +=
        fmt::format("  {:<16}{:>10}{:>12}{:>12}{:>12}{:>8}\n", c[0], c[1], c[2], c[3], c[4], c[5]);
    const bool head = r == 0, total_row = r + 1 == table.size();
    table_html += "<tr>";
    for (size_t k = 0; k < c.size(); ++k) {
      const std::string v = total_row ? "<b>" + HtmlEscaped(c[k]) + "</b>" : HtmlEscaped(c[k]);
      table_html += head ? kTh + v + "</th>" : (k == 0 ? "<td>" : kTdNum) + v + "</td>";
    }
    table_html += "</tr>";
  }
  table_html += "</table>";
  std::string wastes_text, wastes_html;
  for (size_t i = 0; i < wastes.size(); ++i) {
    const std::string line =
        fmt::format("{}: {}.", SafeText(wastes[i]->user), HabitLine(*wastes[i]));
    const std::string fix = "What to do: " + SafeText(wastes[i]->advice);
    wastes_text += fmt::format("  {}. {}\n     {}\n", i + 1, line, fix);
    wastes_html += "<li>" + HtmlEscaped(line) + "<br>" + HtmlEscaped(fix) + "</li>";
  }
  m.text += wastes.empty() ? "\nNo idle-held stretch this week.\n"
                           : "\nThe biggest wastes:\n" + wastes_text;
  m.text += "\nThe figures are `" + ReportCommand(in.window) +
            "`'s on this host's history.\n"
            "-- \ncgov daemon --notify (docs/notifications.md)\n";
  m.html = MailHtmlPage(
      title,
      table_html + (wastes.empty() ? "<p>No idle-held stretch this week.</p>"
                                   : "<h2 style=\"font-size:1.05em\">The biggest wastes</h2><ol>" +
                                         wastes_html + "</ol>"),
      DigestFootHtml(in.window));
  return m;
}

}  // namespace

std::string SaidToItsOwner(const std::string& advice, const std::string& user) {
  const std::string ask = "ask " + user + " to ";
  std::string out = advice;
  if (size_t at = out.find(ask); at != std::string::npos) out.erase(at, ask.size());
  return out;
}

DigestWeek LatestDigestWeek(const DigestConfig& config, int64_t now_ms) {
  struct tm today = LocalDay(now_ms);
  const int weekday = (today.tm_wday + 6) % 7;  // 0 = Monday
  today.tm_mday -= (weekday - config.weekday + 7) % 7;
  DigestWeek w = WeekSentOn(config, today);
  if (w.send_ms > now_ms) {  // today is the day, but not yet the time
    today.tm_mday -= 7;
    w = WeekSentOn(config, today);
  }
  return w;
}

DigestWeek NextDigestWeek(const DigestConfig& config, const DigestWeek& week) {
  struct tm day = LocalDay(week.until_ms);
  day.tm_mday += 7;
  return WeekSentOn(config, day);
}

std::vector<DigestMail> ComposeDigests(const DigestInput& in) {
  std::vector<DigestMail> out;
  const DigestBook book = DigestHolders(in);
  const double min_micro = in.config.min_usd * kMicroPerUsd;
  if (in.config.to_users) {
    for (const DigestHolder& h : book.holders) {
      if (h.address.empty() || static_cast<double>(h.cost) < min_micro || h.cost == 0) continue;
      out.push_back(UserDigest(in, h, book));
    }
  }
  if (in.config.to_leads) {
    for (const auto& [team, leads] : in.people->file().leads) {
      if (std::optional<DigestMail> m = TeamDigest(in, team, leads, book)) {
        out.push_back(std::move(*m));
      }
    }
  }
  return out;
}

}  // namespace cgov
