// Distribution statistics of one metric with memory bounded by the metric's range, not by the
// run's length.
//
// Values are counted at a fixed resolution (1 for utilization % and °C, which NVML reports as
// integers, so nothing is lost; 0.1 W for power; 0.01 for percentages computed from bytes or
// jiffies). Quantiles are exact order statistics (nearest rank: the smallest value with at least
// q x N values at or below it) of the values so rounded; min, max and mean use the exact values.
// A week at 1 Hz of 8 GPUs is 4.8 M values but at most a few thousand distinct counters.
#ifndef CGOV_ANALYSIS_VALUE_HISTOGRAM_H_
#define CGOV_ANALYSIS_VALUE_HISTOGRAM_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace cgov {

struct MetricStats {
  double min = 0, p50 = 0, p95 = 0, max = 0, mean = 0;
  uint64_t count = 0;
};

class ValueHistogram {
 public:
  explicit ValueHistogram(double resolution) : resolution_(resolution) {}

  void Add(double value);
  uint64_t count() const { return count_; }
  // The value at quantile q (0 < q <= 1), nearest rank. REQUIRES: count() > 0.
  double Quantile(double q) const;
  // nullopt when nothing was added: unknown, not zero.
  std::optional<MetricStats> Stats() const;
  // The values counted into `n` bins of `width` from 0 (the last bin also takes everything
  // above it; a value below 0 goes to the first): a utilization's 10 bins of 10 %.
  std::vector<uint64_t> Bins(double width, size_t n) const;

 private:
  double resolution_;
  std::map<int64_t, uint64_t> counts_;  // value / resolution, rounded -> how many
  uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_VALUE_HISTOGRAM_H_
