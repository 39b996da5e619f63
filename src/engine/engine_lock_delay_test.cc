// Lock-delay (NamespaceOptions::lock_delay): the timeline after a holder's
// session expires or an administrator ends it, what frees at once, a
// semaphore's permits held back one by one, and a restart during a delay.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using Kind = JournalEntry::Kind;
constexpr auto S = LockMode::kShared;
constexpr auto X = LockMode::kExclusive;
constexpr auto kSes = LockOwner::kSession;
using Done = std::vector<std::pair<SessionId, int>>;

class LockDelayTest : public EngineHarness {
 protected:
  LockDelayTest() {
    NamespaceOptions o;
    o.lock_delay = milliseconds(5000);
    engine_.SetNamespaceOptions("app", o);
  }
  std::optional<Time> DelayOf(std::string_view resource) {
    for (const LockInfo& l : engine_.ListLocks(Now(), "app")) {
      if (l.resource == resource) return l.lock_delay_until;
    }
    return std::nullopt;
  }
  int TakePermits(SessionId s, std::uint32_t permits, long long timeout_ms) {
    auto r = engine_.AcquireSemaphore(
        Now(), {s, Key("pay"), permits, 3, kSes, milliseconds(timeout_ms)});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (!r) return -100;
    return r->wait ? 99 : static_cast<int>(r->result);
  }
};

TEST_F(LockDelayTest, AnExpiredHoldersLockIsGrantedToNobodyUntilTheDelayEnds) {
  const SessionId a = Open("Asha", 1000), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X), 0);
  ASSERT_EQ(Code(b, "job", X, kSes, -1), 99);
  const Time expiry = Now() + milliseconds(1000);
  Advance(1000);  // Asha expires: the lock is held back, not granted
  EXPECT_TRUE(Finished().empty());
  EXPECT_EQ(DelayOf("job"), expiry + milliseconds(5000));
  // A new request cannot pass either, in any mode.
  const SessionId c = Open("Mei");
  EXPECT_EQ(Code(c, "job", S), -1);
  EXPECT_FALSE(engine_.Test(Now(), c, Key("job"), S, kSes).value());
  Advance(4999);
  EXPECT_TRUE(Finished().empty());
  Advance(1);
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  EXPECT_EQ(DelayOf("job"), std::nullopt);
}

TEST_F(LockDelayTest, AWaitShorterThanTheDelayTimesOut) {
  const SessionId a = Open("Asha", 1000), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X), 0);
  Advance(1000);
  ASSERT_EQ(Code(b, "job", X, kSes, 2000), 99);
  Advance(2000);
  EXPECT_EQ(Finished(), (Done{{b, -1}}));
  // Once the delay is over the lock is free, and forgotten.
  Advance(3000);
  EXPECT_EQ(Code(b, "job", X), 0);
}

TEST_F(LockDelayTest, AReleaseOrAClientsOwnEndFreesAtOnce) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "one", X), 0);
  ASSERT_EQ(Code(a, "two", X), 0);
  ASSERT_TRUE(Release(a, "one").ok());
  EXPECT_EQ(Code(b, "one", X), 0);
  ASSERT_TRUE(engine_.EndSession(Now(), a).ok());  // by its client
  EXPECT_EQ(Code(b, "two", X), 0);
}

TEST_F(LockDelayTest, AnAdministratorsEndHoldsBack) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X), 0);
  ASSERT_TRUE(
      engine_.EndSession(Now(), a, Engine::SessionEnd::kByAdministrator).ok());
  EXPECT_EQ(Code(b, "job", X), -1);
  Advance(5000);
  EXPECT_EQ(Code(b, "job", X), 0);
}

TEST_F(LockDelayTest, ANamespaceWithoutADelayFreesAtExpiry) {
  const SessionId a = Open("Asha", 1000), b = Open("Ravi");
  ASSERT_EQ(Code(a, "job", X, kSes, 0), 0);
  auto other = engine_.Acquire(
      Now(), {a, Key("job", "plain"), X, kSes, milliseconds(0)});
  ASSERT_TRUE(other.has_value());
  Advance(1000);
  EXPECT_EQ(Code(b, "job", X), -1);  // "app" holds back
  auto plain = engine_.Acquire(
      Now(), {b, Key("job", "plain"), X, kSes, milliseconds(0)});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->result, AcquireResult::kGranted);
}

TEST_F(LockDelayTest, ASemaphoreHoldsBackJustTheLostPermits) {
  const SessionId a = Open("Asha", 1000), b = Open("Ravi"), c = Open("Mei");
  ASSERT_EQ(TakePermits(a, 2, 0), 0);
  ASSERT_EQ(TakePermits(c, 1, 0), 0);
  Advance(1000);  // Asha's 2 are held back; 1 is Mei's: full
  ASSERT_EQ(TakePermits(b, 1, -1), 99);
  auto listed = engine_.ListSemaphores(Now(), "app");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].held, 1u);
  EXPECT_EQ(listed[0].lock_delay_permits, 2u);
  EXPECT_EQ(listed[0].lock_delay_until, Now() + milliseconds(5000));
  // Mei gives hers back: Ravi's one fits beside the held-back two.
  ASSERT_TRUE(engine_.ReleaseSemaphore(Now(), {c, Key("pay"), kSes, 0}));
  EXPECT_EQ(Finished(), (Done{{b, 1}}));
  EXPECT_EQ(TakePermits(c, 1, 0), -1);
  Advance(5000);
  EXPECT_EQ(TakePermits(c, 2, 0), 0);
}

TEST_F(LockDelayTest, TheDelaysEndIsJournaledOncePerExpiry) {
  const SessionId a = Open("Asha", 1000);
  ASSERT_EQ(Code(a, "one", X), 0);
  ASSERT_EQ(Code(a, "two", X), 0);
  (void)engine_.TakeJournal();
  Advance(1000);
  std::size_t reservations = 0;
  for (const JournalEntry& e : engine_.TakeJournal()) {
    if (e.kind != Kind::kReserveLockDelay) continue;
    ++reservations;
    EXPECT_EQ(e.lock_delay_until_us,
              static_cast<std::uint64_t>(
                  (Now() + milliseconds(5000)).time_since_epoch().count()));
  }
  EXPECT_EQ(reservations, 1u);
}

TEST_F(LockDelayTest, ARestartDuringADelayHoldsTheNamespaceBackUntilItsEnd) {
  const SessionId a = Open("Asha", 1000);
  ASSERT_EQ(Code(a, "job", X), 0);
  Advance(1000);
  const Time end = Now() + milliseconds(5000);
  Advance(1000);  // the crash comes 1 s into the delay
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  NamespaceOptions o;
  o.lock_delay = milliseconds(5000);
  restored->SetNamespaceOptions("app", o);
  auto b = restored->OpenSession(Now(), {"Ravi", milliseconds(60'000), 0, ""});
  ASSERT_TRUE(b.has_value());
  const auto ask = [&](std::string_view ns, long long timeout_ms) {
    auto r = restored->Acquire(
        Now(), {b->id, Key("job", ns), X, kSes, milliseconds(timeout_ms)});
    EXPECT_TRUE(r.has_value());
    return r->wait ? 99 : static_cast<int>(r->result);
  };
  EXPECT_EQ(ask("app", 0), -1);  // the delay goes on across the restart
  auto listed = restored->ListLocks(Now(), "app");
  EXPECT_TRUE(listed.empty());    // nothing is held, nothing waits
  EXPECT_EQ(ask("plain", 0), 0);  // other namespaces are not held back
  ASSERT_EQ(ask("app", -1), 99);
  listed = restored->ListLocks(Now(), "app");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].lock_delay_until, end);
  clock_.AdvanceMs(3999);
  restored->AdvanceTo(Now());
  EXPECT_TRUE(restored->TakeFinishedWaits().empty());
  clock_.AdvanceMs(1);
  restored->AdvanceTo(Now());
  auto done = restored->TakeFinishedWaits();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result, AcquireResult::kGrantedAfterWait);
}

TEST_F(LockDelayTest, ARestartAfterTheDelayHoldsNothingBack) {
  const SessionId a = Open("Asha", 1000);
  ASSERT_EQ(Code(a, "job", X), 0);
  Advance(7000);
  JournalFold fold;
  auto restored = fold.Restart(engine_, Now());
  NamespaceOptions o;
  o.lock_delay = milliseconds(5000);
  restored->SetNamespaceOptions("app", o);
  auto b = restored->OpenSession(Now(), {"Ravi", milliseconds(60'000), 0, ""});
  auto r =
      restored->Acquire(Now(), {b->id, Key("job"), X, kSes, milliseconds(0)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->result, AcquireResult::kGranted);
}

}  // namespace
}  // namespace leasehold::testing
