// Idempotent operations and the transactional outbox (engine.h,
// "Idempotent operations" and "Outbox"; docs/outbox.md), on a manual clock.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using E = EventType;
using Kind = JournalEntry::Kind;

class OutboxTest : public EngineHarness {
 protected:
  SessionId Begin(const std::string& name) {
    const SessionId s = Open(name);
    EXPECT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
    return s;
  }

  OperationStatus BeginOp(SessionId s, std::string_view op) {
    auto r = engine_.BeginOperation(Now(), s, {"pay", op});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : OperationStatus{};
  }

  void Complete(SessionId s, std::string_view op, std::string_view outcome) {
    auto r = engine_.CompleteOperation(Now(), s, {"pay", op}, outcome);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(r->staged);
  }

  EnqueueOutcome Enqueue(std::string_view key, std::string_view payload,
                         std::optional<SessionId> s = std::nullopt,
                         std::string_view topic = "mail") {
    auto r = engine_.Enqueue(Now(), {"pay", topic, key, payload, s});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : EnqueueOutcome{};
  }

  std::vector<ClaimedMessage> Claim(std::string_view consumer,
                                    std::size_t max = 10,
                                    long long lease_ms = 1000) {
    const std::string token = "claim-" + std::to_string(++claims_);
    auto r = engine_.Claim(
        Now(), {"pay", "mail", consumer, max, milliseconds(lease_ms), token});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : std::vector<ClaimedMessage>{};
  }

  AckOutcome Ack(MessageId id, std::string_view token) {
    auto r = engine_.Ack(Now(), "pay", "mail", id, token);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : AckOutcome{};
  }

  OutboxSummary Summary(std::string_view topic = "mail") {
    auto r = engine_.GetOutbox(Now(), "pay", topic);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : OutboxSummary{};
  }

  // Folds the journal so far into the state a store would hold.
  void Absorb() {
    for (JournalEntry& e : engine_.TakeJournal()) {
      switch (e.kind) {
        case Kind::kPutOperation:
          operations_[{e.operation.ns, e.operation.op_id}] = e.operation;
          break;
        case Kind::kPutMessage:
          messages_[{e.message.ns, e.message.topic, e.message.id}] = e.message;
          break;
        case Kind::kPutKey:
        case Kind::kPutLease:
        case Kind::kDeleteKey:
        case Kind::kReserveFences:
        case Kind::kPutSession:
        case Kind::kDeleteSession:
        case Kind::kPutLock:
        case Kind::kDeleteLock:
        case Kind::kReserveSessionIds:
        case Kind::kReserveTransactionIds:
        case Kind::kReserveLockDelay:
          break;
      }
    }
  }

  DurableState Stored() {
    Absorb();
    DurableState state;
    for (const auto& [k, row] : operations_) state.operations.push_back(row);
    for (const auto& [k, row] : messages_) state.messages.push_back(row);
    return state;
  }

  int claims_ = 0;
  std::map<std::pair<std::string, std::string>, OperationRow> operations_;
  std::map<std::tuple<std::string, std::string, MessageId>, MessageRow>
      messages_;
};

// --- Operations ---

TEST_F(OutboxTest, AnOperationIsNewUntilItsCompletionCommits) {
  const SessionId s = Begin("worker");
  EXPECT_EQ(BeginOp(s, "inv-1").state, OperationState::kNew);
  Complete(s, "inv-1", R"({"total":42})");
  // Staged: not visible, not even to the staging transaction.
  EXPECT_EQ(BeginOp(s, "inv-1").state, OperationState::kNew);
  EXPECT_FALSE(TookDataJournal());
  clock_.AdvanceMs(5);
  const Time committed_at = Now();
  auto c = engine_.CommitTransaction(Now(), s);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  ASSERT_EQ(c->applied.size(), 1u);
  EXPECT_EQ(c->applied[0].kind, StagedWriteKind::kCompleteOperation);
  EXPECT_EQ(c->applied[0].key, "inv-1");

  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  const OperationStatus again = BeginOp(s, "inv-1");
  EXPECT_EQ(again.state, OperationState::kCompleted);
  EXPECT_EQ(again.outcome, R"({"total":42})");
  EXPECT_EQ(again.completed_at, committed_at);
}

TEST_F(OutboxTest, OperationsNeedATransactionAndGoodNames) {
  const SessionId s = Open("worker");
  EXPECT_EQ(engine_.BeginOperation(Now(), s, {"pay", "x"}).error().code(),
            StatusCode::kNoTransaction);
  EXPECT_EQ(
      engine_.CompleteOperation(Now(), s, {"pay", "x"}, "{}").error().code(),
      StatusCode::kNoTransaction);
  EXPECT_EQ(engine_.BeginOperation(Now(), 999, {"pay", "x"}).error().code(),
            StatusCode::kSessionNotFound);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  EXPECT_EQ(engine_.BeginOperation(Now(), s, {"pay", ""}).error().code(),
            StatusCode::kNameEmpty);
  EXPECT_EQ(
      engine_.CompleteOperation(Now(), s, {"pay", std::string(256, 'a')}, "{}")
          .error()
          .code(),
      StatusCode::kNameTooLong);
}

TEST_F(OutboxTest, ACompletedOperationCannotBeCompletedAgain) {
  const SessionId s = Begin("worker");
  Complete(s, "inv-1", "1");
  EXPECT_EQ(
      engine_.CompleteOperation(Now(), s, {"pay", "inv-1"}, "2").error().code(),
      StatusCode::kExists)
      << "twice in one transaction";
  ASSERT_TRUE(engine_.Commit(Now(), s).ok());
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  EXPECT_EQ(
      engine_.CompleteOperation(Now(), s, {"pay", "inv-1"}, "3").error().code(),
      StatusCode::kExists);
}

TEST_F(OutboxTest, TheSecondOfTwoConcurrentCompletionsAbortsItsCommit) {
  const SessionId a = Begin("a");
  const SessionId b = Begin("b");
  EXPECT_EQ(BeginOp(a, "inv-1").state, OperationState::kNew);
  EXPECT_EQ(BeginOp(b, "inv-1").state, OperationState::kNew);
  Complete(a, "inv-1", R"("by a")");
  Complete(b, "inv-1", R"("by b")");
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  const Status st = engine_.Commit(Now(), b);
  EXPECT_EQ(st.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(st.message().find("completed"), std::string::npos) << st.message();
  ASSERT_TRUE(engine_.BeginTransaction(Now(), b).has_value());
  EXPECT_EQ(BeginOp(b, "inv-1").outcome, R"("by a")");
}

TEST_F(OutboxTest, CommitAppliesTheOutcomeWithRecordWritesAndMessages) {
  const SessionId s = Begin("worker");
  ASSERT_TRUE(
      engine_.StageInsert(Now(), s, {"pay", "invoice-1"}, "final")->staged);
  Complete(s, "inv-1", R"({"ok":true})");
  const EnqueueOutcome m = Enqueue("receipt-1", R"({"to":"a@b"})", s);
  EXPECT_TRUE(m.staged);
  EXPECT_FALSE(m.duplicate);
  EXPECT_EQ(m.staged_writes, 3u);
  EXPECT_EQ(Summary().pending, 0u) << "staged messages are not deliverable";
  recorder_.events.clear();
  (void)engine_.TakeJournal();  // the session's opening and begin

  auto c = engine_.CommitTransaction(Now(), s);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  ASSERT_EQ(c->applied.size(), 3u);
  EXPECT_EQ(c->applied[2].kind, StagedWriteKind::kEnqueue);
  EXPECT_EQ(c->applied[2].message, m.id);
  EXPECT_EQ(c->applied[2].topic, "mail");
  // One batch holds all three, in staging order, then the session's row
  // without its transaction.
  std::vector<Kind> kinds;
  for (const JournalEntry& e : engine_.TakeJournal()) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kPutKey, Kind::kPutOperation,
                                      Kind::kPutMessage, Kind::kPutSession}));
  EXPECT_EQ(recorder_.Types(),
            (std::vector<E>{E::kRecordInserted, E::kOperationCompleted,
                            E::kOutboxEnqueued, E::kTransactionCommitted}));
  EXPECT_EQ(Summary().pending, 1u);
}

TEST_F(OutboxTest, RollbackDiscardsTheOutcomeRecordWritesAndMessages) {
  const SessionId s = Begin("worker");
  ASSERT_TRUE(
      engine_.StageInsert(Now(), s, {"pay", "invoice-1"}, "final")->staged);
  Complete(s, "inv-1", "{}");
  Enqueue("receipt-1", "{}", s);
  ASSERT_TRUE(engine_.Rollback(Now(), s).ok());
  EXPECT_FALSE(TookDataJournal());
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  EXPECT_EQ(BeginOp(s, "inv-1").state, OperationState::kNew);
  EXPECT_EQ(Summary().pending, 0u);
  EXPECT_FALSE(engine_.GetRecord(Now(), {"pay", "invoice-1"}).has_value());
  // The key is free again after the rollback.
  EXPECT_FALSE(Enqueue("receipt-1", "{}").duplicate);
}

TEST_F(OutboxTest, AnAbortedCommitDiscardsTheOutcomeAndTheMessages) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), {"pay", "doc"}, "v1").has_value());
  const SessionId s = Begin("worker");
  // A staged insert of a key someone else inserts before the commit.
  ASSERT_TRUE(engine_.StageInsert(Now(), s, {"pay", "new"}, "x")->staged);
  Complete(s, "inv-1", "{}");
  Enqueue("receipt-1", "{}", s);
  ASSERT_TRUE(engine_.InsertRecord(Now(), {"pay", "new"}, "y").has_value());
  (void)engine_.TakeJournal();
  EXPECT_EQ(engine_.Commit(Now(), s).code(), StatusCode::kTransactionAborted);
  EXPECT_FALSE(TookDataJournal());
  EXPECT_EQ(Summary().pending, 0u);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  EXPECT_EQ(BeginOp(s, "inv-1").state, OperationState::kNew);
}

TEST_F(OutboxTest, SessionExpiryDiscardsStagedCompletionsAndMessages) {
  const SessionId s = Open("short", 1000);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  Complete(s, "inv-1", "{}");
  Enqueue("receipt-1", "{}", s);
  Advance(1000);
  EXPECT_FALSE(TookDataJournal());
  const SessionId t = Begin("next");
  EXPECT_EQ(BeginOp(t, "inv-1").state, OperationState::kNew);
  EXPECT_FALSE(Enqueue("receipt-1", "{}").duplicate);
}

TEST(OutboxLimits, StagedOutboxWritesCountAgainstTheTransactionLimits) {
  ManualClock clock;
  Engine e(EngineOptions{.max_staged_writes = 2});
  const SessionId s =
      e.OpenSession(clock.Now(), {"w", milliseconds(60'000), 0, ""})->id;
  ASSERT_TRUE(e.BeginTransaction(clock.Now(), s).has_value());
  ASSERT_TRUE(
      e.CompleteOperation(clock.Now(), s, {"pay", "op"}, "{}").has_value());
  ASSERT_TRUE(e.Enqueue(clock.Now(), {"pay", "mail", "a", "{}", s}));
  EXPECT_EQ(
      e.Enqueue(clock.Now(), {"pay", "mail", "b", "{}", s}).error().code(),
      StatusCode::kTransactionTooLarge);
  // A duplicate of a staged key is answered without taking room.
  auto dup = e.Enqueue(clock.Now(), {"pay", "mail", "a", "{}", s});
  ASSERT_TRUE(dup.has_value());
  EXPECT_TRUE(dup->duplicate);
  auto c = e.CommitTransaction(clock.Now(), s);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->applied.size(), 2u);
}

// --- Enqueue ---

TEST_F(OutboxTest, ARepeatedKeyIsNotEnqueuedTwice) {
  const EnqueueOutcome first = Enqueue("k1", R"({"n":1})");
  EXPECT_GT(first.id, 0u);
  EXPECT_FALSE(first.duplicate);
  EXPECT_FALSE(first.staged);
  const EnqueueOutcome again = Enqueue("k1", R"({"n":2})");
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(Summary().pending, 1u);
  // Keys are per topic.
  EXPECT_FALSE(Enqueue("k1", "{}", std::nullopt, "sms").duplicate);
  // In a transaction: a committed key, and a key staged earlier in it.
  const SessionId s = Begin("worker");
  EXPECT_EQ(Enqueue("k1", "{}", s).id, first.id);
  const EnqueueOutcome staged = Enqueue("k2", "{}", s);
  const EnqueueOutcome staged_again = Enqueue("k2", "{}", s);
  EXPECT_TRUE(staged_again.duplicate);
  EXPECT_EQ(staged_again.id, staged.id);
  EXPECT_EQ(staged_again.staged_writes, 1u);
  // An acknowledged message's key stays taken.
  auto claimed = Claim("c");
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_TRUE(Ack(claimed[0].id, claimed[0].claim_token).acked);
  EXPECT_TRUE(Enqueue("k1", "{}").duplicate);
}

TEST_F(OutboxTest, AKeyCommittedFirstByAnotherMakesTheStagedMessageADuplicate) {
  const SessionId s = Begin("worker");
  const EnqueueOutcome staged = Enqueue("k1", R"("staged")", s);
  const EnqueueOutcome direct = Enqueue("k1", R"("direct")");
  EXPECT_FALSE(direct.duplicate);
  EXPECT_NE(direct.id, staged.id);
  auto c = engine_.CommitTransaction(Now(), s);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->applied.size(), 1u);
  EXPECT_TRUE(c->applied[0].duplicate);
  EXPECT_EQ(c->applied[0].message, direct.id);
  auto claimed = Claim("c");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].payload, R"("direct")");
}

TEST_F(OutboxTest, EnqueueRefusals) {
  EXPECT_EQ(
      engine_.Enqueue(Now(), {"pay", "mail", "k", "{}", 999}).error().code(),
      StatusCode::kSessionNotFound);
  const SessionId s = Open("no-tx");
  EXPECT_EQ(
      engine_.Enqueue(Now(), {"pay", "mail", "k", "{}", s}).error().code(),
      StatusCode::kNoTransaction);
  EXPECT_EQ(engine_.Enqueue(Now(), {"pay", "", "k", "{}"}).error().code(),
            StatusCode::kNameEmpty);
  EXPECT_EQ(engine_.Enqueue(Now(), {"pay", "mail", "", "{}"}).error().code(),
            StatusCode::kNameEmpty);
  const std::string big((1 << 20) + 1, 'x');
  EXPECT_EQ(engine_.Enqueue(Now(), {"pay", "mail", "k", big}).error().code(),
            StatusCode::kBodyTooLarge);
  EXPECT_FALSE(TookDataJournal());
}

// --- Claim and ack ---

TEST_F(OutboxTest, ClaimHandsOutOldestFirstUnderALease) {
  const MessageId a = Enqueue("a", "1").id;
  const MessageId b = Enqueue("b", "2").id;
  const MessageId c = Enqueue("c", "3").id;
  auto first = Claim("c1", 2, 1000);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].id, a);
  EXPECT_EQ(first[1].id, b);
  EXPECT_EQ(first[0].attempt, 1u);
  EXPECT_EQ(first[0].payload, "1");
  EXPECT_EQ(first[0].lease_expires_at, Now() + milliseconds(1000));
  auto second = Claim("c2");
  ASSERT_EQ(second.size(), 1u) << "claimed messages are not handed out";
  EXPECT_EQ(second[0].id, c);
  EXPECT_NE(second[0].claim_token, first[0].claim_token);
  const OutboxSummary sum = Summary();
  EXPECT_EQ(sum.pending, 0u);
  EXPECT_EQ(sum.claimed, 3u);
  EXPECT_TRUE(Claim("c3").empty());
}

TEST_F(OutboxTest, AnExpiredClaimIsDeliveredAgainWithTheNextAttempt) {
  const MessageId id = Enqueue("a", "1").id;
  auto first = Claim("crashing", 10, 1000);
  ASSERT_EQ(first.size(), 1u);
  Advance(999);
  EXPECT_TRUE(Claim("other").empty());
  Advance(1);
  EXPECT_EQ(Summary().pending, 1u);
  auto second = Claim("other");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].id, id);
  EXPECT_EQ(second[0].attempt, 2u);
  // The first consumer's late ack is refused; the second one's is taken.
  EXPECT_EQ(Ack(id, first[0].claim_token).reason, RefusalReason::kNotOwner);
  EXPECT_TRUE(Ack(id, second[0].claim_token).acked);
  const OutboxSummary sum = Summary();
  EXPECT_EQ(sum.pending + sum.claimed + sum.dead, 0u);
}

TEST_F(OutboxTest, AckRules) {
  const MessageId id = Enqueue("a", "1").id;
  EXPECT_EQ(engine_.Ack(Now(), "pay", "mail", id + 100, "t").error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(engine_.Ack(Now(), "pay", "sms", id, "t").error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Ack(id, "never-claimed").reason, RefusalReason::kNotOwner);
  auto claimed = Claim("c", 10, 1000);
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(Ack(id, "someone-else").reason, RefusalReason::kNotOwner);
  Advance(1000);
  const AckOutcome late = Ack(id, claimed[0].claim_token);
  EXPECT_FALSE(late.acked);
  EXPECT_EQ(late.reason, RefusalReason::kExpired)
      << "expired, even though nobody claimed it again";
  claimed = Claim("c", 10, 1000);
  ASSERT_EQ(claimed.size(), 1u);
  (void)engine_.TakeJournal();
  const AckOutcome ok = Ack(id, claimed[0].claim_token);
  EXPECT_TRUE(ok.acked);
  EXPECT_FALSE(ok.already);
  EXPECT_TRUE(engine_.HasJournal());
  (void)engine_.TakeJournal();
  // A retried ack (its answer was lost) is recognised and changes nothing.
  Advance(5000);
  const AckOutcome retried = Ack(id, claimed[0].claim_token);
  EXPECT_TRUE(retried.acked);
  EXPECT_TRUE(retried.already);
  EXPECT_FALSE(TookDataJournal());
  EXPECT_TRUE(Claim("c").empty()) << "acknowledged messages are done";
}

TEST_F(OutboxTest, ClaimRefusals) {
  auto bad = [&](std::size_t max, long long lease, std::string_view consumer,
                 std::string_view token) {
    auto r = engine_.Claim(
        Now(), {"pay", "mail", consumer, max, milliseconds(lease), token});
    return r ? StatusCode::kOk : r.error().code();
  };
  EXPECT_EQ(bad(0, 1000, "c", "t"), StatusCode::kBadRequest);
  EXPECT_EQ(bad(1001, 1000, "c", "t"), StatusCode::kBadRequest);
  EXPECT_EQ(bad(1, 0, "c", "t"), StatusCode::kBadRequest);
  EXPECT_EQ(bad(1, 1000, "", "t"), StatusCode::kNameEmpty);
  EXPECT_EQ(bad(1, 1000, "c", ""), StatusCode::kNameEmpty);
  EXPECT_EQ(bad(1000, 1, "c", "t"), StatusCode::kOk);
}

TEST_F(OutboxTest, AfterMaxAttemptsAMessageIsADeadLetter) {
  engine_.SetNamespaceOptions("pay", {.outbox_max_attempts = 3});
  const MessageId id = Enqueue("a", R"({"n":1})").id;
  const MessageId other = Enqueue("b", "{}").id;
  for (std::uint32_t attempt = 1; attempt <= 3; ++attempt) {
    auto got = Claim("c", 1, 100);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, id);
    EXPECT_EQ(got[0].attempt, attempt);
    Advance(100);
  }
  const OutboxSummary sum = Summary();
  EXPECT_EQ(sum.dead, 1u);
  EXPECT_EQ(sum.pending, 1u);
  ASSERT_EQ(sum.dead_letters.size(), 1u);
  EXPECT_EQ(sum.dead_letters[0].id, id);
  EXPECT_EQ(sum.dead_letters[0].attempts, 3u);
  EXPECT_EQ(sum.dead_letters[0].payload, R"({"n":1})");
  EXPECT_EQ(sum.dead_letters[0].state, MessageState::kDead);
  auto next = Claim("c");
  ASSERT_EQ(next.size(), 1u) << "a dead letter is not delivered";
  EXPECT_EQ(next[0].id, other);
}

TEST_F(OutboxTest, TheLastAttemptIsClaimedUntilItsLeaseRunsOut) {
  engine_.SetNamespaceOptions("pay", {.outbox_max_attempts = 1});
  const MessageId id = Enqueue("a", "{}").id;
  auto got = Claim("c", 1, 100);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Summary().claimed, 1u);
  EXPECT_EQ(Summary().dead, 0u);
  EXPECT_TRUE(Ack(id, got[0].claim_token).acked)
      << "the last attempt may still succeed";
  EXPECT_EQ(Summary().dead, 0u);
}

TEST_F(OutboxTest, TheDefaultIsTenAttempts) {
  Enqueue("a", "{}");
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(Claim("c", 1, 10).size(), 1u) << "attempt " << i + 1;
    Advance(10);
  }
  EXPECT_TRUE(Claim("c").empty());
  EXPECT_EQ(Summary().dead, 1u);
}

TEST_F(OutboxTest, OutboxEventsNameTheMessage) {
  const MessageId id = Enqueue("a", "{}").id;
  auto got = Claim("worker-1", 1, 100);
  ASSERT_TRUE(Ack(id, got.at(0).claim_token).acked);
  EXPECT_EQ(
      recorder_.Types(),
      (std::vector<E>{E::kOutboxEnqueued, E::kOutboxClaimed, E::kOutboxAcked}));
  EXPECT_EQ(EventTypeName(E::kOutboxEnqueued), "outbox.enqueued");
  EXPECT_EQ(EventTypeName(E::kOperationCompleted), "operation.completed");
}

// --- Restore ---

TEST_F(OutboxTest, RestoreReproducesOperationsMessagesAndClaims) {
  engine_.SetNamespaceOptions("pay", {.outbox_max_attempts = 2});
  const SessionId s = Begin("worker");
  Complete(s, "inv-1", R"({"total":42})");
  const MessageId staged = Enqueue("receipt", R"({"to":"a"})", s).id;
  ASSERT_TRUE(engine_.Commit(Now(), s).ok());
  const Time completed_at = Now();
  const MessageId acked = Enqueue("acked", "{}").id;
  const MessageId dead = Enqueue("dead", "{}").id;
  // acked: claimed and acknowledged; receipt and dead: claimed twice, both
  // claims ran out; live: claimed, its lease still running.
  auto c1 = Claim("c", 3, 100);
  ASSERT_EQ(c1.size(), 3u);
  ASSERT_TRUE(Ack(acked, c1[1].claim_token).acked);
  Advance(100);
  auto c2 = Claim("c", 3, 100);
  ASSERT_EQ(c2.size(), 2u);
  Advance(100);
  const MessageId live = Enqueue("live", "{}").id;
  auto c3 = Claim("c", 1, 60'000);
  ASSERT_EQ(c3.size(), 1u);
  EXPECT_EQ(c3[0].id, live);
  const OutboxSummary before = Summary();
  EXPECT_EQ(before.dead, 2u);
  EXPECT_EQ(before.claimed, 1u);

  const DurableState state = Stored();
  Engine restored;
  restored.SetNamespaceOptions("pay", {.outbox_max_attempts = 2});
  ASSERT_TRUE(restored.Restore(Now(), state).ok());
  const SessionId r =
      restored.OpenSession(Now(), {"r", milliseconds(60'000), 0, ""})->id;
  ASSERT_TRUE(restored.BeginTransaction(Now(), r).has_value());
  auto op = restored.BeginOperation(Now(), r, {"pay", "inv-1"});
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->state, OperationState::kCompleted);
  EXPECT_EQ(op->outcome, R"({"total":42})");
  EXPECT_EQ(op->completed_at, completed_at);
  auto sum = restored.GetOutbox(Now(), "pay", "mail");
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(sum->dead, 2u);
  EXPECT_EQ(sum->claimed, 1u);
  EXPECT_EQ(sum->pending, 0u);
  EXPECT_EQ(sum->dead_letters.at(0).id, staged);
  EXPECT_EQ(sum->dead_letters.at(1).id, dead);
  // The running claim's token still acknowledges; the acked one's retry too.
  EXPECT_TRUE(
      restored.Ack(Now(), "pay", "mail", live, c3[0].claim_token)->acked);
  EXPECT_TRUE(
      restored.Ack(Now(), "pay", "mail", acked, c1[1].claim_token)->already);
  // Keys stay taken, and new ids continue above the old ones.
  auto dup = restored.Enqueue(Now(), {"pay", "mail", "acked", "{}"});
  EXPECT_TRUE(dup->duplicate);
  auto fresh = restored.Enqueue(Now(), {"pay", "mail", "fresh", "{}"});
  EXPECT_GT(fresh->id, live);
}

TEST_F(OutboxTest, RestoreRefusesDuplicatesAndComesBeforeCommands) {
  Engine e;
  MessageRow m;
  m.ns = "pay";
  m.topic = "mail";
  m.id = 1;
  m.key = "k";
  ASSERT_TRUE(e.RestoreMessage(MessageRow(m)).ok());
  m.id = 2;
  EXPECT_EQ(e.RestoreMessage(MessageRow(m)).code(), StatusCode::kBadRequest);
  OperationRow op{"pay", "inv", "{}", Now()};
  ASSERT_TRUE(e.RestoreOperation(OperationRow(op)).ok());
  EXPECT_EQ(e.RestoreOperation(OperationRow(op)).code(),
            StatusCode::kBadRequest);
  e.AdvanceTo(Now());
  op.op_id = "later";
  EXPECT_EQ(e.RestoreOperation(std::move(op)).code(), StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold::testing
