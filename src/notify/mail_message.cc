#include "notify/mail_message.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "core/base64.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

bool IsAtext(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+/=?^_`{|}~-").find(c) != std::string_view::npos;
}

bool IsDomainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.';
}

// RFC 5322's date: "Sun, 29 Nov 2026 14:44:11 +0000" (English names whatever the locale).
std::string MailDate(int64_t ms) {
  static constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const time_t seconds = static_cast<time_t>(ms / 1000);
  tm t{};
  gmtime_r(&seconds, &t);
  return fmt::format("{}, {:02} {} {} {:02}:{:02}:{:02} +0000", kDays[t.tm_wday % 7], t.tm_mday,
                     kMonths[t.tm_mon % 12], t.tm_year + 1900, t.tm_hour, t.tm_min, t.tm_sec);
}

// A header's text: control characters out; as it is when plain ASCII, else RFC 2047's
// encoded words (UTF-8, base64) of at most 45 bytes each, never splitting a character.
std::string HeaderText(std::string_view text) {
  std::string clean;
  bool ascii = true;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    ascii = ascii && u < 0x80;
    clean += c;
  }
  // Where the character holding byte i starts: at most 3 bytes back (UTF-8's longest is 4), so
  // bytes that are not UTF-8 are cut where they fall.
  auto start_of = [&](size_t i) {
    for (int k = 0; k < 3 && i > 0 && i < clean.size() &&
                    (static_cast<unsigned char>(clean[i]) & 0xC0) == 0x80;
         ++k) {
      --i;
    }
    return i;
  };
  if (clean.size() > 900) clean.resize(start_of(900));  // a header line stays under 998
  if (ascii) return clean;
  std::string out;
  size_t at = 0;
  while (at < clean.size()) {
    const size_t end = start_of(std::min(clean.size(), at + 45));
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64Encode(std::string_view(clean).substr(at, end - at)) + "?=";
    at = end;
  }
  return out;
}

// Base64 in lines of 76, CRLF.
std::string Base64Lines(std::string_view bytes) {
  const std::string encoded = Base64Encode(bytes);
  std::string out;
  for (size_t at = 0; at < encoded.size(); at += 76) out += encoded.substr(at, 76) + "\r\n";
  return out;
}

// The facts of a notice, label and value, in the order both parts show them.
MailFacts Facts(const Notice& n) {
  MailFacts facts;
  facts.emplace_back("Host", SafeText(n.host));
  if (n.gpu)
    facts.emplace_back("GPU", fmt::format("{} ({}, {})", n.gpu->index, SafeText(n.gpu->name),
                                          SafeText(n.gpu->uuid)));
  if (!n.user.empty()) facts.emplace_back("User", SafeText(n.user));
  if (n.pid != 0) facts.emplace_back("Process", fmt::format("{} ({})", SafeText(n.command), n.pid));
  if (n.since_ms > 0) facts.emplace_back("Since", FormatRfc3339Utc(n.since_ms * 1'000'000));
  if (n.cost_usd > 0) facts.emplace_back("Cost so far", fmt::format("${:.2f}", n.cost_usd));
  facts.emplace_back("Rule", fmt::format("{} ({})", SafeText(n.rule), NoticeEventName(n.event)));
  facts.emplace_back("Notice", SafeText(n.id));
  return facts;
}

}  // namespace

bool IsMailAddress(std::string_view address) {
  const size_t at = address.find('@');
  if (address.size() > 254 || at == std::string_view::npos || at == 0 || at + 1 >= address.size() ||
      address.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  const std::string_view local = address.substr(0, at), domain = address.substr(at + 1);
  if (local.size() > 64 || local.front() == '.' || local.back() == '.') return false;
  for (char c : local) {
    if (!IsAtext(c) && c != '.') return false;
  }
  if (domain.front() == '.' || domain.back() == '.' || domain.front() == '-') return false;
  for (char c : domain) {
    if (!IsDomainChar(c)) return false;
  }
  return domain.find("..") == std::string_view::npos && local.find("..") == std::string_view::npos;
}

std::string ComposeMail(const MailHeaders& h, std::string_view text, std::string_view html) {
  // Letters, digits, '-' and '_' kept, anything else a '.' (a separator stays one, so two ids
  // stay two): fit for a Message-ID.
  std::string id;
  for (char c : h.message_id) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    id += kept ? c : '.';
  }
  if (id.empty()) id = "notice";
  std::string to;
  for (const std::string& address : h.to) to += (to.empty() ? "" : ", ") + address;
  // The boundary cannot occur in base64 (it has a '=' and a '_' base64 never puts there).
  const std::string boundary = "=_cgov_part";
  std::string m;
  m += "Date: " + MailDate(h.date_ms) + "\r\n";
  m += "From: " + h.from + "\r\n";
  m += "To: " + to + "\r\n";
  m += "Subject: " + HeaderText(h.subject) + "\r\n";
  m += "Message-ID: <" + id + "@cgov>\r\n";
  m += "MIME-Version: 1.0\r\n";
  m += "Auto-Submitted: auto-generated\r\n";  // RFC 3834: no vacation replies to it
  m += "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n\r\n";
  m += "--" + boundary +
       "\r\nContent-Type: text/plain; charset=utf-8\r\n"
       "Content-Transfer-Encoding: base64\r\n\r\n" +
       Base64Lines(text);
  m += "--" + boundary +
       "\r\nContent-Type: text/html; charset=utf-8\r\n"
       "Content-Transfer-Encoding: base64\r\n\r\n" +
       Base64Lines(html);
  m += "--" + boundary + "--\r\n";
  return m;
}

std::string MailHtmlPage(std::string_view title, std::string_view body_html,
                         std::string_view foot_html) {
  return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         HtmlEscaped(title) +
         "</title></head><body style=\"font-family:system-ui,-apple-system,'Segoe UI',"
         "sans-serif;color:#1f2328;max-width:760px\"><h1 style=\"font-size:1.2em\">" +
         HtmlEscaped(title) + "</h1>" + std::string(body_html) +
         "<p style=\"color:#59636e;font-size:0.85em\">" + std::string(foot_html) +
         "</p></body></html>";
}

std::string MailFactsHtml(const MailFacts& facts) {
  std::string html = "<table style=\"border-collapse:collapse\">";
  for (const auto& [label, value] : facts) {
    html += "<tr><th style=\"text-align:left;padding:2px 12px 2px 0;color:#59636e\">" +
            HtmlEscaped(label) + "</th><td>" + HtmlEscaped(value) + "</td></tr>";
  }
  return html + "</table>";
}

std::string MailCalloutHtml(std::string_view text) {
  return "<p style=\"border-left:4px solid #0969da;padding-left:8px\">" + HtmlEscaped(text) +
         "</p>";
}

std::string MailFactsText(const MailFacts& facts) {
  size_t width = 0;
  for (const auto& [label, value] : facts) width = std::max(width, label.size());
  std::string text;
  for (const auto& [label, value] : facts) {
    text += fmt::format("  {:<{}}{}\n", label, width + 2, value);
  }
  return text;
}

std::string NoticeMail(const Notice& n, const std::string& from,
                       const std::vector<std::string>& to) {
  const std::string summary = SafeText(n.summary), next = SafeText(n.next_step);
  const MailFacts facts = Facts(n);
  std::string text = summary + "\n\n" + next + "\n\n";
  for (const auto& [label, value] : facts) text += fmt::format("{}: {}\n", label, value);
  text += "\n-- \ncgov daemon --notify (docs/notifications.md)\n";
  const std::string html =
      MailHtmlPage(summary, MailCalloutHtml(next) + MailFactsHtml(facts), "cgov daemon --notify");
  return ComposeMail({from, to, "[cgov] " + summary, n.at_ms, n.id}, text, html);
}

}  // namespace cgov
