// One message handed to an SMTP server through libcurl (loaded at run time, src/os/
// curl_library.h): the e-mail sink of `cgov daemon --notify` (docs/notifications.md).
#ifndef CGOV_OS_SMTP_CLIENT_H_
#define CGOV_OS_SMTP_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace cgov {

struct MailSend {
  // smtp://[user:password@]host[:port] or smtps://...: the credentials, if any, in the URL
  // (read from a file of mode 600, like a webhook's URL).
  std::string url;
  bool starttls = true;         // smtp://: send only once the server has started TLS (STARTTLS)
  std::string ca_file;          // the server's CA, when not the system's
  std::string from;             // the envelope sender
  std::vector<std::string> to;  // the envelope recipients
  std::string message;          // RFC 5322, CRLF line ends (ComposeMail)
  int64_t timeout_ms = 10'000;  // the whole exchange, connection included
  const std::atomic<bool>* stop = nullptr;  // set: the exchange is abandoned
};

struct MailOutcome {
  bool sent = false;   // the server took the message (250 after DATA)
  long smtp_code = 0;  // the server's last reply code; 0 when it gave none
  std::string error;   // why it was not sent; never names the URL (it may hold a password)
};

// Unavailable when libcurl cannot be loaded or the transfer cannot be held to smtp and smtps.
Result<MailOutcome> SendMail(const MailSend& send);

}  // namespace cgov

#endif  // CGOV_OS_SMTP_CLIENT_H_
