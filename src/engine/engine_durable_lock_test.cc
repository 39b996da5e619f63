// Durable application locks: what the engine journals when a grant changes,
// what a new engine restored from that journal holds, the lost
// transaction's locks, and the quiet period of memory namespaces.
#include <gtest/gtest.h>

#include <tuple>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;
using Kind = JournalEntry::Kind;
constexpr auto IS = LockMode::kIntentShared;
constexpr auto S = LockMode::kShared;
constexpr auto U = LockMode::kUpdate;
constexpr auto IX = LockMode::kIntentExclusive;
constexpr auto SIX = LockMode::kSharedIntentExclusive;
constexpr auto UIX = LockMode::kUpdateIntentExclusive;
constexpr auto X = LockMode::kExclusive;
constexpr auto kTxn = LockOwner::kTransaction;
constexpr auto kSes = LockOwner::kSession;

// (resource, session, owner, mode, count, fence, since) of every grant.
using GrantTuple = std::tuple<std::string, SessionId, LockOwner, LockMode,
                              std::uint32_t, Fence, Time>;

class DurableLockTest : public EngineHarness {
 protected:
  std::unique_ptr<Engine> Restart(Engine& engine) {
    return fold_.Restart(engine, Now());
  }

  static std::vector<GrantTuple> Grants(Engine& e, Time now) {
    std::vector<GrantTuple> out;
    for (const LockInfo& l : e.ListLocks(now, "")) {
      for (const GrantedLockInfo& g : l.granted) {
        out.emplace_back(l.resource, g.session, g.owner, g.mode, g.count,
                         g.fence, g.since);
      }
    }
    std::ranges::sort(out);
    return out;
  }

  static std::size_t Waiting(Engine& e, Time now) {
    std::size_t n = 0;
    for (const LockInfo& l : e.ListLocks(now, "")) n += l.waiting.size();
    return n;
  }

  int CodeOn(Engine& e, SessionId s, std::string_view resource, LockMode mode,
             LockOwner owner = kSes, long long timeout_ms = 0,
             std::string_view ns = "app") {
    auto r = e.Acquire(
        Now(), {s, Key(resource, ns), mode, owner, milliseconds(timeout_ms)});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r) return -100;
    return r->wait ? 99 : static_cast<int>(r->result);
  }

  SessionId OpenOn(Engine& e, const std::string& name, long long ttl = 60'000) {
    auto s = e.OpenSession(Now(), {name, milliseconds(ttl), 0, ""});
    EXPECT_TRUE(s.has_value());
    return s ? s->id : 0;
  }

  static std::vector<Kind> Kinds(const JournalBatch& batch) {
    std::vector<Kind> out;
    for (const JournalEntry& e : batch) out.push_back(e.kind);
    return out;
  }

  JournalFold fold_;
};

TEST_F(DurableLockTest, EveryHolderHoldsItsModeCountAndFenceAfterARestart) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  const SessionId c = Open("c");
  // Every requestable mode, a count, a conversion, both owners.
  ASSERT_EQ(Code(a, "shared", S), 0);
  ASSERT_EQ(Code(a, "shared", S), 0);   // count 2
  ASSERT_EQ(Code(b, "shared", IS), 0);  // beside it
  ASSERT_EQ(Code(a, "update", U), 0);
  ASSERT_EQ(Code(b, "intent", IX), 0);
  ASSERT_EQ(Code(c, "intent", IS), 0);
  ASSERT_EQ(Code(b, "six", IX), 0);
  ASSERT_EQ(Code(b, "six", S), 0);  // converted to SIX
  ASSERT_EQ(Code(c, "uix", U), 0);
  ASSERT_EQ(Code(c, "uix", IX), 0);  // converted to UIX
  ASSERT_TRUE(engine_.BeginTransaction(Now(), c).has_value());
  ASSERT_EQ(Code(c, "exclusive", X, kTxn), 0);
  ASSERT_EQ(Code(a, "exclusive-s", X), 0);
  ASSERT_EQ(ModeOf(b, "six"), SIX);
  ASSERT_EQ(ModeOf(c, "uix"), UIX);
  const auto before = Grants(engine_, Now());
  ASSERT_EQ(before.size(), 9u);
  Fence highest = 0;
  for (const auto& g : before) highest = std::max(highest, std::get<5>(g));

  Advance(1000);
  auto restored = Restart(engine_);
  EXPECT_EQ(Grants(*restored, Now()), before);
  EXPECT_EQ(restored->Stats().restored_locks, 9u);
  EXPECT_EQ(restored->Stats().restored_sessions, 3u);

  // Others are refused exactly as before the restart.
  const SessionId d = OpenOn(*restored, "d");
  EXPECT_EQ(CodeOn(*restored, d, "shared", X), -1);
  EXPECT_EQ(CodeOn(*restored, d, "shared", S), 0);
  EXPECT_EQ(CodeOn(*restored, d, "update", U), -1);
  EXPECT_EQ(CodeOn(*restored, d, "six", IS), 0);
  EXPECT_EQ(CodeOn(*restored, d, "six", IX), -1);
  EXPECT_EQ(CodeOn(*restored, d, "exclusive", IS), -1);
  EXPECT_EQ(CodeOn(*restored, d, "exclusive-s", IS), -1);

  // The holders release, counted; the next grant's fence is higher.
  EXPECT_TRUE(restored->Release(Now(), {a, Key("shared"), kSes}).ok());
  EXPECT_EQ(CodeOn(*restored, d, "shared", X), -1);  // a still holds one
  EXPECT_TRUE(restored->Release(Now(), {a, Key("shared"), kSes}).ok());
  EXPECT_TRUE(restored->Release(Now(), {d, Key("shared"), kSes}).ok());
  EXPECT_TRUE(restored->Release(Now(), {b, Key("shared"), kSes}).ok());
  auto x = restored->Acquire(Now(), {d, Key("shared"), X, kSes, 0ms});
  ASSERT_TRUE(x.has_value());
  ASSERT_EQ(x->result, AcquireResult::kGranted);
  EXPECT_GT(x->fence, highest);
}

TEST_F(DurableLockTest, EachChangeOfAGrantIsJournaledAsItsRow) {
  const SessionId a = Open("a");
  (void)engine_.TakeJournal();
  ASSERT_EQ(Code(a, "r", S), 0);
  JournalBatch batch = engine_.TakeJournal();
  ASSERT_FALSE(batch.empty());
  const JournalEntry put = batch.back();
  ASSERT_EQ(put.kind, Kind::kPutLock);
  EXPECT_EQ(put.lock.session, a);
  EXPECT_EQ(put.lock.owner, kSes);
  EXPECT_EQ(put.lock.ns, "app");
  EXPECT_EQ(put.lock.principal, "public");
  EXPECT_EQ(put.lock.resource, "r");
  EXPECT_EQ(put.lock.mode, S);
  EXPECT_EQ(put.lock.count, 1u);
  EXPECT_EQ(put.lock.since, Now());

  ASSERT_EQ(Code(a, "r", IX), 0);  // a conversion: SIX, count 2
  batch = engine_.TakeJournal();
  ASSERT_EQ(Kinds(batch), std::vector<Kind>{Kind::kPutLock});
  EXPECT_EQ(batch[0].lock.mode, SIX);
  EXPECT_EQ(batch[0].lock.count, 2u);
  EXPECT_GT(batch[0].lock.fence, put.lock.fence);

  ASSERT_TRUE(Release(a, "r").ok());
  batch = engine_.TakeJournal();
  ASSERT_EQ(Kinds(batch), std::vector<Kind>{Kind::kPutLock});
  EXPECT_EQ(batch[0].lock.count, 1u);
  ASSERT_TRUE(Release(a, "r").ok());
  EXPECT_EQ(Kinds(engine_.TakeJournal()), std::vector<Kind>{Kind::kDeleteLock});

  // A refusal and a test change nothing on disk.
  const SessionId b = Open("b");
  ASSERT_EQ(Code(a, "q", X), 0);
  (void)engine_.TakeJournal();
  EXPECT_EQ(Code(b, "q", X), -1);
  EXPECT_TRUE(engine_.Test(Now(), b, Key("q"), X, kSes).has_value());
  EXPECT_TRUE(engine_.TakeJournal().empty());
}

TEST_F(DurableLockTest, AWaiterGrantedByAReleaseIsJournaledInThatStep) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  ASSERT_EQ(Code(a, "r", X), 0);
  ASSERT_EQ(Code(b, "r", U, kSes, -1), 99);
  (void)engine_.TakeJournal();  // a wait alone journals nothing
  ASSERT_TRUE(Release(a, "r").ok());
  const JournalBatch batch = engine_.TakeJournal();
  ASSERT_EQ(Kinds(batch),
            (std::vector<Kind>{Kind::kDeleteLock, Kind::kPutLock}));
  EXPECT_EQ(batch[0].lock.session, a);
  EXPECT_EQ(batch[1].lock.session, b);
  EXPECT_EQ(batch[1].lock.mode, U);
  EXPECT_EQ(Finished(), (std::vector<std::pair<SessionId, int>>{{b, 1}}));
}

TEST_F(DurableLockTest, WaitersAreNotRestoredButTheirSessionsAre) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  ASSERT_EQ(Code(a, "r", X), 0);
  ASSERT_EQ(Code(b, "r", X, kSes, -1), 99);
  auto restored = Restart(engine_);
  EXPECT_EQ(Waiting(*restored, Now()), 0u);
  EXPECT_TRUE(restored->GetSession(Now(), b).has_value());
  EXPECT_FALSE(restored->GetSession(Now(), b)->waiting.has_value());
  // The client retries its wait; a's release lets it in.
  EXPECT_EQ(CodeOn(*restored, b, "r", X, kSes, -1), 99);
  ASSERT_TRUE(restored->Release(Now(), {a, Key("r"), kSes}).ok());
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
}

// Acquire-all is all or nothing across a restart too: the locks a call
// takes are journaled only in the step that answers it, so a restart while
// it waits brings back none of them (the call was never answered), and the
// step that grants the call journals all of its locks at once.
TEST_F(DurableLockTest, AnAcquireAllWaitingAtARestartComesBackWithNothing) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  ASSERT_EQ(Code(a, "y", X), 0);
  auto call = engine_.AcquireAll(
      Now(), {b, "app", "public", kSes, -1ms, {{"z", X}, {"y", X}, {"x", X}}});
  ASSERT_TRUE(call && call->wait) << "x is taken, y waits";
  EXPECT_EQ(Grants(engine_, Now()).size(), 2u) << "x is held in memory";
  auto restored = Restart(engine_);
  EXPECT_EQ(Waiting(*restored, Now()), 0u);
  auto grants = Grants(*restored, Now());
  ASSERT_EQ(grants.size(), 1u) << "only a's own lock comes back";
  EXPECT_EQ(std::get<0>(grants[0]), "y");
  EXPECT_EQ(std::get<1>(grants[0]), a);

  ASSERT_TRUE(Release(a, "y").ok());  // the call goes on: y, then z
  const JournalBatch batch = engine_.TakeJournal();
  ASSERT_EQ(Kinds(batch), (std::vector<Kind>{Kind::kDeleteLock, Kind::kPutLock,
                                             Kind::kPutLock, Kind::kPutLock}));
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(batch[i].lock.session, b);
    EXPECT_EQ(batch[i].lock.resource, std::string(1, "xyz"[i - 1]));
  }
  EXPECT_EQ(Grants(engine_, Now()).size(), 3u);
}

// A call that fails after taking some of its locks leaves the disk as it
// was: what it took was never journaled, and giving it back writes only
// what the disk already holds.
TEST_F(DurableLockTest, AFailedAcquireAllLeavesTheDiskAsItWas) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  ASSERT_EQ(Code(a, "y", X), 0);
  ASSERT_EQ(Code(b, "x", S), 0);  // b holds x already: the call re-takes it
  fold_.Absorb(engine_);
  auto call = engine_.AcquireAll(
      Now(), {b, "app", "public", kSes, 50ms, {{"x", S}, {"y", X}}});
  ASSERT_TRUE(call && call->wait);
  Advance(100);  // y times out: the call gives x's second reference back
  ASSERT_EQ(engine_.TakeFinishedWaits().size(), 1u);
  fold_.Absorb(engine_);
  auto restored = Restart(engine_);
  auto grants = Grants(*restored, Now());
  ASSERT_EQ(grants.size(), 2u);
  for (const auto& g : grants) {
    if (std::get<0>(g) == "x") {
      EXPECT_EQ(std::get<4>(g), 1u) << "count";
    }
  }
}

TEST_F(DurableLockTest, AnEndedSessionsRowsGoWithItsDeletion) {
  const SessionId a = Open("a");
  ASSERT_EQ(Code(a, "r1", X), 0);
  ASSERT_EQ(Code(a, "r2", S), 0);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r3", X, kTxn), 0);
  fold_.Absorb(engine_);
  ASSERT_EQ(fold_.lock_rows(), 3u);
  ASSERT_TRUE(engine_.EndSession(Now(), a).ok());
  // One deletion removes the session and its rows.
  EXPECT_EQ(Kinds(engine_.TakeJournal()),
            std::vector<Kind>{Kind::kDeleteSession});
}

TEST_F(DurableLockTest, ATransactionsLocksGoWhenItEnds) {
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r1", X, kTxn), 0);
  ASSERT_EQ(Code(a, "r2", S, kTxn), 0);
  ASSERT_EQ(Code(a, "kept", S), 0);
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  auto restored = Restart(engine_);
  const auto grants = Grants(*restored, Now());
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(std::get<0>(grants[0]), "kept");
}

TEST_F(DurableLockTest, ALostTransactionKeepsItsLocksUntilItsSessionIsTold) {
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r", X, kTxn), 0);
  ASSERT_EQ(Code(a, "s", U, kTxn), 0);
  ASSERT_EQ(Code(a, "mine", S), 0);

  auto first = Restart(engine_);
  EXPECT_EQ(CodeOn(*first, b, "r", S), -1);
  // A restart before it is told keeps the locks and the loss, even after
  // the session's row is written again.
  ASSERT_TRUE(first->SetDeadlockPriority(Now(), a, 3).ok());
  auto restored = Restart(*first);
  EXPECT_EQ(Grants(*restored, Now()).size(), 3u);
  EXPECT_EQ(CodeOn(*restored, b, "r", S), -1);
  EXPECT_EQ(CodeOn(*restored, b, "s", U, kSes, -1), 99);

  // The session learns: the transaction's locks go (b's wait is granted),
  // its Session-owned lock stays.
  EXPECT_EQ(restored->Commit(Now(), a).code(), StatusCode::kTransactionLost);
  EXPECT_EQ(CodeOn(*restored, b, "r", X), 0);
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, b);
  EXPECT_EQ(restored->Mode(Now(), a, Key("mine"), kSes).value(), S);

  // Journaled: after another restart only the Session-owned lock and b's
  // grants are held, and a is not told again.
  auto again = Restart(*restored);
  EXPECT_EQ(Grants(*again, Now()).size(), 3u);
  EXPECT_EQ(again->Rollback(Now(), a).code(), StatusCode::kNoTransaction);
}

TEST_F(DurableLockTest, ALostTransactionsReleaseTellsToo) {
  const SessionId a = Open("a");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r", X, kTxn), 0);
  auto restored = Restart(engine_);
  EXPECT_EQ(restored->Release(Now(), {a, Key("r"), kTxn}).code(),
            StatusCode::kTransactionLost);
  EXPECT_TRUE(restored->ListLocks(Now(), "").empty());
}

TEST_F(DurableLockTest, ALostTransactionsLocksGoWhenItsSessionEnds) {
  const SessionId a = Open("a", 5000);
  const SessionId b = Open("b", 60'000);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "r", X, kTxn), 0);
  ASSERT_EQ(Code(a, "q", X, kSes), 0);
  auto restored = Restart(engine_);
  EXPECT_EQ(CodeOn(*restored, b, "r", X, kSes, -1), 99);
  // A fresh ttl from the restart, then expiry releases both owners' locks.
  clock_.AdvanceMs(4999);
  restored->AdvanceTo(Now());
  EXPECT_TRUE(restored->TakeFinishedWaits().empty());
  clock_.AdvanceMs(1);
  restored->AdvanceTo(Now());
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(CodeOn(*restored, b, "q", X), 0);
  auto again = Restart(*restored);
  const auto grants = Grants(*again, Now());
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(std::get<1>(grants[0]), b);
  EXPECT_EQ(std::get<1>(grants[1]), b);
}

// --- Memory namespaces -------------------------------------------------------

constexpr NamespaceOptions kMemory{.locks = LockDurability::kMemory};

TEST_F(DurableLockTest, AMemoryNamespaceJournalsOnlyTheSessionsMark) {
  engine_.SetNamespaceOptions("fast", kMemory);
  const SessionId a = Open("a");
  ASSERT_EQ(Code(a, "first", S), 0);  // its fence reserves a block
  (void)engine_.TakeJournal();
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  JournalBatch batch = engine_.TakeJournal();
  ASSERT_EQ(Kinds(batch), std::vector<Kind>{Kind::kPutSession});
  EXPECT_TRUE(batch[0].session.memory_locks);
  // Once per session: later grants and releases journal nothing.
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  ASSERT_TRUE(engine_.Release(Now(), {a, Key("r", "fast"), kSes}).ok());
  ASSERT_EQ(CodeOn(engine_, a, "q", S, kSes, 0, "fast"), 0);
  EXPECT_TRUE(engine_.TakeJournal().empty());
  // Durable namespaces beside it still journal.
  ASSERT_EQ(Code(a, "r", X), 0);
  EXPECT_EQ(Kinds(engine_.TakeJournal()), std::vector<Kind>{Kind::kPutLock});
}

TEST_F(DurableLockTest, AMemoryNamespaceGrantsNothingUntilEveryoneIsTold) {
  engine_.SetNamespaceOptions("fast", kMemory);
  const SessionId a = Open("a");
  const SessionId b = Open("b");
  const SessionId plain = Open("plain");
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  ASSERT_EQ(CodeOn(engine_, b, "q", S, kSes, 0, "fast"), 0);
  ASSERT_EQ(Code(plain, "durable", X), 0);

  auto restored = Restart(engine_);
  restored->SetNamespaceOptions("fast", kMemory);
  EXPECT_EQ(restored->Stats().sessions_owed_lock_news, 2u);
  EXPECT_TRUE(restored->ListLocks(Now(), "fast").empty());  // gone
  const SessionId c = OpenOn(*restored, "c");
  // The quiet period: nothing in "fast", for anyone, even a new session.
  EXPECT_EQ(CodeOn(*restored, c, "other", IS, kSes, 0, "fast"), -1);
  EXPECT_FALSE(
      restored->Test(Now(), c, Key("other", "fast"), IS, kSes).value());
  EXPECT_EQ(CodeOn(*restored, c, "r", X, kSes, 10'000, "fast"), 99);
  // Durable namespaces are not held up.
  const SessionId d = OpenOn(*restored, "d");
  EXPECT_EQ(CodeOn(*restored, d, "elsewhere", X), 0);
  EXPECT_EQ(CodeOn(*restored, d, "durable", X), -1);  // plain holds it

  // A session that never asked for memory locks is owed nothing.
  auto told = restored->KeepAlive(Now(), plain);
  ASSERT_TRUE(told.has_value());
  EXPECT_FALSE(told->locks_lost);
  told = restored->KeepAlive(Now(), a);
  ASSERT_TRUE(told.has_value());
  EXPECT_TRUE(told->locks_lost);
  EXPECT_FALSE(restored->KeepAlive(Now(), a)->locks_lost);  // said once
  EXPECT_TRUE(restored->TakeFinishedWaits().empty());       // b not told yet
  EXPECT_TRUE(restored->KeepAlive(Now(), b)->locks_lost);
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, c);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
  EXPECT_EQ(restored->Stats().sessions_owed_lock_news, 0u);
  EXPECT_EQ(CodeOn(*restored, a, "q", S, kSes, 0, "fast"), 0);
}

TEST_F(DurableLockTest, TheQuietPeriodEndsWhenTheSessionsOwedNewsExpire) {
  engine_.SetNamespaceOptions("fast", kMemory);
  const SessionId a = Open("a", 3000);
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  auto restored = Restart(engine_);
  restored->SetNamespaceOptions("fast", kMemory);
  const SessionId c = OpenOn(*restored, "c");
  EXPECT_EQ(CodeOn(*restored, c, "r", X, kSes, -1, "fast"), 99);
  clock_.AdvanceMs(3000);
  restored->AdvanceTo(Now());
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
}

TEST_F(DurableLockTest, ASessionThatAsksDuringTheQuietPeriodIsMarkedAgain) {
  engine_.SetNamespaceOptions("fast", kMemory);
  const SessionId a = Open("a");
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  auto restored = Restart(engine_);
  restored->SetNamespaceOptions("fast", kMemory);
  EXPECT_EQ(CodeOn(*restored, a, "q", X, kSes, -1, "fast"), 99);
  // Its own keep-alive ends the quiet period and lets its wait in.
  EXPECT_TRUE(restored->KeepAlive(Now(), a)->locks_lost);
  ASSERT_EQ(restored->TakeFinishedWaits().size(), 1u);
  // It holds a memory lock again: a further restart owes it the news.
  auto again = Restart(*restored);
  EXPECT_EQ(again->Stats().sessions_owed_lock_news, 1u);
}

TEST_F(DurableLockTest, TheNewsIsOwedAcrossAnotherRestartUntilItIsTold) {
  engine_.SetNamespaceOptions("fast", kMemory);
  const SessionId a = Open("a");
  ASSERT_EQ(CodeOn(engine_, a, "r", X, kSes, 0, "fast"), 0);
  auto first = Restart(engine_);
  ASSERT_TRUE(first->SetDeadlockPriority(Now(), a, 2).ok());  // row again
  auto second = Restart(*first);
  EXPECT_EQ(second->Stats().sessions_owed_lock_news, 1u);
  EXPECT_TRUE(second->KeepAlive(Now(), a)->locks_lost);
  auto third = Restart(*second);
  EXPECT_EQ(third->Stats().sessions_owed_lock_news, 0u);
  EXPECT_FALSE(third->KeepAlive(Now(), a)->locks_lost);
}

// --- Refused rows ------------------------------------------------------------

TEST_F(DurableLockTest, RestoreRefusesRowsThatBreakTheRules) {
  SessionRow session;
  session.id = 4;
  session.ttl = 1000ms;
  LockRow good;
  good.session = 4;
  good.ns = "app";
  good.principal = "public";
  good.resource = "r";
  good.mode = X;
  good.count = 1;
  good.fence = 77;
  auto refused = [&](auto change) {
    Engine e;
    EXPECT_TRUE(e.RestoreSession(Now(), SessionRow(session)).ok());
    LockRow row = good;
    change(row, e);
    return e.RestoreLock(std::move(row)).code() == StatusCode::kBadRequest;
  };
  EXPECT_FALSE(refused([](LockRow&, Engine&) {}));
  EXPECT_TRUE(refused([](LockRow& r, Engine&) { r.session = 5; }));
  EXPECT_TRUE(refused([](LockRow& r, Engine&) { r.mode = LockMode::kNoLock; }));
  EXPECT_TRUE(
      refused([](LockRow& r, Engine&) { r.mode = static_cast<LockMode>(9); }));
  EXPECT_TRUE(refused([](LockRow& r, Engine&) { r.count = 0; }));
  EXPECT_TRUE(refused([](LockRow& r, Engine&) { r.resource = ""; }));
  EXPECT_TRUE(refused([](LockRow& r, Engine&) { r.owner = kTxn; }));
  EXPECT_TRUE(refused([&](LockRow&, Engine& e) {
    EXPECT_TRUE(e.RestoreLock(LockRow(good)).ok());  // twice
  }));
  EXPECT_TRUE(refused([&](LockRow&, Engine& e) {
    SessionRow other = session;
    other.id = 9;
    EXPECT_TRUE(e.RestoreSession(Now(), std::move(other)).ok());
    LockRow theirs = good;
    theirs.session = 9;
    theirs.mode = S;
    EXPECT_TRUE(e.RestoreLock(std::move(theirs)).ok());  // conflicts with X
  }));

  // Restored fences count: the next grant's is above the row's.
  Engine e;
  ASSERT_TRUE(e.RestoreSession(Now(), SessionRow(session)).ok());
  ASSERT_TRUE(e.RestoreLock(LockRow(good)).ok());
  const SessionId n = OpenOn(e, "n");
  auto x = e.Acquire(Now(), {n, Key("other"), X, kSes, 0ms});
  ASSERT_TRUE(x.has_value());
  EXPECT_GT(x->fence, 77u);
  EXPECT_EQ(e.RestoreLock(LockRow(good)).code(), StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold::testing
