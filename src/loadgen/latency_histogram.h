// LatencyHistogram: durations in log-spaced buckets (like HdrHistogram),
// 128 buckets per power of two, so any percentile it reports is within
// 0.8 % of the true value; min, max and mean are exact. Fixed size (about
// 36 KiB), no allocation while recording. Not thread-safe: keep one per
// connection and Merge them at the end.
#ifndef LEASEHOLD_LOADGEN_LATENCY_HISTOGRAM_H_
#define LEASEHOLD_LOADGEN_LATENCY_HISTOGRAM_H_

#include <array>
#include <chrono>
#include <cstdint>

namespace leasehold::loadgen {

class LatencyHistogram {
 public:
  using Nanos = std::chrono::nanoseconds;

  // Records one duration; negative durations count as zero, durations
  // longer than about 18 minutes as 18 minutes.
  void Record(Nanos d);
  // Adds every sample of `other` to this one.
  void Merge(const LatencyHistogram& other);

  std::uint64_t count() const { return count_; }
  Nanos min() const { return Nanos(count_ == 0 ? 0 : min_); }
  Nanos max() const { return Nanos(max_); }
  Nanos mean() const;
  // The smallest recorded value v such that a fraction q (0..1) of the
  // samples are <= v, to within a bucket (0.8 %). 0 when empty.
  Nanos Percentile(double q) const;

 private:
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kMaxExponent = 33;  // values below 2^41 ns
  // Exponents 0..kMaxExponent, kSub buckets each, after the kSub exact ones.
  static constexpr std::size_t kBuckets = kSub + (kMaxExponent + 1) * kSub;

  static std::size_t IndexOf(std::uint64_t v);
  // The middle of bucket `i`'s range of values.
  static std::uint64_t ValueOf(std::size_t i);

  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_LATENCY_HISTOGRAM_H_
