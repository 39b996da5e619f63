// Sessions and transactions.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
constexpr auto S = LockMode::kShared;
constexpr auto X = LockMode::kExclusive;
constexpr auto kTxn = LockOwner::kTransaction;
constexpr auto kSes = LockOwner::kSession;

class SessionTest : public EngineHarness {};

TEST_F(SessionTest, OpenValidatesOptions) {
  EXPECT_EQ(
      engine_.OpenSession(Now(), {"a", milliseconds(0), 0, ""}).error().code(),
      StatusCode::kBadRequest);
  EXPECT_EQ(
      engine_.OpenSession(Now(), {"a", milliseconds(-5), 0, ""}).error().code(),
      StatusCode::kBadRequest);
  // A ttl whose expiry would not fit a Time (fuzz_scenario found the
  // overflow).
  EXPECT_EQ(
      engine_.OpenSession(Now(), {"a", kLongestTtl + milliseconds(1), 0, ""})
          .error()
          .code(),
      StatusCode::kBadRequest);
  EXPECT_EQ(
      engine_.OpenSession(Now(), {"a", milliseconds(67777777777770000), 0, ""})
          .error()
          .code(),
      StatusCode::kBadRequest);
  EXPECT_EQ(engine_.OpenSession(Now(), {"a", milliseconds(10), 11, ""})
                .error()
                .code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(
      engine_
          .OpenSession(Now(), {std::string(256, 'n'), milliseconds(10), 0, ""})
          .error()
          .code(),
      StatusCode::kNameTooLong);
  EXPECT_EQ(engine_.Stats().sessions, 0u);
}

TEST_F(SessionTest, TheLongestTtlIsTakenAndExpiresThatLate) {
  auto opened = engine_.OpenSession(Now(), {"a", kLongestTtl, 0, ""});
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->expires_at, Now() + kLongestTtl);
}

TEST_F(SessionTest, ExpiresExactlyAtTtlUnlessKeptAlive) {
  const SessionId a = Open("Asha", 1000);
  Advance(999);
  EXPECT_TRUE(engine_.GetSession(Now(), a).has_value());
  ASSERT_TRUE(engine_.KeepAlive(Now(), a).has_value());
  Advance(999);
  EXPECT_TRUE(engine_.GetSession(Now(), a).has_value());
  Advance(1);
  EXPECT_EQ(engine_.GetSession(Now(), a).error().code(),
            StatusCode::kSessionNotFound);
  EXPECT_EQ(engine_.KeepAlive(Now(), a).error().code(),
            StatusCode::kSessionNotFound);
  EXPECT_EQ(recorder_.Types().back(), EventType::kSessionExpired);
}

TEST_F(SessionTest, ExpiryIsAppliedBeforeAnyCommandAtThatTime) {
  const SessionId a = Open("Asha", 1000);
  clock_.AdvanceMs(5000);  // no AdvanceTo: the next command must see it
  EXPECT_EQ(Acquire(a, "r", X).error().code(), StatusCode::kSessionNotFound);
}

TEST_F(SessionTest, NextDeadlineIsEarliestExpiryOrTimeout) {
  EXPECT_FALSE(engine_.NextDeadline().has_value());
  const SessionId a = Open("Asha", 5000);
  const SessionId b = Open("Ravi", 3000);
  EXPECT_EQ(engine_.NextDeadline(), Now() + milliseconds(3000));
  ASSERT_EQ(Code(a, "r", X), 0);
  ASSERT_EQ(Code(b, "r", X, kSes, 200), 99);
  EXPECT_EQ(engine_.NextDeadline(), Now() + milliseconds(200));
  Advance(200);
  EXPECT_EQ(engine_.NextDeadline(), Now() + milliseconds(2800));
}

TEST_F(SessionTest, EndReleasesLocksCancelsWaitAndRollsBack) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "t", X, kTxn), 0);
  ASSERT_EQ(Code(a, "s", X, kSes), 0);
  ASSERT_EQ(Code(b, "u", X, kSes), 0);
  ASSERT_EQ(Code(a, "u", S, kSes, -1), 99);
  ASSERT_TRUE(engine_.EndSession(Now(), a).ok());
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{a, -2}}));
  EXPECT_EQ(Code(b, "t", X), 0);
  EXPECT_EQ(Code(b, "s", X), 0);
  EXPECT_EQ(engine_.Stats().open_transactions, 0u);
  EXPECT_EQ(engine_.EndSession(Now(), a).code(), StatusCode::kSessionNotFound);
}

TEST_F(SessionTest, ExpiryWakesWaiterWithResultOne) {
  const SessionId a = Open("Asha", 1000);
  const SessionId b = Open("Ravi", 60'000);
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  Advance(1000);
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{b, 1}}));
  EXPECT_EQ(ModeOf(b, "doc"), S);
}

TEST_F(SessionTest, OneTransactionAtATime) {
  const SessionId a = Open("Asha");
  auto t1 = engine_.BeginTransaction(Now(), a);
  ASSERT_TRUE(t1.has_value());
  EXPECT_EQ(engine_.BeginTransaction(Now(), a).error().code(),
            StatusCode::kTransactionOpen);
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  EXPECT_EQ(engine_.Commit(Now(), a).code(), StatusCode::kNoTransaction);
  EXPECT_EQ(engine_.Rollback(Now(), a).code(), StatusCode::kNoTransaction);
  auto t2 = engine_.BeginTransaction(Now(), a);
  ASSERT_TRUE(t2.has_value());
  EXPECT_GT(t2->id, t1->id);
}

TEST_F(SessionTest, CommitAndRollbackReleaseOnlyTransactionLocks) {
  for (bool commit : {true, false}) {
    const SessionId a = Open("Asha");
    const SessionId b = Open("Ravi");
    ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
    ASSERT_EQ(Code(a, "txn-lock", X, kTxn), 0);
    ASSERT_EQ(Code(a, "txn-lock", X, kTxn), 0);  // count 2: all go
    ASSERT_EQ(Code(a, "session-lock", X, kSes), 0);
    ASSERT_TRUE(
        (commit ? engine_.Commit(Now(), a) : engine_.Rollback(Now(), a)).ok());
    EXPECT_EQ(engine_.Mode(Now(), a, Key("txn-lock"), kTxn).error().code(),
              StatusCode::kNoTransaction);
    EXPECT_EQ(ModeOf(a, "session-lock", kSes), X);
    EXPECT_EQ(Code(b, "txn-lock", X), 0);
    EXPECT_EQ(Code(b, "session-lock", X), -1);
    ASSERT_TRUE(engine_.EndSession(Now(), a).ok());
    ASSERT_TRUE(engine_.EndSession(Now(), b).ok());
  }
}

TEST_F(SessionTest, CommitCancelsTransactionOwnedWait) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(b, "r", X), 0);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r", S, kTxn, -1), 99);
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{a, -2}}));
}

TEST_F(SessionTest, DeadlockPriorityRange) {
  const SessionId a = Open("Asha");
  EXPECT_TRUE(engine_.SetDeadlockPriority(Now(), a, -10).ok());
  EXPECT_TRUE(engine_.SetDeadlockPriority(Now(), a, 10).ok());
  EXPECT_EQ(engine_.SetDeadlockPriority(Now(), a, 11).code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(engine_.GetSession(Now(), a)->deadlock_priority, 10);
}

TEST_F(SessionTest, SessionIdsStartAboveBase) {
  Engine engine(EngineOptions{.session_id_base = 1000});
  auto s = engine.OpenSession(Now(), {"a", milliseconds(10), 0, ""});
  EXPECT_EQ(s->id, 1001u);
}

TEST_F(SessionTest, TimeNeverGoesBack) {
  const SessionId a = Open("Asha", 1000);
  Advance(900);
  // A command stamped earlier is treated as happening at the latest time.
  auto info = engine_.GetSession(Now() - milliseconds(500), a);
  ASSERT_TRUE(info.has_value());
  auto kept = engine_.KeepAlive(Now() - milliseconds(900), a);
  EXPECT_EQ(kept->expires_at, Now() + milliseconds(1000));
}

TEST_F(SessionTest, ListSessionsShowsLocksAndTransaction) {
  const SessionId a = Open("Asha");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "x", X, kTxn), 0);
  ASSERT_EQ(Code(a, "y", X, kSes), 0);
  auto list = engine_.ListSessions(Now());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "Asha");
  EXPECT_EQ(list[0].locks, 2u);
  EXPECT_TRUE(list[0].transaction.has_value());
}

}  // namespace
}  // namespace leasehold::testing
