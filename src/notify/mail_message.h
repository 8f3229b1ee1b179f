// A notice as an e-mail (docs/notifications.md, "E-mail"): an RFC 5322 message with a plain-text
// part and an HTML part (multipart/alternative, both UTF-8 in base64, so no line is too long
// and no dot needs stuffing), and the address check the notifications file's `from` and `to`
// pass. Pure.
#ifndef CGOV_NOTIFY_MAIL_MESSAGE_H_
#define CGOV_NOTIFY_MAIL_MESSAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "notify/notice.h"

namespace cgov {

// A plain address (local@domain): at most 254 characters, the local part of RFC 5321's dot-atom
// characters, the domain of letters, digits, dots and hyphens. No name, comment, space or line
// break, so an address can never add a header or a recipient.
bool IsMailAddress(std::string_view address);

struct MailHeaders {
  std::string from;
  std::vector<std::string> to;
  std::string subject;  // any text: control characters dropped, RFC 2047-encoded when not ASCII
  int64_t date_ms = 0;
  std::string message_id;  // the part before '@': a notice's id (other characters as '.')
};

// The whole message, CRLF line ends. REQUIRES: from and each of to pass IsMailAddress.
std::string ComposeMail(const MailHeaders& headers, std::string_view text, std::string_view html);

// The pieces of the messages cgov writes to people (notices, digests, job reports), one style:
// label/value facts; a page whose body is HTML already escaped, under an <h1> of `title`, with
// a grey footer (HTML); a paragraph set apart (the next step, the fix). Text is escaped here.
using MailFacts = std::vector<std::pair<std::string, std::string>>;
std::string MailHtmlPage(std::string_view title, std::string_view body_html,
                         std::string_view foot_html);
std::string MailFactsHtml(const MailFacts& facts);
std::string MailCalloutHtml(std::string_view text);
// "  LABEL  value" lines, the values aligned after the longest label.
std::string MailFactsText(const MailFacts& facts);

// The notice's message from `from` to `to`: subject "[cgov] " and its summary, the summary,
// the next step and the facts (host, GPU, user, command, since, cost so far) as text and HTML.
std::string NoticeMail(const Notice& notice, const std::string& from,
                       const std::vector<std::string>& to);

}  // namespace cgov

#endif  // CGOV_NOTIFY_MAIL_MESSAGE_H_
