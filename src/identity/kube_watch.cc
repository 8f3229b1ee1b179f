#include "identity/kube_watch.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "os/env.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// What a refusal says: the API server answers errors as a metav1.Status.
std::string StatusMessage(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return SafeText(j["message"].get<std::string>());
  }
  return SafeText(body.substr(0, 200));
}

}  // namespace

KubeApiOptions InClusterKubeApi() {
  KubeApiOptions o;
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host != nullptr && *host != 0) {
    const std::string h = host;
    // An IPv6 service address goes in brackets.
    o.api_url = fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h,
                            port != nullptr && *port != 0 ? port : "443");
  }
  o.token_file = fmt::format("{}/token", kServiceAccountDir);
  o.ca_file = fmt::format("{}/ca.crt", kServiceAccountDir);
  return o;
}

Result<std::unique_ptr<KubePodWatch>> KubePodWatch::Start(KubeApiOptions options,
                                                          KubePodDirectory* pods) {
  CGOV_RETURN_IF_ERROR(options.env->Http().status());
  std::unique_ptr<KubePodWatch> w(new KubePodWatch(std::move(options), pods));
  KubePodWatch* p = w.get();
  CGOV_RETURN_IF_ERROR(p->worker_.Start("cgov-kube-watch", Worker::Wait(0), [p] {
    p->Loop();  // until stopped
    return Worker::kUntilWoken;
  }));
  return w;
}

KubePodWatch::~KubePodWatch() { worker_.Stop(); }

bool KubePodWatch::WaitSynced(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return synced_ || !last_error_.empty(); });
  return synced_;
}

std::string KubePodWatch::LastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void KubePodWatch::SetError(std::string error) {
  std::lock_guard lock(mu_);
  healthy_ = false;
  last_error_ = std::move(error);
  cv_.notify_all();
}

void KubePodWatch::Loop() {
  bool need_list = true;
  std::chrono::milliseconds backoff = o_.retry_min;
  while (!worker_.stopping()) {
    Status s = Status::Ok();
    const bool fresh_list = need_list;
    if (need_list) {
      s = List();
      if (s.ok()) {
        need_list = false;
        ++lists_;
        std::lock_guard lock(mu_);
        synced_ = true;
        healthy_ = true;
        last_error_.clear();
        cv_.notify_all();
      }
    }
    if (s.ok() && !worker_.stopping()) {
      const auto started = o_.env->SteadyNow();
      s = Watch();
      // A server that answers 410 to a list's own resourceVersion, or ends every watch at
      // once, is retried with the backoff below, never in a tight loop.
      const bool at_once = o_.env->SteadyNow() - started < o_.retry_min;
      if (s.code() == StatusCode::kNotFound) {  // 410 Gone: the resourceVersion is too old
        need_list = true;
        if (!fresh_list) continue;  // relist at once; a list that is gone at once waits
      } else if (s.ok()) {          // the server ended the watch (timeoutSeconds): resume
        if (!healthy_) {
          std::lock_guard lock(mu_);
          healthy_ = true;
          last_error_.clear();
        }
        if (!at_once) {
          backoff = o_.retry_min;
          continue;
        }
      }
    }
    if (worker_.stopping()) break;
    if (!s.ok()) {
      SetError(std::string(s.message()));
      pods_->Expire(o_.env->WallMs());
    }
    if (worker_.Sleep(backoff)) break;
    backoff = std::min(o_.retry_max, backoff * 2);
  }
}

Status KubePodWatch::Get(const std::string& url, long timeout_ms,
                         const std::function<bool(std::string_view)>& on_data,
                         std::string* error_body, long* status) {
  CGOV_ASSIGN_OR_RETURN(const HttpClient* client, o_.env->Http());
  HttpRequest request;
  request.url = url;
  request.headers = {"Accept: application/json"};
  if (!o_.token_file.empty()) {
    // Re-read every time: a projected service-account token is rotated by the kubelet.
    CGOV_ASSIGN_OR_RETURN(std::string token,
                          o_.env->ReadUserFile(o_.token_file, 64 << 10, "--kube-token-file"));
    const std::string_view bearer = Trim(token);
    // One header line: a token with a control character or a space inside would split it.
    if (bearer.empty() || std::any_of(bearer.begin(), bearer.end(), [](char c) {
          return static_cast<unsigned char>(c) <= ' ' || c == 0x7f;
        })) {
      return InvalidArgument(
          fmt::format("--kube-token-file {}: not one bearer token (empty, or a space or control "
                      "character inside)",
                      o_.token_file));
    }
    request.headers.push_back("Authorization: Bearer " + std::string(bearer));
  }
  // Collected only until the status is known to be 200; an error's body is kept for its message.
  std::string early;
  long code = 0;
  request.on_header = [&code](std::string_view line) {
    // "HTTP/1.1 200 OK", "HTTP/2 410": each answer's status line (a proxy may send several).
    if (line.starts_with("HTTP/")) {
      const size_t space = line.find(' ');
      if (space != std::string_view::npos) code = std::strtol(line.data() + space + 1, nullptr, 10);
    }
  };
  request.on_data = [&](std::string_view data) {
    if (code != 200) {
      if (early.size() < (64 << 10)) early.append(data);
      return true;
    }
    return on_data(data);
  };
  request.timeout = std::chrono::milliseconds(timeout_ms);
  request.connect_timeout = std::chrono::milliseconds(10'000);
  request.accept_encoding = true;
  request.ca_file = o_.ca_file;
  request.stop = &worker_.stop_flag();
  CGOV_ASSIGN_OR_RETURN(HttpResponse sent, client->Send(request));
  *status = sent.status;
  if (error_body != nullptr) *error_body = std::move(early);
  if (sent.end == HttpResponse::End::kRefused) return Status::Ok();  // the caller stopped it
  if (sent.end != HttpResponse::End::kComplete && sent.end != HttpResponse::End::kTimedOut &&
      !worker_.stopping()) {
    return Unavailable(fmt::format("Kubernetes API {}: {}", o_.api_url, sent.error));
  }
  return Status::Ok();
}

Status KubePodWatch::List() {
  const std::string selector = "spec.nodeName%3D" + o_.node_name;
  std::string next;
  bool first = true;
  std::set<std::string> tokens;
  const int max_pages = o_.max_pods_listed / std::max(1, o_.page_size) + 1;
  int pages = 0;
  do {
    if (++pages > max_pages) {
      return Unavailable(fmt::format(
          "Kubernetes API {}: listing the pods of node {} took more than {} pages of {} (more "
          "pods than a cluster holds): a server that never ends its list; trying again later",
          o_.api_url, SafeText(o_.node_name), max_pages, o_.page_size));
    }
    std::string url =
        fmt::format("{}/api/v1/pods?fieldSelector={}&limit={}", o_.api_url, selector, o_.page_size);
    if (!next.empty()) url += "&continue=" + UrlEncode(next);
    std::string body, error_body;
    long status = 0;
    CGOV_RETURN_IF_ERROR(Get(
        url, 60'000,
        [&](std::string_view d) {
          if (body.size() + d.size() > (256u << 20)) return false;  // a page is far smaller
          body.append(d);
          return true;
        },
        &error_body, &status));
    if (worker_.stopping()) return Unavailable("stopped");
    if (status != 200) {
      return Unavailable(
          fmt::format("Kubernetes API {}: listing the pods of node {} answered HTTP {}: {}{}",
                      o_.api_url, SafeText(o_.node_name), status, StatusMessage(error_body),
                      status == 403   ? " (the service account needs get, list and watch on pods: "
                                        "deploy/kubernetes)"
                      : status == 401 ? " (the token was refused)"
                                      : ""));
    }
    Result<std::string> more = pods_->ApplyListPage(body, first, o_.env->WallMs());
    if (!more.ok()) {
      return Unavailable(fmt::format("Kubernetes API {}: {}", o_.api_url, more.status().message()));
    }
    next = *more;
    first = false;
    if (!next.empty() && !tokens.insert(next).second) {
      return Unavailable(
          fmt::format("Kubernetes API {}: listing the pods of node {}: the same continue token "
                      "twice (the list would never end); trying again later",
                      o_.api_url, SafeText(o_.node_name)));
    }
  } while (!next.empty() && !worker_.stopping());
  return Status::Ok();
}

Status KubePodWatch::Watch() {
  ++watches_;
  const std::string url = fmt::format(
      "{}/api/v1/pods?fieldSelector=spec.nodeName%3D{}&watch=1&allowWatchBookmarks=true"
      "&resourceVersion={}&timeoutSeconds={}",
      o_.api_url, o_.node_name, pods_->resource_version(), o_.watch_timeout_s);
  std::string line, error_body;
  Status event_error = Status::Ok();
  long status = 0;
  CGOV_RETURN_IF_ERROR(Get(
      url, (o_.watch_timeout_s + 30) * 1000L,
      [&](std::string_view d) {
        for (char c : d) {
          if (c != '\n') {
            if (line.size() < (16u << 20)) line.push_back(c);
            continue;
          }
          if (!line.empty()) {
            Status s = pods_->ApplyEvent(line, o_.env->WallMs());
            line.clear();
            if (!s.ok()) {
              event_error = s;
              return false;
            }
          }
        }
        return true;
      },
      &error_body, &status));
  if (status == 410) return NotFound(StatusMessage(error_body));
  if (status != 200 && !worker_.stopping()) {
    return Unavailable(fmt::format("Kubernetes API {}: the pod watch answered HTTP {}: {}",
                                   o_.api_url, status, StatusMessage(error_body)));
  }
  if (!event_error.ok()) {
    if (event_error.code() == StatusCode::kNotFound) return event_error;
    return Unavailable(
        fmt::format("Kubernetes API {}: pod watch: {}", o_.api_url, event_error.message()));
  }
  return Status::Ok();
}

}  // namespace cgov
