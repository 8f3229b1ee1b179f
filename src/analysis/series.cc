#include "analysis/series.h"

#include <algorithm>

namespace cgov {

MinMaxSeries::MinMaxSeries(int64_t width, size_t max_buckets)
    : width_(std::max<int64_t>(1, width)), max_buckets_(std::max<size_t>(2, max_buckets)) {}

void MinMaxSeries::Add(int64_t t, double value) {
  total_.min = total_.count == 0 ? value : std::min(total_.min, value);
  total_.max = total_.count == 0 ? value : std::max(total_.max, value);
  total_.sum += value;
  ++total_.count;
  Place(t, value);
}

void MinMaxSeries::Place(int64_t t, double value) {
  int64_t index = (t >= 0 ? t : t - width_ + 1) / width_;  // floor, also before 0
  if (!buckets_.empty() && index <= buckets_.back().index) {
    SeriesBucket& b = buckets_.back();
    b.min = std::min(b.min, value);
    b.max = std::max(b.max, value);
    b.sum += value;
    ++b.count;
    return;
  }
  while (buckets_.size() == max_buckets_) {
    Coarsen();
    index = (t >= 0 ? t : t - width_ + 1) / width_;
    if (index <= buckets_.back().index) {
      Place(t, value);
      return;
    }
  }
  buckets_.push_back({index, value, value, value, 1});
}

// Doubles the width: buckets 2k and 2k+1 become bucket k.
void MinMaxSeries::Coarsen() {
  width_ *= 2;
  std::vector<SeriesBucket> merged;
  merged.reserve(max_buckets_);
  for (const SeriesBucket& b : buckets_) {
    const int64_t index = b.index >= 0 ? b.index / 2 : (b.index - 1) / 2;
    if (!merged.empty() && merged.back().index == index) {
      SeriesBucket& m = merged.back();
      m.min = std::min(m.min, b.min);
      m.max = std::max(m.max, b.max);
      m.sum += b.sum;
      m.count += b.count;
    } else {
      merged.push_back(b);
      merged.back().index = index;
    }
  }
  buckets_ = std::move(merged);
}

}  // namespace cgov
