// Fences over hand-built histories: rising ones pass, across fail-overs and
// among concurrent grants; equal, falling and missing ones fail.
#include <gtest/gtest.h>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

constexpr Outcome kOk = Outcome::kOk;

std::string Check(const History& history) {
  return Lines(CheckFencesRise(history));
}

TEST(LockHistoryFencesRise, RisingFencesPassAcrossAFailOver) {
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 5),
      Release("a", "r", At(2), At(3), kOk),
      Acquire("b", "r", kX, At(4), At(5), kOk, 6),
      // The leader was killed; the next one's epoch starts far above.
      Acquire("b", "r", kX, At(10), At(20), Outcome::kUnknown),
      Acquire("c", "r", kX, At(30), At(31), kOk, 1001),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryFencesRise, ConcurrentGrantsMayComeInEitherOrder) {
  // Neither completed before the other was invoked: no order is implied.
  const History history = {
      Acquire("a", "r", kS, At(0), At(10), kOk, 8),
      Acquire("b", "r", kS, At(1), At(9), kOk, 7),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryFencesRise, EachResourceIsJudgedOnItsOwn) {
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 9),
      Acquire("a", "q", kX, At(2), At(3), kOk, 4),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryFencesRise, AFallingFenceFails) {
  // The new leader started below the old one's fences.
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1001),
      Release("a", "r", At(2), At(3), kOk),
      Acquire("b", "r", kX, At(4), At(5), kOk, 7),
  };
  EXPECT_EQ(Check(history),
            "fences rise: r: fence fell: #0 acquire a r Exclusive "
            "[t+0.000000s..t+0.000001s] granted fence 1001 completed before "
            "#2 acquire b r Exclusive [t+0.000004s..t+0.000005s] granted "
            "fence 7 was invoked, yet its fence is the higher\n");
}

TEST(LockHistoryFencesRise, AnEqualFenceFailsEvenAmongConcurrentGrants) {
  const History ordered = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 3),
      Acquire("b", "r", kX, At(4), At(5), kOk, 3),
  };
  EXPECT_NE(Check(ordered).find("fences rise: r: fence 3 granted twice, by #0 "
                                "acquire a r"),
            std::string::npos);
  const History concurrent = {
      Acquire("a", "r", kS, At(0), At(10), kOk, 3),
      Acquire("b", "r", kS, At(1), At(9), kOk, 3),
  };
  EXPECT_NE(Check(concurrent), "");
  // A re-acquisition takes a new fence too.
  const History again = {
      Acquire("a", "r", kS, At(0), At(1), kOk, 3),
      Acquire("a", "r", kS, At(2), At(3), kOk, 3),
  };
  EXPECT_NE(Check(again), "");
}

TEST(LockHistoryFencesRise, AGrantWithoutAFenceFails) {
  const History history = {Acquire("a", "r", kX, At(0), At(1), kOk, 0)};
  EXPECT_NE(Check(history).find("carries no fence"), std::string::npos);
}

}  // namespace
}  // namespace leasehold::testing
