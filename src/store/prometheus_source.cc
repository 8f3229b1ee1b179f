#include "store/prometheus_source.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/json_stream.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/env.h"

namespace cgov {
namespace {

constexpr size_t kMaxLabelBytes = 1024;
constexpr double kMaxValue = 1e15;  // 31 million years of seconds; a price a million times cgov's

constexpr size_t kMaxBody = 512u << 20;  // a runaway answer is cut off, not held in memory

// An answer read as it arrives: curl hands each piece to the JSON reader, so no answer is ever
// held whole (a fleet's can be tens of megabytes); the first bytes are kept for an error message.
struct Download {
  // No string or number in an answer comes near 16 MiB (label values, errors, warnings).
  explicit Download(JsonEvents* events) : json(events, 16u << 20) {}
  JsonStream json;
  bool is_json = true;   // every piece so far read as JSON
  bool too_big = false;  // cut off at kMaxBody
  size_t bytes = 0;
  std::string head;  // the first kHead bytes
  static constexpr size_t kHead = 256;
};

// One piece of the answer: false (the transfer ends) past kMaxBody.
bool Append(std::string_view piece, Download* download) {
  if (download->bytes + piece.size() > kMaxBody) {
    download->too_big = true;
    return false;
  }
  download->bytes += piece.size();
  if (download->head.size() < Download::kHead) {
    download->head.append(piece.substr(0, Download::kHead - download->head.size()));
  }
  if (download->is_json) download->is_json = download->json.Feed(piece);
  return true;
}

// Every query asks for a whole answer or none: Thanos Query's `partial_response=false`,
// VictoriaMetrics' `deny_partial_response=1` (Prometheus and Mimir ignore both). A total summed
// over a fleet with a store missing would be silently low. And for the instant it names:
// VictoriaMetrics answers a query for a time within its -search.latencyOffset (30 s) of now as
// of now - 30 s, labelled with the time asked for, unless `nocache=1` (which also keeps the
// answer out of its rollup cache): a daemon restarted in the last 30 s would be missed and its
// host re-read over the wrong stretch (issue 50). The others ignore it.
const std::vector<std::pair<std::string, std::string>>& WholeAnswerParams() {
  static const std::vector<std::pair<std::string, std::string>> params = {
      {"partial_response", "false"}, {"deny_partial_response", "1"}, {"nocache", "1"}};
  return params;
}

// The first line of an answer that is not JSON, short and printable.
std::string FirstLine(std::string_view body) {
  std::string_view line = body.substr(0, body.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200);
  return SafeText(line);
}

// A query API answer read as it is parsed (JsonStream's events): the fields cgov uses and each
// series straight into a PromSeries, never a document tree of it. A fleet's answer can be tens
// of megabytes, and its tree several times that.
class AnswerReader : public JsonEvents {
 public:
  bool is_object = false;  // the answer is a JSON object
  std::optional<std::string> status;
  std::string error_type = "error", error = "no message", result_type;
  bool is_partial = false;
  std::vector<std::string> warnings;
  std::vector<PromSeries> series;

  bool Null() override { return Scalar(nullptr, 0); }
  bool Boolean(bool v) override {
    if (Top() == kTop && key_ == "isPartial") is_partial = v;
    return Scalar(nullptr, 0);
  }
  bool Number(double v) override { return Scalar(nullptr, v); }
  bool String(std::string_view v) override { return Scalar(&v, 0); }
  bool Key(std::string_view k) override {
    key_.assign(k);
    return true;
  }
  bool StartObject() override {
    if (stack_.size() >= kMaxDepth) return false;
    Where w = kOther;
    if (Top() == kWarnings) warnings.push_back(kNotText);
    if (stack_.empty()) {
      is_object = true;
      w = kTop;
    } else if (Top() == kTop && key_ == "data") {
      w = kData;
    } else if (Top() == kResult) {
      building_.Clear();
      w = kSeries;
    } else if (Top() == kSeries && key_ == "metric") {
      w = kMetric;
    }
    stack_.push_back(w);
    return true;
  }
  bool EndObject() override {
    // A series is copied out whole: its labels and points each in one block of their size, not
    // the blocks they grew through (a fleet's answer holds 100,000 series).
    // A series left with no point (each was not a measurement: below) is no series.
    if (Top() == kSeries && !building_.points.empty()) series.push_back(building_);
    stack_.pop_back();
    return true;
  }
  bool StartArray() override {
    if (stack_.size() >= kMaxDepth) return false;
    Where w = kOther;
    if (Top() == kWarnings) warnings.push_back(kNotText);
    if (Top() == kData && key_ == "result") {
      w = kResult;
    } else if (Top() == kSeries && (key_ == "value" || key_ == "values")) {
      w = key_ == "value" ? kSample : kSamples;
    } else if (Top() == kSamples) {
      w = kSample;
    } else if (Top() == kTop && key_ == "warnings") {
      w = kWarnings;
    }
    if (w == kSample) sample_ = {0, std::nan(""), std::nan("")};
    stack_.push_back(w);
    return true;
  }
  bool EndArray() override {
    // A value that is not a finite number of at most kMaxValue (NaN, ±Inf, 1e308) is no
    // measurement of cgov's: its counters, gauges and prices all lie far below. Left out here,
    // so that no figure made from an answer can overflow (issue 57, 11: `llround` of NaN).
    if (Top() == kSample && sample_.fields == 2 && std::isfinite(sample_.time) &&
        std::isfinite(sample_.value) && std::abs(sample_.value) <= kMaxValue) {
      building_.points.emplace_back(sample_.time, sample_.value);
    }
    stack_.pop_back();
    return true;
  }

 private:
  enum Where { kOther, kTop, kData, kResult, kSeries, kMetric, kSamples, kSample, kWarnings };
  // An answer nests 6 deep (answer, data, result, series, values, sample); one nested far deeper
  // is not Prometheus', and its stack alone could take gigabytes of a 512 MiB answer.
  static constexpr size_t kMaxDepth = 64;
  static constexpr char kNotText[] = "(a warning that is not text)";
  Where Top() const { return stack_.empty() ? kOther : stack_.back(); }
  // A string (`text`) or any other scalar (`number`: its value, or 0).
  bool Scalar(const std::string_view* text, double number) {
    switch (Top()) {
      case kTop:
        if (text == nullptr) break;
        if (key_ == "status") status = *text;
        if (key_ == "errorType") error_type = *text;
        if (key_ == "error") error = *text;
        break;
      case kData:
        if (text != nullptr && key_ == "resultType") result_type = *text;
        break;
      case kMetric:
        // A label value is anyone's who can write a label (a pod's, a host's name): it enters
        // display-safe and cut to kMaxLabelBytes, so no view or log prints it raw.
        if (text != nullptr) building_.AddLabel(key_, SafeTextCut(*text, kMaxLabelBytes));
        break;
      case kSample: {
        // Times come as numbers, values as strings ("1.5", "NaN", "+Inf").
        const double v = text != nullptr ? ParseDouble(*text) : number;
        if (sample_.fields == 0) sample_.time = v;
        if (sample_.fields == 1) sample_.value = v;
        ++sample_.fields;
        break;
      }
      case kWarnings:
        warnings.push_back(text != nullptr ? std::string(*text) : kNotText);
        break;
      default:
        break;
    }
    return true;
  }

  std::vector<Where> stack_;
  std::string key_;
  PromSeries building_;  // the series being read
  struct {
    int fields = 0;
    double time = 0, value = 0;
  } sample_;
};

// A packed label field: its length (7 bits a byte, low first, the high bit saying more follow),
// then its bytes.
void PutField(std::string_view field, std::string* out) {
  size_t n = field.size();
  do {
    out->push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    n >>= 7;
  } while (n > 0);
  out->append(field);
}

// The field at `*at` in `packed`, moving `*at` past it.
std::string_view GetField(std::string_view packed, size_t* at) {
  size_t n = 0;
  for (int shift = 0; *at < packed.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(packed[(*at)++]);
    n |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  std::string_view field = packed.substr(*at, n);
  *at += field.size();
  return field;
}

}  // namespace

std::string PromSeries::Label(std::string_view name) const {
  for (size_t at = 0; at < packed_.size();) {
    const std::string_view key = GetField(packed_, &at), value = GetField(packed_, &at);
    if (key == name) return std::string(value);
    if (key > name) break;
  }
  return {};
}

void PromSeries::AddLabel(std::string_view name, std::string_view value) {
  size_t at = 0;
  while (at < packed_.size()) {
    const size_t start = at;
    const std::string_view key = GetField(packed_, &at);
    if (key == name) return;
    if (key > name) {
      at = start;
      break;
    }
    GetField(packed_, &at);
  }
  std::string field;
  PutField(name, &field);
  PutField(value, &field);
  packed_.insert(at, field);
}

std::vector<std::pair<std::string_view, std::string_view>> PromSeries::Labels() const {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (size_t at = 0; at < packed_.size();) {
    const std::string_view key = GetField(packed_, &at);
    out.emplace_back(key, GetField(packed_, &at));
  }
  return out;
}

Result<PrometheusSource> PrometheusSource::Open(std::string base_url,
                                                std::chrono::milliseconds timeout,
                                                std::string tenant, Env* env) {
  if (tenant.size() > 150 ||
      tenant.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "!-_.*'()") != std::string::npos) {
    return InvalidArgument(fmt::format(
        "--prometheus-tenant \"{}\": a tenant ID is at most 150 of a-z A-Z 0-9 ! - _ . * ' ( )",
        SafeText(tenant)));
  }
  if (!base_url.starts_with("http://") && !base_url.starts_with("https://")) {
    return InvalidArgument(fmt::format(
        "--prometheus {}: expected an http:// or https:// URL such as http://127.0.0.1:9090",
        RedactedUrl(base_url)));
  }
  while (base_url.ends_with("/")) base_url.pop_back();
  CGOV_RETURN_IF_ERROR(env->Http().status());
  return PrometheusSource(std::move(base_url), timeout, std::move(tenant), env);
}

namespace {

// Times and steps in forms every store parses exactly, to the millisecond: RFC 3339 and whole
// milliseconds. Prometheus reads a decimal step as float seconds and truncates it (2060.490 s is
// 2060489 ms), so the last point of a range came back a millisecond before the time asked for
// and was not matched to it.
int64_t WholeMs(double seconds) { return std::llround(seconds * 1000); }
std::string TimeParam(double seconds) { return FormatRfc3339Utc(WholeMs(seconds) * 1'000'000); }
std::string StepParam(double seconds) { return fmt::format("{}ms", WholeMs(seconds)); }

}  // namespace

Result<std::vector<PromSeries>> PrometheusSource::Query(const std::string& expr,
                                                        double time_s) const {
  return Get("/api/v1/query", {{"query", expr}, {"time", TimeParam(time_s)}, TimeoutParam()}, expr);
}

// The server gives up when cgov does (Prometheus caps it at its --query.timeout): a query past
// its time is not left running there after the report has stopped waiting.
std::pair<std::string, std::string> PrometheusSource::TimeoutParam() const {
  return {"timeout", fmt::format("{}ms", timeout_.count())};  // a duration every store parses
}

Result<std::vector<PromSeries>> PrometheusSource::QueryRange(const std::string& expr,
                                                             double start_s, double end_s,
                                                             double step_s) const {
  return Get("/api/v1/query_range",
             {{"query", expr},
              {"start", TimeParam(start_s)},
              {"end", TimeParam(end_s)},
              {"step", StepParam(step_s)},
              TimeoutParam()},
             expr);
}

Result<std::vector<std::vector<PromSeries>>> PrometheusSource::QueryAll(
    const std::vector<PromRequest>& requests) const {
  std::vector<std::vector<PromSeries>> out(requests.size());
  CGOV_RETURN_IF_ERROR(QueryEach(requests, [&](size_t i, std::vector<PromSeries> answer) {
    out[i] = std::move(answer);
    return Status::Ok();
  }));
  return out;
}

Status PrometheusSource::QueryEach(
    const std::vector<PromRequest>& requests,
    const std::function<Status(size_t, std::vector<PromSeries>)>& take) const {
  const size_t ahead = 2 * static_cast<size_t>(parallel_);  // sent beyond the last one taken
  std::vector<size_t> order;  // the sending order: the early requests, then the rest
  for (bool early : {true, false}) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].early == early) order.push_back(i);
    }
  }
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::optional<Result<std::vector<PromSeries>>>> answers(requests.size());
  std::vector<bool> sent(requests.size());
  size_t next = 0;   // the next request to send, in `order`
  size_t taken = 0;  // answers handed to `take`
  bool stop = false;
  Status failure = Status::Ok();  // the first failed answer
  auto work = [&] {
    std::unique_lock lock(mu);
    while (true) {
      changed.wait(lock, [&] {
        return stop || next >= order.size() || requests[order[next]].early ||
               order[next] < taken + ahead;
      });
      if (stop || next >= order.size()) return;
      const size_t i = order[next++];
      sent[i] = true;
      lock.unlock();
      const PromRequest& r = requests[i];
      Result<std::vector<PromSeries>> answer =
          r.step_s > 0 ? QueryRange(r.expr, r.start_s, r.end_s, r.step_s) : Query(r.expr, r.time_s);
      lock.lock();
      if (!answer.ok() && !stop) {
        stop = true;
        failure = answer.status();
      }
      answers[i] = std::move(answer);
      changed.notify_all();
    }
  };
  Status status = Status::Ok();
  {
    std::vector<std::jthread> workers;
    const size_t threads = std::min<size_t>(parallel_, requests.size());
    for (size_t t = 0; t < threads; ++t) workers.emplace_back(work);
    for (size_t k = 0; k < requests.size(); ++k) {
      std::unique_lock lock(mu);
      // A request sent comes back; one not sent by the time a failure stopped the batch never
      // will (an early request failed first), and that failure is the batch's.
      changed.wait(lock, [&] { return answers[k].has_value() || (stop && !sent[k]); });
      if (!answers[k].has_value()) {
        status = failure;
        break;
      }
      Result<std::vector<PromSeries>> answer = std::move(*answers[k]);
      answers[k].reset();
      if (!answer.ok()) {
        status = answer.status();
        break;
      }
      ++taken;
      changed.notify_all();
      lock.unlock();
      status = take(k, std::move(*answer));
      if (!status.ok()) break;
    }
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    changed.notify_all();
  }
  return status;
}

namespace {

// A Prometheus answer that parsed: refused when the query failed, the answer is partial or
// warned of gaps, or it is neither a vector nor a matrix.
Status CheckQueryAnswer(const AnswerReader& answer, const std::string& shown_url, long status,
                        const std::string& expr) {
  if (*answer.status != "success") {
    const std::string& type = answer.error_type;
    return InvalidArgument(fmt::format(
        "--prometheus {}: the query failed (HTTP {}): {}: {}{}\n  query: {}", shown_url, status,
        SafeText(type), SafeText(answer.error),
        type == "timeout" ? " (the server's own limit, its --query.timeout, or "
                            "--prometheus-timeout; a shorter window or the hourly recording "
                            "rules need less)"
                          : "",
        expr));
  }
  // A partial answer (a store or storage node down) is refused, whatever the server's settings:
  // VictoriaMetrics marks it isPartial; Thanos, and Prometheus for a failed remote read, put
  // why in warnings. PromQL's info annotations ("PromQL info: ...") are notes, not gaps.
  if (answer.is_partial) {
    return Unavailable(fmt::format(
        "--prometheus {}: the answer is partial (isPartial: some storage nodes did not answer); "
        "cgov needs every series for exact totals: try again, or query a healthy node\n  query: {}",
        shown_url, expr));
  }
  for (const std::string& warning : answer.warnings) {
    if (warning.starts_with("PromQL info:")) continue;
    return Unavailable(
        fmt::format("--prometheus {}: the server warned that the answer may be incomplete: {}; "
                    "cgov needs every series for exact totals\n"
                    "  query: {}",
                    shown_url, SafeText(warning), expr));
  }
  if (answer.result_type != "vector" && answer.result_type != "matrix") {
    return InvalidArgument(
        fmt::format("--prometheus {}: expected a vector or matrix, got '{}'\n"
                    "  query: {}",
                    shown_url, answer.result_type, expr));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<PromSeries>> PrometheusSource::Get(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
    const std::string& expr) const {
  const int64_t started_ns = env_->MonotonicNs();
  CGOV_ASSIGN_OR_RETURN(const HttpClient* client, env_->Http());
  std::string url = base_url_ + path;
  char separator = '?';
  for (const auto* list : {&params, &WholeAnswerParams()}) {
    for (const auto& [name, value] : *list) {
      url += separator + name + "=" + UrlEncode(value);
      separator = '&';
    }
  }
  AnswerReader answer;
  Download download(&answer);
  HttpRequest request;
  request.url = url;
  if (!tenant_.empty()) request.headers.push_back("X-Scope-OrgID: " + tenant_);
  request.timeout = timeout_;
  request.connect_timeout = std::chrono::milliseconds(5000);
  request.accept_encoding = true;  // gzip when offered
  request.on_data = [&download](std::string_view piece) { return Append(piece, &download); };
  CGOV_ASSIGN_OR_RETURN(HttpResponse sent, client->Send(request));
  if (sent.end == HttpResponse::End::kTimedOut) {
    return Unavailable(fmt::format(
        "--prometheus {}: no whole answer in {:g} s (--prometheus-timeout); a longer timeout, a "
        "shorter window, or the hourly recording rules (--recording-rules on)\n  query: {}",
        shown_url_, static_cast<double>(timeout_.count()) / 1000, expr));
  }
  if (download.too_big) {
    return Unavailable(
        fmt::format("--prometheus {}: the answer passed {} MiB and was cut off; a shorter window "
                    "or the hourly recording rules (--recording-rules on) need less\n  query: {}",
                    shown_url_, kMaxBody >> 20, expr));
  }
  if (!sent.complete()) {
    // curl's message may quote the URL it was given: never its credentials.
    std::string error = SafeText(sent.error);
    for (size_t at = error.find(base_url_); at != std::string::npos && !base_url_.empty();
         at = error.find(base_url_, at)) {
      error.replace(at, base_url_.size(), shown_url_);
      at += shown_url_.size();
    }
    return Unavailable(
        fmt::format("--prometheus {}: cannot reach the server: {}", shown_url_, error));
  }
  const long status = sent.status;
  const bool parsed = download.is_json && download.json.Finish();
  if (!parsed || !answer.is_object || !answer.status) {
    if (status != 200 && status != 404 && download.bytes > 0) {
      // A query frontend's or proxy's own answer (Mimir's 429, a gateway's 502): its words.
      return Unavailable(fmt::format("--prometheus {}: {} answered HTTP {}: {}", shown_url_, path,
                                     status, FirstLine(download.head)));
    }
    return Unavailable(fmt::format(
        "--prometheus {}: {} is not a Prometheus query API (HTTP {}, the answer is not Prometheus "
        "JSON); is the URL the server's root, such as http://127.0.0.1:9090?",
        shown_url_, path, status));
  }
  const size_t bytes = download.bytes;
  CGOV_RETURN_IF_ERROR(CheckQueryAnswer(answer, shown_url_, status, expr));
  std::vector<PromSeries> out = std::move(answer.series);
  if (trace_) {
    static std::mutex trace_mutex;  // batches answer on several threads
    std::lock_guard<std::mutex> lock(trace_mutex);
    QueryTrace t{.path = path, .expr = expr, .bytes = bytes, .series = out.size()};
    t.seconds = static_cast<double>(env_->MonotonicNs() - started_ns) / 1e9;
    for (const PromSeries& s : out) t.points += s.points.size();
    trace_(t);
  }
  return out;
}

}  // namespace cgov
