// Hold limits and breaks (engine_types.h, "Hold limits"): the server takes
// back a lock or a semaphore's permits at the limit it was granted with, or
// when an administrator breaks it; the holder's session lives on and is told
// at its next keep-alive, across a restart too.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
constexpr auto S = LockMode::kShared;
constexpr auto X = LockMode::kExclusive;
constexpr auto kSes = LockOwner::kSession;
constexpr auto kTxn = LockOwner::kTransaction;
using Done = std::vector<std::pair<SessionId, int>>;

class HoldLimitTest : public EngineHarness {
 protected:
  HoldLimitTest() { Limit("app", 10'000); }
  void Limit(std::string_view ns, long long max_hold_ms,
             long long lock_delay_ms = 0) {
    NamespaceOptions o;
    o.max_hold = milliseconds(max_hold_ms);
    o.lock_delay = milliseconds(lock_delay_ms);
    engine_.SetNamespaceOptions(ns, o);
  }
  // An acquire with its own max_hold_ms; the code as Code's.
  int Take(SessionId s, std::string_view resource, LockMode mode,
           long long max_hold_ms, long long timeout_ms = 0,
           std::string_view ns = "app") {
    AcquireRequest req{s, Key(resource, ns), mode, kSes,
                       milliseconds(timeout_ms)};
    req.max_hold = milliseconds(max_hold_ms);
    auto r = engine_.Acquire(Now(), req);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r) return -100;
    return r->wait ? 99 : static_cast<int>(r->result);
  }
  std::vector<LostHold> Told(SessionId s) {
    auto k = engine_.KeepAlive(Now(), s);
    EXPECT_TRUE(k.has_value());
    return k ? k->lost : std::vector<LostHold>{};
  }
  std::optional<Time> HoldUntil(SessionId s, std::string_view resource) {
    auto l = engine_.GetLock(Now(), Key(resource));
    if (!l) return std::nullopt;
    for (const auto& g : l->granted) {
      if (g.session == s) return g.hold_until;
    }
    return std::nullopt;
  }
  std::size_t Count(EventType type) const {
    return static_cast<std::size_t>(
        std::ranges::count(recorder_.Types(), type));
  }
};

TEST_F(HoldLimitTest, TheNamespacesLimitTakesTheLockBackAndHandsItOn) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  EXPECT_EQ(HoldUntil(a, "job"), Now() + milliseconds(10'000));
  ASSERT_EQ(Code(b, "job", X, kSes, -1), 99);
  Advance(9'999);
  EXPECT_TRUE(Finished().empty());
  Advance(1);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  EXPECT_EQ(ModeOf(a, "job", kSes), LockMode::kNoLock);
  EXPECT_EQ(Count(EventType::kLockExpired), 1u);
  EXPECT_EQ(engine_.Stats().holds_expired, 1u);
  // Asha's session lives on, and is told once.
  const auto lost = Told(a);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].resource, "job");
  EXPECT_EQ(lost[0].ns, "app");
  EXPECT_EQ(lost[0].reason, LostReason::kHoldLimit);
  EXPECT_EQ(lost[0].owner, kSes);
  EXPECT_FALSE(lost[0].semaphore);
  EXPECT_TRUE(Told(a).empty());
}

TEST_F(HoldLimitTest, ARequestMayAskForLessButNotMore) {
  const SessionId a = Open("Asha");
  EXPECT_EQ(Take(a, "short", X, 2'000), 0);
  EXPECT_EQ(HoldUntil(a, "short"), Now() + milliseconds(2'000));
  AcquireRequest more{a, Key("long"), X, kSes, milliseconds(0)};
  more.max_hold = milliseconds(10'001);
  auto refused = engine_.Acquire(Now(), more);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kBadRequest);
  EXPECT_NE(refused.error().message().find("10000"), std::string::npos);
  more.max_hold = milliseconds(-1);
  EXPECT_EQ(engine_.Acquire(Now(), more).error().code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(ModeOf(a, "long", kSes), LockMode::kNoLock);  // nothing changed
}

TEST_F(HoldLimitTest, WithoutANamespaceLimitOnlyARequestsOwnApplies) {
  const SessionId a = Open("Asha");
  EXPECT_EQ(Take(a, "free", X, 0, 0, "plain"), 0);
  EXPECT_EQ(Take(a, "own", X, 30'000, 0, "plain"), 0);
  auto l = engine_.GetLock(Now(), Key("free", "plain"));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->granted[0].hold_until, std::nullopt);
  Advance(30'000);
  EXPECT_EQ(engine_.Mode(Now(), a, Key("own", "plain"), kSes).value(),
            LockMode::kNoLock);
  EXPECT_EQ(engine_.Mode(Now(), a, Key("free", "plain"), kSes).value(), X);
}

TEST_F(HoldLimitTest, AReacquisitionOnlyBringsTheLimitNearer) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Take(a, "job", S, 5'000), 0);
  const Time first = Now() + milliseconds(5'000);
  Advance(1'000);
  ASSERT_EQ(Take(a, "job", S, 5'000), 0);  // later: the first one stays
  EXPECT_EQ(HoldUntil(a, "job"), first);
  ASSERT_EQ(Take(a, "job", X, 1'000), 0);  // sooner: it moves
  EXPECT_EQ(HoldUntil(a, "job"), Now() + milliseconds(1'000));
  Advance(1'000);
  // Every reference goes at once.
  EXPECT_EQ(ModeOf(a, "job", kSes), LockMode::kNoLock);
  EXPECT_EQ(Told(a).size(), 1u);
}

TEST_F(HoldLimitTest, AReleaseBeforeTheLimitLeavesNothingToExpire) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  ASSERT_TRUE(Release(a, "job", kSes).ok());
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);  // a new grant, a new limit
  Advance(9'000);
  EXPECT_EQ(ModeOf(a, "job", kSes), X);
  Advance(1'000);
  EXPECT_EQ(ModeOf(a, "job", kSes), LockMode::kNoLock);
  EXPECT_EQ(Count(EventType::kLockExpired), 1u);
}

TEST_F(HoldLimitTest, TheHoldersParkedConversionEndsFirst) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", S, kSes, 0), 0);
  Advance(5'000);
  ASSERT_EQ(Code(b, "job", S, kSes, 0), 0);    // Ravi's limit comes later
  ASSERT_EQ(Code(a, "job", X, kSes, -1), 99);  // Asha waits to convert
  Advance(5'000);
  EXPECT_EQ(Finished(), (Done{{a, -2}}));
  EXPECT_EQ(ModeOf(a, "job", kSes), LockMode::kNoLock);
  EXPECT_EQ(ModeOf(b, "job", kSes), S);
}

TEST_F(HoldLimitTest, ALockDelayFollowsAnExpiredHold) {
  Limit("app", 10'000, 3'000);
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  ASSERT_EQ(Code(b, "job", X, kSes, -1), 99);
  Advance(10'000);
  EXPECT_TRUE(Finished().empty());  // held back: Asha may still be at work
  Advance(3'000);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
}

TEST_F(HoldLimitTest, ATransactionsLockExpiresAndTheTransactionGoesOn) {
  const SessionId a = Open("Asha");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "job", X, kTxn, 0), 0);
  Advance(10'000);
  EXPECT_EQ(ModeOf(a, "job", kTxn), LockMode::kNoLock);
  EXPECT_TRUE(engine_.Commit(Now(), a).ok());
  const auto lost = Told(a);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].owner, kTxn);
}

TEST_F(HoldLimitTest, ASemaphoresPermitsExpireTogether) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  SemaphoreRequest two{a, Key("pay"), 2, 3, kSes, milliseconds(0)};
  ASSERT_TRUE(engine_.AcquireSemaphore(Now(), two).has_value());
  SemaphoreRequest wide{b, Key("pay"), 3, 3, kSes, milliseconds(-1)};
  wide.max_hold = milliseconds(500);
  auto parked = engine_.AcquireSemaphore(Now(), wide);
  ASSERT_TRUE(parked.has_value() && parked->wait.has_value());
  Advance(10'000);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  EXPECT_EQ(Count(EventType::kSemaphoreExpired), 1u);
  auto sem = engine_.GetSemaphore(Now(), Key("pay"));
  ASSERT_TRUE(sem.has_value());
  EXPECT_EQ(sem->holders[0].hold_until, Now() + milliseconds(500));
  const auto lost = Told(a);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_TRUE(lost[0].semaphore);
  Advance(500);
  EXPECT_FALSE(engine_.GetSemaphore(Now(), Key("pay")).has_value());
}

TEST_F(HoldLimitTest, AnAcquireAllCallsLocksEachGetTheLimit) {
  const SessionId a = Open("Asha");
  AcquireAllRequest req{a,    "app",           "public",
                        kSes, milliseconds(0), {{"one", X}, {"two", S}}};
  req.max_hold = milliseconds(4'000);
  auto r = engine_.AcquireAll(Now(), req);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(HoldUntil(a, "one"), Now() + milliseconds(4'000));
  EXPECT_EQ(HoldUntil(a, "two"), Now() + milliseconds(4'000));
  Advance(4'000);
  EXPECT_EQ(Told(a).size(), 2u);
}

TEST_F(HoldLimitTest, ABreakTakesBothOwnersGrantsAndTellsTheSession) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  Limit("app", 0, 2'000);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  ASSERT_EQ(Code(a, "job", S, kSes, 0), 0);
  ASSERT_EQ(Code(a, "job", S, kTxn, 0), 0);
  ASSERT_EQ(Code(b, "job", X, kSes, -1), 99);
  auto broken = engine_.BreakLock(Now(), a, Key("job"));
  ASSERT_TRUE(broken.has_value()) << broken.error().ToString();
  ASSERT_EQ(broken->size(), 2u);
  EXPECT_EQ((*broken)[0].owner, kSes);
  EXPECT_EQ((*broken)[1].owner, kTxn);
  EXPECT_EQ(Count(EventType::kLockBroken), 2u);
  EXPECT_EQ(engine_.Stats().holds_broken, 2u);
  EXPECT_TRUE(Finished().empty());  // the lock-delay applies
  Advance(2'000);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  const auto lost = Told(a);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[0].reason, LostReason::kBroken);
}

TEST_F(HoldLimitTest, ABreakIsRefusedClearly) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  EXPECT_EQ(engine_.BreakLock(Now(), b, Key("job")).error().code(),
            StatusCode::kNotHeld);
  EXPECT_EQ(engine_.BreakLock(Now(), 999, Key("job")).error().code(),
            StatusCode::kSessionNotFound);
  EXPECT_EQ(engine_.BreakSemaphore(Now(), a, Key("job")).error().code(),
            StatusCode::kWrongKind);
  EXPECT_EQ(engine_.BreakLock(Now(), a, Key("")).error().code(),
            StatusCode::kNameEmpty);
  EXPECT_EQ(ModeOf(a, "job", kSes), X);  // nothing changed
  EXPECT_TRUE(Told(a).empty());
}

TEST_F(HoldLimitTest, ABrokenSemaphoreFreesItsPermits) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_TRUE(engine_.AcquireSemaphore(
      Now(), {a, Key("pay"), 1, 1, kSes, milliseconds(0)}));
  ASSERT_TRUE(engine_.AcquireSemaphore(
      Now(), {b, Key("pay"), 1, 1, kSes, milliseconds(-1)}));
  auto broken = engine_.BreakSemaphore(Now(), a, Key("pay"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_EQ((*broken)[0].count, 1u);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  EXPECT_EQ(Count(EventType::kSemaphoreBroken), 1u);
}

TEST_F(HoldLimitTest, TheLimitAndTheNewsSurviveARestart) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Code(a, "kept", X, kSes, 0), 0);
  Advance(4'000);
  ASSERT_EQ(Take(a, "lost", X, 1'000), 0);
  Advance(1'000);  // "lost" expires; the news waits for a keep-alive
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  NamespaceOptions o;
  o.max_hold = milliseconds(10'000);
  restored->SetNamespaceOptions("app", o);
  auto k = restored->KeepAlive(Now(), a);
  ASSERT_TRUE(k.has_value());
  ASSERT_EQ(k->lost.size(), 1u);
  EXPECT_EQ(k->lost[0].resource, "lost");
  // The limit of "kept" was not restarted: 5 s were used before.
  auto l = restored->GetLock(Now(), Key("kept"));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->granted[0].hold_until, Now() + milliseconds(5'000));
  clock_.AdvanceMs(5'000);
  restored->AdvanceTo(Now());
  EXPECT_FALSE(restored->GetLock(Now(), Key("kept")).has_value());
}

TEST_F(HoldLimitTest, TheToldNewsLeavesTheJournal) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Take(a, "job", X, 1'000), 0);
  Advance(1'000);
  ASSERT_EQ(Told(a).size(), 1u);
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  auto k = restored->KeepAlive(Now(), a);
  ASSERT_TRUE(k.has_value());
  EXPECT_TRUE(k->lost.empty());  // said once, not again after a restart
}

TEST_F(HoldLimitTest, NewsOfALockTakenAgainKeepsTheNewGrantsRow) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Take(a, "job", X, 1'000), 0);
  Advance(1'000);
  ASSERT_EQ(Take(a, "job", X, 0), 0);  // taken again before being told
  ASSERT_EQ(Told(a).size(), 1u);
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  auto l = restored->GetLock(Now(), Key("job"));
  ASSERT_TRUE(l.has_value());  // the new grant survived the news' delete
  EXPECT_EQ(l->granted[0].session, a);
}

TEST_F(HoldLimitTest, AnEndedSessionsNewsGoesWithIt) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(Take(a, "job", X, 1'000), 0);
  Advance(1'000);
  ASSERT_TRUE(engine_.EndSession(Now(), a).ok());
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  EXPECT_TRUE(restored->ListSessions(Now()).empty());
}

TEST_F(HoldLimitTest, GetLockAnswersOneLockAndNoSemaphore) {
  const SessionId a = Open("Asha");
  EXPECT_FALSE(engine_.GetLock(Now(), Key("job")).has_value());
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  ASSERT_TRUE(engine_.AcquireSemaphore(
      Now(), {a, Key("pay"), 1, 1, kSes, milliseconds(0)}));
  auto l = engine_.GetLock(Now(), Key("job"));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->resource, "job");
  EXPECT_EQ(l->granted.size(), 1u);
  EXPECT_FALSE(engine_.GetLock(Now(), Key("pay")).has_value());
}

}  // namespace
}  // namespace leasehold::testing
