#include "loadgen/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace leasehold::loadgen {

std::size_t LatencyHistogram::IndexOf(std::uint64_t v) {
  if (v < kSub) return static_cast<std::size_t>(v);
  // v has bit_width w > kSubBits: keep its top kSubBits + 1 bits.
  const int exponent = static_cast<int>(std::bit_width(v)) - (kSubBits + 1);
  const std::uint64_t top = v >> exponent;  // in [kSub, 2 * kSub)
  return static_cast<std::size_t>(kSub) +
         static_cast<std::size_t>(exponent) * kSub +
         static_cast<std::size_t>(top - kSub);
}

std::uint64_t LatencyHistogram::ValueOf(std::size_t i) {
  if (i < kSub) return i;
  const std::size_t exponent = (i - kSub) / kSub;
  const std::uint64_t top = kSub + (i - kSub) % kSub;
  const std::uint64_t low = top << exponent;
  return low + ((std::uint64_t{1} << exponent) >> 1);
}

void LatencyHistogram::Record(Nanos d) {
  constexpr std::uint64_t kLimit =
      (std::uint64_t{1} << (kMaxExponent + kSubBits + 1)) - 1;
  const std::uint64_t v = std::min<std::uint64_t>(
      static_cast<std::uint64_t>(std::max<std::int64_t>(d.count(), 0)), kLimit);
  ++buckets_[IndexOf(v)];
  ++count_;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
  sum_ += static_cast<long double>(v);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

LatencyHistogram::Nanos LatencyHistogram::mean() const {
  if (count_ == 0) return Nanos(0);
  return Nanos(static_cast<std::int64_t>(sum_ / count_));
}

LatencyHistogram::Nanos LatencyHistogram::Percentile(double q) const {
  if (count_ == 0) return Nanos(0);
  const double wanted =
      std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_));
  const std::uint64_t rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      // The bucket's middle, but never outside what was recorded.
      const std::uint64_t v = std::clamp(ValueOf(i), min_, max_);
      return Nanos(static_cast<std::int64_t>(v));
    }
  }
  return Nanos(static_cast<std::int64_t>(max_));
}

}  // namespace leasehold::loadgen
