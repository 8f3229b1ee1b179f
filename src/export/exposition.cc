#include "export/exposition.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {

std::string_view ContentTypeOf(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat NegotiateFormat(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos
             ? ExpositionFormat::kOpenMetrics
             : ExpositionFormat::kText;
}

void AppendLabels(const Labels& labels, std::string* out) {
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out->push_back(',');
    first = false;
    out->append(name);
    out->append("=\"");
    // Prometheus rejects a whole scrape for one label that is not UTF-8; other control
    // characters are escaped too (newlines keep the exposition format's own escape).
    std::string safe;
    if (!IsSafeText(value)) {
      for (size_t at = 0; at <= value.size();) {
        const size_t nl = std::min(value.find('\n', at), value.size());
        safe += SafeText(value.substr(at, nl - at));
        if (nl < value.size()) safe += '\n';
        at = nl + 1;
      }
    }
    for (char c : safe.empty() ? value : std::string_view(safe)) {
      if (c == '\\') {
        out->append("\\\\");
      } else if (c == '"') {
        out->append("\\\"");
      } else if (c == '\n') {
        out->append("\\n");
      } else {
        out->push_back(c);
      }
    }
    out->push_back('"');
  }
}

void ExpositionWriter::Family(std::string_view name, MetricType type, std::string_view help) {
  name_ = name;
  std::string_view family = name;
  if (format_ == ExpositionFormat::kOpenMetrics && type == MetricType::kCounter) {
    if (family.ends_with("_total")) {
      family.remove_suffix(6);
    } else {
      type = MetricType::kUnknown;  // OpenMetrics counters end in _total (dcgm's energy does not)
    }
  }
  const char* type_name = type == MetricType::kGauge     ? "gauge"
                          : type == MetricType::kCounter ? "counter"
                                                         : "unknown";
  out_->append(fmt::format("# HELP {} ", family));
  for (char c : help) {  // HELP escapes backslash and newline
    if (c == '\\') {
      out_->append("\\\\");
    } else if (c == '\n') {
      out_->append("\\n");
    } else {
      out_->push_back(c);
    }
  }
  out_->append(fmt::format("\n# TYPE {} {}\n", family, type_name));
}

void ExpositionWriter::Sample(const Labels& labels, double value) {
  out_->append(name_);
  if (!labels.empty()) {
    out_->push_back('{');
    AppendLabels(labels, out_);
    out_->push_back('}');
  }
  out_->push_back(' ');
  if (std::isnan(value)) {
    out_->append("NaN");
  } else if (std::isinf(value)) {
    out_->append(value > 0 ? "+Inf" : "-Inf");
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    out_->append(fmt::format("{}", static_cast<int64_t>(value)));
  } else {
    out_->append(fmt::format("{}", value));
  }
  out_->push_back('\n');
}

void ExpositionWriter::Finish() {
  if (format_ == ExpositionFormat::kOpenMetrics) out_->append("# EOF\n");
}

}  // namespace cgov
