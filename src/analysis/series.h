// A value over time in bounded memory, for charts: at most `max_buckets` buckets of equal width,
// each keeping the min, max and mean of what fell in it, so a spike survives any downsampling.
// When a new value would need one bucket too many, the width doubles and neighbours merge.
#ifndef CGOV_ANALYSIS_SERIES_H_
#define CGOV_ANALYSIS_SERIES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cgov {

struct SeriesBucket {
  int64_t index = 0;  // start = index x width, in the series' time unit
  double min = 0, max = 0, sum = 0;
  int64_t count = 0;
  double Mean() const { return count > 0 ? sum / static_cast<double>(count) : 0; }
};

// Not thread-safe. Times arrive in non-decreasing order (earlier ones join the last bucket).
class MinMaxSeries {
 public:
  // `width`: the first bucket width (e.g. the sampling interval, in ms); at least 1.
  explicit MinMaxSeries(int64_t width = 1, size_t max_buckets = 240);

  void Add(int64_t t, double value);
  // Buckets in time order; time without values has no bucket (a gap).
  const std::vector<SeriesBucket>& buckets() const { return buckets_; }
  // Every value ever added, as one bucket (min, max, sum, count): what the chart stands for.
  const SeriesBucket& total() const { return total_; }
  int64_t width() const { return width_; }
  bool empty() const { return buckets_.empty(); }

 private:
  void Place(int64_t t, double value);  // into its bucket, coarsening when full
  void Coarsen();

  int64_t width_;
  size_t max_buckets_;
  std::vector<SeriesBucket> buckets_;
  SeriesBucket total_;
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_SERIES_H_
