// The lock crash test's checker fails on each rule it keeps: fabricated
// histories and store rows that break one rule at a time.
#include <gtest/gtest.h>

#include "tests/store/lock_crash_history.h"

namespace leasehold::lock_crash {
namespace {

constexpr LockOwner kSes = LockOwner::kSession;
constexpr LockOwner kTxn = LockOwner::kTransaction;

LockRow Row(SessionId session, LockOwner owner, const std::string& resource,
            LockMode mode, std::uint32_t count, Fence fence) {
  LockRow r;
  r.session = session;
  r.owner = owner;
  r.ns = "n";
  r.principal = "public";
  r.resource = resource;
  r.mode = mode;
  r.count = count;
  r.fence = fence;
  return r;
}

const std::string kA = GrantName(1, kSes, "n", "r");
const std::string kB = GrantName(2, kTxn, "n", "r");

// Session 1 holds r Shared twice (fence 5), session 2 IntentShared as its
// transaction (fence 6); session 1 then asks for r again, unanswered.
std::string History() {
  return WantLine(kA, LockMode::kShared) +
         GotLine(kA, LockMode::kShared, 1, 4) +
         WantLine(kA, LockMode::kShared) +
         GotLine(kA, LockMode::kShared, 2, 5) +
         WantLine(kB, LockMode::kIntentShared) +
         GotLine(kB, LockMode::kIntentShared, 1, 6) +
         WantLine(kA, LockMode::kIntentExclusive);
}

std::vector<LockRow> Kept() {
  return {Row(1, kSes, "r", LockMode::kShared, 2, 5),
          Row(2, kTxn, "r", LockMode::kIntentShared, 1, 6)};
}

std::string Broken(const std::string& history, const std::vector<LockRow>& rows,
                   Fence reserved = 10) {
  std::string all;
  for (const auto& b : CheckLocks(ReadHistory(history), rows, reserved)) {
    all += b + "\n";
  }
  return all;
}

TEST(LockCrashHistory, AStateThatKeepsTheHistoryPasses) {
  EXPECT_EQ(Broken(History(), Kept()), "");
  // The acquire in flight may have been granted: one more, combined mode.
  auto granted = Kept();
  granted[0] = Row(1, kSes, "r", LockMode::kSharedIntentExclusive, 3, 7);
  EXPECT_EQ(Broken(History(), granted), "");
  // A release in flight may have happened; a torn line was never sent.
  EXPECT_EQ(Broken(History() + RefusedLine(kA) + DropLine(kB) + "dropped 2",
                   {Kept()[0]}),
            "");
  // Let go of entirely, then asked for afresh: the old mode is gone.
  const std::string again = History() + RefusedLine(kA) + DropLine(kB) +
                            DroppedLine(kB) +
                            WantLine(kB, LockMode::kExclusive);
  EXPECT_EQ(Broken(again, {Kept()[0]}), "");
  auto fresh = Kept();
  fresh[1] = Row(2, kTxn, "r", LockMode::kExclusive, 1, 8);
  // (It conflicts with session 1's Shared, but its mode is the one asked.)
  EXPECT_EQ(Broken(again, fresh).find("wrong mode"), std::string::npos);
}

TEST(LockCrashHistory, ALostGrantFails) {
  EXPECT_NE(Broken(History(), {Kept()[1]}).find("acknowledged grant lost"),
            std::string::npos);
  auto fewer = Kept();
  fewer[0].count = 1;
  EXPECT_NE(Broken(History(), fewer).find("acknowledged grant lost"),
            std::string::npos);
}

TEST(LockCrashHistory, HoldingMoreThanAskedFails) {
  auto more = Kept();
  more[1].count = 2;  // nothing in flight for session 2
  EXPECT_NE(Broken(History(), more).find("held beyond"), std::string::npos);
  // A release acknowledged that did not happen.
  EXPECT_NE(Broken(History() + RefusedLine(kA) + DropLine(kB) + DroppedLine(kB),
                   Kept())
                .find("held beyond"),
            std::string::npos);
}

TEST(LockCrashHistory, AGrantNeverAskedForFails) {
  auto extra = Kept();
  extra.push_back(Row(3, kSes, "q", LockMode::kShared, 1, 8));
  EXPECT_NE(Broken(History(), extra).find("never asked for"),
            std::string::npos);
}

TEST(LockCrashHistory, AWrongModeOrFenceFails) {
  auto mode = Kept();
  mode[1].mode = LockMode::kIntentExclusive;
  EXPECT_NE(Broken(History(), mode).find("wrong mode"), std::string::npos);
  auto fence = Kept();
  fence[1].fence = 9;
  EXPECT_NE(Broken(History(), fence).find("wrong fence"), std::string::npos);
}

TEST(LockCrashHistory, ConflictingHoldersFail) {
  const std::string c = GrantName(3, kSes, "n", "r");
  auto rows = Kept();
  rows.push_back(Row(3, kSes, "r", LockMode::kExclusive, 1, 8));
  const std::string history = History() + WantLine(c, LockMode::kExclusive) +
                              GotLine(c, LockMode::kExclusive, 1, 8);
  EXPECT_NE(Broken(history, rows).find("conflict"), std::string::npos);
}

TEST(LockCrashHistory, RepeatedOrUnreservedFencesFail) {
  const std::string c = GrantName(3, kSes, "n", "q");
  auto rows = Kept();
  rows.push_back(Row(3, kSes, "q", LockMode::kShared, 1, 5));
  const std::string history = History() + WantLine(c, LockMode::kShared) +
                              GotLine(c, LockMode::kShared, 1, 5);
  EXPECT_NE(Broken(history, rows).find("fence repeated"), std::string::npos);
  EXPECT_NE(Broken(History(), Kept(), 5).find("outside the reservation"),
            std::string::npos);
}

}  // namespace
}  // namespace leasehold::lock_crash
