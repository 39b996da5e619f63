// EngineService as a cluster node uses it (src/cluster/cluster_node.h): a
// standby's service without a store, Attach when the node takes over,
// Detach when it steps down, and the lease deadline past which nothing is
// served. Real SQLite files; the lease deadline is on the real monotonic
// clock.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "common/real_clock.h"
#include "service/acquire_for_test.h"
#include "service/engine_service.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
namespace asio = boost::asio;
using LeaseClock = EngineService::LeaseClock;

class StandbyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = EngineService::OpenWithoutStore(
        io_, {}, clock_, Status(StatusCode::kUnavailable, "standing by"));
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void TearDown() override {
    service_->Shutdown();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    service_.reset();
  }

  std::unique_ptr<Store> OpenStore(const std::string& file = "l.db") {
    auto store = OpenSqliteStore(dir_.File(file));
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  // Leads until an hour from now, over the store.
  void TakeOver(Duration grace = Duration::zero()) {
    service_->SetLeaseDeadline(LeaseClock::now() + hours(1));
    ASSERT_TRUE(service_->Attach(OpenStore(), grace).ok());
  }

  Result<SessionId> OpenSession(const std::string& name) {
    auto s = service_->Run([&](Engine& e, Time now) {
      return e.OpenSession(now, {name, seconds(60), 0, ""});
    });
    if (!s) return std::unexpected(s.error());
    if (!s->has_value()) return std::unexpected(s->error());
    return s->value().id;
  }

  Result<std::vector<SessionInfo>> Sessions() {
    return service_->Run(
        [](Engine& e, Time now) { return e.ListSessions(now); });
  }

  RealClock clock_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ =
      asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  testing::TempDir dir_;
  std::unique_ptr<EngineService> service_;
};

TEST_F(StandbyTest, WithoutAStoreNothingIsServedNotEvenReads) {
  auto listed = Sessions();
  ASSERT_FALSE(listed.has_value());
  EXPECT_EQ(listed.error().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(service_->Writable().ok());
  EXPECT_EQ(service_->StoreFailure().message(), "standing by");
}

TEST_F(StandbyTest, AttachLoadsTheStoreAndGivesSessionsTheGrace) {
  TakeOver();
  auto kept = OpenSession("kept");
  ASSERT_TRUE(kept.has_value());
  service_->Detach(Status(StatusCode::kUnavailable, "stepped down"));
  EXPECT_FALSE(Sessions().has_value());

  const Time before = clock_.Now();
  TakeOver(seconds(30));
  EXPECT_TRUE(service_->Writable().ok());
  auto listed = Sessions();
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, *kept);
  // A fresh ttl (60 s) plus the grace (30 s).
  EXPECT_GE((*listed)[0].expires_at, before + seconds(90));
  EXPECT_LT((*listed)[0].expires_at, clock_.Now() + seconds(91));
}

TEST_F(StandbyTest, AttachIsRefusedWhileAttached) {
  TakeOver();
  const Status again =
      service_->Attach(OpenStore("other.db"), Duration::zero());
  EXPECT_EQ(again.code(), StatusCode::kInternal) << again.ToString();
}

TEST_F(StandbyTest, PastTheLeaseDeadlineEveryCommandIsRefused) {
  TakeOver();
  auto s = OpenSession("a");
  ASSERT_TRUE(s.has_value());
  service_->SetLeaseDeadline(LeaseClock::now() - milliseconds(1));
  EXPECT_FALSE(service_->Writable().ok());
  auto read = Sessions();
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kUnavailable);
  std::promise<Result<AcquireOutcome>> started;
  AcquireVia(
      *service_,
      {*s, "app", "public", "x", LockMode::kExclusive, LockOwner::kSession,
       milliseconds(0)},
      [&](Result<AcquireOutcome> o) { started.set_value(std::move(o)); },
      [](const Result<FinishedWait>&) {});
  auto outcome = started.get_future().get();
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code(), StatusCode::kUnavailable);

  // A renewal moves the deadline: served again, and nothing was taken.
  service_->SetLeaseDeadline(LeaseClock::now() + hours(1));
  auto mode = service_->Run([&](Engine& e, Time now) {
    return e.Mode(now, *s, {"app", "public", "x"}, LockOwner::kSession);
  });
  ASSERT_TRUE(mode.has_value());
  ASSERT_TRUE(mode->has_value());
  EXPECT_EQ(**mode, LockMode::kNoLock);
}

TEST_F(StandbyTest, DetachAnswersAParkedRequestAndTheNextLeaderKeepsTheLock) {
  TakeOver();
  auto holder = OpenSession("holder"), waiter = OpenSession("waiter");
  ASSERT_TRUE(holder && waiter);
  auto take = [&](SessionId s, milliseconds timeout,
                  std::promise<Result<AcquireOutcome>>& started,
                  std::promise<Result<FinishedWait>>& finished) {
    AcquireVia(
        *service_,
        {s, "app", "public", "x", LockMode::kExclusive, LockOwner::kSession,
         timeout},
        [&](Result<AcquireOutcome> o) { started.set_value(std::move(o)); },
        [&](const Result<FinishedWait>& f) { finished.set_value(f); });
  };
  std::promise<Result<AcquireOutcome>> held;
  std::promise<Result<FinishedWait>> unused;
  take(*holder, milliseconds(0), held, unused);
  ASSERT_TRUE(held.get_future().get().has_value());
  std::promise<Result<AcquireOutcome>> parked;
  std::promise<Result<FinishedWait>> finished;
  take(*waiter, milliseconds(60'000), parked, finished);
  auto outcome = parked.get_future().get();
  ASSERT_TRUE(outcome.has_value());
  ASSERT_TRUE(outcome->wait.has_value());

  service_->Detach(Status(StatusCode::kUnavailable, "stepped down"));
  auto answer = finished.get_future();
  ASSERT_EQ(answer.wait_for(seconds(10)), std::future_status::ready);
  auto ended = answer.get();
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error().message(), "stepped down");

  TakeOver();
  auto mode = [&](SessionId s) {
    auto m = service_->Run([&](Engine& e, Time now) {
      return e.Mode(now, s, {"app", "public", "x"}, LockOwner::kSession);
    });
    return m && m->has_value() ? **m : LockMode::kNoLock;
  };
  EXPECT_EQ(mode(*holder), LockMode::kExclusive);
  EXPECT_EQ(mode(*waiter), LockMode::kNoLock);
}

// A store that fails every append: a recovery starts, and must not bring
// the store back once the node has stepped down.
class FailingStore final : public Store {
 public:
  explicit FailingStore(std::unique_ptr<Store> inner)
      : inner_(std::move(inner)) {}
  Result<Reservations> Load(const Visitors& visit) override {
    return inner_->Load(visit);
  }
  Status Append(const JournalBatch&) override {
    return Status(StatusCode::kUnavailable, "lost the database");
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  std::unique_ptr<Store> inner_;
};

TEST_F(StandbyTest, ARecoveryDoesNotOutliveDetach) {
  std::atomic<int> reopened{0};
  service_->EnableRecovery({.reopen = [&]() -> Result<std::unique_ptr<Store>> {
                              ++reopened;
                              return OpenStore();
                            },
                            .first_retry = milliseconds(200),
                            .max_retry = milliseconds(200),
                            .on_failure = {}});
  service_->SetLeaseDeadline(LeaseClock::now() + hours(1));
  ASSERT_TRUE(service_
                  ->Attach(std::make_unique<FailingStore>(OpenStore()),
                           Duration::zero())
                  .ok());
  EXPECT_FALSE(OpenSession("a").has_value());  // fails, starts a recovery
  service_->Detach(Status(StatusCode::kUnavailable, "stepped down"));
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(reopened.load(), 0);
  EXPECT_FALSE(service_->Writable().ok());
  EXPECT_EQ(service_->StoreFailure().message(), "stepped down");
}

}  // namespace
}  // namespace leasehold
