// Application locks: sp_getapplock's rules, one test per rule.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using M = LockMode;
constexpr M IS = M::kIntentShared, S = M::kShared, U = M::kUpdate,
            IX = M::kIntentExclusive, SIX = M::kSharedIntentExclusive,
            UIX = M::kUpdateIntentExclusive, X = M::kExclusive;
constexpr auto kTxn = LockOwner::kTransaction;
constexpr auto kSes = LockOwner::kSession;
using Done = std::vector<std::pair<SessionId, int>>;

class AppLockTest : public EngineHarness {
 protected:
  // Makes `s` hold `mode` on `resource`, building SIX and UIX from parts.
  void Hold(SessionId s, const std::string& resource, M mode) {
    if (mode == SIX || mode == UIX) {
      ASSERT_EQ(Code(s, resource, mode == SIX ? S : U), 0);
      ASSERT_EQ(Code(s, resource, IX), 0);
    } else {
      ASSERT_EQ(Code(s, resource, mode), 0);
    }
    ASSERT_EQ(ModeOf(s, resource), mode);
  }
};

TEST_F(AppLockTest, EveryCompatibilityCellThroughTheEngine) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  int n = 0;
  for (M held : {IS, S, U, IX, SIX, UIX, X}) {
    for (M requested : {IS, S, U, IX, X}) {
      const std::string r = "cell" + std::to_string(n++);
      Hold(a, r, held);
      EXPECT_EQ(Code(b, r, requested), Compatible(held, requested) ? 0 : -1)
          << LockModeName(held) << " held, " << LockModeName(requested);
    }
  }
}

TEST_F(AppLockTest, EveryConversionRowThroughTheEngine) {
  struct Row {
    std::vector<M> asked;
    M held;
  };
  const Row rows[] = {{{IS, S}, S},      {{IS, U}, U},   {{IS, IX}, IX},
                      {{S, U}, U},       {{S, IX}, SIX}, {{U, IX}, UIX},
                      {{S, IX, U}, UIX}, {{U, S}, U},    {{IX, S}, SIX},
                      {{IX, U, S}, UIX}, {{IS, X}, X},   {{SIX, X}, X},
                      {{X, S}, X}};
  const SessionId a = Open("Asha");
  int n = 0;
  for (const Row& row : rows) {
    const std::string r = "row" + std::to_string(n++);
    for (M m : row.asked) {
      if (m == SIX) {
        ASSERT_EQ(Code(a, r, S), 0);
        ASSERT_EQ(Code(a, r, IX), 0);
      } else {
        ASSERT_EQ(Code(a, r, m), 0);
      }
    }
    EXPECT_EQ(ModeOf(a, r), row.held) << r;
  }
}

TEST_F(AppLockTest, CombinedModesCannotBeRequested) {
  const SessionId a = Open("Asha");
  for (M m : {M::kNoLock, SIX, UIX}) {
    EXPECT_EQ(Acquire(a, "r", m).error().code(), StatusCode::kBadMode);
  }
}

TEST_F(AppLockTest, ReacquisitionCountsAndReleasesOneReferenceAtATime) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  for (int i = 1; i <= 3; ++i) {
    auto r = Acquire(a, "doc", X);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->count, static_cast<std::uint32_t>(i));
  }
  for (int left = 2; left >= 0; --left) {
    ASSERT_TRUE(Release(a, "doc").ok());
    EXPECT_EQ(CountOf(a, "doc"), static_cast<std::uint32_t>(left));
    EXPECT_EQ(Code(b, "doc", S), left > 0 ? -1 : 0);
  }
  EXPECT_EQ(Release(a, "doc").code(), StatusCode::kNotHeld);
}

TEST_F(AppLockTest, ModeIsNeverLoweredWhileCountAboveZero) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_TRUE(Release(a, "doc").ok());
  EXPECT_EQ(ModeOf(a, "doc"), X);
  EXPECT_EQ(CountOf(a, "doc"), 1u);
  EXPECT_EQ(Code(b, "doc", S), -1);
  ASSERT_TRUE(Release(a, "doc").ok());
  EXPECT_EQ(ModeOf(a, "doc"), M::kNoLock);
  EXPECT_EQ(Code(b, "doc", S), 0);
}

TEST_F(AppLockTest, FailedRequestChangesNothing) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", S), 0);
  EXPECT_EQ(Code(a, "doc", X), -1);  // timeout 0
  EXPECT_EQ(ModeOf(a, "doc"), S);
  EXPECT_EQ(CountOf(a, "doc"), 1u);
  EXPECT_EQ(Code(a, "doc", X, kSes, 100), 99);  // waits, then times out
  Advance(100);
  EXPECT_EQ(Finished(), (Done{{a, -1}}));
  EXPECT_EQ(ModeOf(a, "doc"), S);
  EXPECT_EQ(CountOf(a, "doc"), 1u);
  const auto before = engine_.Stats().last_fence;
  EXPECT_EQ(Acquire(a, "", X).error().code(), StatusCode::kNameEmpty);
  EXPECT_EQ(engine_.Stats().last_fence, before);
}

TEST_F(AppLockTest, TimeoutsMinusOneZeroAndN) {
  const SessionId a = Open("Asha", 600'000);
  const SessionId b = Open("Ravi", 600'000);
  ASSERT_EQ(Code(a, "doc", X), 0);
  EXPECT_EQ(Acquire(b, "doc", X, kSes, -2).error().code(),
            StatusCode::kBadTimeout);
  EXPECT_EQ(Code(b, "doc", X, kSes, 0), -1);
  EXPECT_EQ(Code(b, "doc", X, kSes, 250), 99);
  Advance(249);
  EXPECT_TRUE(Finished().empty());
  Advance(1);
  EXPECT_EQ(Finished(), (Done{{b, -1}}));
  EXPECT_EQ(Code(b, "doc", X, kSes, -1), 99);
  Advance(300'000);
  EXPECT_TRUE(Finished().empty());
  EXPECT_FALSE(engine_.NextDeadline() < Now() + milliseconds(1));
  ASSERT_TRUE(Release(a, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
}

TEST_F(AppLockTest, RelaxedFifoNewSharedWaitsBehindExclusive) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", X, kSes, 100), 99);
  EXPECT_EQ(Code(c, "doc", S, kSes, -1), 99);  // conflicts with waiting X
  Advance(100);                                // X times out: S is granted
  EXPECT_EQ(Finished(), (Done{{b, -1}, {c, 1}}));
  EXPECT_EQ(ModeOf(c, "doc"), S);
}

TEST_F(AppLockTest, RequestCompatibleWithGrantedAndWaitingPasses) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", IX, kSes, -1), 99);
  EXPECT_EQ(Code(c, "doc", IS), 0);  // fits S and IX
  EXPECT_EQ(Code(c, "doc2", S), 0);
}

TEST_F(AppLockTest, GrantPassGrantsEveryCompatibleWaiterInOrder) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  const SessionId d = Open("Omar");
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  ASSERT_EQ(Code(c, "doc", S, kSes, -1), 99);
  ASSERT_EQ(Code(d, "doc", X, kSes, -1), 99);
  ASSERT_TRUE(Release(a, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{b, 1}, {c, 1}}));
  ASSERT_TRUE(Release(b, "doc").ok());
  EXPECT_TRUE(Finished().empty());
  ASSERT_TRUE(Release(c, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{d, 1}}));
}

TEST_F(AppLockTest, ConversionWaitsOnlyOnOtherHoldersAndGoesFirst) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", S), 0);
  ASSERT_EQ(Code(c, "doc", X, kSes, -1), 99);
  // S -> U fits Ravi's S: granted at once although Mei's X waits.
  EXPECT_EQ(Code(a, "doc", U), 0);
  // U -> X must wait for Ravi, and queues ahead of Mei.
  EXPECT_EQ(Code(a, "doc", X, kSes, -1), 99);
  auto locks = engine_.ListLocks(Now(), "app");
  ASSERT_EQ(locks.size(), 1u);
  ASSERT_EQ(locks[0].waiting.size(), 2u);
  EXPECT_EQ(locks[0].waiting[0].session, a);
  EXPECT_TRUE(locks[0].waiting[0].conversion);
  EXPECT_EQ(locks[0].waiting[0].target, X);
  EXPECT_EQ(locks[0].waiting[1].session, c);
  ASSERT_TRUE(Release(b, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{a, 1}}));
  EXPECT_EQ(ModeOf(a, "doc"), X);
  EXPECT_EQ(CountOf(a, "doc"), 3u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Release(a, "doc").ok());
  EXPECT_EQ(Finished(), (Done{{c, 1}}));
}

TEST_F(AppLockTest, OneSessionsTwoOwnersNeverBlockEachOther) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", X, kSes), 0);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  EXPECT_EQ(Code(a, "doc", X, kTxn), 0);  // own Session lock: no conflict
  EXPECT_EQ(ModeOf(a, "doc", kTxn), X);
  EXPECT_EQ(ModeOf(a, "doc", kSes), X);
  ASSERT_TRUE(engine_.Commit(Now(), a).ok());
  EXPECT_EQ(ModeOf(a, "doc", kSes), X);
  EXPECT_TRUE(Finished().empty());
}

TEST_F(AppLockTest, TransactionOwnerNeedsTransaction) {
  const SessionId a = Open("Asha");
  EXPECT_EQ(Acquire(a, "doc", X, kTxn).error().code(),
            StatusCode::kNoTransaction);
  EXPECT_EQ(Release(a, "doc", kTxn).code(), StatusCode::kNoTransaction);
  EXPECT_EQ(engine_.Test(Now(), a, Key("doc"), X, kTxn).error().code(),
            StatusCode::kNoTransaction);
  // APPLOCK_MODE refuses it too (error 3918), as Test does.
  EXPECT_EQ(engine_.Mode(Now(), a, Key("doc"), kTxn).error().code(),
            StatusCode::kNoTransaction);
}

TEST_F(AppLockTest, ReleasingWhatIsNotHeldIsAnError) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  EXPECT_EQ(Release(a, "doc").code(), StatusCode::kNotHeld);
  ASSERT_EQ(Code(a, "doc", X), 0);
  EXPECT_EQ(Release(b, "doc").code(), StatusCode::kNotHeld);
  ASSERT_TRUE(engine_.BeginTransaction(Now(), a).has_value());
  EXPECT_EQ(Release(a, "doc", kTxn).code(), StatusCode::kNotHeld);
  EXPECT_EQ(engine_.Release(Now(), {a, Key("doc", "app", "bob"), kSes}).code(),
            StatusCode::kNotHeld);
  EXPECT_EQ(Release(a, "Doc").code(), StatusCode::kNotHeld);
  EXPECT_EQ(Release(a, "doc ").code(), StatusCode::kNotHeld);
  EXPECT_EQ(ModeOf(a, "doc"), X);
}

TEST_F(AppLockTest, NamespacesAndPrincipalsNeverConflict) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", X), 0);
  auto acquire = [&](std::string_view ns, std::string_view principal) {
    return engine_
        .Acquire(Now(), {b, {ns, principal, "doc"}, X, kSes, milliseconds(0)})
        ->result;
  };
  EXPECT_EQ(acquire("other", "public"), AcquireResult::kGranted);
  EXPECT_EQ(acquire("app", "bob"), AcquireResult::kGranted);
  EXPECT_EQ(acquire("app", "public"), AcquireResult::kTimeout);
}

TEST_F(AppLockTest, BadNamesAreRefusedAndNothingIsCreated) {
  const SessionId a = Open("Asha");
  EXPECT_EQ(Acquire(a, "", X).error().code(), StatusCode::kNameEmpty);
  EXPECT_EQ(Acquire(a, std::string(256, 'r'), X).error().code(),
            StatusCode::kNameTooLong);
  EXPECT_EQ(Acquire(a, "\xFF\xFE", X).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(
      engine_.Acquire(Now(), {a, {"", "public", "r"}, X, kSes, milliseconds(0)})
          .error()
          .code(),
      StatusCode::kNameEmpty);
  EXPECT_EQ(
      engine_.Acquire(Now(), {a, {"app", "", "r"}, X, kSes, milliseconds(0)})
          .error()
          .code(),
      StatusCode::kNameEmpty);
  EXPECT_EQ(Code(a, std::string(255, 'r'), X), 0);
  EXPECT_EQ(engine_.Stats().resources, 1u);
}

TEST_F(AppLockTest, UnknownSessionIsRefused) {
  EXPECT_EQ(Acquire(42, "doc", X).error().code(), StatusCode::kSessionNotFound);
  EXPECT_EQ(Release(42, "doc").code(), StatusCode::kSessionNotFound);
  EXPECT_EQ(engine_.Mode(Now(), 42, Key("doc"), kSes).error().code(),
            StatusCode::kSessionNotFound);
}

TEST_F(AppLockTest, OneWaitingRequestPerSession) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_EQ(Code(a, "doc2", X), 0);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  EXPECT_EQ(Acquire(b, "doc2", S, kSes, -1).error().code(),
            StatusCode::kWaitPending);
  EXPECT_EQ(Acquire(b, "doc3", S, kSes, 0).error().code(),
            StatusCode::kWaitPending);
}

TEST_F(AppLockTest, ReleaseOfTheResourceBeingConvertedIsRefused) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(a, "other", S), 0);
  ASSERT_EQ(Code(b, "doc", S), 0);
  ASSERT_EQ(Code(a, "doc", X, kSes, -1), 99);
  EXPECT_EQ(Release(a, "doc").code(), StatusCode::kWaitPending);
  EXPECT_TRUE(Release(a, "other").ok());  // elsewhere is fine
}

TEST_F(AppLockTest, TestAnswersWithTheSameRuleAndAcquiresNothing) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  auto test = [&](SessionId s, M m) {
    return *engine_.Test(Now(), s, Key("doc"), m, kSes);
  };
  EXPECT_TRUE(test(a, X));
  EXPECT_EQ(engine_.Stats().resources, 0u);
  ASSERT_EQ(Code(a, "doc", S), 0);
  EXPECT_TRUE(test(c, S));
  EXPECT_FALSE(test(c, X));
  ASSERT_EQ(Code(b, "doc", X, kSes, -1), 99);
  EXPECT_FALSE(test(c, S));  // would queue behind the waiting X
  EXPECT_TRUE(test(a, S));   // re-acquisition
  EXPECT_TRUE(test(a, X));   // a conversion ignores the queue
  ASSERT_EQ(Code(c, "doc2", S), 0);
  EXPECT_EQ(CountOf(c, "doc"), 0u);
  EXPECT_EQ(engine_.Test(Now(), a, Key("doc"), SIX, kSes).error().code(),
            StatusCode::kBadMode);
}

TEST_F(AppLockTest, TestOfAConversionLooksOnlyAtOtherHolders) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", S), 0);
  ASSERT_EQ(Code(c, "doc", X, kSes, -1), 99);
  EXPECT_TRUE(*engine_.Test(Now(), a, Key("doc"), U, kSes));
  EXPECT_FALSE(*engine_.Test(Now(), a, Key("doc"), X, kSes));
  ASSERT_TRUE(Release(b, "doc").ok());
  EXPECT_TRUE(*engine_.Test(Now(), a, Key("doc"), X, kSes));
}

TEST_F(AppLockTest, CancelEndsTheWaitWithMinusTwo) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  EXPECT_TRUE(*engine_.Cancel(Now(), b));
  EXPECT_EQ(Finished(), (Done{{b, -2}}));
  EXPECT_FALSE(*engine_.Cancel(Now(), b));
  auto r = Acquire(b, "doc", S, kSes, -1);
  ASSERT_TRUE(r->wait.has_value());
  EXPECT_TRUE(engine_.CancelWait(Now(), *r->wait));
  EXPECT_FALSE(engine_.CancelWait(Now(), *r->wait));
  EXPECT_EQ(Finished(), (Done{{b, -2}}));
  EXPECT_EQ(engine_.Stats().waiting, 0u);
}

TEST_F(AppLockTest, CancellingAWaiterLetsThoseBehindItPass) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(a, "doc", S), 0);
  ASSERT_EQ(Code(b, "doc", X, kSes, -1), 99);
  ASSERT_EQ(Code(c, "doc", S, kSes, -1), 99);
  ASSERT_TRUE(*engine_.Cancel(Now(), b));
  EXPECT_EQ(Finished(), (Done{{b, -2}, {c, 1}}));
}

TEST_F(AppLockTest, FencesIncreaseOnEveryGrantAndStartAboveTheFloor) {
  Engine engine(EngineOptions{.fence_floor = 1000});
  auto s = engine.OpenSession(Now(), {"a", milliseconds(60'000), 0, ""});
  auto t = engine.OpenSession(Now(), {"b", milliseconds(60'000), 0, ""});
  Fence last = 1000;
  for (int i = 0; i < 3; ++i) {
    auto r =
        engine.Acquire(Now(), {s->id, Key("doc"), X, kSes, milliseconds(0)});
    EXPECT_GT(r->fence, last);
    last = r->fence;
  }
  auto w = engine.Acquire(Now(), {t->id, Key("doc"), X, kSes, kWaitForever});
  ASSERT_TRUE(w->wait.has_value());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(engine.Release(Now(), {s->id, Key("doc"), kSes}).ok());
  }
  auto done = engine.TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_GT(done[0].fence, last);
  EXPECT_EQ(engine.Stats().last_fence, done[0].fence);
}

TEST_F(AppLockTest, EventsForEveryStateChange) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  recorder_.events.clear();
  ASSERT_EQ(Code(a, "doc", X), 0);
  ASSERT_EQ(Code(b, "x", S), 0);
  ASSERT_TRUE(Release(b, "x").ok());
  ASSERT_EQ(Code(b, "doc", S, kSes, 100), 99);
  Advance(100);
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  ASSERT_TRUE(*engine_.Cancel(Now(), b));
  ASSERT_EQ(Code(b, "doc", S, kSes, -1), 99);
  ASSERT_TRUE(Release(a, "doc").ok());
  using E = EventType;
  EXPECT_EQ(recorder_.Types(),
            (std::vector<E>{E::kLockGranted, E::kLockGranted, E::kLockReleased,
                            E::kLockWaiting, E::kLockTimeout, E::kLockWaiting,
                            E::kLockCancelled, E::kLockWaiting,
                            E::kLockReleased, E::kLockGranted}));
  EXPECT_EQ(recorder_.events.back().session, b);
  EXPECT_EQ(recorder_.events.back().resource, "doc");
  EXPECT_EQ(recorder_.events.back().mode, S);
  EXPECT_EQ(EventTypeName(E::kLockGranted), "applock.granted");
}

TEST_F(AppLockTest, ListLocksShowsHoldersAndQueue) {
  const SessionId a = Open("Asha");
  const SessionId b = Open("Ravi");
  ASSERT_EQ(Code(a, "doc", U), 0);
  ASSERT_EQ(Code(a, "doc", U), 0);
  ASSERT_EQ(Code(b, "doc", X, kSes, 5000), 99);
  const SessionId c = Open("Mei");
  ASSERT_EQ(Code(c, "zzz", S, kSes, 0), 0);
  ASSERT_TRUE(Release(c, "zzz").ok());  // an idle resource is forgotten
  auto locks = engine_.ListLocks(Now(), "app");
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].resource, "doc");
  EXPECT_EQ(locks[0].principal, "public");
  ASSERT_EQ(locks[0].granted.size(), 1u);
  EXPECT_EQ(locks[0].granted[0].session_name, "Asha");
  EXPECT_EQ(locks[0].granted[0].mode, U);
  EXPECT_EQ(locks[0].granted[0].count, 2u);
  ASSERT_EQ(locks[0].waiting.size(), 1u);
  EXPECT_EQ(locks[0].waiting[0].session_name, "Ravi");
  EXPECT_EQ(locks[0].waiting[0].deadline, Now() + milliseconds(5000));
  EXPECT_TRUE(engine_.ListLocks(Now(), "elsewhere").empty());
  EXPECT_EQ(engine_.ListLocks(Now(), "").size(), 1u);
}

}  // namespace
}  // namespace leasehold::testing
