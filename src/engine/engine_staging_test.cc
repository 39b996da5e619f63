// Record writes staged in a transaction (engine.h, "Staged record writes";
// docs/transactions.md): invisible until commit, applied atomically in one
// journal batch, discarded by rollback, session end and expiry.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using E = EventType;
using Kind = JournalEntry::Kind;

class StagingTest : public EngineHarness {
 protected:
  static RecordKey Doc(std::string_view key) { return {"docs", key}; }

  void Insert(std::string_view key, std::string_view body) {
    ASSERT_TRUE(engine_.InsertRecord(Now(), Doc(key), body).has_value());
  }

  CheckoutOutcome CheckOut(std::string_view key, std::string_view owner,
                           milliseconds ttl = seconds(60)) {
    const std::string token = "tok-" + std::to_string(++tokens_made_);
    auto r = engine_.Checkout(Now(), {Doc(key), owner, ttl, token, false});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(r && r->granted);
    return r ? *r : CheckoutOutcome{};
  }

  SessionId Begin(const std::string& name, long long ttl_ms = 60'000) {
    const SessionId s = Open(name, ttl_ms);
    EXPECT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
    return s;
  }

  // Stages and expects it staged.
  void StageInsert(SessionId s, std::string_view key, std::string_view body) {
    auto r = engine_.StageInsert(Now(), s, Doc(key), body);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(r->staged);
  }
  void StageSave(SessionId s, std::string_view key, std::string_view owner,
                 std::string_view body,
                 std::optional<std::uint64_t> if_version = std::nullopt) {
    auto r =
        engine_.StageSave(Now(), s, Doc(key), {owner, ""}, body, if_version);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(r->staged) << RefusalReasonName(r->reason);
  }
  void StageDelete(SessionId s, std::string_view key, std::string_view owner) {
    auto r = engine_.StageDelete(Now(), s, Doc(key), {owner, ""});
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(r->staged) << RefusalReasonName(r->reason);
  }

  bool Exists(std::string_view key) {
    auto r = engine_.GetRecord(Now(), Doc(key));
    return r.has_value() && r->has_record;
  }
  RecordView Get(std::string_view key) {
    auto r = engine_.GetRecord(Now(), Doc(key));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : RecordView{};
  }

  std::vector<E> RecordEvents() const {
    std::vector<E> out;
    for (E t : recorder_.Types()) {
      if (t == E::kRecordInserted || t == E::kRecordSaved ||
          t == E::kRecordDeleted || t == E::kTransactionCommitted ||
          t == E::kTransactionRolledBack) {
        out.push_back(t);
      }
    }
    return out;
  }

  // "kept" and "doomed" with records, both checked out by Asha.
  void TwoCheckedOutRecords() {
    Insert("kept", "v1");
    Insert("doomed", "v1");
    CheckOut("kept", "Asha");
    CheckOut("doomed", "Asha");
  }

  int tokens_made_ = 0;
};

// Folds journal entries into a DurableState, as a Store would.
void Fold(const JournalBatch& batch, DurableState& state) {
  for (const JournalEntry& e : batch) {
    if (e.kind != Kind::kPutKey && e.kind != Kind::kPutLease &&
        e.kind != Kind::kDeleteKey && e.kind != Kind::kReserveFences) {
      continue;  // sessions: engine_durable_session_test
    }
    if (e.kind == Kind::kReserveFences) {
      state.fences_reserved = e.fences_reserved;
      continue;
    }
    auto it = std::find_if(state.rows.begin(), state.rows.end(),
                           [&](const KeyRow& r) {
                             return r.ns == e.row.ns && r.key == e.row.key;
                           });
    if (e.kind == Kind::kDeleteKey) {
      if (it != state.rows.end()) state.rows.erase(it);
      continue;
    }
    KeyRow row = e.row;
    if (e.kind == Kind::kPutLease && it != state.rows.end()) {
      row.body = it->body;
      row.has_record = it->has_record;
      row.version = it->version;
      row.write_fence = it->write_fence;
    }
    if (it == state.rows.end()) {
      state.rows.push_back(std::move(row));
    } else {
      *it = std::move(row);
    }
  }
  std::sort(state.rows.begin(), state.rows.end(),
            [](const KeyRow& a, const KeyRow& b) {
              return std::tie(a.ns, a.key) < std::tie(b.ns, b.key);
            });
}

TEST_F(StagingTest, StagedWritesAreInvisibleUntilCommitThenAppliedInOrder) {
  TwoCheckedOutRecords();
  const SessionId s = Begin("Asha");
  (void)engine_.TakeJournal();
  recorder_.events.clear();

  StageInsert(s, "new", "fresh");
  StageSave(s, "kept", "Asha", "v2");
  StageDelete(s, "doomed", "Asha");

  EXPECT_FALSE(TookDataJournal()) << "staging writes nothing durable";
  EXPECT_TRUE(RecordEvents().empty()) << "nor announces anything";
  EXPECT_EQ(engine_.GetRecord(Now(), Doc("new")).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Get("kept").body, "v1");
  EXPECT_EQ(Get("kept").version, 1u);
  EXPECT_TRUE(Exists("doomed"));
  auto page = engine_.ListRecords(Now(), {.ns = "docs"});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->records.size(), 2u);
  auto info = engine_.GetSession(Now(), s);
  ASSERT_TRUE(info->transaction.has_value());
  EXPECT_EQ(info->transaction->staged_writes, 3u);
  EXPECT_GT(info->transaction->staged_bytes, 0u);

  auto done = engine_.CommitTransaction(Now(), s);
  ASSERT_TRUE(done.has_value()) << done.error().ToString();
  ASSERT_EQ(done->applied.size(), 3u);
  EXPECT_EQ(done->applied[0].kind, StagedWriteKind::kInsert);
  EXPECT_EQ(done->applied[0].key, "new");
  EXPECT_EQ(done->applied[0].version, 1u);
  EXPECT_EQ(done->applied[1].kind, StagedWriteKind::kSave);
  EXPECT_EQ(done->applied[1].version, 2u);
  EXPECT_EQ(done->applied[2].kind, StagedWriteKind::kDelete);

  EXPECT_EQ(Get("new").body, "fresh");
  EXPECT_EQ(Get("kept").body, "v2");
  EXPECT_EQ(Get("kept").version, 2u);
  EXPECT_EQ(Get("kept").locked_by, "Asha") << "a save keeps the lease";
  EXPECT_FALSE(Exists("doomed"));
  EXPECT_EQ(RecordEvents(),
            (std::vector<E>{E::kRecordInserted, E::kRecordSaved,
                            E::kRecordDeleted, E::kTransactionCommitted}));
  EXPECT_FALSE(engine_.GetSession(Now(), s)->transaction.has_value());
}

TEST_F(StagingTest, CommitIsOneJournalBatchAndRestoreReproducesIt) {
  DurableState disk;
  TwoCheckedOutRecords();
  const SessionId s = Begin("Asha");
  Fold(engine_.TakeJournal(), disk);
  StageInsert(s, "new", "fresh");
  StageSave(s, "kept", "Asha", "v2");
  StageSave(s, "kept", "Asha", "v3", 2);
  StageDelete(s, "doomed", "Asha");
  ASSERT_TRUE(engine_.Commit(Now(), s).ok());

  const JournalBatch commit = engine_.TakeJournal();
  std::vector<Kind> kinds;
  for (const auto& e : commit) kinds.push_back(e.kind);
  EXPECT_EQ(kinds,
            (std::vector<Kind>{Kind::kPutKey, Kind::kPutKey, Kind::kPutKey,
                               Kind::kDeleteKey, Kind::kPutSession}));
  EXPECT_EQ(commit[2].row.body, "v3");
  EXPECT_EQ(commit[2].row.version, 3u);
  Fold(commit, disk);

  Engine restored;
  ASSERT_TRUE(restored.Restore(Now(), disk).ok());
  for (std::string_view key : {"new", "kept", "doomed"}) {
    auto want = engine_.GetRecord(Now(), Doc(key));
    auto got = restored.GetRecord(Now(), Doc(key));
    ASSERT_EQ(want.has_value(), got.has_value()) << key;
    if (!want) continue;
    EXPECT_EQ(got->body, want->body) << key;
    EXPECT_EQ(got->version, want->version) << key;
    EXPECT_EQ(got->locked_by, want->locked_by) << key;
    EXPECT_EQ(got->fence, want->fence) << key;
  }
}

TEST_F(StagingTest, RollbackSessionEndAndExpiryDiscardStagedWrites) {
  TwoCheckedOutRecords();
  const auto stage_all = [&](SessionId s) {
    StageInsert(s, "never", "x");
    StageSave(s, "kept", "Asha", "lost");
    StageDelete(s, "doomed", "Asha");
  };
  (void)engine_.TakeJournal();
  recorder_.events.clear();

  const SessionId a = Begin("Asha");
  stage_all(a);
  ASSERT_TRUE(engine_.Rollback(Now(), a).ok());
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  EXPECT_EQ(engine_.GetSession(Now(), a)->transaction->staged_writes, 0u)
      << "a new transaction starts empty";
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());

  const SessionId b = Begin("Asha");
  stage_all(b);
  ASSERT_TRUE(engine_.EndSession(Now(), b).ok());

  const SessionId c = Begin("Asha", 1'000);
  stage_all(c);
  Advance(1'000);
  EXPECT_EQ(engine_.GetSession(Now(), c).error().code(),
            StatusCode::kSessionNotFound);

  EXPECT_FALSE(TookDataJournal());
  EXPECT_FALSE(Exists("never"));
  EXPECT_EQ(Get("kept").body, "v1");
  EXPECT_TRUE(Exists("doomed"));
  for (E t : RecordEvents()) {
    EXPECT_NE(t, E::kRecordSaved);
    EXPECT_NE(t, E::kRecordInserted);
    EXPECT_NE(t, E::kRecordDeleted);
  }
}

// Commit applies all or nothing: one write that can no longer be applied
// refuses the commit, rolls the transaction back and applies none.
class CommitAtomicityTest : public StagingTest {
 protected:
  // Stages three writes, of which `bad` will fail; breaks it with `spoil`;
  // expects the commit refused with nothing applied.
  void ExpectRefused(const std::function<void(SessionId)>& stage,
                     const std::function<void()>& spoil,
                     std::string_view reason) {
    TwoCheckedOutRecords();
    const SessionId s = Begin("Asha");
    ASSERT_EQ(
        Code(s, "txn-lock", LockMode::kExclusive, LockOwner::kTransaction), 0);
    StageInsert(s, "new", "fresh");
    stage(s);
    StageSave(s, "doomed", "Asha", "v2");
    spoil();
    (void)engine_.TakeJournal();
    recorder_.events.clear();

    auto r = engine_.CommitTransaction(Now(), s);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), StatusCode::kTransactionAborted);
    EXPECT_NE(r.error().message().find(reason), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("staged write 2 of 3"),
              std::string::npos)
        << r.error().message();

    EXPECT_FALSE(TookDataJournal()) << "nothing applied";
    EXPECT_FALSE(Exists("new"));
    EXPECT_EQ(Get("doomed").body, "v1");
    EXPECT_EQ(RecordEvents(), (std::vector<E>{E::kTransactionRolledBack}));
    EXPECT_FALSE(engine_.GetSession(Now(), s)->transaction.has_value())
        << "the transaction was rolled back";
    EXPECT_EQ(CountOf(s, "txn-lock", LockOwner::kTransaction), 0u)
        << "its locks were released";
    EXPECT_EQ(engine_.Commit(Now(), s).code(), StatusCode::kNoTransaction);
  }
};

TEST_F(CommitAtomicityTest, LeaseBrokenSinceStaging) {
  ExpectRefused(
      [&](SessionId s) { StageSave(s, "kept", "Asha", "v2"); },
      [&] { ASSERT_TRUE(*engine_.BreakCheckout(Now(), Doc("kept"))); },
      "lease_lost");
}

TEST_F(CommitAtomicityTest, LeaseExpiredSinceStaging) {
  Insert("short", "v1");
  CheckOut("short", "Asha", seconds(5));
  ExpectRefused([&](SessionId s) { StageDelete(s, "short", "Asha"); },
                [&] { Advance(5'000); }, "expired");
}

TEST_F(CommitAtomicityTest, KeyCheckedOutAgainSinceStaging) {
  // Lost and taken again by the same owner: a new lease (new fence) is not
  // the one the write was staged under.
  ExpectRefused(
      [&](SessionId s) { StageSave(s, "kept", "Asha", "v2"); },
      [&] {
        ASSERT_TRUE(engine_.Checkin(Now(), Doc("kept"), {"Asha", ""})->done);
        CheckOut("kept", "Asha");
      },
      "lease_lost");
}

TEST_F(CommitAtomicityTest, KeyTakenBySomeoneElse) {
  ExpectRefused([&](SessionId s) { StageSave(s, "kept", "Asha", "v2"); },
                [&] {
                  ASSERT_TRUE(*engine_.BreakCheckout(Now(), Doc("kept")));
                  CheckOut("kept", "Ravi");
                },
                "not_owner");
}

TEST_F(CommitAtomicityTest, VersionMovedSinceStaging) {
  ExpectRefused(
      [&](SessionId s) { StageSave(s, "kept", "Asha", "v2", 1); },
      [&] {
        // A direct save (outside the transaction) moves the version on.
        ASSERT_TRUE(
            engine_.Save(Now(), Doc("kept"), {"Asha", ""}, "v2", {})->done);
      },
      "version_mismatch");
}

TEST_F(CommitAtomicityTest, KeyInsertedByAnotherSinceStaging) {
  ExpectRefused([&](SessionId s) { StageInsert(s, "race", "mine"); },
                [&] { Insert("race", "theirs"); }, "exists");
}

TEST_F(CommitAtomicityTest, RecordDeletedSinceStaging) {
  ExpectRefused(
      [&](SessionId s) { StageSave(s, "kept", "Asha", "v2"); },
      [&] {
        ASSERT_TRUE(
            engine_.DeleteRecord(Now(), Doc("kept"), {"Asha", ""})->done);
      },
      "not_found");
}

TEST_F(StagingTest, RenewedLeaseStillCommits) {
  Insert("k", "v1");
  CheckOut("k", "Asha", seconds(5));
  const SessionId s = Begin("Asha");
  StageSave(s, "k", "Asha", "v2");
  Advance(4'000);
  CheckOut("k", "Asha", seconds(5));  // a renewal: same fence
  Advance(4'000);
  ASSERT_TRUE(engine_.Commit(Now(), s).ok());
  EXPECT_EQ(Get("k").body, "v2");
}

TEST_F(StagingTest, LaterWritesSeeEarlierOnesAtCommit) {
  TwoCheckedOutRecords();
  // if_version follows the transaction's own saves.
  const SessionId s = Begin("Asha");
  StageSave(s, "kept", "Asha", "v2", 1);
  StageSave(s, "kept", "Asha", "v3", 2);
  auto ok = engine_.CommitTransaction(Now(), s);
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(ok->applied[1].version, 3u);
  EXPECT_EQ(Get("kept").version, 3u);

  // A delete takes the record and its lease: a later save cannot apply.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  StageDelete(s, "doomed", "Asha");
  StageSave(s, "doomed", "Asha", "after");
  EXPECT_EQ(engine_.Commit(Now(), s).code(), StatusCode::kTransactionAborted);
  EXPECT_EQ(Get("doomed").body, "v1");

  // Two inserts of one key: the second finds the first.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), s).has_value());
  StageInsert(s, "twice", "a");
  StageInsert(s, "twice", "b");
  auto twice = engine_.Commit(Now(), s);
  EXPECT_EQ(twice.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(twice.message().find("staged write 2 of 2"), std::string::npos);
  EXPECT_FALSE(Exists("twice"));
}

TEST_F(StagingTest, StagingValidatesWhatItCan) {
  Insert("rec", "v1");
  Insert("free", "v1");
  CheckOut("rec", "Asha");
  const SessionId plain = Open("NoTxn");
  EXPECT_EQ(engine_.StageInsert(Now(), plain, Doc("x"), "b").error().code(),
            StatusCode::kNoTransaction);
  EXPECT_EQ(engine_.StageInsert(Now(), 9999, Doc("x"), "b").error().code(),
            StatusCode::kSessionNotFound);

  const SessionId s = Begin("Asha");
  EXPECT_EQ(engine_.StageInsert(Now(), s, Doc("rec"), "b").error().code(),
            StatusCode::kExists);
  EXPECT_EQ(engine_.StageInsert(Now(), s, Doc(""), "b").error().code(),
            StatusCode::kNameEmpty);
  EXPECT_EQ(engine_.StageInsert(Now(), s, Doc(std::string(256, 'k')), "b")
                .error()
                .code(),
            StatusCode::kNameTooLong);
  EXPECT_EQ(engine_.StageInsert(Now(), s, Doc("big"), std::string(2 << 20, 'x'))
                .error()
                .code(),
            StatusCode::kBodyTooLarge);
  EXPECT_EQ(engine_.StageSave(Now(), s, Doc("none"), {"Asha", ""}, "b", {})
                .error()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(
      engine_.StageDelete(Now(), s, Doc("none"), {"Asha", ""}).error().code(),
      StatusCode::kNotFound);
  EXPECT_EQ(
      engine_.StageSave(Now(), s, Doc("rec"), {"", ""}, "b", {}).error().code(),
      StatusCode::kBadRequest);

  // Refusals: not staged, with the reason, as the direct commands answer.
  auto not_owner =
      engine_.StageSave(Now(), s, Doc("rec"), {"Ravi", ""}, "b", std::nullopt);
  ASSERT_TRUE(not_owner.has_value());
  EXPECT_FALSE(not_owner->staged);
  EXPECT_EQ(not_owner->reason, RefusalReason::kNotOwner);
  auto unleased = engine_.StageDelete(Now(), s, Doc("free"), {"Asha", ""});
  ASSERT_TRUE(unleased.has_value());
  EXPECT_FALSE(unleased->staged);
  EXPECT_EQ(unleased->reason, RefusalReason::kNotOwner);

  // A save or delete of a key only this transaction's staged insert makes is
  // refused: staging validates against the committed state.
  StageInsert(s, "mine", "x");
  EXPECT_EQ(engine_.StageSave(Now(), s, Doc("mine"), {"Asha", ""}, "y", {})
                .error()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(engine_.GetSession(Now(), s)->transaction->staged_writes, 1u)
      << "nothing refused was staged";
  ASSERT_TRUE(engine_.Commit(Now(), s).ok());
  EXPECT_TRUE(Exists("mine"));
}

TEST(StagingLimitsTest, CountAndBytesAreCappedPerTransaction) {
  ManualClock clock;
  Engine engine(EngineOptions{.max_staged_writes = 3, .max_staged_bytes = 64});
  auto s = engine.OpenSession(clock.Now(), {"Asha", seconds(60), 0, ""});
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(engine.BeginTransaction(clock.Now(), s->id).has_value());
  // Counted bytes: namespace + key + body (+ proof) = 2 + 2 + 10.
  for (const char* key : {"k1", "k2", "k3"}) {
    auto r = engine.StageInsert(clock.Now(), s->id, {"ns", key}, "0123456789");
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }
  auto fourth =
      engine.StageInsert(clock.Now(), s->id, {"ns", "k4"}, "0123456789");
  ASSERT_FALSE(fourth.has_value());
  EXPECT_EQ(fourth.error().code(), StatusCode::kTransactionTooLarge);
  ASSERT_TRUE(engine.Commit(clock.Now(), s->id).ok())
      << "a refused write leaves the transaction open and intact";
  EXPECT_TRUE(engine.GetRecord(clock.Now(), {"ns", "k3"}).has_value());
  EXPECT_FALSE(engine.GetRecord(clock.Now(), {"ns", "k4"}).has_value());

  ASSERT_TRUE(engine.BeginTransaction(clock.Now(), s->id).has_value());
  ASSERT_TRUE(
      engine.StageInsert(clock.Now(), s->id, {"ns", "b1"}, std::string(56, 'x'))
          .has_value());
  auto over = engine.StageInsert(clock.Now(), s->id, {"ns", "b2"}, "x");
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code(), StatusCode::kTransactionTooLarge);
  auto info = engine.GetSession(clock.Now(), s->id);
  EXPECT_EQ(info->transaction->staged_writes, 1u);
  EXPECT_EQ(info->transaction->staged_bytes, 60u);
}

}  // namespace
}  // namespace leasehold::testing
