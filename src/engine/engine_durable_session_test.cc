// Durable sessions: what the engine journals for sessions and transactions,
// and what a new engine restored from that journal gives back.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;
using Kind = JournalEntry::Kind;
constexpr auto X = LockMode::kExclusive;
constexpr auto kTxn = LockOwner::kTransaction;

class DurableSessionTest : public EngineHarness {
 protected:
  void Absorb(Engine& engine) { fold_.Absorb(engine); }
  // A new engine restored, at Now(), from what `engine` journaled.
  std::unique_ptr<Engine> Restart(Engine& engine) {
    return fold_.Restart(engine, Now());
  }
  const SessionRow& StoredRow(SessionId id) { return fold_.sessions().at(id); }

  SessionId OpenOn(Engine& engine, const std::string& name) {
    auto s = engine.OpenSession(Now(), {name, milliseconds(60'000), 0, ""});
    EXPECT_TRUE(s.has_value());
    return s ? s->id : 0;
  }

  JournalFold fold_;
};

TEST_F(DurableSessionTest, SessionsSurviveWithTheirOptionsAndAFreshTtl) {
  auto a = engine_.OpenSession(Now(), {"Asha", milliseconds(5000), -3, "ops"});
  ASSERT_TRUE(a.has_value());
  const Time opened = Now();
  const SessionId b = Open("Bo", 9000, 4);
  ASSERT_TRUE(engine_.SetDeadlockPriority(Now(), b, 7).ok());
  Advance(4000);

  auto restored = Restart(engine_);
  auto info = restored->GetSession(Now(), a->id);
  ASSERT_TRUE(info.has_value()) << info.error().ToString();
  EXPECT_EQ(info->name, "Asha");
  EXPECT_EQ(info->caller, "ops");
  EXPECT_EQ(info->ttl, milliseconds(5000));
  EXPECT_EQ(info->deadlock_priority, -3);
  EXPECT_EQ(info->opened_at, opened);
  // A fresh ttl from the restore: the 4 s before it do not count.
  EXPECT_EQ(info->expires_at, Now() + milliseconds(5000));
  EXPECT_FALSE(info->transaction.has_value());
  EXPECT_EQ(restored->GetSession(Now(), b)->deadlock_priority, 7);

  clock_.AdvanceMs(4999);
  EXPECT_TRUE(restored->KeepAlive(Now(), b).has_value());
  EXPECT_TRUE(restored->GetSession(Now(), a->id).has_value());
  clock_.AdvanceMs(1);
  EXPECT_EQ(restored->GetSession(Now(), a->id).error().code(),
            StatusCode::kSessionNotFound);
}

TEST_F(DurableSessionTest, EndedAndExpiredSessionsDoNotComeBack) {
  const SessionId ended = Open("ended");
  const SessionId expired = Open("expired", 100);
  const SessionId kept = Open("kept");
  ASSERT_TRUE(engine_.EndSession(Now(), ended).ok());
  Advance(100);
  auto restored = Restart(engine_);
  auto list = restored->ListSessions(Now());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, kept);
  EXPECT_EQ(restored->GetSession(Now(), expired).error().code(),
            StatusCode::kSessionNotFound);
}

TEST_F(DurableSessionTest, IdsNeverRepeatAcrossRestarts) {
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  const TransactionId t = engine_.GetSession(Now(), a)->transaction->id;
  const SessionId b = Open("b");
  ASSERT_TRUE(engine_.EndSession(Now(), b).ok());

  auto first = Restart(engine_);
  const SessionId c = OpenOn(*first, "c");
  EXPECT_GT(c, b);
  ASSERT_TRUE(first->BeginTransaction(Now(), c).has_value());
  const TransactionId u = first->GetSession(Now(), c)->transaction->id;
  EXPECT_GT(u, t);

  // Again, from what the restored engine journaled on top.
  auto second = Restart(*first);
  const SessionId d = OpenOn(*second, "d");
  EXPECT_GT(d, c);
  ASSERT_TRUE(second->BeginTransaction(Now(), d).has_value());
  EXPECT_GT(second->GetSession(Now(), d)->transaction->id, u);
}

TEST_F(DurableSessionTest, ACommitJournalsTheSessionInItsBatch) {
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  const Time began = Now();
  Absorb(engine_);
  ASSERT_TRUE(fold_.sessions().contains(a));
  EXPECT_NE(StoredRow(a).transaction, 0u);
  EXPECT_EQ(StoredRow(a).transaction_started_at, began);

  ASSERT_TRUE(engine_.StageInsert(Now(), a, {"app", "k"}, "v").has_value());
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  std::vector<Kind> kinds;
  JournalBatch batch = engine_.TakeJournal();
  for (const JournalEntry& e : batch) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kPutKey, Kind::kPutSession}));
  EXPECT_EQ(batch.back().session.transaction, 0u);
  EXPECT_FALSE(batch.back().session.transaction_started_at.has_value());

  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_TRUE(engine_.Rollback(Now(), a).ok());
  batch = engine_.TakeJournal();
  ASSERT_FALSE(batch.empty());
  EXPECT_EQ(batch.back().kind, Kind::kPutSession);
  EXPECT_EQ(batch.back().session.transaction, 0u);
}

TEST_F(DurableSessionTest, AnExpiredTransactionIsJournaledAsEnded) {
  engine_.SetNamespaceOptions("app", {.max_transaction = milliseconds(100)});
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r", X, kTxn), 0);
  Absorb(engine_);
  ASSERT_NE(StoredRow(a).transaction, 0u);
  Advance(100);
  Absorb(engine_);
  EXPECT_EQ(StoredRow(a).transaction, 0u);
}

TEST_F(DurableSessionTest, AnOpenTransactionIsLostAndToldOnce) {
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  const TransactionId t = engine_.GetSession(Now(), a)->transaction->id;
  ASSERT_TRUE(engine_.StageInsert(Now(), a, {"app", "k"}, "v").has_value());

  auto restored = Restart(engine_);
  EXPECT_FALSE(restored->GetSession(Now(), a)->transaction.has_value());
  auto lost = restored->StageInsert(Now(), a, {"app", "k"}, "v");
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code(), StatusCode::kTransactionLost);
  EXPECT_NE(lost.error().message().find(std::to_string(t)), std::string::npos)
      << lost.error().message();
  // Told once: then there is simply no transaction.
  EXPECT_EQ(restored->Commit(Now(), a).code(), StatusCode::kNoTransaction);
  // The staged write was never applied.
  EXPECT_EQ(restored->GetRecord(Now(), {"app", "k"}).error().code(),
            StatusCode::kNotFound);

  // The clearing is journaled: a second restart does not tell it again.
  auto again = Restart(*restored);
  EXPECT_EQ(again->Rollback(Now(), a).code(), StatusCode::kNoTransaction);
}

TEST_F(DurableSessionTest, EveryCallThatNeedsTheTransactionTellsTheLoss) {
  const OperationKey op{"app", "op-1"};
  const auto calls = std::vector<std::function<StatusCode(Engine&, SessionId)>>{
      [](Engine& e, SessionId s) { return e.Commit(Time{}, s).code(); },
      [](Engine& e, SessionId s) { return e.Rollback(Time{}, s).code(); },
      [](Engine& e, SessionId s) {
        return e.BeginTransaction(Time{}, s).error().code();
      },
      [&](Engine& e, SessionId s) {
        return e.BeginOperation(Time{}, s, op).error().code();
      },
      [&](Engine& e, SessionId s) {
        return e.CompleteOperation(Time{}, s, op, "{}").error().code();
      },
      [](Engine& e, SessionId s) {
        EnqueueRequest r{.ns = "app",
                         .topic = "t",
                         .key = "k",
                         .payload = "{}",
                         .session = s};
        return e.Enqueue(Time{}, r).error().code();
      },
      [](Engine& e, SessionId s) {
        return e.Acquire(Time{}, {s, {"app", "public", "r"}, X, kTxn, 0ms})
            .error()
            .code();
      },
      [](Engine& e, SessionId s) {
        AcquireAllRequest r{.session = s,
                            .ns = "app",
                            .owner = kTxn,
                            .timeout = 0ms,
                            .locks = {{"r", X}}};
        return e.AcquireAll(Time{}, r).error().code();
      },
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE(i);
    Engine before;
    const SessionId a = OpenOn(before, "a");
    ASSERT_TRUE(before.BeginTransaction(Now(), a).has_value());
    fold_.Clear();
    auto restored = Restart(before);
    EXPECT_EQ(calls[i](*restored, a), StatusCode::kTransactionLost);
    auto begun = restored->BeginTransaction(Now(), a);
    EXPECT_TRUE(begun.has_value()) << begun.error().ToString();
  }
}

SessionRow Row(SessionId id, long long ttl_ms, int priority = 0) {
  SessionRow row;
  row.id = id;
  row.name = "s";
  row.ttl = milliseconds(ttl_ms);
  row.deadlock_priority = priority;
  return row;
}

TEST_F(DurableSessionTest, RestoreRefusesBadRowsAndComesBeforeCommands) {
  Engine e;
  ASSERT_TRUE(e.RestoreSession(Now(), Row(7, 1000)).ok());
  EXPECT_EQ(e.RestoreSession(Now(), Row(7, 1000)).code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(e.RestoreSession(Now(), Row(8, 0)).code(), StatusCode::kBadRequest);
  EXPECT_EQ(e.RestoreSession(Now(), Row(9, 1000, 11)).code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(OpenOn(e, "b"), 8u);
  EXPECT_EQ(e.RestoreSession(Now(), Row(20, 1000)).code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(e.RestoreSessionIds(100).code(), StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold::testing
