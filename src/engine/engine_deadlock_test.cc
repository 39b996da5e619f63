// Deadlock detection: cycles found when a request starts to wait.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
constexpr auto S = LockMode::kShared;
constexpr auto X = LockMode::kExclusive;
constexpr auto kSes = LockOwner::kSession;
using Done = std::vector<std::pair<SessionId, int>>;

class DeadlockTest : public EngineHarness {};

TEST_F(DeadlockTest, TwoSessionsCloserIsVictimAndCycleIsNamed) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X), 0);
  ASSERT_EQ(Code(a, "r2", X, kSes, -1), 99);
  auto r = Acquire(b, "r1", X, kSes, -1);
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(r->wait.has_value());
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  ASSERT_TRUE(r->deadlock.has_value());
  EXPECT_EQ(r->deadlock->victim, b);
  ASSERT_EQ(r->deadlock->cycle.size(), 2u);
  EXPECT_EQ(r->deadlock->cycle[0].waiter, b);
  EXPECT_EQ(r->deadlock->cycle[0].holder, a);
  EXPECT_EQ(r->deadlock->cycle[0].resource, "r1");
  EXPECT_EQ(r->deadlock->cycle[0].waiter_name, "Ravi");
  EXPECT_EQ(r->deadlock->cycle[1].waiter, a);
  EXPECT_EQ(r->deadlock->cycle[1].holder, b);
  EXPECT_EQ(r->deadlock->cycle[1].resource, "r2");
  EXPECT_EQ(r->deadlock->cycle[1].ns, "app");
  EXPECT_EQ(engine_.Stats().deadlocks, 1u);
  EXPECT_EQ(recorder_.Types().back(), EventType::kLockDeadlock);
  // The victim keeps its other locks; Asha still waits for them.
  EXPECT_EQ(ModeOf(b, "r2"), X);
  EXPECT_TRUE(Finished().empty());
  ASSERT_TRUE(Release(b, "r2").ok());
  EXPECT_EQ(Finished(), (Done{{a, 1}}));
}

TEST_F(DeadlockTest, ThreeSessionCycle) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X), 0);
  ASSERT_EQ(Code(c, "r3", X), 0);
  ASSERT_EQ(Code(a, "r2", X, kSes, -1), 99);
  ASSERT_EQ(Code(b, "r3", X, kSes, -1), 99);
  auto r = Acquire(c, "r1", S, kSes, -1);
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  ASSERT_EQ(r->deadlock->cycle.size(), 3u);
  std::vector<SessionId> order;
  for (const auto& e : r->deadlock->cycle) order.push_back(e.waiter);
  EXPECT_EQ(order, (std::vector<SessionId>{c, a, b}));
  EXPECT_EQ(r->deadlock->cycle[2].holder, c);
}

TEST_F(DeadlockTest, LowestPriorityIsVictimEvenIfItDidNotCloseTheCycle) {
  const SessionId a = Open("Asha", 60'000, -5);
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X), 0);
  ASSERT_EQ(Code(a, "r2", X, kSes, -1), 99);
  auto r = Acquire(b, "r1", X, kSes, -1);
  ASSERT_TRUE(r->wait.has_value());  // Ravi goes on waiting
  auto done = engine_.TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, a);
  EXPECT_EQ(done[0].result, AcquireResult::kDeadlock);
  ASSERT_TRUE(done[0].deadlock.has_value());
  EXPECT_EQ(done[0].deadlock->victim, a);
  EXPECT_EQ(ModeOf(a, "r1"), X);  // Asha keeps r1, so Ravi still waits
  ASSERT_TRUE(Release(a, "r1").ok());
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
}

TEST_F(DeadlockTest, HigherPriorityCloserSurvivesAmongEqualsLatestWaiterDies) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei", 60'000, 5);
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X), 0);
  ASSERT_EQ(Code(c, "r3", X), 0);
  ASSERT_EQ(Code(a, "r2", X, kSes, -1), 99);
  ASSERT_EQ(Code(b, "r3", X, kSes, -1), 99);  // Ravi waited last
  auto r = Acquire(c, "r1", X, kSes, -1);
  ASSERT_TRUE(r->wait.has_value());
  EXPECT_EQ(Finished(), (Done{{b, -3}}));
}

TEST_F(DeadlockTest, ConversionDeadlock) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", S), 0);
  ASSERT_EQ(Code(a, "doc", X, kSes, -1), 99);
  EXPECT_EQ(Code(b, "doc", X, kSes, -1), -3);
  EXPECT_EQ(ModeOf(b, "doc"), S);  // the failed conversion changed nothing
  ASSERT_TRUE(Release(b, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{a, 1}}));
  EXPECT_EQ(ModeOf(a, "doc"), X);
}

TEST_F(DeadlockTest, CycleThroughAWaiterAheadInTheQueue) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "r1", S), 0);
  ASSERT_EQ(Code(c, "r2", X), 0);
  ASSERT_EQ(Code(b, "r1", X, kSes, -1), 99);  // Ravi -> Asha (held S)
  ASSERT_EQ(Code(c, "r1", S, kSes, -1), 99);  // Mei -> Ravi (queued X)
  auto r = Acquire(a, "r2", X, kSes, -1);     // Asha -> Mei: closes it
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  ASSERT_EQ(r->deadlock->cycle.size(), 3u);
  EXPECT_EQ(r->deadlock->cycle[1].waiter, c);
  EXPECT_EQ(r->deadlock->cycle[1].holder, b);
}

TEST_F(DeadlockTest, VictimRemovalCanGrantTheCloserAtOnce) {
  const SessionId h = Open("Hold");
  const SessionId b = Open("Low", 60'000, -5);
  const SessionId c = Open("Closer");
  ASSERT_EQ(Code(c, "r2", X), 0);
  ASSERT_EQ(Code(h, "r1", S), 0);
  ASSERT_EQ(Code(h, "r2", X, kSes, -1), 99);  // Hold -> Closer
  ASSERT_EQ(Code(b, "r1", X, kSes, -1), 99);  // Low -> Hold
  auto r = Acquire(c, "r1", S, kSes, -1);     // Closer -> Low (queued X)
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->wait.has_value());
  EXPECT_EQ(r->result, AcquireResult::kGrantedAfterWait);
  EXPECT_GT(r->fence, 0u);
  EXPECT_EQ(Finished(), (Done{{b, -3}}));
  EXPECT_EQ(ModeOf(c, "r1"), S);
}

TEST_F(DeadlockTest, NoFalsePositiveForAChain) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X), 0);
  ASSERT_EQ(Code(b, "r1", X, kSes, -1), 99);
  ASSERT_EQ(Code(c, "r2", X, kSes, -1), 99);
  ASSERT_EQ(Code(a, "r3", X, kSes, -1), 0);
  EXPECT_EQ(engine_.Stats().deadlocks, 0u);
}

TEST_F(DeadlockTest, TransactionIsNotRolledBackForTheVictim) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), b).has_value());
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(b, "r2", X, LockOwner::kTransaction), 0);
  ASSERT_EQ(Code(a, "r2", X, kSes, -1), 99);
  EXPECT_EQ(Code(b, "r1", X, LockOwner::kTransaction, -1), -3);
  EXPECT_TRUE(engine_.GetSession(Now(), b)->transaction.has_value());
  EXPECT_EQ(ModeOf(b, "r2", LockOwner::kTransaction), X);
}

TEST_F(DeadlockTest, ManyWaitersAndLongChainsStayCorrect) {
  // A chain of 200 sessions each waiting for the next; the last closes it.
  std::vector<SessionId> s;
  for (int i = 0; i < 200; ++i) s.push_back(Open(NumberedName("s", i)));
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(Code(s[i], NumberedName("r", i), X), 0);
  for (int i = 0; i < 199; ++i) {
    ASSERT_EQ(Code(s[i], NumberedName("r", i + 1), X, kSes, -1), 99);
  }
  auto r = Acquire(s[199], "r0", X, kSes, -1);
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  EXPECT_EQ(r->deadlock->cycle.size(), 200u);
}

TEST_F(DeadlockTest, CycleThroughALongQueueIsFound) {
  // Asha holds r; 200 sessions queue for it; the last also holds r2.
  const SessionId a = Open("Asha");
  ASSERT_EQ(Code(a, "r", X), 0);
  std::vector<SessionId> queue;
  for (int i = 0; i < 200; ++i) {
    queue.push_back(Open(NumberedName("q", i)));
    if (i == 199) {
      ASSERT_EQ(Code(queue.back(), "r2", X), 0);
    }
    ASSERT_EQ(Code(queue.back(), "r", X, kSes, -1), 99);
  }
  EXPECT_EQ(engine_.Stats().deadlocks, 0u);
  auto r = Acquire(a, "r2", X, kSes, -1);  // Asha -> q199 -> ... -> Asha
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  ASSERT_TRUE(r->deadlock.has_value());
  EXPECT_EQ(r->deadlock->cycle.front().waiter, a);
  EXPECT_EQ(r->deadlock->cycle.back().holder, a);
}

}  // namespace
}  // namespace leasehold::testing
