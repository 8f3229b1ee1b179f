// Who may read `cgov daemon --listen`'s /metrics: users with a password given in plain text
// (--basic-auth-file, a file only its owner may read) or stored as a bcrypt hash in a
// Prometheus web configuration file (--web-config, the exporter-toolkit's format:
// basic_auth_users and tls_server_config's cert_file/key_file). bcrypt is checked by libcrypt
// (libxcrypt) and the YAML read by libyaml, both loaded at run time by the flag that needs them.
#ifndef CGOV_EXPORT_BASIC_AUTH_H_
#define CGOV_EXPORT_BASIC_AUTH_H_

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct BasicAuthUser {
  std::string name;
  std::string secret;  // the password, or its bcrypt hash when `bcrypt`
  bool bcrypt = false;
};

// Ok when `hash` has bcrypt's shape: $2a$, $2b$ or $2y$, a cost from 04 to 31, '$', then 53
// characters of bcrypt's base-64 alphabet. Errors say what is wrong without echoing the hash.
Status CheckBcryptHash(std::string_view hash);

// Whether `password` matches the bcrypt `hash` (libcrypt's crypt_r; Unavailable when libcrypt
// cannot be loaded or does not know bcrypt).
Result<bool> BcryptMatches(std::string_view password, const std::string& hash);

// Checks credentials against the users; thread-safe. A bcrypt check costs tens of milliseconds
// by design, so a password that matched is remembered (in memory, per user) and the next request
// with it is a constant-time comparison; a wrong password costs a bcrypt check each time.
class BasicAuthChecker {
 public:
  explicit BasicAuthChecker(std::vector<BasicAuthUser> users) : users_(std::move(users)) {}
  bool enabled() const { return !users_.empty(); }
  bool Check(std::string_view user, std::string_view password);

 private:
  std::vector<BasicAuthUser> users_;
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> matched_;  // user -> password that matched
};

// A --web-config file: the parts of Prometheus' exporter-toolkit web configuration cgov serves.
struct WebConfig {
  std::vector<BasicAuthUser> users;  // basic_auth_users (bcrypt hashes)
  std::string tls_cert_file;         // tls_server_config.cert_file, resolved against the
  std::string tls_key_file;          // config file's directory as exporter-toolkit does
};

// Parses the YAML text of `path`. Anything cgov does not serve (client certificates, cipher
// lists, http_server_config) is refused rather than ignored; errors name the file, the line and
// the key.
Result<WebConfig> ParseWebConfig(std::string_view yaml, const std::string& path);

}  // namespace cgov

#endif  // CGOV_EXPORT_BASIC_AUTH_H_
