// Semaphores: permits up to a limit, strict FIFO waiting, holders asking
// for more, the limit and kind refusals, deadlocks across locks and
// semaphores (and the cycles that are not deadlocks), session and
// transaction ends, durability, events, and a random history checked
// against a model.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
constexpr auto X = LockMode::kExclusive;
constexpr auto kSes = LockOwner::kSession;
constexpr auto kTxn = LockOwner::kTransaction;
using Done = std::vector<std::pair<SessionId, int>>;

class SemaphoreTest : public EngineHarness {
 protected:
  Result<AcquireOutcome> Take(SessionId s, std::uint32_t permits,
                              std::uint32_t limit, long long timeout_ms = 0,
                              std::string_view name = "pay",
                              LockOwner owner = kSes) {
    return engine_.AcquireSemaphore(
        Now(), {s, Key(name), permits, limit, owner, milliseconds(timeout_ms)});
  }
  // 0, -1, -3 at once; 99 when it waits; -100 on an error.
  int TakeCode(SessionId s, std::uint32_t permits, std::uint32_t limit,
               long long timeout_ms = 0, std::string_view name = "pay",
               LockOwner owner = kSes) {
    auto r = Take(s, permits, limit, timeout_ms, name, owner);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r) return -100;
    return r->wait ? 99 : static_cast<int>(r->result);
  }
  Result<std::uint32_t> Give(SessionId s, std::uint32_t permits = 0,
                             std::string_view name = "pay",
                             LockOwner owner = kSes) {
    return engine_.ReleaseSemaphore(Now(), {s, Key(name), owner, permits});
  }
  // Permits `s` holds of `name` as `owner`, from the listing.
  std::uint32_t Held(SessionId s, std::string_view name = "pay",
                     LockOwner owner = kSes) {
    for (const SemaphoreInfo& i : engine_.ListSemaphores(Now(), "app")) {
      if (i.name != name) continue;
      for (const auto& h : i.holders) {
        if (h.session == s && h.owner == owner) return h.permits;
      }
    }
    return 0;
  }
  std::uint32_t InUse(std::string_view name = "pay") {
    for (const SemaphoreInfo& i : engine_.ListSemaphores(Now(), "app")) {
      if (i.name == name) return i.held;
    }
    return 0;
  }
};

TEST_F(SemaphoreTest, GrantsUpToTheLimitThenRefuses) {
  const SessionId a = Open("Asha"), b = Open("Ravi"), c = Open("Mei");
  auto first = Take(a, 2, 3);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->result, AcquireResult::kGranted);
  EXPECT_EQ(first->count, 2u);
  auto second = Take(b, 1, 3);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->count, 1u);
  EXPECT_GT(second->fence, first->fence);
  EXPECT_EQ(TakeCode(c, 1, 3), -1);  // full; timeout 0
  EXPECT_EQ(InUse(), 3u);
  auto left = Give(a, 1);
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(*left, 1u);
  EXPECT_EQ(TakeCode(c, 1, 3), 0);
  EXPECT_EQ(InUse(), 3u);
  // A lock listing does not show semaphores.
  EXPECT_TRUE(engine_.ListLocks(Now(), "app").empty());
}

TEST_F(SemaphoreTest, WaitingIsStrictlyFifoSoALargeRequestIsNotStarved) {
  const SessionId a = Open("Asha"), big = Open("Big"), small = Open("Small");
  ASSERT_EQ(TakeCode(a, 2, 3), 0);
  ASSERT_EQ(TakeCode(big, 3, 3, -1), 99);
  // One permit is free, but the large request is ahead: it waits too.
  ASSERT_EQ(TakeCode(small, 1, 3, -1), 99);
  ASSERT_TRUE(Give(a, 1).has_value());
  EXPECT_TRUE(Finished().empty());
  ASSERT_TRUE(Give(a).has_value());
  EXPECT_EQ(Finished(), (Done{{big, 1}}));
  EXPECT_EQ(Held(big), 3u);
  ASSERT_TRUE(Give(big).has_value());
  EXPECT_EQ(Finished(), (Done{{small, 1}}));
}

TEST_F(SemaphoreTest, SeveralWaitersThatFitAreGrantedTogetherInOrder) {
  const SessionId a = Open("A"), b = Open("B"), c = Open("C"), d = Open("D");
  ASSERT_EQ(TakeCode(a, 4, 4), 0);
  ASSERT_EQ(TakeCode(b, 1, 4, -1), 99);
  ASSERT_EQ(TakeCode(c, 2, 4, -1), 99);
  ASSERT_EQ(TakeCode(d, 2, 4, -1), 99);
  ASSERT_TRUE(Give(a).has_value());
  // b (1) and c (2) fit; d (2 more) does not: 5 > 4.
  EXPECT_EQ(Finished(), (Done{{b, 1}, {c, 1}}));
  ASSERT_TRUE(Give(b).has_value());
  EXPECT_EQ(Finished(), (Done{{d, 1}}));
  EXPECT_EQ(InUse(), 4u);
}

TEST_F(SemaphoreTest, AHolderAskingForMoreAddsPermitsAndGoesFirst) {
  const SessionId a = Open("Asha"), b = Open("Ravi"), c = Open("Mei");
  ASSERT_EQ(TakeCode(a, 1, 3), 0);
  auto more = Take(a, 1, 3);
  ASSERT_TRUE(more.has_value());
  EXPECT_EQ(more->count, 2u);
  EXPECT_EQ(Held(a), 2u);
  ASSERT_EQ(TakeCode(b, 1, 3), 0);  // full now
  ASSERT_EQ(TakeCode(c, 1, 3, -1), 99);
  // a asks for one more: a conversion, queued ahead of c.
  ASSERT_EQ(TakeCode(a, 1, 3, -1), 99);
  auto list = engine_.ListSemaphores(Now(), "app");
  ASSERT_EQ(list.size(), 1u);
  ASSERT_EQ(list[0].waiting.size(), 2u);
  EXPECT_EQ(list[0].waiting[0].session, a);
  EXPECT_TRUE(list[0].waiting[0].conversion);
  ASSERT_TRUE(Give(b).has_value());
  EXPECT_EQ(Finished(), (Done{{a, 1}}));
  EXPECT_EQ(Held(a), 3u);
  // Counted: giving back some keeps the rest.
  EXPECT_EQ(Give(a, 2).value(), 1u);
  EXPECT_EQ(Finished(), (Done{{c, 1}}));
}

TEST_F(SemaphoreTest, RefusesWhatCouldNeverBeGrantedAndBadNumbers) {
  const SessionId a = Open("Asha");
  ASSERT_EQ(TakeCode(a, 2, 3), 0);
  EXPECT_EQ(Take(a, 2, 3).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(Take(a, 0, 3).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(Take(a, 4, 3).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(Take(a, 1, 0).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(Take(a, 1, kMaxSemaphoreLimit + 1).error().code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(Take(a, 1, 3, -2).error().code(), StatusCode::kBadTimeout);
  EXPECT_EQ(Take(a, 1, 3, 0, "").error().code(), StatusCode::kNameEmpty);
  EXPECT_EQ(Take(a, 1, 3, 0, "pay", kTxn).error().code(),
            StatusCode::kNoTransaction);
  EXPECT_EQ(Give(a, 3).error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(Give(a, 1, "other").error().code(), StatusCode::kNotHeld);
  EXPECT_EQ(Held(a), 2u);  // nothing changed
}

TEST_F(SemaphoreTest, AnotherLimitIsRefusedWhileInUseAndFreeOnceIdle) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(TakeCode(a, 1, 3), 0);
  auto other = Take(b, 1, 5);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code(), StatusCode::kLimitMismatch);
  EXPECT_NE(other.error().message().find("limit 3, not 5"), std::string::npos)
      << other.error().message();
  ASSERT_TRUE(Give(a).has_value());
  EXPECT_EQ(TakeCode(b, 5, 5), 0);  // idle: a new limit
}

TEST_F(SemaphoreTest, ANameIsALockOrASemaphoreNotBoth) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X), 0);
  auto sem = Take(b, 1, 2, 0, "job");
  ASSERT_FALSE(sem.has_value());
  EXPECT_EQ(sem.error().code(), StatusCode::kWrongKind);
  EXPECT_EQ(Give(a, 0, "job").error().code(), StatusCode::kWrongKind);
  ASSERT_TRUE(Release(a, "job").ok());
  ASSERT_EQ(TakeCode(b, 1, 2, 0, "job"), 0);
  // Now a semaphore: lock calls on it are refused, and change nothing.
  auto lock = Acquire(a, "job", X);
  ASSERT_FALSE(lock.has_value());
  EXPECT_EQ(lock.error().code(), StatusCode::kWrongKind);
  EXPECT_EQ(Release(b, "job").code(), StatusCode::kWrongKind);
  EXPECT_FALSE(engine_.Test(Now(), a, Key("job"), X, kSes).value());
  auto all = engine_.AcquireAll(
      Now(), {a, "app", "public", kSes, milliseconds(0), {{"job", X}}});
  ASSERT_FALSE(all.has_value());
  EXPECT_EQ(all.error().code(), StatusCode::kWrongKind);
  EXPECT_EQ(Held(b, "job"), 1u);
}

TEST_F(SemaphoreTest, TimeoutAndCancelEndAWaitAndLetTheNextThrough) {
  const SessionId a = Open("Asha"), b = Open("Ravi"), c = Open("Mei");
  ASSERT_EQ(TakeCode(a, 2, 3), 0);
  ASSERT_EQ(TakeCode(b, 2, 3, 100), 99);
  ASSERT_EQ(TakeCode(c, 1, 3, -1), 99);  // behind b
  Advance(100);
  EXPECT_EQ(Finished(), (Done{{b, -1}, {c, 1}}));
  auto d = Take(b, 1, 3, -1);
  ASSERT_TRUE(d.has_value() && d->wait);
  EXPECT_TRUE(engine_.CancelWait(Now(), *d->wait));
  EXPECT_EQ(Finished(), (Done{{b, -2}}));
}

TEST_F(SemaphoreTest, EndingTheSessionOrTheTransactionGivesPermitsBack) {
  const SessionId a = Open("Asha", 1000), b = Open("Ravi"), c = Open("Mei");
  ASSERT_EQ(TakeCode(a, 2, 2), 0);
  ASSERT_EQ(TakeCode(b, 1, 2, -1), 99);
  Advance(1000);  // a expires
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  ASSERT_TRUE(engine_.BeginTransaction(Now(), c).has_value());
  ASSERT_EQ(TakeCode(c, 1, 2, 0, "pay", kTxn), 0);
  EXPECT_EQ(InUse(), 2u);
  ASSERT_TRUE(engine_.Commit(Now(), c).ok());
  EXPECT_EQ(InUse(), 1u);
  ASSERT_TRUE(engine_.EndSession(Now(), b).ok());
  EXPECT_TRUE(engine_.ListSemaphores(Now(), "app").empty());
}

TEST_F(SemaphoreTest, ADeadlockBetweenALockAndASemaphoreIsFound) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(TakeCode(a, 1, 1), 0);  // a: the only permit
  ASSERT_EQ(Code(b, "ledger", X), 0);
  ASSERT_EQ(Code(a, "ledger", X, kSes, -1), 99);
  auto r = Take(b, 1, 1, -1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  ASSERT_TRUE(r->deadlock.has_value());
  EXPECT_EQ(r->deadlock->victim, b);
  ASSERT_EQ(r->deadlock->cycle.size(), 2u);
  EXPECT_EQ(r->deadlock->cycle[0].resource, "pay");
  EXPECT_EQ(r->deadlock->cycle[0].permits, 1u);
  EXPECT_EQ(r->deadlock->cycle[1].resource, "ledger");
  EXPECT_EQ(r->deadlock->cycle[1].permits, 0u);
  EXPECT_EQ(recorder_.Types().back(), EventType::kSemaphoreDeadlock);
}

TEST_F(SemaphoreTest, ACycleIsNoDeadlockWhileAnotherHolderMayGiveBack) {
  const SessionId a = Open("Asha"), b = Open("Ravi"), c = Open("Mei");
  ASSERT_EQ(TakeCode(a, 1, 2), 0);
  ASSERT_EQ(TakeCode(c, 1, 2), 0);  // c works, waiting for nothing
  ASSERT_EQ(Code(b, "ledger", X), 0);
  ASSERT_EQ(Code(a, "ledger", X, kSes, -1), 99);
  // b -> a -> b is a cycle, but c's permit may come back: b waits.
  ASSERT_EQ(TakeCode(b, 1, 2, -1), 99);
  EXPECT_EQ(engine_.Stats().deadlocks, 0u);
  // Once c waits for b's lock too, nobody can give a permit back.
  auto r = Acquire(c, "ledger", X, kSes, -1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
  EXPECT_EQ(r->deadlock->victim, c);
  EXPECT_EQ(engine_.Stats().deadlocks, 1u);
  // c, the victim, still holds its permit; giving it back lets b through.
  ASSERT_TRUE(Give(c).has_value());
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
}

TEST_F(SemaphoreTest, ACycleThroughTwoSemaphoresIsADeadlock) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(TakeCode(a, 2, 2, 0, "s1"), 0);
  ASSERT_EQ(TakeCode(b, 3, 3, 0, "s2"), 0);
  ASSERT_EQ(TakeCode(a, 1, 3, -1, "s2"), 99);
  auto r = Take(b, 1, 2, -1, "s1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->result, AcquireResult::kDeadlock);
}

TEST_F(SemaphoreTest, HoldersComeBackAfterARestartWithPermitsFencesAndLimit) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  auto first = Take(a, 2, 4);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(TakeCode(b, 1, 4), 0);
  ASSERT_EQ(TakeCode(b, 1, 4), 0);  // b holds 2, counted
  ASSERT_EQ(TakeCode(b, 1, 1, -1, "other"), 0);
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  const auto before = engine_.ListSemaphores(Now(), "app");
  const auto after = restored->ListSemaphores(Now(), "app");
  ASSERT_EQ(after.size(), 2u);
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].name, before[i].name);
    EXPECT_EQ(after[i].limit, before[i].limit);
    EXPECT_EQ(after[i].held, before[i].held);
    ASSERT_EQ(after[i].holders.size(), before[i].holders.size());
    for (std::size_t h = 0; h < after[i].holders.size(); ++h) {
      EXPECT_EQ(after[i].holders[h].session, before[i].holders[h].session);
      EXPECT_EQ(after[i].holders[h].permits, before[i].holders[h].permits);
      EXPECT_EQ(after[i].holders[h].fence, before[i].holders[h].fence);
    }
  }
  // Full: a third session waits; the limit is kept; new fences are higher.
  auto c = restored->OpenSession(Now(), {"Mei", milliseconds(60'000), 0, ""});
  ASSERT_TRUE(c.has_value());
  auto refused = restored->AcquireSemaphore(
      Now(), {c->id, Key("pay"), 1, 4, kSes, milliseconds(0)});
  EXPECT_EQ(refused->result, AcquireResult::kTimeout);
  EXPECT_EQ(restored
                ->AcquireSemaphore(
                    Now(), {c->id, Key("pay"), 1, 5, kSes, milliseconds(0)})
                .error()
                .code(),
            StatusCode::kLimitMismatch);
  ASSERT_TRUE(
      restored->ReleaseSemaphore(Now(), {a, Key("pay"), kSes, 0}).has_value());
  auto granted = restored->AcquireSemaphore(
      Now(), {c->id, Key("pay"), 2, 4, kSes, milliseconds(0)});
  ASSERT_TRUE(granted.has_value());
  EXPECT_EQ(granted->result, AcquireResult::kGranted);
  EXPECT_GT(granted->fence, after[1].holders.back().fence);
}

TEST_F(SemaphoreTest, RestoreRefusesRowsThatBreakTheRules) {
  const auto refused = [&](std::vector<LockRow> rows) {
    Engine e;
    SessionRow s1;
    s1.id = 1;
    s1.ttl = milliseconds(1000);
    SessionRow s2 = s1;
    s2.id = 2;
    EXPECT_TRUE(e.RestoreSession(Now(), std::move(s1)).ok());
    EXPECT_TRUE(e.RestoreSession(Now(), std::move(s2)).ok());
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
      EXPECT_TRUE(e.RestoreLock(LockRow(rows[i])).ok());
    }
    return e.RestoreLock(LockRow(rows.back())).code() ==
           StatusCode::kBadRequest;
  };
  LockRow good;
  good.session = 1;
  good.owner = kSes;
  good.ns = "app";
  good.principal = "public";
  good.resource = "pay";
  good.count = 2;
  good.limit = 3;
  good.fence = 7;
  LockRow more = good;
  more.session = 2;
  more.count = 2;  // 4 > 3
  EXPECT_TRUE(refused({good, more}));
  LockRow other_limit = good;
  other_limit.session = 2;
  other_limit.count = 1;
  other_limit.limit = 5;
  EXPECT_TRUE(refused({good, other_limit}));
  LockRow as_lock = good;
  as_lock.session = 2;
  as_lock.limit = 0;
  as_lock.mode = X;
  as_lock.count = 1;
  EXPECT_TRUE(refused({good, as_lock}));
  LockRow with_mode = good;
  with_mode.mode = X;
  EXPECT_TRUE(refused({with_mode}));
  LockRow fits = good;
  fits.session = 2;
  fits.count = 1;
  EXPECT_FALSE(refused({good, fits}));
}

TEST_F(SemaphoreTest, EventsNameTheSemaphoreItsPermitsAndLimit) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(TakeCode(a, 2, 2), 0);
  ASSERT_EQ(TakeCode(b, 1, 2, -1), 99);
  ASSERT_TRUE(Give(a).has_value());
  std::vector<EventType> sem;
  for (const auto& e : recorder_.events) {
    if (e.resource == "pay") sem.push_back(e.type);
  }
  EXPECT_EQ(sem,
            (std::vector<EventType>{
                EventType::kSemaphoreGranted, EventType::kSemaphoreWaiting,
                EventType::kSemaphoreReleased, EventType::kSemaphoreGranted}));
  EXPECT_EQ(recorder_.events.back().count, 1u);  // b's permits
}

// A random history of acquires (waiting or not), releases, cancels, time
// and session ends over a few semaphores, against a model of the rules:
// never more permits held than the limit; waiters granted strictly in
// queue order (conversions first); every grant's fence above all before.
TEST_F(SemaphoreTest, RandomHistoriesKeepTheLimitAndTheQueueOrder) {
  std::mt19937 rng(20261205);
  const auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  std::vector<SessionId> sessions;
  for (int i = 0; i < 8; ++i) sessions.push_back(Open(NumberedName("s", i)));
  const std::uint32_t limits[] = {1, 3, 5};
  const std::string names[] = {"s1", "s3", "s5"};
  Fence last_fence = 0;
  // Before each step, each waiter's queue and place in it.
  std::map<WaitId, std::pair<std::string, std::size_t>> place;
  std::map<std::string, std::vector<WaitId>> queues;
  std::size_t waited_grants = 0;
  for (int step = 0; step < 12000; ++step) {
    place.clear();
    queues.clear();
    for (const SemaphoreInfo& info : engine_.ListSemaphores(Now(), "app")) {
      for (const auto& w : info.waiting) {
        place[w.wait] = {info.name, queues[info.name].size()};
        queues[info.name].push_back(w.wait);
      }
    }
    const SessionId s = sessions[static_cast<std::size_t>(pick(8))];
    const int which = pick(3);
    const std::string& name = names[which];
    const std::uint32_t limit = limits[which];
    switch (pick(5)) {
      case 0:
      case 1: {
        const auto permits = static_cast<std::uint32_t>(1 + pick(int(limit)));
        auto r =
            Take(s, permits, limit, pick(3) == 0 ? 0 : 50 * pick(4) - 1, name);
        if (r && !r->wait && r->result == AcquireResult::kGranted) {
          EXPECT_GT(r->fence, last_fence);
          last_fence = r->fence;
        }
        break;
      }
      case 2:
        (void)Give(s, pick(2) == 0 ? 0 : 1, name);
        break;
      case 3:
        (void)engine_.Cancel(Now(), s);
        break;
      case 4:
        Advance(pick(60));
        break;
    }
    // A waiter granted now had everyone ahead of it end first (granted,
    // timed out, cancelled): nobody passed anyone.
    std::set<WaitId> ended;
    for (const auto& f : engine_.TakeFinishedWaits()) {
      if (f.result == AcquireResult::kGrantedAfterWait) {
        EXPECT_GT(f.fence, last_fence);
        last_fence = f.fence;
        ++waited_grants;
        if (auto it = place.find(f.wait); it != place.end()) {
          const auto& queue = queues[it->second.first];
          for (std::size_t i = 0; i < it->second.second; ++i) {
            ASSERT_TRUE(ended.contains(queue[i]))
                << "step " << step << ": wait " << f.wait << " passed "
                << queue[i];
          }
        }
      }
      ended.insert(f.wait);
    }
    for (const SemaphoreInfo& info : engine_.ListSemaphores(Now(), "app")) {
      std::uint32_t sum = 0;
      for (const auto& h : info.holders) sum += h.permits;
      ASSERT_EQ(sum, info.held) << "step " << step;
      ASSERT_LE(info.held, info.limit) << "step " << step;
      // Nobody waits whose request fits at the head of the queue: the
      // grant pass left no one behind that it should have let through.
      if (!info.waiting.empty()) {
        ASSERT_GT(info.held + info.waiting.front().permits, info.limit)
            << "step " << step;
      }
      // Conversions first.
      bool others = false;
      for (const auto& w : info.waiting) {
        if (!w.conversion) others = true;
        ASSERT_FALSE(others && w.conversion) << "step " << step;
      }
    }
  }
  EXPECT_GT(last_fence, 100u);
  EXPECT_GT(waited_grants, 100u);
}

}  // namespace
}  // namespace leasehold::testing
