// No acknowledged write lost, over hand-built histories: reads that some
// order of the writes explains pass; lost, invented, refused and future
// values fail.
#include <gtest/gtest.h>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

constexpr Outcome kOk = Outcome::kOk;
constexpr Outcome kUnknown = Outcome::kUnknown;

std::string Check(const History& history) {
  return Lines(CheckNoAcknowledgedWriteLost(history));
}

History Writes() {
  return {
      Write("k", "v1", At(0), At(1), kOk),
      Write("k", "v2", At(2), At(3), kOk),
  };
}

History ThenRead(History history, std::optional<std::string> value) {
  history.push_back(Read("k", std::move(value), At(100), At(101)));
  return history;
}

TEST(LockHistoryWrites, TheLastAcknowledgedWritePasses) {
  EXPECT_EQ(Check(ThenRead(Writes(), "v2")), "");
}

TEST(LockHistoryWrites, AnOlderAcknowledgedValueFails) {
  EXPECT_EQ(Check(ThenRead(Writes(), "v1")),
            "no acknowledged write lost: lost acknowledged write: #2 read k "
            "[t+0.000100s..t+0.000101s] saw \"v1\" shows #0 write k = \"v1\" "
            "[t+0.000000s..t+0.000001s] acknowledged, which #1 write k = "
            "\"v2\" [t+0.000002s..t+0.000003s] acknowledged certainly "
            "followed and completed before the read\n");
}

TEST(LockHistoryWrites, ConcurrentAcknowledgedWritesMayEndEitherWay) {
  // v2 completed first, but the two overlapped: either may be last.
  const History history = {
      Write("k", "v1", At(0), At(5), kOk),
      Write("k", "v2", At(1), At(3), kOk),
  };
  EXPECT_EQ(Check(ThenRead(history, "v1")), "");
  EXPECT_EQ(Check(ThenRead(history, "v2")), "");
}

TEST(LockHistoryWrites, AnUnknownWriteMayLandAnyTimeAfterItsInvoke) {
  History history = Writes();
  history.push_back(Write("k", "late", At(-5), At(-4), kUnknown));
  history.push_back(Write("k", "after", At(10), At(11), kUnknown));
  // Either unknown write may have landed last, even the one sent first
  // (a request the server got to late), or neither.
  EXPECT_EQ(Check(ThenRead(history, "late")), "");
  EXPECT_EQ(Check(ThenRead(history, "after")), "");
  EXPECT_EQ(Check(ThenRead(history, "v2")), "");
  EXPECT_NE(Check(ThenRead(history, "v1")), "");
}

TEST(LockHistoryWrites, NoRecordOnlyWhenNothingWasAcknowledged) {
  const History unknown_only = {Write("k", "v", At(0), At(1), kUnknown)};
  EXPECT_EQ(Check(ThenRead(unknown_only, std::nullopt)), "");
  EXPECT_NE(Check(ThenRead(Writes(), std::nullopt))
                .find("lost acknowledged write: #2 read k"),
            std::string::npos);
}

TEST(LockHistoryWrites, AValueNeverWrittenFails) {
  EXPECT_NE(Check(ThenRead(Writes(), "v3")).find("a value never written"),
            std::string::npos);
}

TEST(LockHistoryWrites, TheValueOfARefusedWriteFails) {
  History history = Writes();
  history.push_back(Write("k", "no", At(10), At(11), Outcome::kRefused));
  EXPECT_NE(Check(ThenRead(history, "no")).find("the value of a refused write"),
            std::string::npos);
}

TEST(LockHistoryWrites, AValueFromTheFutureFails) {
  History history = Writes();
  history.push_back(Write("k", "v3", At(200), At(201), kUnknown));
  EXPECT_NE(Check(ThenRead(history, "v3")).find("a value from the future"),
            std::string::npos);
}

TEST(LockHistoryWrites, AReadDuringTheWritesMayShowEither) {
  // The read overlaps v2's write: before or after it, both are fine.
  History history = Writes();
  history.push_back(Read("k", "v1", At(2.5), At(4)));
  history.push_back(Read("k", "v2", At(2.5), At(4)));
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryWrites, RepeatedValuesAndUnreadKeysAreMalformed) {
  History history = Writes();
  history.push_back(Write("k", "v1", At(5), At(6), kOk));
  EXPECT_NE(Check(ThenRead(history, "v1"))
                .find("malformed history (no acknowledged write lost): #0"),
            std::string::npos);
  EXPECT_NE(Check(Writes()).find("key k is written but never read"),
            std::string::npos);
}

}  // namespace
}  // namespace leasehold::testing
