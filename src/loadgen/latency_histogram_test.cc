#include "loadgen/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace leasehold::loadgen {
namespace {

using Nanos = LatencyHistogram::Nanos;

TEST(LatencyHistogram, EmptyAnswersZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), Nanos(0));
  EXPECT_EQ(h.mean(), Nanos(0));
  EXPECT_EQ(h.min(), Nanos(0));
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v = 1; v <= 100; ++v) h.Record(Nanos(v));
  EXPECT_EQ(h.Percentile(0.5), Nanos(50));
  EXPECT_EQ(h.Percentile(0.99), Nanos(99));
  EXPECT_EQ(h.Percentile(1.0), Nanos(100));
  EXPECT_EQ(h.min(), Nanos(1));
  EXPECT_EQ(h.max(), Nanos(100));
}

TEST(LatencyHistogram, PercentilesWithinOnePercentOfSortedSamples) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> latency(13.0, 1.0);  // around 0.4 ms
  LatencyHistogram h;
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 100'000; ++i) {
    const auto v = static_cast<std::int64_t>(latency(random));
    samples.push_back(v);
    h.Record(Nanos(v));
  }
  std::sort(samples.begin(), samples.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const auto exact =
        static_cast<double>(samples[static_cast<std::size_t>(q * 100'000) - 1]);
    const auto got = static_cast<double>(h.Percentile(q).count());
    EXPECT_NEAR(got, exact, exact * 0.01) << "q=" << q;
  }
  EXPECT_EQ(h.max(), Nanos(samples.back()));
}

TEST(LatencyHistogram, MergeAddsCounts) {
  LatencyHistogram a, b;
  a.Record(Nanos(1'000));
  b.Record(Nanos(3'000'000));
  b.Record(Nanos(-5));  // clamped to zero
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.min(), Nanos(0));
  EXPECT_EQ(a.max(), Nanos(3'000'000));
  EXPECT_NEAR(static_cast<double>(a.Percentile(1.0).count()), 3e6, 3e6 * 0.01);
}

TEST(LatencyHistogram, HugeValuesAreClampedNotLost) {
  LatencyHistogram h;
  h.Record(std::chrono::hours(24));  // past the last bucket: clamped
  h.Record(std::chrono::minutes(30));
  EXPECT_EQ(h.count(), 2u);
  EXPECT_GT(h.Percentile(0.5), std::chrono::minutes(10));
  EXPECT_GT(h.Percentile(1.0), std::chrono::minutes(10));
}

}  // namespace
}  // namespace leasehold::loadgen
