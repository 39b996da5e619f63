#include "server/activity_history.h"

#include <gtest/gtest.h>

#include <numeric>

namespace leasehold::server {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const Time kStart{std::chrono::hours(24 * 365 * 50)};

OwnedEvent At(EventType type, Time at) {
  OwnedEvent e;
  e.type = type;
  e.at = at;
  if (type == EventType::kLockDeadlock) e.deadlock = DeadlockReport{};
  return e;
}

std::uint32_t Total(const std::vector<std::uint32_t>& v) {
  return std::accumulate(v.begin(), v.end(), 0u);
}

TEST(ActivityHistoryTest, CountsGrantsPerSecondAndForgetsOldSeconds) {
  ActivityHistory h;
  h.OnEvents(
      {At(EventType::kLockGranted, kStart),
       At(EventType::kLockGranted, kStart + std::chrono::milliseconds(900)),
       At(EventType::kCheckoutGranted, kStart + seconds(1)),
       At(EventType::kLockReleased, kStart + seconds(1))});
  auto r = h.RatesUntil(kStart + seconds(1));
  ASSERT_EQ(r.applocks.size(), ActivityHistory::kRateSeconds);
  EXPECT_EQ(r.applocks[r.applocks.size() - 2], 2u);
  EXPECT_EQ(r.checkouts.back(), 1u);
  EXPECT_EQ(Total(r.applocks), 2u);
  // Ten minutes on, the same slots hold nothing that is still in range.
  h.OnEvents({At(EventType::kLockGranted, kStart + seconds(600))});
  r = h.RatesUntil(kStart + seconds(700));
  EXPECT_EQ(Total(r.applocks), 1u);
  EXPECT_EQ(Total(r.checkouts), 0u);
}

TEST(ActivityHistoryTest, CountsTimeoutsAndDeadlocksForAnHour) {
  ActivityHistory h;
  h.OnEvents({At(EventType::kLockTimeout, kStart),
              At(EventType::kLockTimeout, kStart + minutes(30)),
              At(EventType::kLockDeadlock, kStart + minutes(30))});
  EXPECT_EQ(h.TimeoutsInLastHour(kStart + minutes(59)), 2u);
  EXPECT_EQ(h.TimeoutsInLastHour(kStart + minutes(61)), 1u);
  EXPECT_EQ(h.DeadlocksInLastHour(kStart + minutes(89)), 1u);
  EXPECT_EQ(h.DeadlocksInLastHour(kStart + minutes(91)), 0u);
}

TEST(ActivityHistoryTest, KeepsTheNewestDeadlocksOfTheLastHour) {
  ActivityHistory h;
  for (int i = 0; i < 60; ++i) {
    h.OnEvents({At(EventType::kLockDeadlock, kStart + seconds(i))});
  }
  auto recent = h.RecentDeadlocks(kStart + seconds(60));
  ASSERT_EQ(recent.size(), ActivityHistory::kMaxDeadlocks);
  EXPECT_EQ(recent.front().at, kStart + seconds(59));
  EXPECT_EQ(recent.back().at, kStart + seconds(10));
  EXPECT_TRUE(h.RecentDeadlocks(kStart + minutes(70)).empty());
}

}  // namespace
}  // namespace leasehold::server
