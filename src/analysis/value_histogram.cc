#include "analysis/value_histogram.h"

#include <algorithm>
#include <cmath>

namespace cgov {

void ValueHistogram::Add(double value) {
  if (!std::isfinite(value)) return;
  ++counts_[std::llround(value / resolution_)];
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
}

std::vector<uint64_t> ValueHistogram::Bins(double width, size_t n) const {
  std::vector<uint64_t> bins(n, 0);
  if (n == 0 || width <= 0) return bins;
  for (const auto& [bucket, count] : counts_) {
    const double value = static_cast<double>(bucket) * resolution_;
    const double at = std::floor(value / width);
    const size_t bin = at < 0 ? 0 : std::min(n - 1, static_cast<size_t>(at));
    bins[bin] += count;
  }
  return bins;
}

double ValueHistogram::Quantile(double q) const {
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * count_)));
  uint64_t seen = 0;
  for (const auto& [bucket, n] : counts_) {
    seen += n;
    if (seen >= rank) return static_cast<double>(bucket) * resolution_;
  }
  return max_;
}

std::optional<MetricStats> ValueHistogram::Stats() const {
  if (count_ == 0) return std::nullopt;
  MetricStats s;
  s.min = min_;
  s.max = max_;
  // Rounding to the resolution must not move a quantile outside the exact range.
  s.p50 = std::clamp(Quantile(0.50), min_, max_);
  s.p95 = std::clamp(Quantile(0.95), min_, max_);
  s.mean = sum_ / static_cast<double>(count_);
  s.count = count_;
  return s;
}

}  // namespace cgov
