// A check's list of violations, capped so that a badly broken server's
// history fails with a readable report rather than thousands of lines.
// Internal to the lock history checks.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_VIOLATIONS_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_VIOLATIONS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/lock_history_check.h"

namespace leasehold::testing {

class Violations {
 public:
  explicit Violations(std::string check) : check_(std::move(check)) {}

  // The server broke the check's rule.
  void Add(const std::string& what) { Keep(check_ + ": " + what); }
  // The test broke one of the check's preconditions.
  void Malformed(const std::string& what) {
    Keep("malformed history (" + check_ + "): " + what);
  }

  // Once full, a caller with many more to report may just count them
  // rather than compose lines nobody will read.
  bool Full() const { return found_ >= kMaxViolations; }
  void CountAnother() { ++found_; }

  std::vector<std::string> Take() {
    if (found_ > lines_.size()) {
      lines_.push_back(check_ + ": and " +
                       std::to_string(found_ - lines_.size()) + " more");
    }
    return std::move(lines_);
  }

 private:
  void Keep(std::string line) {
    if (++found_ <= kMaxViolations) lines_.push_back(std::move(line));
  }

  std::string check_;
  std::vector<std::string> lines_;
  std::size_t found_ = 0;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_VIOLATIONS_H_
