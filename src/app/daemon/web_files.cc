#include "app/daemon/web_files.h"

#include <sys/stat.h>

#include <tuple>

#include <fmt/format.h>

#include "app/daemon/daemon_config.h"
#include "core/time_format.h"
#include "export/basic_auth.h"
#include "os/env.h"
#include "os/log.h"

namespace cgov {
namespace {

// --basic-auth-file: one line "user:password" (a file, so the password is not in `ps`), which
// only its owner may read: a password in plain text readable by others is refused.
Status ReadBasicAuth(const std::string& path, HttpServerOptions* http) {
  CGOV_ASSIGN_OR_RETURN(std::string text,
                        ReadDaemonFile(*Env::Default(), path, "--basic-auth-file"));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return InvalidArgument(fmt::format(
        "cgov daemon: --basic-auth-file {}: a password in plain text readable by its group or "
        "others (mode {:04o}); `chmod 600 {}`, or keep a bcrypt hash in --web-config instead",
        path, st.st_mode & 07777, path));
  }
  Result<std::pair<std::string, std::string>> credentials = ParseBasicAuthFile(text);
  if (!credentials.ok()) {
    return credentials.status().WithContext(fmt::format("cgov daemon: --basic-auth-file {}", path));
  }
  auto [user, password] = std::move(credentials).value();
  http->users.push_back({std::move(user), std::move(password), false});
  return Status::Ok();
}

// Fail closed: a TLS setup that cannot work must not become plain HTTP (basic-auth passwords
// in clear).
Status ReadKeyPair(const std::string& tls_cert, const std::string& tls_key,
                   HttpServerOptions* http) {
  CGOV_ASSIGN_OR_RETURN(http->tls_cert_pem,
                        ReadDaemonFile(*Env::Default(), tls_cert, "--tls-cert"));
  CGOV_ASSIGN_OR_RETURN(http->tls_key_pem, ReadDaemonFile(*Env::Default(), tls_key, "--tls-key"));
  for (const auto& [flag, path, pem] : {std::tuple{"--tls-cert", tls_cert, http->tls_cert_pem},
                                        std::tuple{"--tls-key", tls_key, http->tls_key_pem}}) {
    if (pem.find("-----BEGIN ") == std::string::npos) {
      return InvalidArgument(fmt::format("cgov daemon: {} {}: {}; refusing to serve without TLS",
                                         flag, path, pem.empty() ? "empty" : "no PEM block in it"));
    }
  }
  Result<CertificateInfo> cert = ReadCertificateInfo(http->tls_cert_pem);
  if (!cert.ok()) {
    return InvalidArgument(
        fmt::format("cgov daemon: --tls-cert {}: {}; refusing to serve without TLS", tls_cert,
                    cert.status().message()));
  }
  // Served all the same (the operator may be renewing it), but every client will refuse it.
  const int64_t now_s = Env::Default()->WallMs() / 1000;
  if (now_s > cert->not_after_s || now_s < cert->not_before_s) {
    const int64_t edge_s = now_s > cert->not_after_s ? cert->not_after_s : cert->not_before_s;
    LogWarning(
        "--tls-cert {} ({}) {} {}: clients that check certificates will refuse the connection",
        tls_cert, cert->subject, now_s > cert->not_after_s ? "expired on" : "is not valid before",
        FormatRfc3339Utc(edge_s * 1'000'000'000));
  }
  http->tls = true;
  return Status::Ok();
}

}  // namespace

Status LoadWebFiles(const WebFiles& f, HttpServerOptions* http) {
  std::string tls_cert = f.tls_cert, tls_key = f.tls_key;
  if (!f.basic_auth.empty()) CGOV_RETURN_IF_ERROR(ReadBasicAuth(f.basic_auth, http));
  if (!f.web_config.empty()) {
    if (!f.basic_auth.empty()) {
      return InvalidArgument(
          "cgov daemon: --web-config and --basic-auth-file: give the users in one of them");
    }
    CGOV_ASSIGN_OR_RETURN(std::string text,
                          ReadDaemonFile(*Env::Default(), f.web_config, "--web-config"));
    Result<WebConfig> config = ParseWebConfig(text, f.web_config);
    if (!config.ok()) return config.status().WithContext("cgov daemon: --web-config");
    if (!config->tls_cert_file.empty()) {
      if (!tls_cert.empty()) {
        return InvalidArgument(
            fmt::format("cgov daemon: --tls-cert and --web-config {}'s tls_server_config: give the "
                        "certificate in one of them",
                        f.web_config));
      }
      tls_cert = config->tls_cert_file;
      tls_key = config->tls_key_file;
    }
    http->users = std::move(config->users);
  }
  if (tls_cert.empty() != tls_key.empty()) {
    return InvalidArgument("cgov daemon: --tls-cert and --tls-key go together");
  }
  if (!tls_cert.empty()) CGOV_RETURN_IF_ERROR(ReadKeyPair(tls_cert, tls_key, http));
  return Status::Ok();
}

}  // namespace cgov
