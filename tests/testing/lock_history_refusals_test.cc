// A refusal sticks, over hand-built histories: probes explained by a grant
// pass; a lock seen held after a refusal, or after its last release,
// fails; calls whose outcome is unknown are not judged.
#include <gtest/gtest.h>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

constexpr Outcome kOk = Outcome::kOk;
constexpr Outcome kRefused = Outcome::kRefused;
constexpr Outcome kUnknown = Outcome::kUnknown;

std::string Check(const History& history) {
  return Lines(CheckRefusalsStick(history));
}

TEST(LockHistoryRefusals, ARefusedWaiterSeenHoldingNothingPasses) {
  EXPECT_EQ(Check({Acquire("a", "r", kX, At(0), At(5), kRefused),
                   Probe("a", "r", LockMode::kNoLock, At(6), At(7))}),
            "");
}

TEST(LockHistoryRefusals, AGrantExplainsWhatAProbeSees) {
  EXPECT_EQ(Check({Acquire("a", "r", kS, At(0), At(1), kOk, 1),
                   Acquire("a", "r", kX, At(2), At(5), kRefused),
                   Probe("a", "r", kS, At(6), At(7))}),
            "");
}

TEST(LockHistoryRefusals, ARefusedWaiterSeenHoldingFails) {
  EXPECT_EQ(Check({Acquire("a", "r", kX, At(0), At(5), kRefused),
                   Probe("a", "r", kX, At(6), At(7))}),
            "a refusal sticks: held without a grant: #1 probe a r "
            "[t+0.000006s..t+0.000007s] saw Exclusive, after #0 acquire a r "
            "Exclusive [t+0.000000s..t+0.000005s] refused\n");
}

TEST(LockHistoryRefusals, AReleasedLockSeenHoldingFails) {
  EXPECT_NE(Check({Acquire("a", "r", kX, At(0), At(1), kOk, 1),
                   Release("a", "r", At(2), At(3), kOk),
                   Probe("a", "r", kX, At(6), At(7))}),
            "");
}

TEST(LockHistoryRefusals, UnknownOrUnfinishedCallsAreNotJudged) {
  EXPECT_EQ(Check({Acquire("a", "r", kX, At(0), At(5), kUnknown),
                   Probe("a", "r", kX, At(6), At(7))}),
            "");
  // Sent before the probe, answered after it: it may have granted first.
  EXPECT_EQ(Check({Acquire("a", "r", kX, At(0), At(9), kRefused),
                   Probe("a", "r", kX, At(6), At(7))}),
            "");
}

TEST(LockHistoryRefusals, OtherSessionsAndResourcesDoNotExplainAProbe) {
  EXPECT_NE(Check({Acquire("b", "r", kX, At(0), At(1), kOk, 1),
                   Acquire("a", "q", kX, At(0), At(1), kOk, 2),
                   Probe("a", "r", kX, At(6), At(7))}),
            "");
}

}  // namespace
}  // namespace leasehold::testing
