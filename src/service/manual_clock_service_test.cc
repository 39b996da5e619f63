// EngineService following a ManualClock (UseManualClock), over a
// MemoryStore: deadlines are applied when the clock is moved and
// ApplyDeadlines() is called, at once, and never by real time.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "common/manual_clock.h"
#include "service/acquire_for_test.h"
#include "service/engine_service.h"
#include "store/memory/memory_store.h"

namespace leasehold {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
namespace asio = boost::asio;

class ManualClockServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = EngineService::Open(io_, OpenMemoryStore(), {}, clock_);
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    service_ = std::move(*s);
    service_->UseManualClock(clock_);
    service_->SetEventListener([this](const std::vector<OwnedEvent>& events) {
      std::lock_guard lock(mu_);
      for (const auto& e : events) events_.push_back(e.type);
    });
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    service_->Shutdown();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  bool Seen(EventType type) {
    std::lock_guard lock(mu_);
    return std::ranges::find(events_, type) != events_.end();
  }

  // Moves the clock and waits for the service's answer.
  void Advance(Duration by) {
    const Time before = clock_.Now();
    std::promise<Result<Time>> applied;
    service_->AdvanceClock(by, [&](Result<Time> t) { applied.set_value(t); });
    const Result<Time> now = applied.get_future().get();
    ASSERT_TRUE(now.has_value()) << now.error().ToString();
    EXPECT_EQ(*now, before + by);
  }

  ManualClock clock_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_{asio::make_work_guard(io_)};
  std::vector<std::thread> threads_;
  std::unique_ptr<EngineService> service_;
  std::mutex mu_;
  std::vector<EventType> events_;
};

TEST_F(ManualClockServiceTest, DeadlinesApplyWhenTheClockIsMovedAndToldSo) {
  auto opened = service_->Run([](Engine& e, Time now) {
    return e.OpenSession(now, {"Asha", seconds(30), 0, ""});
  });
  ASSERT_TRUE(opened.has_value() && opened->has_value());
  auto other = service_->Run([](Engine& e, Time now) {
    return e.OpenSession(now, {"Ravi", minutes(60), 0, ""});
  });
  ASSERT_TRUE(other.has_value() && other->has_value());
  const SessionId asha = (*opened)->id, ravi = (*other)->id;
  auto checkout = service_->Run([](Engine& e, Time now) {
    return e.Checkout(now, {{"docs", "k"}, "Asha", minutes(5), "tok", true});
  });
  ASSERT_TRUE(checkout.has_value() && checkout->has_value());
  std::promise<Result<FinishedWait>> finished;
  std::promise<Result<AcquireOutcome>> started;
  AcquireVia(
      *service_,
      {asha, "app", "public", "r", LockMode::kExclusive, LockOwner::kSession,
       milliseconds(0)},
      [](Result<AcquireOutcome>) {}, [](auto&) {});
  AcquireVia(
      *service_,
      {ravi, "app", "public", "r", LockMode::kExclusive, LockOwner::kSession,
       seconds(10)},
      [&](Result<AcquireOutcome> o) { started.set_value(std::move(o)); },
      [&](const Result<FinishedWait>& f) { finished.set_value(f); });
  auto parked = started.get_future().get();
  ASSERT_TRUE(parked.has_value() && parked->wait.has_value());

  Advance(seconds(11));  // past the wait's timeout only
  auto timed_out = finished.get_future();
  ASSERT_EQ(timed_out.wait_for(seconds(0)), std::future_status::ready)
      << "the wait's answer came after ApplyDeadlines answered";
  EXPECT_EQ(timed_out.get()->result, AcquireResult::kTimeout);
  EXPECT_TRUE(Seen(EventType::kLockTimeout));
  EXPECT_FALSE(Seen(EventType::kSessionExpired));
  EXPECT_FALSE(Seen(EventType::kCheckoutExpired));

  Advance(minutes(10));  // past the session's ttl and the lease
  EXPECT_TRUE(Seen(EventType::kSessionExpired));
  EXPECT_TRUE(Seen(EventType::kCheckoutExpired));
}

}  // namespace
}  // namespace leasehold
