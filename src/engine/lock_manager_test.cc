#include "engine/lock_manager.h"

#include <gtest/gtest.h>

#include <chrono>

namespace leasehold::engine {
namespace {

using std::chrono_literals::operator""ms;

constexpr LockMode kX = LockMode::kExclusive;
constexpr LockMode kS = LockMode::kShared;
constexpr LockOwner kSessionOwner = LockOwner::kSession;

class LockManagerTest : public ::testing::Test {
 protected:
  LockManagerTest() {
    for (SessionId id = 1; id <= 4; ++id) sessions_[id - 1].id = id;
  }

  Session* S(SessionId id) { return &sessions_[id - 1]; }

  AcquireOutcome Ask(SessionId id, std::string_view resource, LockMode mode,
                     WaitTerms terms = {}) {
    return locks_
        .Acquire(now_, S(id), {"ns", "public", resource}, mode, kSessionOwner,
                 terms)
        .value();
  }
  Status Let(SessionId id, std::string_view resource) {
    return locks_.Release(now_, S(id), {"ns", "public", resource},
                          kSessionOwner);
  }

  Time now_ = Time{} + std::chrono::hours(1);
  JournalBatch journal_;
  DeadlineQueue deadlines_;
  FenceSource fences_{0, &journal_};
  std::array<Session, 4> sessions_;
  // After the sessions, so that it goes first.
  LockManager locks_{&fences_, &deadlines_, &journal_, nullptr};
};

TEST_F(LockManagerTest, GrantsAtOnceWhenNothingConflicts) {
  const AcquireOutcome a = Ask(1, "x", kS);
  const AcquireOutcome b = Ask(2, "x", kS);
  EXPECT_FALSE(a.wait);
  EXPECT_EQ(a.result, AcquireResult::kGranted);
  EXPECT_EQ(b.result, AcquireResult::kGranted);
  EXPECT_GT(b.fence, a.fence);
  EXPECT_EQ(locks_.Held(S(1), {"ns", "public", "x"}, kSessionOwner), kS);
  EXPECT_EQ(locks_.resource_count(), 1u);
}

TEST_F(LockManagerTest, ParksAConflictAndHandsTheLockOverInQueueOrder) {
  ASSERT_EQ(Ask(1, "x", kX).result, AcquireResult::kGranted);
  const AcquireOutcome b = Ask(2, "x", kX);
  const AcquireOutcome c = Ask(3, "x", kX);
  ASSERT_TRUE(b.wait);
  ASSERT_TRUE(c.wait);
  EXPECT_NE(*b.wait, *c.wait);
  EXPECT_EQ(locks_.waiting(), 2u);
  EXPECT_EQ(locks_.WaitOf(S(2)), b.wait);
  EXPECT_TRUE(locks_.TakeFinished().empty());

  ASSERT_TRUE(Let(1, "x").ok());
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *b.wait);
  EXPECT_EQ(done[0].session, 2u);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(done[0].held, kX);
  EXPECT_EQ(done[0].count, 1u);
  EXPECT_EQ(done[0].fence, fences_.last());
  EXPECT_EQ(locks_.waiting(), 1u);

  ASSERT_TRUE(Let(2, "x").ok());
  done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *c.wait);
  EXPECT_EQ(locks_.waiting(), 0u);
}

TEST_F(LockManagerTest, NobodyPassesAWaitingExclusiveButAConversionGoesFirst) {
  ASSERT_EQ(Ask(1, "x", kS).result, AcquireResult::kGranted);
  ASSERT_EQ(Ask(2, "x", kS).result, AcquireResult::kGranted);
  const AcquireOutcome x = Ask(3, "x", kX);
  ASSERT_TRUE(x.wait);
  // Compatible with what is granted, but not with the waiting Exclusive.
  const AcquireOutcome s = Ask(4, "x", kS);
  ASSERT_TRUE(s.wait);
  // A holder converting waits only on the others' grants: it goes ahead
  // of both waiters in the queue.
  const AcquireOutcome up = Ask(1, "x", kX);
  ASSERT_TRUE(up.wait);
  ASSERT_TRUE(Let(2, "x").ok());
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *up.wait);
  EXPECT_EQ(done[0].held, kX);
}

TEST_F(LockManagerTest, ARequestThatMayNotWaitTimesOutAndLeavesNothing) {
  ASSERT_EQ(Ask(1, "x", kX).result, AcquireResult::kGranted);
  const AcquireOutcome b = Ask(2, "x", kX, WaitTerms{.may_wait = false});
  EXPECT_FALSE(b.wait);
  EXPECT_EQ(b.result, AcquireResult::kTimeout);
  EXPECT_EQ(locks_.timeouts(), 1u);
  ASSERT_TRUE(Let(1, "x").ok());
  EXPECT_EQ(locks_.resource_count(), 0u);
  EXPECT_TRUE(locks_.TakeFinished().empty());
}

TEST_F(LockManagerTest, AWaitTimesOutAtItsDeadline) {
  ASSERT_EQ(Ask(1, "x", kX).result, AcquireResult::kGranted);
  const Time deadline = now_ + 50ms;
  const AcquireOutcome b = Ask(2, "x", kX, WaitTerms{.deadline = deadline});
  ASSERT_TRUE(b.wait);
  EXPECT_EQ(deadlines_.Next(), deadline);
  const std::optional<Deadline> due = deadlines_.PopDueBy(deadline);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->kind, DeadlineKind::kWaitTimeout);
  EXPECT_EQ(due->id, *b.wait);
  locks_.TimeOut(due->at, due->id);
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kTimeout);
  EXPECT_EQ(locks_.WaitOf(S(2)), std::nullopt);
  EXPECT_EQ(locks_.timeouts(), 1u);
}

TEST_F(LockManagerTest, CancellingAWaitRemovesItsDeadline) {
  ASSERT_EQ(Ask(1, "x", kX).result, AcquireResult::kGranted);
  const AcquireOutcome b = Ask(2, "x", kX, WaitTerms{.deadline = now_ + 1ms});
  ASSERT_TRUE(b.wait);
  EXPECT_TRUE(locks_.CancelWait(now_, *b.wait));
  EXPECT_FALSE(locks_.CancelWait(now_, *b.wait));
  EXPECT_EQ(deadlines_.Next(), std::nullopt);
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kCancelled);
}

TEST_F(LockManagerTest, TheRequestThatClosesACycleIsTheVictimAmongEquals) {
  ASSERT_EQ(Ask(1, "a", kX).result, AcquireResult::kGranted);
  ASSERT_EQ(Ask(2, "b", kX).result, AcquireResult::kGranted);
  ASSERT_TRUE(Ask(1, "b", kX).wait);
  const AcquireOutcome closer = Ask(2, "a", kX);
  EXPECT_FALSE(closer.wait);
  EXPECT_EQ(closer.result, AcquireResult::kDeadlock);
  ASSERT_TRUE(closer.deadlock);
  EXPECT_EQ(closer.deadlock->victim, 2u);
  EXPECT_EQ(closer.deadlock->cycle.size(), 2u);
  EXPECT_EQ(locks_.deadlocks(), 1u);
  EXPECT_TRUE(locks_.TakeFinished().empty());  // answered inline
}

TEST_F(LockManagerTest, ALowerPriorityVictimLetsTheCloserThrough) {
  S(1)->deadlock_priority = -5;
  ASSERT_EQ(Ask(1, "a", kX).result, AcquireResult::kGranted);
  ASSERT_EQ(Ask(2, "b", kX).result, AcquireResult::kGranted);
  const AcquireOutcome first = Ask(1, "b", kX);
  ASSERT_TRUE(first.wait);
  // Session 1 is aborted; the closer waits only until the cycle is gone,
  // and 1 still holds "a".
  const AcquireOutcome closer = Ask(2, "a", kX);
  ASSERT_TRUE(closer.wait);
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *first.wait);
  EXPECT_EQ(done[0].result, AcquireResult::kDeadlock);
  ASSERT_TRUE(done[0].deadlock);
  EXPECT_EQ(done[0].deadlock->victim, 1u);
  // Once 1 lets go of "a", the closer gets it.
  ASSERT_TRUE(Let(1, "a").ok());
  done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *closer.wait);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
}

TEST_F(LockManagerTest, AnAcquireAllWaitIsDecidedIntoItsCallAndKeepsItsId) {
  ASSERT_EQ(Ask(1, "x", kX).result, AcquireResult::kGranted);
  WaitTerms terms{.for_call = true};
  const AcquireOutcome b = Ask(2, "x", kX, terms);
  ASSERT_TRUE(b.wait);
  ASSERT_TRUE(Let(1, "x").ok());
  EXPECT_TRUE(locks_.TakeFinished().empty());
  ASSERT_TRUE(locks_.has_call_steps());
  CallStep step = locks_.TakeCallStep();
  EXPECT_FALSE(locks_.has_call_steps());
  EXPECT_EQ(step.wait, *b.wait);
  EXPECT_EQ(step.outcome.result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(step.outcome.held, kX);

  // The call's next lock parks under the same id.
  ASSERT_EQ(Ask(1, "y", kX).result, AcquireResult::kGranted);
  terms = WaitTerms{.wait = *b.wait, .for_call = true};
  const AcquireOutcome next = Ask(2, "y", kX, terms);
  EXPECT_EQ(next.wait, b.wait);
}

TEST_F(LockManagerTest, ReleaseRefusesWhatIsNotHeldAndAPendingConversion) {
  EXPECT_EQ(Let(1, "x").code(), StatusCode::kNotHeld);
  ASSERT_EQ(Ask(1, "x", kS).result, AcquireResult::kGranted);
  ASSERT_EQ(Ask(2, "x", kS).result, AcquireResult::kGranted);
  ASSERT_TRUE(Ask(1, "x", kX).wait);
  EXPECT_EQ(locks_.WaitOf(S(1)), S(1)->waiting->id);
  EXPECT_EQ(Let(1, "x").code(), StatusCode::kWaitPending);
  EXPECT_TRUE(locks_.Cancel(now_, S(1)));
  EXPECT_FALSE(locks_.Cancel(now_, S(1)));
  EXPECT_TRUE(Let(1, "x").ok());
}

TEST_F(LockManagerTest, EndingATransactionKeepsTheSessionsOwnLocks) {
  const LockKey t{"ns", "public", "t"};
  const LockKey s{"ns", "public", "s"};
  WaitTerms terms;
  ASSERT_EQ(
      locks_.Acquire(now_, S(1), t, kX, LockOwner::kTransaction, terms)->result,
      AcquireResult::kGranted);
  ASSERT_EQ(locks_.Acquire(now_, S(1), s, kX, kSessionOwner, terms)->result,
            AcquireResult::kGranted);
  // Waiting for the transaction's lock, which the end lets go.
  const AcquireOutcome other = Ask(2, "t", kX);
  ASSERT_TRUE(other.wait);
  locks_.EndTransaction(now_, S(1));
  EXPECT_EQ(locks_.Held(S(1), t, LockOwner::kTransaction), LockMode::kNoLock);
  EXPECT_EQ(locks_.Held(S(1), s, kSessionOwner), kX);
  EXPECT_EQ(S(1)->total_grants(), 1u);
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *other.wait);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
}

TEST_F(LockManagerTest, EndingATransactionCancelsItsParkedRequest) {
  ASSERT_EQ(Ask(2, "x", kX).result, AcquireResult::kGranted);
  WaitTerms terms;
  const AcquireOutcome parked = locks_
                                    .Acquire(now_, S(1), {"ns", "public", "x"},
                                             kX, LockOwner::kTransaction, terms)
                                    .value();
  ASSERT_TRUE(parked.wait);
  locks_.EndTransaction(now_, S(1));
  std::vector<FinishedWait> done = locks_.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wait, *parked.wait);
  EXPECT_EQ(done[0].result, AcquireResult::kCancelled);
}

TEST_F(LockManagerTest, ListsLocksInKeyOrderWithHoldersAndWaiters) {
  ASSERT_EQ(Ask(1, "b", kX).result, AcquireResult::kGranted);
  ASSERT_EQ(Ask(1, "a", kS).result, AcquireResult::kGranted);
  ASSERT_TRUE(Ask(2, "b", kS).wait);
  const std::vector<LockInfo> all = locks_.List("");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].resource, "a");
  EXPECT_EQ(all[1].resource, "b");
  ASSERT_EQ(all[1].granted.size(), 1u);
  ASSERT_EQ(all[1].waiting.size(), 1u);
  EXPECT_EQ(all[1].waiting[0].session, 2u);
  EXPECT_TRUE(locks_.List("other").empty());
}

}  // namespace
}  // namespace leasehold::engine
