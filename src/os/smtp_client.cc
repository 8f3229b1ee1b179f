#include "os/smtp_client.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/text.h"
#include "os/curl_library.h"

namespace cgov {
namespace {

struct Upload {
  const std::string* message;
  size_t at = 0;
  const std::atomic<bool>* stop;
};

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  const size_t room = size * n;
  const size_t take = std::min(room, u->message->size() - u->at);
  std::memcpy(buffer, u->message->data() + u->at, take);
  u->at += take;
  return take;
}

int OnMailProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const std::atomic<bool>* stop = static_cast<Upload*>(user)->stop;
  return stop != nullptr && stop->load() ? 1 : 0;  // non-zero aborts
}

}  // namespace

Result<MailOutcome> SendMail(const MailSend& send) {
  CGOV_ASSIGN_OR_RETURN(const CurlLibrary* loaded, LoadCurl());
  const CurlLibrary& lib = *loaded;
  std::unique_ptr<CURL, decltype(lib.easy_cleanup)> curl(lib.easy_init(), lib.easy_cleanup);
  if (!curl) return Internal("libcurl: cannot start a transfer");
  CURL* c = curl.get();
  if (!RestrictProtocols(lib, c, "smtp,smtps")) {
    return Unavailable("libcurl: cannot limit a transfer to smtp and smtps");
  }
  curl_slist* rcpt = nullptr;
  for (const std::string& to : send.to) rcpt = lib.slist_append(rcpt, to.c_str());
  std::unique_ptr<curl_slist, decltype(lib.slist_free_all)> rcpt_list(rcpt, lib.slist_free_all);
  Upload upload{&send.message, 0, send.stop};
  char error[CURL_ERROR_SIZE] = {0};
  lib.easy_setopt(c, CURLOPT_URL, send.url.c_str());
  lib.easy_setopt(c, CURLOPT_MAIL_FROM, send.from.c_str());
  lib.easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
  lib.easy_setopt(c, CURLOPT_UPLOAD, 1L);
  lib.easy_setopt(c, CURLOPT_READFUNCTION, &OnRead);
  lib.easy_setopt(c, CURLOPT_READDATA, &upload);
  lib.easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(send.message.size()));
  // STARTTLS required: a server that does not offer it, or fails it, gets nothing (not even
  // the credentials). smtps:// is TLS from the first byte either way.
  if (send.starttls) lib.easy_setopt(c, CURLOPT_USE_SSL, long{CURLUSESSL_ALL});
  if (!send.ca_file.empty()) lib.easy_setopt(c, CURLOPT_CAINFO, send.ca_file.c_str());
  lib.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(send.timeout_ms));
  lib.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(send.timeout_ms));
  lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  if (send.stop != nullptr) {
    lib.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnMailProgress);
    lib.easy_setopt(c, CURLOPT_XFERINFODATA, &upload);
    lib.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  const CURLcode code = lib.easy_perform(c);
  MailOutcome out;
  lib.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.smtp_code);
  out.sent = code == CURLE_OK;
  if (!out.sent) {
    // curl's messages name the host at most, never the URL's userinfo.
    out.error = SafeText(error[0] != 0 ? error : lib.easy_strerror(code));
    if (code == CURLE_OPERATION_TIMEDOUT) out.error = "timed out: " + out.error;
  }
  return out;
}

}  // namespace cgov
