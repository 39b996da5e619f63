// Acquire-all in the engine: canonical order, all or nothing, one deadline
// for the whole call, one wait id however many locks wait; on the manual
// clock.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using M = LockMode;
constexpr auto kSes = LockOwner::kSession;
constexpr auto kTxn = LockOwner::kTransaction;

class AcquireAllTest : public EngineHarness {
 protected:
  Result<AcquireAllOutcome> All(SessionId s, std::vector<WantedLock> locks,
                                long long timeout_ms = 0,
                                LockOwner owner = kSes) {
    return engine_.AcquireAll(
        Now(), {s, "app", "public", owner, milliseconds(timeout_ms),
                std::move(locks)});
  }

  static std::vector<std::string> Resources(const AcquireAllResult& r) {
    std::vector<std::string> out;
    for (const AcquiredLock& l : r.locks) out.push_back(l.resource);
    return out;
  }

  // The one finished wait expected now: an acquire-all's.
  AcquireAllResult FinishedCall(WaitId wait) {
    auto done = engine_.TakeFinishedWaits();
    EXPECT_EQ(done.size(), 1u);
    if (done.size() != 1 || !done[0].all) return {};
    EXPECT_EQ(done[0].wait, wait);
    EXPECT_EQ(done[0].result, done[0].all->result);
    return *done[0].all;
  }
};

TEST_F(AcquireAllTest, GrantsEveryLockInBytewiseOrder) {
  const SessionId s = Open("Asha");
  auto r = All(s, {{"\xC3\xA9t\xC3\xA9", M::kExclusive},
                   {"a", M::kShared},
                   {"B", M::kUpdate}});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_FALSE(r->wait);
  EXPECT_EQ(r->result.result, AcquireResult::kGranted);
  EXPECT_EQ(Resources(r->result),
            (std::vector<std::string>{"B", "a", "\xC3\xA9t\xC3\xA9"}));
  EXPECT_EQ(r->result.locks[0].held, M::kUpdate);
  EXPECT_LT(r->result.locks[0].fence, r->result.locks[1].fence);
  EXPECT_LT(r->result.locks[1].fence, r->result.locks[2].fence);
  EXPECT_EQ(ModeOf(s, "a"), M::kShared);
}

TEST_F(AcquireAllTest, ARefusalAtOnceReleasesWhatTheCallTook) {
  const SessionId holder = Open("Ravi");
  ASSERT_EQ(Code(holder, "b", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  auto r = All(
      s, {{"c", M::kExclusive}, {"a", M::kExclusive}, {"b", M::kExclusive}});
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(r->wait);
  EXPECT_EQ(r->result.result, AcquireResult::kTimeout);
  EXPECT_EQ(r->result.refused, "b");
  EXPECT_EQ(r->result.released, 1u);
  EXPECT_TRUE(r->result.locks.empty());
  EXPECT_EQ(ModeOf(s, "a"), M::kNoLock);
  EXPECT_EQ(ModeOf(s, "c"), M::kNoLock);
  EXPECT_EQ(ModeOf(holder, "b"), M::kExclusive);
}

TEST_F(AcquireAllTest, UndoDropsOnlyTheCallsOwnReference) {
  const SessionId holder = Open("Ravi");
  ASSERT_EQ(Code(holder, "z", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  ASSERT_EQ(Code(s, "a", M::kExclusive), 0);
  auto r = All(s, {{"a", M::kShared}, {"z", M::kExclusive}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->result.result, AcquireResult::kTimeout);
  EXPECT_EQ(ModeOf(s, "a"), M::kExclusive);
  EXPECT_EQ(CountOf(s, "a"), 1u);
}

TEST_F(AcquireAllTest, WaitsUnderOneWaitIdAndIsGrantedWhenHoldersLetGo) {
  const SessionId ravi = Open("Ravi");
  const SessionId mei = Open("Mei");
  ASSERT_EQ(Code(ravi, "b", M::kExclusive), 0);
  ASSERT_EQ(Code(mei, "c", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  auto r =
      All(s, {{"c", M::kExclusive}, {"b", M::kShared}, {"a", M::kExclusive}},
          /*timeout_ms=*/-1);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->wait);
  const WaitId wait = *r->wait;
  EXPECT_EQ(engine_.GetSession(Now(), s)->waiting, wait);
  EXPECT_EQ(ModeOf(s, "a"), M::kExclusive);  // taken before "b" waited

  clock_.AdvanceMs(10);
  ASSERT_TRUE(Release(ravi, "b").ok());
  EXPECT_TRUE(engine_.TakeFinishedWaits().empty());  // now waits on "c"
  EXPECT_EQ(engine_.GetSession(Now(), s)->waiting, wait);

  clock_.AdvanceMs(10);
  ASSERT_TRUE(Release(mei, "c").ok());
  const AcquireAllResult done = FinishedCall(wait);
  EXPECT_EQ(done.result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(Resources(done), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(done.locks[1].held, M::kShared);
  EXPECT_FALSE(engine_.GetSession(Now(), s)->waiting);
}

TEST_F(AcquireAllTest, OneDeadlineCoversTheWholeCall) {
  const SessionId ravi = Open("Ravi");
  const SessionId mei = Open("Mei");
  ASSERT_EQ(Code(ravi, "a", M::kExclusive), 0);
  ASSERT_EQ(Code(mei, "b", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  const Time start = Now();
  auto r = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}}, 150);
  ASSERT_TRUE(r && r->wait);
  EXPECT_EQ(engine_.NextDeadline(), start + milliseconds(150));

  Advance(100);
  ASSERT_TRUE(Release(ravi, "a").ok());
  // "b" waits for what is left of the 150 ms, not for 150 ms more.
  EXPECT_TRUE(engine_.TakeFinishedWaits().empty());
  EXPECT_EQ(engine_.NextDeadline(), start + milliseconds(150));
  Advance(49);
  EXPECT_TRUE(engine_.TakeFinishedWaits().empty());
  Advance(1);
  const AcquireAllResult done = FinishedCall(*r->wait);
  EXPECT_EQ(done.result, AcquireResult::kTimeout);
  EXPECT_EQ(done.refused, "b");
  EXPECT_EQ(done.released, 1u);
  EXPECT_EQ(ModeOf(s, "a"), M::kNoLock);
  EXPECT_EQ(engine_.Stats().timeouts, 1u);
}

TEST_F(AcquireAllTest, ADeadlineAlreadyPassedRefusesTheNextLockAtOnce) {
  const SessionId ravi = Open("Ravi");
  const SessionId mei = Open("Mei");
  ASSERT_EQ(Code(ravi, "a", M::kExclusive), 0);
  ASSERT_EQ(Code(mei, "b", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  auto r = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}}, 50);
  ASSERT_TRUE(r && r->wait);
  // "a" is let go at the very instant the call's deadline falls: the
  // timeout applies first (deadlines come before the command).
  clock_.AdvanceMs(50);
  ASSERT_TRUE(Release(ravi, "a").ok());
  const AcquireAllResult done = FinishedCall(*r->wait);
  EXPECT_EQ(done.result, AcquireResult::kTimeout);
  EXPECT_EQ(done.refused, "a");
  EXPECT_EQ(done.released, 0u);
}

TEST_F(AcquireAllTest, CancellingTheWaitCancelsTheCall) {
  const SessionId ravi = Open("Ravi");
  ASSERT_EQ(Code(ravi, "b", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  auto r = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}}, -1);
  ASSERT_TRUE(r && r->wait);
  EXPECT_TRUE(engine_.CancelWait(Now(), *r->wait));
  const AcquireAllResult done = FinishedCall(*r->wait);
  EXPECT_EQ(done.result, AcquireResult::kCancelled);
  EXPECT_EQ(done.refused, "b");
  EXPECT_EQ(done.released, 1u);
  EXPECT_EQ(ModeOf(s, "a"), M::kNoLock);
  EXPECT_FALSE(engine_.CancelWait(Now(), *r->wait));
}

TEST_F(AcquireAllTest, ADeadlockVictimIsRefusedWithTheReport) {
  const SessionId ravi = Open("Ravi");
  const SessionId s = Open("Asha");
  ASSERT_EQ(Code(ravi, "b", M::kExclusive), 0);
  auto r = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}}, -1);
  ASSERT_TRUE(r && r->wait);
  // Ravi closes the cycle; equal priorities, so the closer is the victim.
  EXPECT_EQ(Code(ravi, "a", M::kExclusive, kSes, -1), -3);
  ASSERT_TRUE(Release(ravi, "b").ok());
  const AcquireAllResult done = FinishedCall(*r->wait);
  EXPECT_EQ(done.result, AcquireResult::kGrantedAfterWait);

  // Now the call is the victim: lower priority than the closer.
  const SessionId low = Open("Low", 60'000, -5);
  ASSERT_EQ(Code(ravi, "y", M::kExclusive), 0);
  auto r2 = All(low, {{"x", M::kExclusive}, {"y", M::kExclusive}}, -1);
  ASSERT_TRUE(r2 && r2->wait);
  // The victim's undo, right after Ravi's request, lets Ravi in.
  EXPECT_EQ(Code(ravi, "x", M::kExclusive, kSes, -1), 99);
  auto finished = engine_.TakeFinishedWaits();
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0].session, ravi);
  EXPECT_EQ(finished[0].result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(finished[1].wait, *r2->wait);
  ASSERT_TRUE(finished[1].all);
  const AcquireAllResult victim = *finished[1].all;
  EXPECT_EQ(victim.result, AcquireResult::kDeadlock);
  EXPECT_EQ(victim.refused, "y");
  EXPECT_EQ(victim.released, 1u);
  ASSERT_TRUE(victim.deadlock);
  EXPECT_EQ(victim.deadlock->victim, low);
  EXPECT_EQ(ModeOf(low, "x"), M::kNoLock);
  EXPECT_EQ(ModeOf(ravi, "x"), M::kExclusive);
}

TEST_F(AcquireAllTest, RefusedBeforeAnythingIsTaken) {
  const SessionId s = Open("Asha");
  auto code = [&](std::vector<WantedLock> locks, long long timeout = 0,
                  LockOwner owner = kSes, SessionId who = 0) {
    auto r = All(who != 0 ? who : s, std::move(locks), timeout, owner);
    return r ? StatusCode::kOk : r.error().code();
  };
  EXPECT_EQ(code({}), StatusCode::kBadRequest);
  EXPECT_EQ(code({{"a", M::kExclusive}, {"a", M::kShared}}),
            StatusCode::kBadRequest);
  EXPECT_EQ(code({{"a", M::kExclusive}, {"b", M::kSharedIntentExclusive}}),
            StatusCode::kBadMode);
  EXPECT_EQ(code({{"a", M::kExclusive}, {"", M::kExclusive}}),
            StatusCode::kNameEmpty);
  std::vector<WantedLock> many;
  std::vector<std::string> names;
  for (int i = 0; i < 1001; ++i) names.push_back(NumberedName("r", i));
  for (const std::string& n : names) many.push_back({n, M::kExclusive});
  EXPECT_EQ(code(many), StatusCode::kBadRequest);
  many.pop_back();
  EXPECT_EQ(code(many), StatusCode::kOk);
  EXPECT_EQ(code({{"c", M::kExclusive}}, -2), StatusCode::kBadTimeout);
  EXPECT_EQ(code({{"c", M::kExclusive}}, 0, kTxn), StatusCode::kNoTransaction);
  EXPECT_EQ(code({{"c", M::kExclusive}}, 0, kSes, 999'999),
            StatusCode::kSessionNotFound);
  EXPECT_EQ(ModeOf(s, "c"), M::kNoLock);
}

TEST_F(AcquireAllTest, AConversionIsRefusedButAWeakerModeIsCounted) {
  const SessionId s = Open("Asha");
  ASSERT_EQ(Code(s, "a", M::kShared), 0);
  auto converts = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}});
  ASSERT_FALSE(converts.has_value());
  EXPECT_EQ(converts.error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(ModeOf(s, "b"), M::kNoLock);
  auto counted = All(s, {{"a", M::kIntentShared}, {"b", M::kExclusive}});
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->result.result, AcquireResult::kGranted);
  EXPECT_EQ(CountOf(s, "a"), 2u);
}

TEST_F(AcquireAllTest, EndingTheTransactionCancelsAWaitingCall) {
  const SessionId ravi = Open("Ravi");
  ASSERT_EQ(Code(ravi, "b", M::kExclusive), 0);
  const SessionId s = Open("Asha");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  auto r = All(s, {{"a", M::kExclusive}, {"b", M::kExclusive}}, -1, kTxn);
  ASSERT_TRUE(r && r->wait);
  ASSERT_TRUE(engine_.Rollback(Now(), s).ok());
  const AcquireAllResult done = FinishedCall(*r->wait);
  EXPECT_EQ(done.result, AcquireResult::kCancelled);
  EXPECT_EQ(done.released, 1u);
  EXPECT_TRUE(engine_.ListLocks(Now(), "app").size() == 1u);  // Ravi's "b"
}

}  // namespace
}  // namespace leasehold::testing
