// Shorthand for the lock history checks' own tests: moments in microseconds
// from an arbitrary origin, and violations as one printable block.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_TEST_SUPPORT_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_TEST_SUPPORT_H_

#include <chrono>
#include <string>
#include <vector>

#include "tests/testing/lock_history.h"

namespace leasehold::testing {

inline Instant At(double microseconds) {
  return Instant{} + std::chrono::seconds(1) +
         std::chrono::nanoseconds(static_cast<long long>(microseconds * 1e3));
}

inline std::chrono::nanoseconds Micros(double microseconds) {
  return std::chrono::nanoseconds(static_cast<long long>(microseconds * 1e3));
}

inline std::string Lines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

inline constexpr LockMode kIS = LockMode::kIntentShared;
inline constexpr LockMode kS = LockMode::kShared;
inline constexpr LockMode kU = LockMode::kUpdate;
inline constexpr LockMode kIX = LockMode::kIntentExclusive;
inline constexpr LockMode kX = LockMode::kExclusive;

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_TEST_SUPPORT_H_
