// Who may read `cgov daemon --listen`'s /metrics: users with a password given in plain text
// (--basic-auth-file, a file only its owner may read) or stored as a bcrypt hash in a
// Prometheus web configuration file (--web-config, the exporter-toolkit's format:
// basic_auth_users and tls_server_config's cert_file/key_file). bcrypt is checked by libcrypt
// (libxcrypt) and the YAML read by libyaml, both loaded at run time by the flag that needs them.
#ifndef CGOV_EXPORT_BASIC_AUTH_H_
#define CGOV_EXPORT_BASIC_AUTH_H_

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "os/env.h"

namespace cgov {

struct BasicAuthUser {
  std::string name;
  std::string secret;  // the password, or its bcrypt hash when `bcrypt`
  bool bcrypt = false;
};

// The highest bcrypt cost accepted. Each wrong password costs a bcrypt check on the HTTP server's
// threads: ~0.2 s of one core at cost 12 (measured on this project's CI machine), ~0.8 s at 14,
// days at 31; cost 10 (~50 ms), what Prometheus' documentation shows, is already far beyond
// guessing over HTTP. So a hash above 12 is refused at start-up, naming the command to re-hash.
inline constexpr int kMaxBcryptCost = 12;

// Ok when `hash` has bcrypt's shape: $2a$, $2b$ or $2y$, a cost from 04 to kMaxBcryptCost, '$',
// then 53 characters of bcrypt's base-64 alphabet. Errors say what is wrong without echoing the
// hash.
Status CheckBcryptHash(std::string_view hash);

// Whether `password` matches the bcrypt `hash` (libcrypt's crypt_r; Unavailable when libcrypt
// cannot be loaded or does not know bcrypt).
Result<bool> BcryptMatches(std::string_view password, const std::string& hash);

enum class AuthVerdict {
  kOk,
  kDenied,
  kBusy,  // a bcrypt check was needed and none may run now: answer 429, the client tries again
};

// Checks credentials against the users; thread-safe. A bcrypt check costs tens of milliseconds
// by design and runs on one of the HTTP server's few threads, so, as exporter-toolkit does, the
// verdict on each (user, password) is remembered (a password that matched, per user; the last
// kWrongRemembered wrong ones) and asked again as a constant-time comparison. A check that still
// needs bcrypt runs only when no other is running and the bcrypt budget is not spent: a bucket
// of kBcryptBurst of bcrypt CPU time, refilled at half a second per second (half of one core at
// most); otherwise the verdict is kBusy. So a flood of wrong passwords holds one server thread
// at most, and never for more than kBcryptBurst of CPU at a stretch; /health and the others stay
// free. A check is charged the CPU time its thread spent, not the wall time it took: on a host
// whose cores are busy (a training job's loaders) a check takes longer without costing more,
// and charging the wall time answered 429 to the first wrong password.
class BasicAuthChecker {
 public:
  static constexpr size_t kWrongRemembered = 256;
  static constexpr std::chrono::milliseconds kBcryptBurst{500};
  // `clock`: the monotonic clock the budget refills by and the thread CPU clock it is charged
  // by; it outlives the checker.
  explicit BasicAuthChecker(std::vector<BasicAuthUser> users,
                            Clock* clock = &Env::Default()->clock())
      : users_(std::move(users)), clock_(clock) {}
  bool enabled() const { return !users_.empty(); }
  AuthVerdict Check(std::string_view user, std::string_view password);
  uint64_t bcrypt_checks() const;  // run so far (for tests)

 private:
  // The bcrypt verdict, or nullopt when none may run now.
  std::optional<bool> GatedBcrypt(std::string_view password, const std::string& hash);

  std::vector<BasicAuthUser> users_;
  Clock* clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> matched_;  // user -> password that matched
  std::deque<std::pair<std::string, std::string>> wrong_;    // (user, password), newest last
  std::mutex bcrypt_mu_;  // held while bcrypt runs, and guards the budget
  std::chrono::steady_clock::duration budget_ = kBcryptBurst;
  std::optional<int64_t> refilled_ns_;  // the monotonic clock at the last refill
  uint64_t bcrypt_checks_ = 0;
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
