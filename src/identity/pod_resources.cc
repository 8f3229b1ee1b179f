#include "identity/pod_resources.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/text.h"
#include "os/env.h"
#include "store/tick_record.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

constexpr uint32_t kWireVarint = 0, kWireFixed64 = 1, kWireLength = 2, kWireFixed32 = 5;
constexpr size_t kMaxResponseBytes = 64u << 20;  // the kubelet's own limit is 16 MiB

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  std::string_view bytes;  // a length-delimited field's contents
  size_t offset = 0;       // where they start in the whole message
};

// The fields of one protobuf message, in order. Wire types 0, 1, 2 and 5 are read (and skipped
// where the field is not one cgov reads); the deprecated groups (3, 4) are an error.
class ProtoReader {
 public:
  ProtoReader(std::string_view data, size_t base) : data_(data), base_(base) {}

  // False at the end of the message.
  Result<bool> Next(Field* f) {
    if (pos_ == data_.size()) return false;
    const size_t at = pos_;
    uint64_t key = 0, v = 0;
    if (!GetVarint(data_, &pos_, &key)) return Malformed(at, "a field key runs past the end");
    f->number = static_cast<uint32_t>(key >> 3);
    f->wire = static_cast<uint32_t>(key & 7);
    if (f->number == 0 || (key >> 3) > 0x1fffffff)
      return Malformed(at, "field number out of range");
    switch (f->wire) {
      case kWireVarint:
        if (!GetVarint(data_, &pos_, &v)) return Malformed(at, "a varint runs past the end");
        return true;
      case kWireFixed64:
      case kWireFixed32: {
        const size_t n = f->wire == kWireFixed64 ? 8 : 4;
        if (data_.size() - pos_ < n) return Malformed(at, "a fixed-size field runs past the end");
        pos_ += n;
        return true;
      }
      case kWireLength:
        if (!GetVarint(data_, &pos_, &v) || v > data_.size() - pos_) {
          return Malformed(at, fmt::format("field {}'s length runs past the end", f->number));
        }
        f->bytes = data_.substr(pos_, v);
        f->offset = base_ + pos_;
        pos_ += v;
        return true;
      default:
        return Malformed(at, fmt::format("field {} has wire type {}", f->number, f->wire));
    }
  }

 private:
  Status Malformed(size_t at, std::string_view what) const {
    return InvalidArgument(
        fmt::format("malformed ListPodResourcesResponse at byte {}: {}", base_ + at, what));
  }
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

// The length-delimited field a message shape names (a string or a message); another wire type
// for it is an error, as a protobuf parser would say.
Status ExpectLength(const Field& f, std::string_view message) {
  if (f.wire == kWireLength) return Status::Ok();
  return InvalidArgument(fmt::format(
      "malformed ListPodResourcesResponse: {} field {} has wire type {}, not length-delimited",
      message, f.number, f.wire));
}

// message ContainerDevices { string resource_name = 1; repeated string device_ids = 2; ... }
Status DecodeDevices(const Field& devices, PodDevice base, std::vector<PodDevice>* out) {
  ProtoReader r(devices.bytes, devices.offset);
  std::vector<std::string_view> ids;
  for (Field f; true;) {
    CGOV_ASSIGN_OR_RETURN(bool more, r.Next(&f));
    if (!more) break;
    if (f.number != 1 && f.number != 2) continue;
    CGOV_RETURN_IF_ERROR(ExpectLength(f, "ContainerDevices"));
    if (f.number == 1)
      base.resource_name = std::string(f.bytes);
    else
      ids.push_back(f.bytes);
  }
  for (std::string_view id : ids) {
    PodDevice& d = out->emplace_back(base);
    d.device_id = std::string(id);
  }
  return Status::Ok();
}

// message ContainerResources { string name = 1; repeated ContainerDevices devices = 2; ... }
Status DecodeContainer(const Field& container, PodDevice base, std::vector<PodDevice>* out) {
  ProtoReader r(container.bytes, container.offset);
  std::vector<Field> devices;
  for (Field f; true;) {
    CGOV_ASSIGN_OR_RETURN(bool more, r.Next(&f));
    if (!more) break;
    if (f.number != 1 && f.number != 2) continue;
    CGOV_RETURN_IF_ERROR(ExpectLength(f, "ContainerResources"));
    if (f.number == 1)
      base.container = std::string(f.bytes);
    else
      devices.push_back(f);
  }
  for (const Field& d : devices) CGOV_RETURN_IF_ERROR(DecodeDevices(d, base, out));
  return Status::Ok();
}

// message PodResources { string name = 1; string namespace = 2;
//                        repeated ContainerResources containers = 3; ... }
Status DecodePod(const Field& pod, std::vector<PodDevice>* out) {
  ProtoReader r(pod.bytes, pod.offset);
  PodDevice base;
  std::vector<Field> containers;
  for (Field f; true;) {
    CGOV_ASSIGN_OR_RETURN(bool more, r.Next(&f));
    if (!more) break;
    if (f.number < 1 || f.number > 3) continue;
    CGOV_RETURN_IF_ERROR(ExpectLength(f, "PodResources"));
    if (f.number == 1)
      base.pod = std::string(f.bytes);
    else if (f.number == 2)
      base.namespace_name = std::string(f.bytes);
    else
      containers.push_back(f);
  }
  for (const Field& c : containers) CGOV_RETURN_IF_ERROR(DecodeContainer(c, base, out));
  return Status::Ok();
}

const char* GrpcCodeName(long code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  return code >= 0 && code < 17 ? kNames[code] : "?";
}

// grpc-message is percent-encoded (the gRPC HTTP/2 protocol).
std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct Call {
  std::string body;
  bool too_big = false;
  std::string grpc_status, grpc_message, content_type;
};

// Headers and trailers alike (libcurl hands HTTP/2 trailers to the header callback).
void ReadHeader(std::string_view line, Call* call) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string name(Trim(line.substr(0, colon)));
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string_view value = Trim(line.substr(colon + 1));
  if (name == "grpc-status")
    call->grpc_status = std::string(value);
  else if (name == "grpc-message")
    call->grpc_message = PercentDecoded(value);
  else if (name == "content-type")
    call->content_type = std::string(value);
}

// Says why `path` cannot be the kubelet's socket before libcurl tries (its own message for a
// unix socket names a TCP port).
Status CheckSocket(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return Unavailable(fmt::format(
        "pod-resources socket {}: {}{}", path, std::strerror(err),
        err == ENOENT ? " (not a Kubernetes node, or the directory is not mounted into the pod: "
                        "deploy/kubernetes mounts /var/lib/kubelet/pod-resources)"
                      : ""));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Unavailable(fmt::format("pod-resources socket {}: not a socket", path));
  }
  if (::access(path.c_str(), W_OK) != 0) {
    return Unavailable(
        fmt::format("pod-resources socket {}: {} (connecting needs write permission on the socket; "
                    "the kubelet's is root's)",
                    path, std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<PodDevice>> DecodeListPodResourcesResponse(std::string_view message) {
  std::vector<PodDevice> out;
  ProtoReader r(message, 0);
  for (Field f; true;) {
    CGOV_ASSIGN_OR_RETURN(bool more, r.Next(&f));
    if (!more) break;
    if (f.number != 1) continue;  // pod_resources = 1; nothing else is defined
    CGOV_RETURN_IF_ERROR(ExpectLength(f, "ListPodResourcesResponse"));
    CGOV_RETURN_IF_ERROR(DecodePod(f, &out));
  }
  return out;
}

Result<std::string_view> GrpcUnaryMessage(std::string_view body) {
  if (body.size() < 5) {
    return InvalidArgument(
        fmt::format("gRPC response of {} bytes: no message (a message starts with a 5-byte prefix)",
                    body.size()));
  }
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(body[i])); };
  if (byte(0) != 0) return InvalidArgument("gRPC response: the message is compressed");
  const uint32_t length = byte(1) << 24 | byte(2) << 16 | byte(3) << 8 | byte(4);
  if (length != body.size() - 5) {
    return InvalidArgument(
        fmt::format("gRPC response: a {}-byte message in {} bytes of body (one message expected)",
                    length, body.size() - 5));
  }
  return body.substr(5);
}

Result<std::vector<PodDevice>> ListPodResources(const std::string& socket_path,
                                                std::chrono::milliseconds timeout, Env* env) {
  CGOV_RETURN_IF_ERROR(CheckSocket(socket_path));
  CGOV_ASSIGN_OR_RETURN(const HttpClient* client, env->Http());
  // An empty ListPodResourcesRequest: uncompressed, zero bytes long.
  static constexpr char kRequest[5] = {0, 0, 0, 0, 0};
  Call call;
  HttpRequest request;
  request.url = "http://localhost/v1.PodResourcesLister/List";
  request.unix_socket = socket_path;
  request.http2_prior_knowledge = true;  // from the first byte, as gRPC servers expect
  request.protocols = "http";
  request.post = true;
  request.post_body.assign(kRequest, sizeof kRequest);
  request.headers = {"Content-Type: application/grpc", "TE: trailers"};
  request.timeout = timeout;
  request.on_data = [&call](std::string_view data) {
    if (call.body.size() + data.size() > kMaxResponseBytes) {
      call.too_big = true;
      return false;
    }
    call.body.append(data);
    return true;
  };
  request.on_header = [&call](std::string_view line) { ReadHeader(line, &call); };
  Result<HttpResponse> sent = client->Send(request);
  const std::string where = fmt::format("pod-resources socket {}", socket_path);
  if (!sent.ok()) {
    return Unavailable(
        fmt::format("the pod-resources API is gRPC over HTTP/2, and {}", sent.status().message()));
  }
  if (call.too_big) {
    return Unavailable(
        fmt::format("{}: the answer is over {} MiB", where, kMaxResponseBytes >> 20));
  }
  if (sent->end == HttpResponse::End::kNoConnection) {
    // libcurl's own words name a TCP port and a time that changes with every try.
    return Unavailable(fmt::format("{}: nothing answers on it (is the kubelet running?)", where));
  }
  if (!sent->complete()) return Unavailable(fmt::format("{}: {}", where, sent->error));
  const long status = sent->status;
  if (status != 200) {
    return Unavailable(fmt::format("{}: HTTP {} (not a gRPC server?)", where, status));
  }
  if (call.grpc_status.empty()) {
    return Unavailable(fmt::format("{}: the answer has no grpc-status (cut short?)", where));
  }
  if (call.grpc_status != "0") {
    long grpc = -1;
    if (call.grpc_status.size() <= 2 &&
        call.grpc_status.find_first_not_of("0123456789") == std::string::npos) {
      grpc = std::stol(call.grpc_status);
    }
    return Unavailable(fmt::format("{}: List answered gRPC status {} {}: {}", where,
                                   SafeText(call.grpc_status), GrpcCodeName(grpc),
                                   SafeText(call.grpc_message)));
  }
  Result<std::string_view> message = GrpcUnaryMessage(call.body);
  if (!message.ok()) return message.status().WithContext(where);
  Result<std::vector<PodDevice>> devices = DecodeListPodResourcesResponse(*message);
  if (!devices.ok()) return devices.status().WithContext(where);
  return devices;
}

Result<std::unique_ptr<PodResourcesPoller>> PodResourcesPoller::Start(PodResourcesOptions options) {
  CGOV_RETURN_IF_ERROR(options.env->Http().status());
  std::unique_ptr<PodResourcesPoller> p(new PodResourcesPoller(std::move(options)));
  p->PollOnce();
  PodResourcesPoller* raw = p.get();
  CGOV_RETURN_IF_ERROR(p->worker_.Start("cgov-kubelet", raw->o_.interval, [raw] {
    raw->PollOnce();
    return Worker::Wait(raw->o_.interval);
  }));
  return p;
}

PodResourcesPoller::~PodResourcesPoller() { worker_.Stop(); }

std::shared_ptr<const PodResourcesPoller::Snapshot> PodResourcesPoller::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::string PodResourcesPoller::LastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void PodResourcesPoller::PollOnce() {
  Result<std::vector<PodDevice>> devices = ListPodResources(o_.socket_path, o_.timeout, o_.env);
  const auto now = o_.env->SteadyNow();
  std::lock_guard lock(mu_);
  ++calls_;
  healthy_ = devices.ok();
  if (devices.ok()) {
    last_error_.clear();
    last_ok_ = now;
    if (*devices != current_->devices) {
      auto next = std::make_shared<Snapshot>();
      next->devices = std::move(devices).value();
      next->generation = current_->generation + 1;
      current_ = std::move(next);
    }
    return;
  }
  last_error_ = std::string(devices.status().message());
  // The kubelet has been gone a while: what it said last may no longer be so.
  if (!current_->devices.empty() && now - last_ok_ >= o_.stale_after) {
    auto next = std::make_shared<Snapshot>();
    next->generation = current_->generation + 1;
    current_ = std::move(next);
  }
}

}  // namespace cgov
