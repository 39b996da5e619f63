// Stale transactions (engine.h, "Stale transactions"): a namespace's
// max_transaction rolls back a transaction that stays open too long once it
// has used that namespace, and later calls say why.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using E = EventType;

class StaleTransactionTest : public EngineHarness {
 protected:
  StaleTransactionTest() {
    NamespaceOptions limited;
    limited.max_transaction = milliseconds(5'000);
    engine_.SetNamespaceOptions("app", limited);
    NamespaceOptions tight;
    tight.max_transaction = milliseconds(2'000);
    engine_.SetNamespaceOptions("tight", tight);
  }

  SessionId Begin(const std::string& name) {
    const SessionId s = Open(name, 600'000);
    EXPECT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
    return s;
  }

  std::optional<Time> DeadlineOf(SessionId s) {
    auto info = engine_.GetSession(Now(), s);
    EXPECT_TRUE(info.has_value());
    if (!info || !info->transaction) return std::nullopt;
    return info->transaction->deadline;
  }

  bool HasTransaction(SessionId s) {
    auto info = engine_.GetSession(Now(), s);
    return info && info->transaction.has_value();
  }

  std::size_t CountEvents(EventType type) const {
    return static_cast<std::size_t>(
        std::ranges::count(recorder_.Types(), type));
  }
};

TEST_F(StaleTransactionTest, RolledBackAtTheLimitReleasingItsLocks) {
  const SessionId asha = Begin("Asha");
  const Time started = Now();
  ASSERT_EQ(
      Code(asha, "invoice:1", LockMode::kExclusive, LockOwner::kTransaction),
      0);
  EXPECT_EQ(DeadlineOf(asha), started + milliseconds(5'000));
  EXPECT_EQ(engine_.NextDeadline(), started + milliseconds(5'000));

  const SessionId ravi = Open("Ravi");
  ASSERT_EQ(Code(ravi, "invoice:1", LockMode::kExclusive, LockOwner::kSession,
                 60'000),
            99);

  Advance(4'999);
  EXPECT_TRUE(HasTransaction(asha));
  EXPECT_EQ(CountEvents(E::kTransactionExpired), 0u);

  Advance(1);
  EXPECT_FALSE(HasTransaction(asha));
  EXPECT_EQ(CountEvents(E::kTransactionExpired), 1u);
  EXPECT_EQ(engine_.Stats().transactions_expired, 1u);
  EXPECT_EQ(engine_.Stats().open_transactions, 0u);
  // The waiter got the lock the expired transaction held.
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{ravi, 1}}));
  // Asha holds nothing there: Ravi does (Mode, owner Transaction, would
  // be refused now that Asha has no transaction).
  EXPECT_EQ(ModeOf(ravi, "invoice:1"), LockMode::kExclusive);
}

TEST_F(StaleTransactionTest, LaterCallsSayTheTransactionExpired) {
  const SessionId asha = Begin("Asha");
  ASSERT_EQ(Code(asha, "a", LockMode::kShared, LockOwner::kTransaction), 0);
  Advance(5'000);

  const Status commit = engine_.Commit(Now(), asha);
  EXPECT_EQ(commit.code(), StatusCode::kTransactionExpired);
  EXPECT_NE(commit.message().find("5000 ms"), std::string::npos)
      << commit.message();
  EXPECT_NE(commit.message().find("\"app\""), std::string::npos);
  EXPECT_EQ(engine_.Rollback(Now(), asha).code(),
            StatusCode::kTransactionExpired);
  auto acquire = Acquire(asha, "b", LockMode::kShared, LockOwner::kTransaction);
  ASSERT_FALSE(acquire.has_value());
  EXPECT_EQ(acquire.error().code(), StatusCode::kTransactionExpired);

  // A new transaction starts afresh, and is not marked expired.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), asha).has_value());
  EXPECT_EQ(Code(asha, "b", LockMode::kShared, LockOwner::kTransaction), 0);
  EXPECT_TRUE(engine_.Commit(Now(), asha).ok());
  EXPECT_EQ(engine_.Commit(Now(), asha).code(), StatusCode::kNoTransaction);
}

TEST_F(StaleTransactionTest, UnlimitedNamespacesDoNotBindTheTransaction) {
  const SessionId asha = Begin("Asha");
  auto r = engine_.Acquire(Now(), {asha, Key("x", "free"), LockMode::kExclusive,
                                   LockOwner::kTransaction, milliseconds(0)});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(DeadlineOf(asha).has_value());
  // Session-owned locks in a limited namespace do not bind it either.
  EXPECT_EQ(Code(asha, "y", LockMode::kExclusive, LockOwner::kSession), 0);
  EXPECT_FALSE(DeadlineOf(asha).has_value());
  Advance(60'000);
  EXPECT_TRUE(HasTransaction(asha));
  EXPECT_TRUE(engine_.Commit(Now(), asha).ok());
}

TEST_F(StaleTransactionTest, UsingALimitedNamespaceTooLateRollsBackAtOnce) {
  const SessionId asha = Begin("Asha");
  ASSERT_TRUE(engine_
                  .Acquire(Now(), {asha, Key("x", "free"), LockMode::kExclusive,
                                   LockOwner::kTransaction, milliseconds(0)})
                  .has_value());
  Advance(6'000);
  auto r = Acquire(asha, "late", LockMode::kExclusive, LockOwner::kTransaction);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kTransactionExpired);
  EXPECT_FALSE(HasTransaction(asha));
  // Nothing was granted, and the earlier lock went with the transaction.
  EXPECT_TRUE(engine_.ListLocks(Now(), "").empty());
  EXPECT_EQ(engine_.Stats().transactions_expired, 1u);
}

TEST_F(StaleTransactionTest, TheEarliestLimitWins) {
  const SessionId asha = Begin("Asha");
  const Time started = Now();
  ASSERT_EQ(Code(asha, "a", LockMode::kShared, LockOwner::kTransaction), 0);
  Advance(1'000);
  auto staged = engine_.StageInsert(Now(), asha, {"tight", "k"}, "body");
  ASSERT_TRUE(staged.has_value()) << staged.error().ToString();
  EXPECT_EQ(DeadlineOf(asha), started + milliseconds(2'000));
  // Using the looser namespace again does not move the deadline later.
  ASSERT_EQ(Code(asha, "b", LockMode::kShared, LockOwner::kTransaction), 0);
  EXPECT_EQ(DeadlineOf(asha), started + milliseconds(2'000));
  Advance(1'000);
  EXPECT_FALSE(HasTransaction(asha));
}

TEST_F(StaleTransactionTest, StagedWritesAreDiscarded) {
  const SessionId asha = Begin("Asha");
  ASSERT_TRUE(engine_.StageInsert(Now(), asha, {"app", "k"}, "v").has_value());
  ASSERT_TRUE(
      engine_.Enqueue(Now(), {"app", "mail", "m1", "{}", asha}).has_value());
  Advance(5'000);
  EXPECT_EQ(engine_.Commit(Now(), asha).code(),
            StatusCode::kTransactionExpired);
  EXPECT_FALSE(engine_.GetRecord(Now(), {"app", "k"}).has_value());
  auto outbox = engine_.GetOutbox(Now(), "app", "mail");
  ASSERT_TRUE(outbox.has_value());
  EXPECT_EQ(outbox->pending, 0u);
}

TEST_F(StaleTransactionTest, AParkedTransactionRequestEndsCancelled) {
  const SessionId ravi = Open("Ravi");
  ASSERT_EQ(Code(ravi, "a", LockMode::kExclusive), 0);
  const SessionId asha = Begin("Asha");
  ASSERT_EQ(
      Code(asha, "a", LockMode::kExclusive, LockOwner::kTransaction, 60'000),
      99);
  Advance(5'000);
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{asha, -2}}));
  EXPECT_FALSE(HasTransaction(asha));
}

TEST_F(StaleTransactionTest, CommitOrSessionEndForgetsTheDeadline) {
  const SessionId asha = Begin("Asha");
  ASSERT_EQ(Code(asha, "a", LockMode::kShared, LockOwner::kTransaction), 0);
  const SessionId ravi = Begin("Ravi");
  ASSERT_EQ(Code(ravi, "b", LockMode::kShared, LockOwner::kTransaction), 0);
  Advance(1'000);
  EXPECT_TRUE(engine_.Commit(Now(), asha).ok());
  EXPECT_TRUE(engine_.EndSession(Now(), ravi).ok());
  EXPECT_FALSE(engine_.NextDeadline().has_value() &&
               *engine_.NextDeadline() < Now() + milliseconds(10'000));
  Advance(10'000);
  EXPECT_EQ(engine_.Stats().transactions_expired, 0u);
  EXPECT_EQ(CountEvents(E::kTransactionExpired), 0u);
}

TEST_F(StaleTransactionTest, OperationsBindTheTransaction) {
  const SessionId asha = Begin("Asha");
  const Time started = Now();
  ASSERT_TRUE(
      engine_.BeginOperation(Now(), asha, {"tight", "op-1"}).has_value());
  EXPECT_EQ(DeadlineOf(asha), started + milliseconds(2'000));
  Advance(2'000);
  auto r = engine_.CompleteOperation(Now(), asha, {"tight", "op-1"}, "{}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kTransactionExpired);
}

}  // namespace
}  // namespace leasehold::testing
