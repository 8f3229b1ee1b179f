// The metrics module's files (--listen's): the users, from --basic-auth-file or --web-config
// (the Prometheus exporters' web configuration), and the TLS key pair, from --tls-cert and
// --tls-key or the web config's tls_server_config, read into the server's options. A TLS setup
// that cannot work fails: it never becomes plain HTTP.
#ifndef CGOV_APP_DAEMON_WEB_FILES_H_
#define CGOV_APP_DAEMON_WEB_FILES_H_

#include <string>

#include "core/status.h"
#include "export/http_server.h"

namespace cgov {

// Paths as given ("" = not given).
struct WebFiles {
  std::string basic_auth, web_config, tls_cert, tls_key;
};

// Fills `http`'s users and key pair; the first error names its flag, file and line.
Status LoadWebFiles(const WebFiles& files, HttpServerOptions* http);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_WEB_FILES_H_
