#include "export/basic_auth.h"

#include <time.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "core/text.h"
#include "export/http_libraries.h"

namespace cgov {
namespace {

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

bool IsBcryptChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '/';
}

// One loaded YAML document and the questions the web config asks of it.
class YamlDocument {
 public:
  YamlDocument(const YamlLibrary* y, std::string path) : y_(y), path_(std::move(path)) {}
  ~YamlDocument() {
    if (loaded_) y_->document_delete(&doc_);
  }
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  // The web config nests three deep (the root, basic_auth_users, a user); a YAML nested far
  // deeper is refused from its events before libyaml builds a document of it (300,000 levels,
  // 600 KB, took minutes to load), as the TOML readers refuse deep lists.
  static constexpr int kMaxDepth = 16;

  Status CheckDepth(std::string_view text) {
    yaml_parser_t parser;
    if (y_->parser_initialize(&parser) == 0) return Internal("libyaml: out of memory");
    y_->parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                                text.size());
    Status s = Status::Ok();
    int depth = 0;
    for (bool done = false; !done && s.ok();) {
      yaml_event_t event;
      if (y_->parser_parse(&parser, &event) == 0) break;  // Load says what is wrong
      if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT) {
        if (++depth > kMaxDepth) {
          s = InvalidArgument(
              fmt::format("{}:{}:{}: nested more than {} deep; the web config needs 3", path_,
                          event.start_mark.line + 1, event.start_mark.column + 1, kMaxDepth));
        }
      } else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT) {
        --depth;
      }
      done = event.type == YAML_STREAM_END_EVENT;
      y_->event_delete(&event);
    }
    y_->parser_delete(&parser);
    return s;
  }

  Status Load(std::string_view text) {
    CGOV_RETURN_IF_ERROR(CheckDepth(text));
    yaml_parser_t parser;
    if (y_->parser_initialize(&parser) == 0) return Internal("libyaml: out of memory");
    y_->parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                                text.size());
    const bool ok = y_->parser_load(&parser, &doc_) != 0;
    Status s = Status::Ok();
    if (!ok) {
      s = InvalidArgument(fmt::format("{}:{}:{}: not YAML: {}", path_, parser.problem_mark.line + 1,
                                      parser.problem_mark.column + 1,
                                      SafeText(parser.problem ? parser.problem : "parse error")));
    } else {
      // A second document (after `---`) would be ignored by a reader of the first: refused.
      yaml_document_t next{};
      if (y_->parser_load(&parser, &next) != 0) {
        if (yaml_node_t* root = y_->document_get_root_node(&next); root != nullptr) {
          s = InvalidArgument(fmt::format("{}:{}: a second YAML document; the web config is one",
                                          path_, root->start_mark.line + 1));
        }
        y_->document_delete(&next);
      }
    }
    y_->parser_delete(&parser);
    loaded_ = ok;
    return s;
  }
  yaml_node_t* Root() { return y_->document_get_root_node(&doc_); }
  yaml_node_t* Node(int index) { return y_->document_get_node(&doc_, index); }
  static size_t Line(const yaml_node_t* n) { return n->start_mark.line + 1; }
  static std::string_view Scalar(const yaml_node_t* n) {
    return {reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length};
  }
  // A null value (`key:` with nothing after it) reads as an empty plain scalar.
  static bool IsNull(const yaml_node_t* n) {
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
      return false;
    }
    const std::string_view v = Scalar(n);
    return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
  }
  Status Error(const yaml_node_t* n, std::string_view key, std::string_view what) const {
    return InvalidArgument(fmt::format("{}:{}: {}: {}", path_, Line(n), key, what));
  }
  // Calls visit(key, key node, value node) for each pair of a mapping, refusing non-scalar and
  // repeated keys.
  template <typename Visit>
  Status ForEachPair(yaml_node_t* map, std::string_view where, Visit visit) {
    if (map->type != YAML_MAPPING_NODE) return Error(map, where, "expected a mapping");
    std::vector<std::string> seen;
    for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         ++p) {
      yaml_node_t* k = Node(p->key);
      yaml_node_t* v = Node(p->value);
      if (k == nullptr || v == nullptr) return Error(map, where, "malformed mapping");
      if (k->type != YAML_SCALAR_NODE) return Error(k, where, "expected a plain key");
      const std::string key(Scalar(k));
      const std::string name = where.empty() ? key : fmt::format("{}.{}", where, SafeText(key));
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        return Error(k, name, "given twice");
      }
      seen.push_back(key);
      if (Status s = visit(key, name, k, v); !s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  const YamlLibrary* y_;
  std::string path_;
  yaml_document_t doc_{};
  bool loaded_ = false;
};

}  // namespace

Status CheckBcryptHash(std::string_view hash) {
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' ||
      (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') || hash[3] != '$' || hash[6] != '$') {
    return InvalidArgument(
        "not a bcrypt hash (expected $2y$, $2b$ or $2a$, a two-digit cost, '$' and 53 characters, "
        "as `htpasswd -nBC 10 USER` prints after the colon)");
  }
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') {
    return InvalidArgument("bcrypt cost is not two digits");
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4) return InvalidArgument("bcrypt cost must be from 04 to 31");
  if (cost > kMaxBcryptCost) {
    // ~0.2 s at 12, doubling with each step.
    const double seconds = 0.2 * static_cast<double>(1 << (cost - kMaxBcryptCost));
    return InvalidArgument(fmt::format(
        "bcrypt cost {} is more than {}, the most cgov accepts: every wrong password would cost "
        "the server ~{} of one core (docs/security.md); re-hash it, e.g. `htpasswd -nBC 10 USER`",
        cost, kMaxBcryptCost,
        seconds < 3600 ? fmt::format("{:.1f} s", seconds)
                       : fmt::format("{:.0f} h", seconds / 3600)));
  }
  if (!std::all_of(hash.begin() + 7, hash.end(), IsBcryptChar)) {
    return InvalidArgument("bcrypt salt and hash hold a character outside [./A-Za-z0-9]");
  }
  return Status::Ok();
}

Result<bool> BcryptMatches(std::string_view password, const std::string& hash) {
  CGOV_ASSIGN_OR_RETURN(const CryptLibrary* lib, LoadCrypt());
  // crypt_r reads a C string, and bcrypt only the first 72 bytes: a password it would cut
  // short ("pass\0anything", or 73 bytes matching on 72) is refused rather than matched.
  if (password.find('\0') != std::string_view::npos || password.size() > 72) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB in libxcrypt: not on the stack
  const std::string phrase(password);
  const char* out = lib->crypt(phrase.c_str(), hash.c_str(), data.get());
  if (out == nullptr || out[0] == '*') {
    return Unavailable("libcrypt could not check a bcrypt hash (a libcrypt without bcrypt?)");
  }
  return ConstantTimeEqual(out, hash);
}

std::optional<bool> BasicAuthChecker::GatedBcrypt(std::string_view password,
                                                  const std::string& hash) {
  std::unique_lock gate(bcrypt_mu_, std::try_to_lock);
  if (!gate.owns_lock()) return std::nullopt;
  const int64_t start_ns = clock_->MonotonicNs();
  if (refilled_ns_) {
    budget_ = std::min<std::chrono::steady_clock::duration>(
        kBcryptBurst, budget_ + std::chrono::nanoseconds(start_ns - *refilled_ns_) / 2);
  }
  refilled_ns_ = start_ns;
  if (budget_ <= std::chrono::steady_clock::duration::zero()) return std::nullopt;
  const int64_t cpu_start_ns = clock_->ThreadCpuNs();
  Result<bool> match = BcryptMatches(password, hash);
  budget_ -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::nanoseconds(clock_->ThreadCpuNs() - cpu_start_ns));
  std::lock_guard lock(mu_);
  ++bcrypt_checks_;
  return match.ok() && *match;
}

uint64_t BasicAuthChecker::bcrypt_checks() const {
  std::lock_guard lock(mu_);
  return bcrypt_checks_;
}

AuthVerdict BasicAuthChecker::Check(std::string_view user, std::string_view password) {
  bool known = false;
  bool ok = false;
  for (const BasicAuthUser& u : users_) {  // every user compared: no early answer to time
    const bool same_user = ConstantTimeEqual(u.name, user);
    if (!same_user) continue;
    known = true;
    if (!u.bcrypt) {
      ok = ConstantTimeEqual(u.secret, password);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      auto it = matched_.find(u.name);
      if (it != matched_.end() && ConstantTimeEqual(it->second, password)) {
        ok = true;
        continue;
      }
      bool remembered_wrong = false;
      for (const auto& [name, wrong] : wrong_) {
        remembered_wrong |= name == u.name && ConstantTimeEqual(wrong, password);
      }
      if (remembered_wrong) continue;
    }
    const std::optional<bool> match = GatedBcrypt(password, u.secret);
    if (!match) return AuthVerdict::kBusy;
    std::lock_guard lock(mu_);
    if (*match) {
      matched_[u.name] = std::string(password);
      ok = true;
    } else {
      if (wrong_.size() == kWrongRemembered) wrong_.pop_front();
      wrong_.emplace_back(u.name, std::string(password));
    }
  }
  return known && ok ? AuthVerdict::kOk : AuthVerdict::kDenied;
}

Result<WebConfig> ParseWebConfig(std::string_view yaml, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(const YamlLibrary* lib, LoadYaml());
  YamlDocument doc(lib, path);
  CGOV_RETURN_IF_ERROR(doc.Load(yaml));
  yaml_node_t* root = doc.Root();
  if (root == nullptr || YamlDocument::IsNull(root)) {
    return InvalidArgument(
        fmt::format("{}: empty: expected basic_auth_users and/or tls_server_config", path));
  }
  WebConfig config;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto resolve = [&](std::string_view file) {
    const std::filesystem::path p(file);
    return (p.is_absolute() || dir.empty() ? p : dir / p).string();
  };
  Status s = doc.ForEachPair(
      root, "",
      [&](const std::string& key, const std::string& name, yaml_node_t* k,
          yaml_node_t* v) -> Status {
        if (key == "basic_auth_users") {
          if (YamlDocument::IsNull(v)) return Status::Ok();
          return doc.ForEachPair(
              v, name,
              [&](const std::string& user, const std::string& user_name, yaml_node_t* uk,
                  yaml_node_t* hv) -> Status {
                if (user.empty() || user.find(':') != std::string::npos || !IsSafeText(user)) {
                  return doc.Error(uk, user_name, "a user name must be printable and hold no ':'");
                }
                if (hv->type != YAML_SCALAR_NODE)
                  return doc.Error(hv, user_name, "expected a hash");
                const std::string_view hash = YamlDocument::Scalar(hv);
                if (Status bad = CheckBcryptHash(hash); !bad.ok()) {
                  return doc.Error(hv, user_name, bad.message());
                }
                config.users.push_back({user, std::string(hash), true});
                return Status::Ok();
              });
        }
        if (key == "tls_server_config") {
          return doc.ForEachPair(
              v, name,
              [&](const std::string& field, const std::string& field_name, yaml_node_t*,
                  yaml_node_t* fv) -> Status {
                if (field != "cert_file" && field != "key_file") {
                  return doc.Error(
                      fv, field_name,
                      "not supported by cgov, which serves TLS 1.2 and 1.3 with a certificate and "
                      "key (cert_file, key_file) and nothing else; refused rather than ignored");
                }
                if (fv->type != YAML_SCALAR_NODE || YamlDocument::Scalar(fv).empty()) {
                  return doc.Error(fv, field_name, "expected a file name");
                }
                (field == "cert_file" ? config.tls_cert_file : config.tls_key_file) =
                    resolve(YamlDocument::Scalar(fv));
                return Status::Ok();
              });
        }
        if (key == "http_server_config") {
          return doc.Error(k, name,
                           "not supported by cgov (HTTP/1.1 only, no extra headers); refused "
                           "rather than ignored");
        }
        return doc.Error(k, name, "unknown key (expected basic_auth_users or tls_server_config)");
      });
  CGOV_RETURN_IF_ERROR(s);
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return InvalidArgument(
        fmt::format("{}: tls_server_config needs both cert_file and key_file", path));
  }
  if (config.users.empty() && config.tls_cert_file.empty()) {
    return InvalidArgument(fmt::format(
        "{}: sets no basic_auth_users and no tls_server_config: nothing to serve differently",
        path));
  }
  return config;
}

}  // namespace cgov
