// Shows that the property test is not vacuous: the checkers catch
// hand-made violations, the mode tables they rely on match DESIGN.md, and
// the harness both reaches waits, deadlocks and expiries and notices a
// corrupted lock table.
#include "tests/property/invariants.h"

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/property/harness.h"
#include "tests/property/ops.h"

namespace leasehold::property {
namespace {

using ::testing::HasSubstr;

constexpr LockMode kIS = LockMode::kIntentShared;
constexpr LockMode kS = LockMode::kShared;
constexpr LockMode kU = LockMode::kUpdate;
constexpr LockMode kIX = LockMode::kIntentExclusive;
constexpr LockMode kSIX = LockMode::kSharedIntentExclusive;
constexpr LockMode kUIX = LockMode::kUpdateIntentExclusive;
constexpr LockMode kX = LockMode::kExclusive;
constexpr LockMode kNone = LockMode::kNoLock;

GrantedLockInfo Granted(SessionId s, LockMode m) {
  GrantedLockInfo g;
  g.session = s;
  g.owner = LockOwner::kSession;
  g.mode = m;
  g.count = 1;
  return g;
}

WaitingLockInfo Waiting(SessionId s, LockMode target, bool conversion = false,
                        WaitId id = 0) {
  WaitingLockInfo w;
  w.wait = id == 0 ? s * 100 : id;
  w.session = s;
  w.owner = LockOwner::kSession;
  w.requested = target;
  w.target = target;
  w.conversion = conversion;
  return w;
}

LockInfo Resource(std::string name, std::vector<GrantedLockInfo> granted,
                  std::vector<WaitingLockInfo> waiting = {}) {
  return LockInfo{.ns = "app",
                  .principal = "public",
                  .resource = std::move(name),
                  .granted = std::move(granted),
                  .waiting = std::move(waiting),
                  .lock_delay_until = std::nullopt};
}

// --- The tables the checks rely on ------------------------------------------

TEST(ModeTables, CompatibleMatchesDesignTable) {
  // DESIGN.md: rows held, columns requested IS S U IX X.
  const LockMode requested[] = {kIS, kS, kU, kIX, kX};
  struct Row {
    LockMode held;
    bool ok[5];
  };
  const Row rows[] = {
      {kIS, {true, true, true, true, false}},
      {kS, {true, true, true, false, false}},
      {kU, {true, true, false, false, false}},
      {kIX, {true, false, false, true, false}},
      {kSIX, {true, false, false, false, false}},
      {kUIX, {true, false, false, false, false}},
      {kX, {false, false, false, false, false}},
  };
  for (const Row& row : rows) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(Compatible(row.held, requested[i]), row.ok[i])
          << ShortModeName(row.held) << " held, " << ShortModeName(requested[i])
          << " requested";
      EXPECT_EQ(ModesCompatible(row.held, requested[i]), row.ok[i]);
    }
  }
  for (LockMode m : {kIS, kS, kU, kIX, kSIX, kUIX, kX}) {
    EXPECT_TRUE(ModesCompatible(kNone, m));
  }
}

TEST(ModeTables, ExpectedCombineFollowsDesignAndMatchesEngine) {
  EXPECT_EQ(ExpectedCombine(kIS, kS), kS);
  EXPECT_EQ(ExpectedCombine(kIS, kU), kU);
  EXPECT_EQ(ExpectedCombine(kIS, kIX), kIX);
  EXPECT_EQ(ExpectedCombine(kS, kU), kU);
  EXPECT_EQ(ExpectedCombine(kS, kIX), kSIX);
  EXPECT_EQ(ExpectedCombine(kU, kIX), kUIX);
  EXPECT_EQ(ExpectedCombine(ExpectedCombine(kS, kIX), kU), kUIX);
  EXPECT_EQ(ExpectedCombine(kNone, kU), kU);
  const LockMode all[] = {kNone, kIS, kS, kU, kIX, kSIX, kUIX, kX};
  for (LockMode a : all) {
    EXPECT_EQ(ExpectedCombine(a, kX), kX);
    for (LockMode b : all) {
      EXPECT_EQ(ExpectedCombine(a, b), ExpectedCombine(b, a));
      EXPECT_EQ(Combine(a, b), ExpectedCombine(a, b))
          << ShortModeName(a) << "+" << ShortModeName(b);
    }
  }
}

// --- The checkers catch hand-made violations
// ----------------------------------

TEST(Checkers, AcceptAConsistentTable) {
  const std::vector<LockInfo> locks = {
      Resource("a", {Granted(1, kS), Granted(2, kIS)},
               {Waiting(3, kX), Waiting(4, kS)}),
      Resource("b", {Granted(5, kU)}, {Waiting(1, kX, /*conversion=*/false)}),
  };
  EXPECT_EQ(CheckLockTable(locks), "");
}

TEST(Checkers, DetectIncompatibleHolders) {
  const std::vector<LockInfo> locks = {
      Resource("a", {Granted(1, kS), Granted(2, kX)})};
  EXPECT_THAT(CheckCompatibleHolders(locks), HasSubstr("(a)"));
  EXPECT_THAT(CheckLockTable(locks), HasSubstr("(a)"));
  // One session's own entries never conflict.
  EXPECT_EQ(
      CheckCompatibleHolders({Resource("a", {Granted(1, kS), Granted(1, kX)})}),
      "");
  EXPECT_THAT(CheckCompatibleHolders(
                  {Resource("a", {Granted(1, kSIX), Granted(2, kIX)})}),
              HasSubstr("(a)"));
}

TEST(Checkers, DetectGrantableWaiter) {
  // Nothing stands in the way of a Shared request beside a Shared holder.
  EXPECT_THAT(CheckNoGrantableWaiter(
                  {Resource("a", {Granted(1, kS)}, {Waiting(2, kS)})}),
              HasSubstr("(b)"));
  // A waiter of the session that holds: its own grant never blocks it.
  EXPECT_THAT(CheckNoGrantableWaiter(
                  {Resource("a", {Granted(1, kS)}, {Waiting(1, kX, true)})}),
              HasSubstr("(b)"));
  // Shared behind a waiting Exclusive waits (relaxed FIFO)...
  EXPECT_EQ(CheckNoGrantableWaiter({Resource(
                "a", {Granted(1, kIS)}, {Waiting(2, kX), Waiting(3, kS)})}),
            "");
  // ...but a conversion does not wait on requests queued ahead.
  EXPECT_THAT(CheckNoGrantableWaiter({Resource(
                  "a", {Granted(1, kIS), Granted(3, kIS)},
                  {Waiting(2, kX), Waiting(3, kS, /*conversion=*/true)})}),
              HasSubstr("(b)"));
}

TEST(Checkers, DetectWaitCycle) {
  const std::vector<LockInfo> locks = {
      Resource("a", {Granted(1, kX)}, {Waiting(2, kX)}),
      Resource("b", {Granted(2, kX)}, {Waiting(1, kX)}),
  };
  EXPECT_THAT(CheckNoWaitCycle(locks), HasSubstr("(c)"));
  // Through the queue: 3 waits behind 2's Exclusive request, and 2 waits
  // for what 3 holds elsewhere.
  const std::vector<LockInfo> queue = {
      Resource("a", {Granted(1, kS)}, {Waiting(2, kX), Waiting(3, kS)}),
      Resource("b", {Granted(3, kX)}, {}),
  };
  EXPECT_EQ(CheckNoWaitCycle(queue), "");  // 2 waits on 1 only
  const std::vector<LockInfo> through_queue = {
      Resource("a", {Granted(1, kS)}, {Waiting(2, kX), Waiting(3, kS)}),
      Resource("b", {Granted(3, kX), Granted(1, kIS)}, {Waiting(1, kX)}),
  };
  // 1 -> 3 (b), 3 -> 2 (queue on a), 2 -> 1 (a): a cycle.
  EXPECT_THAT(CheckNoWaitCycle(through_queue), HasSubstr("(c)"));
  // Two conversions of Shared holders to Exclusive.
  EXPECT_THAT(CheckNoWaitCycle({Resource(
                  "a", {Granted(1, kS), Granted(2, kS)},
                  {Waiting(1, kX, true, 7), Waiting(2, kX, true, 8)})}),
              HasSubstr("(c)"));
}

TEST(Checkers, DetectMalformedTables) {
  EXPECT_THAT(CheckWellFormed({Resource("b", {Granted(1, kS)}),
                               Resource("a", {Granted(1, kS)})}),
              HasSubstr("sorted"));
  EXPECT_THAT(CheckWellFormed({Resource("a", {})}), HasSubstr("neither"));
  EXPECT_THAT(CheckWellFormed({Resource(
                  "a", {Granted(1, kS)},
                  {Waiting(2, kX), Waiting(3, kX, /*conversion=*/true)})}),
              HasSubstr("behind a non-conversion"));
  EXPECT_THAT(
      CheckWellFormed({Resource("a", {Granted(1, kX)}, {Waiting(2, kS)}),
                       Resource("b", {Granted(1, kX)}, {Waiting(2, kS)})}),
      HasSubstr("two parked requests"));
}

// --- The harness reaches the interesting states and notices corruption -------

Op Acq(int slot, int resource, LockMode mode, int timeout_ms,
       LockOwner owner = LockOwner::kSession) {
  return Op{.kind = OpKind::kAcquire,
            .slot = slot,
            .resource = resource,
            .mode = mode,
            .owner = owner,
            .timeout_ms = timeout_ms};
}

Op Rel(int slot, int resource, LockOwner owner = LockOwner::kSession) {
  return Op{.kind = OpKind::kRelease,
            .slot = slot,
            .resource = resource,
            .owner = owner};
}

Op Wait(int ms, AdvanceKind kind = AdvanceKind::kJump) {
  return Op{.kind = OpKind::kAdvance, .value = ms, .advance = kind};
}

Scenario TwoSessions(std::vector<Op> ops) {
  return Scenario{.sessions = 2,
                  .ttl_ms = {1000, 3000},
                  .start_in_txn = {false, false},
                  .fence_floor = 1000,
                  .ops = std::move(ops)};
}

TEST(Harness, SeesWaitsDeadlocksTimeoutsAndExpiry) {
  const Scenario scenario = TwoSessions({
      Acq(0, 0, kX, 0),   // s0 holds r0
      Acq(1, 1, kX, 0),   // s1 holds r1
      Acq(0, 1, kX, -1),  // s0 waits for r1
      Acq(1, 0, kX, -1),  // s1 closes the cycle and is the victim (tie)
      Rel(1, 1),          // s0 gets r1 after its wait
      Acq(1, 0, kS, 50),  // s1 waits 50 ms for r0...
      Wait(100),          // ...and times out
      Acq(1, 1, kU, -1),  // s1 waits for r1
      Wait(300, AdvanceKind::kLazy),
      Wait(300, AdvanceKind::kStep),
      Wait(300, AdvanceKind::kJump),  // s0 expires at 1000; s1 gets r1
      Acq(1, 2, kIX, 0),
  });
  RunStats stats;
  EXPECT_EQ(RunScenario(scenario, &stats), "");
  EXPECT_EQ(stats.deadlocks, 1);
  EXPECT_GE(stats.timeouts, 1);
  EXPECT_GE(stats.grants_after_wait, 1);
  EXPECT_EQ(stats.expiries, 1);
}

TEST(Harness, NoticesACorruptedTable) {
  const Scenario scenario = TwoSessions({
      Acq(0, 0, kS, 0),
      Acq(1, 0, kX, -1),
      Rel(0, 0),
  });
  struct Case {
    const char* name;
    std::function<void(std::vector<LockInfo>&)> tamper;
    const char* expected;
  };
  const Case cases[] = {
      {"a second holder with a conflicting mode",
       [](std::vector<LockInfo>& locks) {
         for (LockInfo& info : locks) {
           if (!info.granted.empty()) {
             GrantedLockInfo extra = info.granted.front();
             extra.session += 1000;
             extra.mode = kX;
             info.granted.push_back(extra);
           }
         }
       },
       "(a)"},
      {"a waiter left behind with nothing in its way",
       [](std::vector<LockInfo>& locks) {
         for (LockInfo& info : locks) {
           if (!info.waiting.empty()) info.granted.clear();
         }
       },
       "(b)"},
      {"a count off by one",
       [](std::vector<LockInfo>& locks) {
         for (LockInfo& info : locks) {
           for (GrantedLockInfo& g : info.granted) g.count += 1;
         }
       },
       "(d)"},
      {"an entry the model lacks",
       [](std::vector<LockInfo>& locks) {
         LockInfo ghost = Resource("zz", {Granted(424242, kIS)});
         locks.push_back(ghost);
       },
       "(d)"},
  };
  for (const Case& c : cases) {
    const std::string error = RunScenario(scenario, nullptr, {c.tamper});
    EXPECT_THAT(error, HasSubstr(c.expected)) << c.name;
  }
}

}  // namespace
}  // namespace leasehold::property
