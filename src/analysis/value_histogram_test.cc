#include "analysis/value_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cgov {
namespace {

// Nearest-rank quantile of a sorted vector, the definition the histogram must match.
double NearestRank(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * v.size())));
  return v[rank - 1];
}

TEST(ValueHistogram, EmptyIsUnknownNotZero) {
  ValueHistogram h(1);
  EXPECT_FALSE(h.Stats().has_value());
}

TEST(ValueHistogram, IntegerMetricsAreExact) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> util(0, 100);
  ValueHistogram h(1);
  std::vector<double> values;
  for (int i = 0; i < 10'001; ++i) {
    double v = util(rng);
    values.push_back(v);
    h.Add(v);
  }
  auto s = h.Stats();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->p50, NearestRank(values, 0.50));
  EXPECT_EQ(s->p95, NearestRank(values, 0.95));
  EXPECT_EQ(s->min, *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(s->max, *std::max_element(values.begin(), values.end()));
  double sum = 0;
  for (double v : values) sum += v;
  EXPECT_DOUBLE_EQ(s->mean, sum / values.size());
  EXPECT_EQ(s->count, 10'001u);
}

TEST(ValueHistogram, ContinuousMetricsWithinHalfAResolution) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> watts(50, 700);
  ValueHistogram h(0.1);
  std::vector<double> values;
  for (int i = 0; i < 5'000; ++i) {
    double v = watts(rng);
    values.push_back(v);
    h.Add(v);
  }
  auto s = h.Stats();
  EXPECT_NEAR(s->p50, NearestRank(values, 0.50), 0.05 + 1e-9);
  EXPECT_NEAR(s->p95, NearestRank(values, 0.95), 0.05 + 1e-9);
}

TEST(ValueHistogram, SmallSamplesFollowNearestRank) {
  ValueHistogram h(1);
  for (double v : {95, 95, 5, 95, 5}) h.Add(v);  // sorted: 5 5 95 95 95
  auto s = h.Stats();
  EXPECT_EQ(s->p50, 95);  // rank ceil(2.5) = 3
  EXPECT_EQ(s->p95, 95);
  EXPECT_EQ(s->min, 5);
  EXPECT_DOUBLE_EQ(s->mean, 59);
  ValueHistogram one(1);
  one.Add(42);
  EXPECT_EQ(one.Stats()->p50, 42);
  EXPECT_EQ(one.Stats()->p95, 42);
}

TEST(ValueHistogram, NonFiniteValuesAreIgnored) {
  ValueHistogram h(1);
  h.Add(std::nan(""));
  h.Add(std::numeric_limits<double>::infinity());
  EXPECT_FALSE(h.Stats().has_value());
}

TEST(ValueHistogram, BinsCountEachValueOnceWithTheTopBinTakingTheRest) {
  ValueHistogram h(0.1);
  for (double v : {0.0, 9.9, 10.0, 55.0, 90.0, 100.0, 120.0, -1.0}) h.Add(v);
  EXPECT_EQ(h.Bins(10, 10), (std::vector<uint64_t>{3, 1, 0, 0, 0, 1, 0, 0, 0, 3}));
  EXPECT_EQ(ValueHistogram(1).Bins(10, 10), std::vector<uint64_t>(10, 0));
}

}  // namespace
}  // namespace cgov
