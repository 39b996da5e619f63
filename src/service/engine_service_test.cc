// EngineService with a real io_context, a real SQLite file and the real
// clock: completions after durability, parked waits, the one timer.
#include "service/engine_service.h"
#include "service/acquire_for_test.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "common/real_clock.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace asio = boost::asio;

class EngineServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  void TearDown() override { Stop(); }

  void Start() {
    auto store = OpenSqliteStore(dir_.File("l.db"));
    ASSERT_TRUE(store.has_value());
    auto s = EngineService::Open(io_, std::move(*store), {}, clock_);
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    service_ = std::move(*s);
    service_->SetEventListener([this](const std::vector<OwnedEvent>& events) {
      std::lock_guard lock(mu_);
      for (const auto& e : events) events_.push_back(e.type);
    });
    io_.restart();
    work_.emplace(asio::make_work_guard(io_));
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void Stop() {
    if (!service_) return;
    service_->Shutdown();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    service_.reset();
  }

  template <typename R>
  Result<R> Run(std::function<R(Engine&, Time)> command) {
    std::promise<Result<R>> p;
    service_->Execute<R>(std::move(command),
                         [&](Result<R> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  SessionId Open(const std::string& name, milliseconds ttl = seconds(60)) {
    auto s = Run<Result<SessionInfo>>([&](Engine& e, Time now) {
      return e.OpenSession(now, {name, ttl, 0, ""});
    });
    return s->value().id;
  }

  struct Parked {
    std::promise<Result<AcquireOutcome>> started;
    std::promise<Result<FinishedWait>> finished;
  };

  AcquireOutcome Acquire(Parked& p, SessionId s, const std::string& resource,
                         LockMode mode, milliseconds timeout) {
    TestLockRequest r{
        s, "app", "public", resource, mode, LockOwner::kSession, timeout};
    AcquireVia(
        *service_, r,
        [&](Result<AcquireOutcome> o) { p.started.set_value(std::move(o)); },
        [&](const Result<FinishedWait>& f) { p.finished.set_value(f); });
    auto o = p.started.get_future().get();
    EXPECT_TRUE(o.has_value());
    return o ? *o : AcquireOutcome{};
  }

  static FinishedWait Await(Parked& p) {
    auto f = p.finished.get_future();
    EXPECT_EQ(f.wait_for(seconds(10)), std::future_status::ready);
    auto r = f.get();
    EXPECT_TRUE(r.has_value());
    return r ? *r : FinishedWait{};
  }

  testing::TempDir dir_;
  RealClock clock_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_;
  std::vector<std::thread> threads_;
  std::unique_ptr<EngineService> service_;
  std::mutex mu_;
  std::vector<EventType> events_;
};

TEST_F(EngineServiceTest, AnsweredWritesAreDurable) {
  auto c = Run<Result<CheckoutOutcome>>([](Engine& e, Time now) {
    return e.Checkout(now, {{"docs", "k"}, "Asha", seconds(60), "tok", true});
  });
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->value().granted);
  Stop();
  Start();
  auto g = Run<Result<RecordView>>([](Engine& e, Time now) {
    return e.GetRecord(now, {"docs", "k"});
  });
  ASSERT_TRUE(g->has_value());
  EXPECT_EQ(g->value().locked_by, "Asha");
}

TEST_F(EngineServiceTest, ParkedRequestIsGrantedOnRelease) {
  const SessionId a = Open("Asha"), b = Open("Ravi");
  Parked first, second;
  EXPECT_EQ(
      Acquire(first, a, "r", LockMode::kExclusive, milliseconds(0)).result,
      AcquireResult::kGranted);
  const auto o = Acquire(second, b, "r", LockMode::kExclusive, kWaitForever);
  ASSERT_TRUE(o.wait.has_value());
  auto released = Run<Status>([&](Engine& e, Time now) {
    return e.Release(now, {a, {"app", "public", "r"}, LockOwner::kSession});
  });
  ASSERT_TRUE(released->ok());
  EXPECT_EQ(Await(second).result, AcquireResult::kGrantedAfterWait);
}

TEST_F(EngineServiceTest, TheTimerEndsWaitsAndSessions) {
  const SessionId a = Open("Asha", milliseconds(300)), b = Open("Ravi");
  Parked p1, p2, p3;
  Acquire(p1, a, "r", LockMode::kExclusive, milliseconds(0));
  ASSERT_TRUE(Acquire(p2, b, "r", LockMode::kExclusive, milliseconds(50)).wait);
  EXPECT_EQ(Await(p2).result, AcquireResult::kTimeout);
  ASSERT_TRUE(Acquire(p3, b, "r", LockMode::kExclusive, kWaitForever).wait);
  // Asha sends no keepalive: her session expires and Ravi gets the lock.
  EXPECT_EQ(Await(p3).result, AcquireResult::kGrantedAfterWait);
  std::lock_guard lock(mu_);
  EXPECT_NE(
      std::find(events_.begin(), events_.end(), EventType::kSessionExpired),
      events_.end());
}

TEST_F(EngineServiceTest, CancelAndShutdownEndParkedRequests) {
  const SessionId a = Open("Asha"), b = Open("Ravi"), c = Open("Mei");
  Parked p1, p2, p3;
  Acquire(p1, a, "r", LockMode::kExclusive, milliseconds(0));
  const auto o = Acquire(p2, b, "r", LockMode::kShared, kWaitForever);
  service_->CancelWait(*o.wait);
  EXPECT_EQ(Await(p2).result, AcquireResult::kCancelled);
  ASSERT_TRUE(Acquire(p3, c, "r", LockMode::kShared, kWaitForever).wait);
  service_->Shutdown();
  EXPECT_EQ(Await(p3).result, AcquireResult::kCancelled);
}

TEST_F(EngineServiceTest, EventsArePublishedInOrder) {
  const SessionId a = Open("Asha");
  Parked p;
  Acquire(p, a, "r", LockMode::kExclusive, milliseconds(0));
  Run<Status>([&](Engine& e, Time now) {
    return e.Release(now, {a, {"app", "public", "r"}, LockOwner::kSession});
  });
  std::lock_guard lock(mu_);
  EXPECT_EQ(events_, (std::vector<EventType>{EventType::kSessionOpened,
                                             EventType::kLockGranted,
                                             EventType::kLockReleased}));
}

// A step that wrote nothing, once all before it is durable, is answered on
// the caller's thread before Execute returns: no queue, no hand-off.
TEST_F(EngineServiceTest, AStepThatWroteNothingCompletesOnTheCallersThread) {
  Open("Asha");  // answered, so durable
  bool done = false;
  std::thread::id ran_on;
  service_->Execute<EngineStats>([](Engine& e, Time) { return e.Stats(); },
                                 [&](Result<EngineStats> r) {
                                   EXPECT_TRUE(r.has_value());
                                   ran_on = std::this_thread::get_id();
                                   done = true;
                                 });
  EXPECT_TRUE(done);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// Completions that start the next step (as acquire-all does, lock after
// lock) run inline only a few levels deep and are posted beyond that, so a
// long chain neither overflows the stack nor keeps it growing.
TEST_F(EngineServiceTest, AChainOfStepsFromCompletionsKeepsTheStackShallow) {
  constexpr int kSteps = 100'000;
  static thread_local int depth = 0;
  std::atomic<int> deepest{0};
  std::promise<void> finished;
  std::function<void(int)> step = [&](int left) {
    service_->Execute<int>(
        [](Engine&, Time) { return 0; },
        [&, left](Result<int> r) {
          EXPECT_TRUE(r.has_value());
          ++depth;
          int seen = deepest.load();
          while (depth > seen && !deepest.compare_exchange_weak(seen, depth)) {
          }
          if (left == 0) {
            finished.set_value();
          } else {
            step(left - 1);
          }
          --depth;
        });
  };
  step(kSteps);
  ASSERT_EQ(finished.get_future().wait_for(seconds(60)),
            std::future_status::ready);
  EXPECT_GE(deepest.load(), 2) << "completions never ran inline";
  EXPECT_LE(deepest.load(), 16);
}

// Run() blocks a plain thread until the answer is durable: the blocking
// callers (restart and crash tests, store_bench) take the asynchronous path.
TEST_F(EngineServiceTest, RunAnswersOnceDurable) {
  auto inserted = service_->Run([](Engine& e, Time now) {
    return e.InsertRecord(now, {"docs", "k"}, "draft");
  });
  ASSERT_TRUE(inserted.has_value());
  ASSERT_TRUE(inserted->has_value());
  Stop();
  Start();
  auto got = service_->Run([](Engine& e, Time now) {
    return e.GetRecord(now, {"docs", "k"});
  });
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ((*got)->body, "draft");
}

// A Store that holds nothing and fails every append.
class FailingStore final : public Store {
 public:
  Result<Reservations> Load(const Visitors&) override { return {}; }
  Status Append(const JournalBatch&) override {
    return Status(StatusCode::kUnavailable, "disk full");
  }
  std::string Describe() const override { return "failing"; }
};

// After a failed append, the write and every later step (even one that
// wrote nothing) answer kUnavailable: memory is ahead of the disk.
TEST(EngineServiceFailure, AFailedStoreAnswersUnavailable) {
  RealClock clock;
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread runner([&io] { io.run(); });
  auto service =
      EngineService::Open(io, std::make_unique<FailingStore>(), {}, clock);
  ASSERT_TRUE(service.has_value());
  auto inserted = (*service)->Run([](Engine& e, Time now) {
    return e.InsertRecord(now, {"docs", "k"}, "draft");
  });
  ASSERT_FALSE(inserted.has_value());
  EXPECT_EQ(inserted.error().code(), StatusCode::kUnavailable);
  auto read = (*service)->Run([](Engine& e, Time) { return e.Stats(); });
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ((*service)->StoreFailure().code(), StatusCode::kUnavailable);
  (*service)->Shutdown();
  io.stop();
  runner.join();
}

}  // namespace
}  // namespace leasehold
