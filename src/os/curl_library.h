// libcurl, loaded at run time by what needs it (`cgov report --prometheus`, and `cgov daemon
// --kubernetes` for the API server's pod list and watch).
//
// The GPU host's binary links no HTTP client library: libcurl pulls in ~25 more (Kerberos, LDAP,
// SSH, RTMP, ...) that `cgov run`, `cgov daemon` and the rest never use (docs/architecture.md,
// "Dependencies"). curl.h is used for its types and constants only; every call goes through the
// pointers resolved here.
#ifndef CGOV_OS_CURL_LIBRARY_H_
#define CGOV_OS_CURL_LIBRARY_H_

#include <curl/curl.h>

#include "core/status.h"

namespace cgov {

struct CurlLibrary {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_easy_escape) easy_escape = nullptr;
  decltype(&curl_free) free = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// libcurl.so.4 (or `CGOV_LIBCURL`, for tests), loaded and initialised once for the process;
// Unavailable, naming the library and the package to install, when it cannot be.
Result<const CurlLibrary*> LoadCurl();

// Holds a transfer to the protocols `names` lists ("http,https", "smtp,smtps"): by name on
// libcurl 7.85+, else (Debian 11's 7.74, Ubuntu 20.04's 7.68: the portable build,
// docs/install.md) as CURLOPT_PROTOCOLS' bits. False when neither took: the transfer must not
// run then.
bool RestrictProtocols(const CurlLibrary& lib, CURL* curl, const char* names);

}  // namespace cgov

#endif  // CGOV_OS_CURL_LIBRARY_H_
