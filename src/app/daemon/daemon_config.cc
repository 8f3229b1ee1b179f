#include "app/daemon/daemon_config.h"

#include <sys/stat.h>

#include <ctime>
#include <tuple>

#include <fmt/format.h>

#include "app/price_flags.h"
#include "core/text.h"
#include "core/time_format.h"
#include "export/basic_auth.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/log.h"
#include "telemetry/host_reader.h"

namespace cgov {
namespace {

// Reads a whole small file (a key, a certificate, a password) or says which one failed: a
// regular file of at most 1 MiB (a FIFO, a device or a directory is refused, never read).
Result<std::string> ReadSmallFile(const std::string& path, std::string_view flag) {
  Result<std::string> text = Env::Default()->ReadUserFile(path, 1 << 20, flag);
  if (!text.ok()) return text.status().WithContext("cgov daemon");
  return text;
}

Result<NotifyFile> ReadNotify(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--notify"));
  Result<NotifyFile> file = ParseNotifyFile(text, path);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --notify");
  if (Status s = ReadSinkUrls(&*file); !s.ok()) return s.WithContext("cgov daemon: --notify");
  return file;
}

// --basic-auth-file: one line "user:password" (a file, so the password is not in `ps`), which
// only its owner may read: a password in plain text readable by others is refused.
Status ReadBasicAuth(const std::string& path, HttpServerOptions* http) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--basic-auth-file"));
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

// --kubernetes: the node's name (given, the host's name, or its hostname file) and the API
// server's URL checked.
Status CompleteKube(DaemonOptions* o) {
  KubeApiOptions& kube = *o->kube;
  if (kube.node_name.empty()) kube.node_name = o->hostname;
  if (kube.node_name.empty()) {
    kube.node_name = ReadHostInfo(*Env::Default()->NewFileReader(o->host_root)).hostname;
  }
  // A node name is a DNS subdomain: it goes into the API's URL as it is.
  const bool dns = !kube.node_name.empty() && kube.node_name.size() <= 253 &&
                   kube.node_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") ==
                       std::string::npos;
  if (!dns) {
    return InvalidArgument(
        fmt::format("cgov daemon: --node-name \"{}\": not a Kubernetes node name (lower-case "
                    "letters, digits, '-' and '.')",
                    SafeText(kube.node_name)));
  }
  if (kube.api_url.empty()) {
    return InvalidArgument(
        "cgov daemon: --kubernetes: KUBERNETES_SERVICE_HOST is not set (not in a pod?); give the "
        "API server with --kube-api URL");
  }
  if (!kube.api_url.starts_with("https://") && !kube.api_url.starts_with("http://")) {
    return InvalidArgument(fmt::format("cgov daemon: --kube-api {}: expected an https:// URL",
                                       SafeText(kube.api_url)));
  }
  while (kube.api_url.ends_with('/')) kube.api_url.pop_back();
  return Status::Ok();
}

// Fail closed: a TLS setup that cannot work must not become plain HTTP (basic-auth passwords
// in clear).
Status ReadKeyPair(const std::string& tls_cert, const std::string& tls_key,
                   HttpServerOptions* http) {
  CGOV_ASSIGN_OR_RETURN(http->tls_cert_pem, ReadSmallFile(tls_cert, "--tls-cert"));
  CGOV_ASSIGN_OR_RETURN(http->tls_key_pem, ReadSmallFile(tls_key, "--tls-key"));
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

// --listen's users (--basic-auth-file or --web-config) and TLS key pair (--tls-cert and
// --tls-key, or the web config's tls_server_config).
Status LoadWebFiles(const DaemonFiles& f, HttpServerOptions* http) {
  std::string tls_cert = f.tls_cert, tls_key = f.tls_key;
  if (!f.basic_auth.empty()) CGOV_RETURN_IF_ERROR(ReadBasicAuth(f.basic_auth, http));
  if (!f.web_config.empty()) {
    if (!f.basic_auth.empty()) {
      return InvalidArgument(
          "cgov daemon: --web-config and --basic-auth-file: give the users in one of them");
    }
    CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(f.web_config, "--web-config"));
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

Status LoadNotify(const std::string& path, DaemonOptions* o) {
  CGOV_ASSIGN_OR_RETURN(o->notify, ReadNotify(path));
  for (const NotifyRule& r : o->notify->rules) {
    if (r.kind == NotifyRuleKind::kBudget && !o->budgets) {
      return InvalidArgument(fmt::format(
          "cgov daemon: --notify {}:{}: a budget rule needs --budgets FILE", path, r.line));
    }
    if (r.kind == NotifyRuleKind::kPolicy && !o->policy) {
      return InvalidArgument(fmt::format(
          "cgov daemon: --notify {}:{}: a policy rule needs --policy FILE", path, r.line));
    }
  }
  if (o->notify_state.empty()) o->notify_state = o->db + ".notify";
  return Status::Ok();
}

}  // namespace

Result<BudgetFile> ReadBudgetsFile(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--budgets"));
  Result<BudgetFile> file = ParseBudgets(text, path);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --budgets");
  return file;
}

Result<SlurmJobs> ReadSlurmAccountingFile(const std::string& path) {
  Result<std::string> text = Env::Default()->ReadUserFile(path, 64 << 20, "--slurm-accounting");
  if (!text.ok()) return text.status().WithContext("cgov daemon");
  std::vector<std::string> skipped;
  Result<SlurmJobs> jobs = ParseSlurmAccounting(*text, path, &skipped);
  if (!jobs.ok()) return jobs.status().WithContext("cgov daemon: --slurm-accounting");
  // A malformed record is one job's, never the daemon's end (at start as on SIGHUP).
  for (const std::string& why : skipped) LogWarning("--slurm-accounting: {}", why);
  return jobs;
}

Status LoadDaemonFiles(const DaemonFiles& f, DaemonOptions* o) {
  if (Status s = ApplyPriceFlags(o->catalog_path, f.price_text, &o->price, &o->catalog); !s.ok()) {
    return s.WithContext("cgov daemon");
  }
  if (o->kube) CGOV_RETURN_IF_ERROR(CompleteKube(o));
  // --kube-labels: pods' labels with --kubernetes, Docker containers' labels with or without.
  if (!f.kube_labels.empty()) {
    Result<KubeLabelMap> map = ParseKubeLabelMap(f.kube_labels);
    if (!map.ok()) return map.status().WithContext("cgov daemon");
    o->kube_labels = std::move(map).value();
  }
  if (o->http) CGOV_RETURN_IF_ERROR(LoadWebFiles(f, &*o->http));
  if (!f.budgets.empty()) {
    CGOV_ASSIGN_OR_RETURN(o->budgets, ReadBudgetsFile(f.budgets));
    o->budgets_path = f.budgets;
  }
  if (!f.slurm_accounting.empty()) {
    CGOV_ASSIGN_OR_RETURN(o->slurm_jobs, ReadSlurmAccountingFile(f.slurm_accounting));
    o->slurm_accounting_path = f.slurm_accounting;
  }
  if (!f.policy.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(f.policy, "--policy"));
    Result<PolicyFile> file = ParsePolicyFile(text, f.policy);
    if (!file.ok()) return file.status().WithContext("cgov daemon: --policy");
    o->policy = std::move(file).value();
  }
  if (!f.notify.empty()) CGOV_RETURN_IF_ERROR(LoadNotify(f.notify, o));
  return Status::Ok();
}

}  // namespace cgov
