// Prometheus exposition: the text format 0.0.4 and OpenMetrics 1.0, written family by family.
// Label values are escaped; sample values are written in the shortest form that reads back
// exactly. Counters are declared with their `_total` sample name in the text format and with the
// bare family name in OpenMetrics, as each format requires.
#ifndef CGOV_EXPORT_EXPOSITION_H_
#define CGOV_EXPORT_EXPOSITION_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cgov {

enum class ExpositionFormat { kText, kOpenMetrics };
enum class MetricType { kGauge, kCounter, kUnknown };

// "text/plain; version=0.0.4; charset=utf-8" or the OpenMetrics type.
std::string_view ContentTypeOf(ExpositionFormat format);
// OpenMetrics when the Accept header asks for application/openmetrics-text, else text.
ExpositionFormat NegotiateFormat(std::string_view accept);

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// Appends `name="escaped value",...` (no braces).
void AppendLabels(const Labels& labels, std::string* out);

class ExpositionWriter {
 public:
  ExpositionWriter(ExpositionFormat format, std::string* out) : format_(format), out_(out) {}

  // Starts a family. `name` is the sample name; a counter's ends in "_total".
  void Family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current family.
  void Sample(const Labels& labels, double value);
  // Ends the exposition ("# EOF" in OpenMetrics).
  void Finish();

 private:
  ExpositionFormat format_;
  std::string* out_;
  std::string name_;
};

}  // namespace cgov

#endif  // CGOV_EXPORT_EXPOSITION_H_
