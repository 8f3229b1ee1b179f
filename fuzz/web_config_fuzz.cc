// --web-config: the YAML an operator writes (read by libyaml, loaded at run time). Properties:
// no crash or leak on any input; an accepted file has only users with a non-empty name without a
// colon and a hash of bcrypt's shape, and names a certificate and a key together or neither.
#include <cstdint>
#include <string>
#include <string_view>

#include "export/basic_auth.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(web_config_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<WebConfig> config = ParseWebConfig(text, "web.yml");
  if (!config.ok()) {
    FUZZ_CHECK(std::string_view(config.status().message()).starts_with("web.yml"));
    return 0;
  }
  for (const BasicAuthUser& u : config->users) {
    FUZZ_CHECK(!u.name.empty() && u.name.find(':') == std::string::npos);
    FUZZ_CHECK(u.bcrypt && CheckBcryptHash(u.secret).ok());
  }
  FUZZ_CHECK(config->tls_cert_file.empty() == config->tls_key_file.empty());
  FUZZ_CHECK(!config->users.empty() || !config->tls_cert_file.empty());
  return 0;
}
