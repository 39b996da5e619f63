// Mutual exclusion over hand-built histories: the legal ones a correct
// server may produce pass, however tight; each injected overlap fails.
#include <gtest/gtest.h>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_modes.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

constexpr Outcome kOk = Outcome::kOk;
constexpr Outcome kUnknown = Outcome::kUnknown;
constexpr Outcome kRefused = Outcome::kRefused;

std::string Check(const History& history) {
  return Lines(CheckMutualExclusion(history));
}

// Session a holds r in `first` from 1 to 10 (its release is invoked at 10);
// session b is granted `second` at 9 + overlap_us - 1, so that the two
// overlap by `overlap_us` (nothing at 0).
History TwoHolders(LockMode first, LockMode second, double overlap_us) {
  return {
      Acquire("a", "r", first, At(0), At(1), kOk, 1),
      Acquire("b", "r", second, At(2), At(10 - overlap_us), kOk, 2),
      Release("a", "r", At(10), At(11), kOk),
      Release("b", "r", At(20), At(21), kOk),
  };
}

TEST(LockHistoryMutualExclusion,
     TwoExclusiveHoldersOverlappingByOneMicrosecondFail) {
  const std::string found = Check(TwoHolders(kX, kX, 1));
  EXPECT_NE(found.find("mutual exclusion: r: session a held Exclusive from "
                       "t+0.000001s (#0 acquire a r Exclusive"),
            std::string::npos)
      << found;
  EXPECT_NE(found.find("(released by #2 release a r"), std::string::npos)
      << found;
  EXPECT_NE(found.find("session b held Exclusive from t+0.000009s (#1 "),
            std::string::npos)
      << found;
  EXPECT_NE(found.find("they overlap for 1.000us from t+0.000009s"),
            std::string::npos)
      << found;
}

TEST(LockHistoryMutualExclusion, SharedBesideExclusiveFails) {
  EXPECT_NE(Check(TwoHolders(kS, kX, 1)), "");
  EXPECT_NE(Check(TwoHolders(kX, kS, 1)), "");
}

TEST(LockHistoryMutualExclusion, UpdateBesideUpdateFails) {
  EXPECT_NE(Check(TwoHolders(kU, kU, 1)), "");
}

// Every pair of requestable modes, overlapping: reported exactly when
// sp_getapplock's matrix says they conflict.
TEST(LockHistoryMutualExclusion, EveryPairOfModesFollowsTheMatrix) {
  const LockMode modes[] = {kIS, kS, kU, kIX, kX};
  for (LockMode first : modes) {
    for (LockMode second : modes) {
      EXPECT_EQ(Check(TwoHolders(first, second, 5)).empty(),
                !ModesConflict(first, second))
          << ModeName(first) << " then " << ModeName(second);
    }
  }
}

TEST(LockHistoryMutualExclusion, BackToBackHandOffPasses) {
  // b waits; a's release is invoked at 10 and b's grant answered at 10.5,
  // before a's release is: the server let b in between the two.
  const History handoff = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1),
      Acquire("b", "r", kX, At(5), At(10.5), kOk, 2),
      Release("a", "r", At(10), At(11), kOk),
  };
  EXPECT_EQ(Check(handoff), "");
  // Granted the very instant the release was sent: still no overlap.
  EXPECT_EQ(Check(TwoHolders(kX, kX, 0)), "");
}

TEST(LockHistoryMutualExclusion, OverlappingSharedHoldersPass) {
  const History shared = {
      Acquire("a", "r", kS, At(0), At(1), kOk, 1),
      Acquire("b", "r", kS, At(0), At(2), kOk, 2),
      Acquire("c", "r", kIS, At(0), At(3), kOk, 3),
      Acquire("d", "r", kU, At(0), At(4), kOk, 4),
      Release("a", "r", At(10), At(11), kOk),
  };
  EXPECT_EQ(Check(shared), "");
}

TEST(LockHistoryMutualExclusion, AnAcquireOfUnknownOutcomeDoesNotHold) {
  // a's call timed out: it may or may not hold r. b is granted meanwhile.
  const History history = {
      Acquire("a", "r", kX, At(0), At(50), kUnknown),
      Acquire("b", "r", kX, At(10), At(11), kOk, 2),
      Acquire("a", "r", kX, At(60), At(70), kRefused),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryMutualExclusion, AGrantLostAtAFailOverPasses) {
  // The old leader took a's acquire, then was killed: a never heard back,
  // and the new leader (fences from 1001) never saw the grant.
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 7),
      Release("a", "r", At(5), At(6), kOk),
      Acquire("a", "r", kX, At(10), At(40), kUnknown),
      Acquire("b", "r", kX, At(45), At(46), kOk, 1001),
      Acquire("a", "r", kX, At(50), At(51), kRefused),
      Release("b", "r", At(60), At(61), kOk),
      Acquire("a", "r", kX, At(62), At(63), kOk, 1002),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryMutualExclusion, AHoldEndsWhenTheSessionIsFoundGone) {
  // b is granted once a's session was gone, before a's client heard of it,
  // but after a's keep-alive was sent: a correct server may do that.
  const History told_before = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1),
      KeepAlive("a", At(20), At(26), Outcome::kSessionLost),
      Acquire("b", "r", kX, At(15), At(25), kOk, 2),
  };
  EXPECT_EQ(Check(told_before), "");
  // Ending the session (DELETE) lets go of its locks as well.
  const History ended = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1),
      EndSession("a", At(20), At(30), kUnknown),
      Acquire("b", "r", kX, At(15), At(25), kOk, 2),
  };
  EXPECT_EQ(Check(ended), "");
}

TEST(LockHistoryMutualExclusion, AnExpiredSessionHoldsNothingOnceItsTtlRanOut) {
  // a renewed at 0 for 10us and then stalled; its session expired, b was
  // granted at 18, and a learned only at 30.
  History history = {
      KeepAlive("a", At(0), At(1), kOk, Micros(10)),
      Acquire("a", "r", kX, At(1), At(2), kOk, 1),
      Acquire("b", "r", kX, At(12), At(18), kOk, 2),
      KeepAlive("a", At(30), At(31), Outcome::kSessionLost),
  };
  EXPECT_EQ(Check(history), "");
  // Without the ttl, the history claims a's session was alive until 30.
  history[0].ttl = {};
  EXPECT_NE(Check(history).find("session gone: #3 keep-alive a"),
            std::string::npos);
  // Renewed at 5: alive until at least 15, so b's grant at 14 is wrong.
  history[0].ttl = Micros(10);
  history.push_back(KeepAlive("a", At(5), At(6), kOk, Micros(10)));
  history[2].complete = At(14);
  EXPECT_NE(Check(history).find("its ttl may have run out"), std::string::npos);
}

TEST(LockHistoryMutualExclusion, LocksLostEndHoldsWhenTheClientAsks) {
  // A restart lost a's in-memory lock; the namespace grants nothing until
  // a is told, which its keep-alive sent at 20 does.
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1),
      KeepAlive("a", At(20), At(22), Outcome::kLocksLost, Micros(1000)),
      Acquire("b", "r", kX, At(5), At(21), kOk, 2),
      // A grant beside the telling keep-alive may have been lost too.
      Acquire("a", "q", kX, At(19), At(21), kOk, 3),
      Acquire("b", "q", kX, At(23), At(24), kOk, 4),
      // After it, grants hold again.
      Acquire("a", "p", kX, At(23), At(24), kOk, 5),
  };
  EXPECT_EQ(Check(history), "");
  History broken = history;
  broken.push_back(Acquire("b", "p", kX, At(25), At(26), kOk, 6));
  EXPECT_NE(Check(broken).find("mutual exclusion: p:"), std::string::npos);
  broken = history;
  broken[2].complete = At(19.5);  // before a's keep-alive was even sent
  EXPECT_NE(Check(broken).find("mutual exclusion: r:"), std::string::npos);
}

TEST(LockHistoryMutualExclusion, CountedReacquisitionNeedsEveryRelease) {
  History history = {
      Acquire("a", "r", kS, At(0), At(1), kOk, 1),
      Acquire("a", "r", kS, At(2), At(3), kOk, 2),
      Release("a", "r", At(4), At(5), kOk),
      Release("a", "r", At(6), At(7), kOk),
      Acquire("b", "r", kX, At(2), At(6.5), kOk, 3),
  };
  EXPECT_EQ(Check(history), "");
  // Granted after the first release only: a still held one reference.
  history[4].complete = At(5.5);
  EXPECT_NE(Check(history).find("released by #3"), std::string::npos);
}

TEST(LockHistoryMutualExclusion, AConversionHoldsTheCombinedModeFromItsGrant) {
  History history = {
      Acquire("a", "r", kS, At(0), At(1), kOk, 1),
      Acquire("b", "r", kS, At(0), At(2), kOk, 2),
      Release("b", "r", At(4), At(5), kOk),
      Acquire("a", "r", kX, At(3), At(6), kOk, 3),  // waited for b
      Release("a", "r", At(7), At(8), kOk),
      Release("a", "r", At(9), At(10), kOk),
      Acquire("c", "r", kIX, At(8), At(9.5), kOk, 4),
  };
  EXPECT_EQ(Check(history), "");
  // b still held Shared when a's Exclusive was granted.
  history[2].invoke = At(6.5);
  history[2].complete = At(6.6);
  EXPECT_NE(Check(history).find("session a held Exclusive"), std::string::npos);
  // The mode stays Exclusive while a reference is left: c's IX conflicts.
  history[2].invoke = At(4);
  history[2].complete = At(5);
  history[6].complete = At(8.5);
  EXPECT_NE(Check(history).find("session c held IntentExclusive"),
            std::string::npos);
}

TEST(LockHistoryMutualExclusion, NoGrantCountsAfterAReleaseOfUnknownOutcome) {
  // a's release got no answer and may still land, late, taking away the
  // reference of a's next grant; so that grant proves nothing.
  const History history = {
      Acquire("a", "r", kX, At(0), At(1), kOk, 1),
      Release("a", "r", At(2), At(3), kUnknown),
      Acquire("a", "r", kX, At(4), At(5), kOk, 3),
      Acquire("b", "r", kX, At(4), At(6), kOk, 4),
  };
  EXPECT_EQ(Check(history), "");
  // A refused release (not_held) is an answer: a's next grant counts.
  History answered = history;
  answered[1].outcome = kRefused;
  EXPECT_NE(Check(answered), "");
}

TEST(LockHistoryMutualExclusion, SameSessionNeverConflictsWithItself) {
  const History history = {
      Acquire("a", "r", kS, At(0), At(1), kOk, 1),
      Acquire("a", "r", kX, At(2), At(3), kOk, 2),
  };
  EXPECT_EQ(Check(history), "");
}

TEST(LockHistoryMutualExclusion, OverlappingCallsOnOneLockAreMalformed) {
  const History history = {
      Acquire("a", "r", kX, At(0), At(5), kOk, 1),
      Release("a", "r", At(4), At(6), kOk),
  };
  EXPECT_NE(Check(history).find("malformed history (mutual exclusion): #0"),
            std::string::npos);
  const History combined = {
      Acquire("a", "r", LockMode::kSharedIntentExclusive, At(0), At(1), kOk, 1),
  };
  EXPECT_NE(Check(combined).find("asks for a mode no client may"),
            std::string::npos);
}

TEST(LockHistoryMutualExclusion, ManyViolationsAreCapped) {
  History history;
  for (int i = 0; i < 300; ++i) {
    history.push_back(Acquire("s" + std::to_string(i), "r", kX, At(i),
                              At(i + 0.5), kOk, Fence(i + 1)));
  }
  const std::vector<std::string> found = CheckMutualExclusion(history);
  ASSERT_EQ(found.size(), kMaxViolations + 1);
  EXPECT_EQ(found.back(), "mutual exclusion: and " +
                              std::to_string(300 * 299 / 2 - kMaxViolations) +
                              " more");
}

}  // namespace
}  // namespace leasehold::testing
