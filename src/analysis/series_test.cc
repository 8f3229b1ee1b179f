#include "analysis/series.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(MinMaxSeries, KeepsEveryValueWhileThereIsRoom) {
  MinMaxSeries s(1000, 8);
  for (int i = 0; i < 5; ++i) s.Add(i * 1000, i * 10.0);
  ASSERT_EQ(s.buckets().size(), 5u);
  EXPECT_EQ(s.width(), 1000);
  EXPECT_EQ(s.buckets()[3].index, 3);
  EXPECT_DOUBLE_EQ(s.buckets()[3].min, 30);
  EXPECT_DOUBLE_EQ(s.buckets()[3].Mean(), 30);
}

TEST(MinMaxSeries, StaysBoundedAndASpikeSurvivesDownsampling) {
  MinMaxSeries s(1, 16);
  double sum = 0;
  for (int t = 0; t < 10'000; ++t) {
    const double v = t == 7'777 ? 100.0 : 5.0;  // one spike in ten thousand samples
    s.Add(t, v);
    sum += v;
  }
  EXPECT_LE(s.buckets().size(), 16u);
  EXPECT_GE(s.buckets().size(), 8u) << "coarsening halves, no further";
  double max = 0, total = 0;
  int64_t count = 0;
  for (const SeriesBucket& b : s.buckets()) {
    max = std::max(max, b.max);
    total += b.sum;
    count += b.count;
    EXPECT_DOUBLE_EQ(b.min, 5.0);
  }
  EXPECT_DOUBLE_EQ(max, 100.0);
  EXPECT_EQ(count, 10'000);
  EXPECT_DOUBLE_EQ(s.total().max, 100.0) << "the whole series, kept apart from the buckets";
  EXPECT_DOUBLE_EQ(s.total().min, 5.0);
  EXPECT_EQ(s.total().count, 10'000);
  EXPECT_DOUBLE_EQ(s.total().sum, sum);
  EXPECT_DOUBLE_EQ(total, sum);
  // Buckets cover [index x width, (index + 1) x width): the spike's bucket holds t = 7777.
  for (const SeriesBucket& b : s.buckets()) {
    if (b.max == 100.0) {
      EXPECT_LE(b.index * s.width(), 7'777);
      EXPECT_GT((b.index + 1) * s.width(), 7'777);
    }
  }
}

TEST(MinMaxSeries, TimeWithoutValuesIsAGap) {
  MinMaxSeries s(10, 100);
  s.Add(0, 1);
  s.Add(10, 2);
  s.Add(50, 3);  // nothing in 20..49
  ASSERT_EQ(s.buckets().size(), 3u);
  EXPECT_EQ(s.buckets()[1].index + 1, 2);
  EXPECT_EQ(s.buckets()[2].index, 5);
}

TEST(MinMaxSeries, SameBucketMergesAndNegativeTimesFloor) {
  MinMaxSeries s(10, 4);
  s.Add(-15, 4);  // bucket -2: [-20, -10)
  s.Add(-11, 8);
  s.Add(-1, 2);  // bucket -1
  ASSERT_EQ(s.buckets().size(), 2u);
  EXPECT_EQ(s.buckets()[0].index, -2);
  EXPECT_DOUBLE_EQ(s.buckets()[0].min, 4);
  EXPECT_DOUBLE_EQ(s.buckets()[0].max, 8);
  EXPECT_EQ(s.buckets()[0].count, 2);
  EXPECT_EQ(s.buckets()[1].index, -1);
  for (int t = 0; t < 100; t += 10) s.Add(t, 1);
  EXPECT_LE(s.buckets().size(), 4u);
  EXPECT_EQ(s.buckets().front().index * s.width() <= -15, true);
}

}  // namespace
}  // namespace cgov
