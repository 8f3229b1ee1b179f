#include "identity/cloud_instance.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "os/env.h"

namespace cgov {
namespace {

// The Env that asks, and when the budget ends by its monotonic clock.
struct Deadline {
  Env* env;
  int64_t at_ns;
};

// What is left of the budget, at least 1 ms (an exchange with 0 ms would not even connect).
std::chrono::milliseconds Left(const Deadline& deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::nanoseconds(deadline.at_ns - deadline.env->MonotonicNs())));
}

// A metadata value: one line of letters, digits and . - _ / : (an Azure resource id has
// slashes), at most 512 bytes; else empty.
std::string CleanValue(std::string_view body) {
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (body.empty() || body.size() > 512) return "";
  for (char c : body) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == '/' || c == ':';
    if (!ok) return "";
  }
  return std::string(body);
}

// An IMDSv2 session token (base64: letters, digits, + / =), fit for a header line: visible
// ASCII only, at most 4 KiB; else empty.
std::string CleanToken(std::string_view body) {
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (body.empty() || body.size() > 4096) return "";
  for (char c : body) {
    if (c < 0x21 || c > 0x7e) return "";
  }
  return std::string(body);
}

struct Asked {
  bool reached = false;  // something answered HTTP at all
  std::string why;       // what went wrong, for the error
  CloudInstance instance;
};

Result<std::string> Value(const std::string& url, const std::vector<std::string>& headers,
                          const Deadline& deadline) {
  CGOV_ASSIGN_OR_RETURN(PlainHttpResponse r,
                        deadline.env->PlainHttp("GET", url, headers, Left(deadline)));
  if (r.status != 200) return NotFound(fmt::format("HTTP {}", r.status));
  std::string value = CleanValue(r.body);
  if (value.empty()) return InvalidArgument("an answer that is not a metadata value");
  return value;
}

// An instance type's answer (InstanceTypeFromMetadata of it).
Result<std::string> TypeValue(const std::string& url, const std::vector<std::string>& headers,
                              const Deadline& deadline) {
  CGOV_ASSIGN_OR_RETURN(std::string value, Value(url, headers, deadline));
  std::string type = InstanceTypeFromMetadata(value);
  if (type.empty()) return InvalidArgument("an answer that is not an instance type");
  return type;
}

Asked AskAws(const std::string& endpoint, const Deadline& deadline) {
  Asked a;
  std::vector<std::string> headers;
  auto token =
      deadline.env->PlainHttp("PUT", endpoint + "/latest/api/token",
                              {"X-aws-ec2-metadata-token-ttl-seconds: 60"}, Left(deadline));
  if (!token.ok()) {
    a.why = "AWS: " + token.status().message();
    return a;
  }
  a.reached = true;
  if (const std::string t = CleanToken(token->body); token->status == 200 && !t.empty()) {
    headers.push_back("X-aws-ec2-metadata-token: " + t);
  }  // else an IMDSv1-only host (or not AWS): asked without a token
  auto type = TypeValue(endpoint + "/latest/meta-data/instance-type", headers, deadline);
  if (!type.ok()) {
    a.why = fmt::format(
        "AWS: instance-type: {}{}", type.status().message(),
        headers.empty() ? fmt::format(" (the token PUT answered HTTP {})", token->status) : "");
    return a;
  }
  a.instance.provider = CloudProvider::kAws;
  a.instance.instance_type = *type;
  if (auto id = Value(endpoint + "/latest/meta-data/instance-id", headers, deadline); id.ok()) {
    a.instance.instance_id = *id;
  }
  return a;
}

// GCP and Azure: plain GETs with their header, the type at one path and the id at another.
struct HeaderCloud {
  CloudProvider provider;
  const char* name;       // "GCP"
  const char* type_key;   // "machine-type", as errors name it
  const char* header;     // "Metadata-Flavor: Google"
  const char* type_path;  // under the endpoint
  const char* id_path;
  const char* query;  // after each path
};

constexpr HeaderCloud kGcp = {CloudProvider::kGcp,
                              "GCP",
                              "machine-type",
                              "Metadata-Flavor: Google",
                              "/computeMetadata/v1/instance/machine-type",
                              "/computeMetadata/v1/instance/id",
                              ""};
constexpr HeaderCloud kAzure = {CloudProvider::kAzure,
                                "Azure",
                                "vmSize",
                                "Metadata: true",
                                "/metadata/instance/compute/vmSize",
                                "/metadata/instance/compute/resourceId",
                                "?api-version=2021-02-01&format=text"};

Asked AskWithHeader(const HeaderCloud& c, const std::string& endpoint, const Deadline& deadline) {
  Asked a;
  const std::vector<std::string> headers = {c.header};
  auto type = TypeValue(fmt::format("{}{}{}", endpoint, c.type_path, c.query), headers, deadline);
  if (!type.ok()) {
    a.reached = type.status().code() != StatusCode::kUnavailable;
    a.why = fmt::format("{}: {}: {}", c.name, c.type_key, type.status().message());
    return a;
  }
  a.reached = true;
  a.instance.provider = c.provider;
  a.instance.instance_type = *type;
  if (auto id = Value(fmt::format("{}{}{}", endpoint, c.id_path, c.query), headers, deadline);
      id.ok()) {
    a.instance.instance_id = *id;
  }
  return a;
}

Asked AskGcp(const std::string& endpoint, const Deadline& deadline) {
  return AskWithHeader(kGcp, endpoint, deadline);
}

Asked AskAzure(const std::string& endpoint, const Deadline& deadline) {
  return AskWithHeader(kAzure, endpoint, deadline);
}

}  // namespace

std::string InstanceTypeFromMetadata(std::string_view body) {
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (const size_t slash = body.rfind('/'); slash != std::string_view::npos) {
    body.remove_prefix(slash + 1);
  }
  for (char c : body) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return "";
  }
  return std::string(body.substr(0, 64));
}

Result<CloudProvider> ParseCloudProvider(std::string_view text) {
  if (text == "auto" || text.empty()) return CloudProvider::kAuto;
  if (text == "aws") return CloudProvider::kAws;
  if (text == "gcp") return CloudProvider::kGcp;
  if (text == "azure") return CloudProvider::kAzure;
  return InvalidArgument(
      fmt::format("--detect-instance {}: expected auto, aws, gcp or azure", text));
}

std::string_view CloudProviderName(CloudProvider provider) {
  switch (provider) {
    case CloudProvider::kAuto:
      return "auto";
    case CloudProvider::kAws:
      return "aws";
    case CloudProvider::kGcp:
      return "gcp";
    case CloudProvider::kAzure:
      return "azure";
  }
  return "auto";
}

Result<CloudInstance> DetectCloudInstance(CloudProvider provider, const std::string& endpoint,
                                          std::chrono::milliseconds budget, Env* env) {
  const Deadline deadline{env, env->MonotonicNs() + std::chrono::nanoseconds(budget).count()};
  std::string base = endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::vector<std::string> whys;
  auto ask = [&](Asked (*one)(const std::string&, const Deadline&)) {
    Asked a = one(base, deadline);
    if (a.instance.instance_type.empty()) whys.push_back(a.why);
    return a;
  };
  std::vector<Asked (*)(const std::string&, const Deadline&)> order;
  switch (provider) {
    case CloudProvider::kAws:
      order = {&AskAws};
      break;
    case CloudProvider::kGcp:
      order = {&AskGcp};
      break;
    case CloudProvider::kAzure:
      order = {&AskAzure};
      break;
    case CloudProvider::kAuto:
      order = {&AskAws, &AskGcp, &AskAzure};
      break;
  }
  for (auto* one : order) {
    Asked a = ask(one);
    if (!a.instance.instance_type.empty()) return a.instance;
    if (!a.reached) break;  // nothing answers at that address: the others would not either
  }
  std::string joined;
  for (const std::string& w : whys) joined += (joined.empty() ? "" : "; ") + w;
  return Unavailable(fmt::format("no instance type from {}: {}", base, joined));
}

}  // namespace cgov
