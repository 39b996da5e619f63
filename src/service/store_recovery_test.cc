// EngineService recovering from a failed store without a restart: a real
// SQLite file whose appends are made to fail (as a full disk would), then
// reopened and reloaded by the service itself.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "common/log.h"
#include "common/real_clock.h"
#include "service/acquire_for_test.h"
#include "service/engine_service.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace asio = boost::asio;

// What the test does to the disk: fail every append, refuse to close (as
// SQLite's checkpoint fails on a disk that still fails), refuse to open.
struct DiskSwitch {
  std::atomic<bool> failing{false};
  std::atomic<bool> refuse_close{false};
  std::atomic<bool> refuse_open{false};
  std::atomic<int> opens{0};
  std::atomic<int> close_attempts{0};
};

// A real SQLite store whose appends fail while the switch says so: the
// batch is not applied, as when SQLite reports SQLITE_FULL.
class SwitchedStore final : public Store {
 public:
  SwitchedStore(std::unique_ptr<Store> inner, DiskSwitch& disk)
      : inner_(std::move(inner)), disk_(disk) {}
  Result<Reservations> Load(const Visitors& visit) override {
    return inner_->Load(visit);
  }
  Status Append(const JournalBatch& batch) override {
    if (disk_.failing) {
      return Status(StatusCode::kUnavailable, "database or disk is full");
    }
    return inner_->Append(batch);
  }
  Status Close() override {
    ++disk_.close_attempts;
    if (disk_.refuse_close) {
      return Status(StatusCode::kUnavailable, "cannot checkpoint");
    }
    return inner_->Close();
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  std::unique_ptr<Store> inner_;
  DiskSwitch& disk_;
};

class StoreRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore();
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    auto s = EngineService::Open(io_, std::move(*store), {}, clock_,
                                 service_options_);
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    service_ = std::move(*s);
    service_->SetNamespaceOptions(
        "mem", NamespaceOptions{.locks = LockDurability::kMemory});
    service_->EnableRecovery({.reopen = [this] { return OpenStore(); },
                              .first_retry = milliseconds(10),
                              .max_retry = milliseconds(40)});
    log::SetSink([this](std::string_view line) {
      std::lock_guard lock(mu_);
      log_.emplace_back(line);
    });
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void TearDown() override {
    log::SetSink({});
    service_->Shutdown();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    service_.reset();
  }

  Result<std::unique_ptr<Store>> OpenStore() {
    if (disk_.refuse_open) {
      return std::unexpected(
          Status(StatusCode::kUnavailable, "cannot open the data file"));
    }
    ++disk_.opens;
    auto store = OpenSqliteStore(dir_.File("l.db"));
    if (!store) return std::unexpected(store.error());
    return std::make_unique<SwitchedStore>(std::move(*store), disk_);
  }

  Result<SessionId> Open(const std::string& name) {
    auto s = service_->Run([&](Engine& e, Time now) {
      return e.OpenSession(now, {name, seconds(60), 0, ""});
    });
    if (!s) return std::unexpected(s.error());
    if (!s->has_value()) return std::unexpected(s->error());
    return s->value().id;
  }

  struct Request {
    std::promise<Result<AcquireOutcome>> started;
    std::promise<Result<FinishedWait>> finished;
  };

  Result<AcquireOutcome> Acquire(Request& r, SessionId s, const std::string& ns,
                                 const std::string& resource,
                                 milliseconds timeout = milliseconds(0)) {
    AcquireVia(
        *service_,
        {s, ns, "public", resource, LockMode::kExclusive, LockOwner::kSession,
         timeout},
        [&](Result<AcquireOutcome> o) { r.started.set_value(std::move(o)); },
        [&](const Result<FinishedWait>& f) { r.finished.set_value(f); });
    return r.started.get_future().get();
  }

  LockMode ModeOf(SessionId s, const std::string& resource) {
    auto m = service_->Run([&](Engine& e, Time now) {
      return e.Mode(now, s, {"app", "public", resource}, LockOwner::kSession);
    });
    EXPECT_TRUE(m.has_value());
    return m && m->has_value() ? m->value() : LockMode::kNoLock;
  }

  bool AwaitRecoveries(std::uint64_t n) {
    for (int i = 0; i < 500; ++i) {
      if (service_->Recoveries() >= n && service_->StoreFailure().ok()) {
        return true;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  ServiceOptions service_options_{.outage_reads = true};
  testing::TempDir dir_;
  RealClock clock_;
  DiskSwitch disk_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_{asio::make_work_guard(io_)};
  std::vector<std::thread> threads_;
  std::unique_ptr<EngineService> service_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(StoreRecoveryTest, WritesFailUntilTheServiceRecoversByItself) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  Request held;
  ASSERT_TRUE(Acquire(held, *asha, "app", "held").has_value());

  disk_.refuse_open = true;  // the disk stays bad for a while
  disk_.failing = true;
  Request lost;
  auto refused = Acquire(lost, *asha, "app", "lost");
  ASSERT_FALSE(refused.has_value()) << "a grant that never reached the disk "
                                       "must not be answered";
  EXPECT_EQ(refused.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(service_->StoreFailure().code(), StatusCode::kUnavailable);
  EXPECT_NE(service_->StoreFailure().message().find("disk is full"),
            std::string::npos);

  // While it cannot be opened again: a write fails at once.
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(service_->Recoveries(), 0u);
  auto write = Open("Ravi");
  ASSERT_FALSE(write.has_value());
  EXPECT_EQ(write.error().code(), StatusCode::kUnavailable);
  // A write's command, even one that changes nothing, is not a read.
  auto as_write = service_->Run([&](Engine& e, Time now) {
    return e.Mode(now, *asha, {"app", "public", "held"}, LockOwner::kSession);
  });
  ASSERT_FALSE(as_write.has_value());
  EXPECT_EQ(as_write.error().code(), StatusCode::kUnavailable);

  disk_.failing = false;  // space returns
  disk_.refuse_open = false;
  ASSERT_TRUE(AwaitRecoveries(1)) << "the service did not recover";
  EXPECT_FALSE(service_->ServesOutageReads());

  // As after a restart: what was acknowledged is there, nothing else.
  EXPECT_EQ(ModeOf(*asha, "held"), LockMode::kExclusive);
  EXPECT_EQ(ModeOf(*asha, "lost"), LockMode::kNoLock);
  Request again;
  auto granted = Acquire(again, *asha, "app", "lost");
  ASSERT_TRUE(granted.has_value()) << granted.error().ToString();
  EXPECT_EQ(granted->result, AcquireResult::kGranted);
  auto ravi = Open("Ravi");
  ASSERT_TRUE(ravi.has_value());
  EXPECT_GT(*ravi, *asha);
  std::lock_guard lock(mu_);
  ASSERT_GE(log_.size(), 3u);
  EXPECT_NE(log_.front().find("store failed"), std::string::npos);
  EXPECT_NE(log_.back().find("store recovered"), std::string::npos);
}

// During the outage a read shows the last acknowledged state: what was
// acknowledged, never the refused grant that the engine still holds (the
// recovery takes it back), nor anything a write asked for meanwhile.
TEST_F(StoreRecoveryTest, ReadsShowTheLastAcknowledgedStateDuringTheOutage) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  Request held, released;
  ASSERT_TRUE(Acquire(held, *asha, "app", "held").has_value());
  ASSERT_TRUE(Acquire(released, *asha, "app", "released").has_value());
  auto release = service_->Run([&](Engine& e, Time now) {
    return e.Release(
        now, {*asha, {"app", "public", "released"}, LockOwner::kSession});
  });
  ASSERT_TRUE(release && release->ok());

  disk_.refuse_open = true;
  disk_.failing = true;
  Request lost;
  ASSERT_FALSE(Acquire(lost, *asha, "app", "lost").has_value());
  ASSERT_FALSE(Open("Ravi").has_value());

  auto read_mode = [&](const std::string& resource) {
    return service_->Run(
        [&](Engine& e, Time now) {
          return e.Mode(now, *asha, {"app", "public", resource},
                        LockOwner::kSession);
        },
        EngineService::Access::kRead);
  };
  for (int i = 0; i < 500 && !service_->ServesOutageReads(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(service_->ServesOutageReads());
  for (const auto& [resource, mode] :
       {std::pair<std::string, LockMode>{"held", LockMode::kExclusive},
        {"released", LockMode::kNoLock},
        {"lost", LockMode::kNoLock}}) {
    auto read = read_mode(resource);
    ASSERT_TRUE(read.has_value())
        << resource << ": " << read.error().ToString();
    ASSERT_TRUE(read->has_value()) << resource;
    EXPECT_EQ(**read, mode) << resource;
  }
  auto sessions =
      service_->Run([](Engine& e, Time now) { return e.ListSessions(now); },
                    EngineService::Access::kRead);
  ASSERT_TRUE(sessions.has_value());
  ASSERT_EQ(sessions->size(), 1u) << "Ravi's session was never acknowledged";
  EXPECT_EQ(sessions->front().name, "Asha");
  EXPECT_EQ(sessions->front().locks, 1u);
  // Writes still fail, and what a read changes there (nothing here) stays
  // there: the live engine is not touched.
  ASSERT_FALSE(Open("Mei").has_value());
  std::promise<EngineStats> stats;
  service_->ReadStats(
      [&](EngineStats s, std::size_t, Time) { stats.set_value(std::move(s)); });
  EXPECT_EQ(stats.get_future().get().sessions, 1u)
      << "the dashboard's counts are of the acknowledged state too";

  disk_.failing = false;
  disk_.refuse_open = false;
  ASSERT_TRUE(AwaitRecoveries(1));
  EXPECT_FALSE(service_->ServesOutageReads());
  auto after = read_mode("held");
  ASSERT_TRUE(after && after->has_value());
  EXPECT_EQ(**after, LockMode::kExclusive);
}

// Without outage reads (the default off PostgreSQL): a read fails during
// the outage as a write does; the engine, which holds the refused grant,
// is never read.
class StoreRecoveryWithoutOutageReadsTest : public StoreRecoveryTest {
 protected:
  StoreRecoveryWithoutOutageReadsTest() {
    service_options_.outage_reads = false;
  }
};

TEST_F(StoreRecoveryWithoutOutageReadsTest, ReadsFailUntilTheRecovery) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  Request held, lost;
  ASSERT_TRUE(Acquire(held, *asha, "app", "held").has_value());
  disk_.refuse_open = true;
  disk_.failing = true;
  ASSERT_FALSE(Acquire(lost, *asha, "app", "lost").has_value());
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(service_->ServesOutageReads());
  for (const char* resource : {"held", "lost"}) {
    auto read = service_->Run(
        [&](Engine& e, Time now) {
          return e.Mode(now, *asha, {"app", "public", resource},
                        LockOwner::kSession);
        },
        EngineService::Access::kRead);
    ASSERT_FALSE(read.has_value()) << resource;
    EXPECT_EQ(read.error().code(), StatusCode::kUnavailable);
  }
  disk_.failing = false;
  disk_.refuse_open = false;
  ASSERT_TRUE(AwaitRecoveries(1));
  EXPECT_EQ(ModeOf(*asha, "held"), LockMode::kExclusive);
  EXPECT_EQ(ModeOf(*asha, "lost"), LockMode::kNoLock);
}

// A read before the last acknowledged state is loaded, or once a leader
// steps down, is not answered from the engine that is ahead of the store.
TEST_F(StoreRecoveryTest, NoReadsOfTheLastStateOnceDetached) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  disk_.refuse_open = true;
  disk_.failing = true;
  ASSERT_FALSE(Open("Ravi").has_value());
  for (int i = 0; i < 500 && !service_->ServesOutageReads(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(service_->ServesOutageReads());
  service_->Detach(Status(StatusCode::kUnavailable, "stepped down"));
  EXPECT_FALSE(service_->ServesOutageReads());
  service_->SetLeaseDeadline(EngineService::LeaseClock::time_point::max());
  auto read =
      service_->Run([](Engine& e, Time now) { return e.ListSessions(now); },
                    EngineService::Access::kRead);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().message(), "stepped down");
}

TEST_F(StoreRecoveryTest, AParkedRequestIsAnsweredUnavailable) {
  auto asha = Open("Asha"), ravi = Open("Ravi");
  ASSERT_TRUE(asha && ravi);
  Request held, waiting;
  ASSERT_TRUE(Acquire(held, *asha, "app", "r").has_value());
  auto parked = Acquire(waiting, *ravi, "app", "r", milliseconds(-1));
  ASSERT_TRUE(parked.has_value());
  ASSERT_TRUE(parked->wait.has_value());

  disk_.failing = true;
  auto write = Open("Mei");  // the failure: the recovery starts
  ASSERT_FALSE(write.has_value());
  auto finished = waiting.finished.get_future();
  ASSERT_EQ(finished.wait_for(seconds(10)), std::future_status::ready);
  auto answer = finished.get();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code(), StatusCode::kUnavailable);
  disk_.failing = false;
  ASSERT_TRUE(AwaitRecoveries(1));
  EXPECT_EQ(ModeOf(*asha, "r"), LockMode::kExclusive);
  EXPECT_EQ(ModeOf(*ravi, "r"), LockMode::kNoLock);
}

// The memory namespace's quiet period after the reload shows its option
// was applied to the new engine: a durable namespace would grant at once.
TEST_F(StoreRecoveryTest, NamespaceOptionsOutliveTheRecovery) {
  auto asha = Open("Asha"), ravi = Open("Ravi");
  ASSERT_TRUE(asha && ravi);
  Request m;
  ASSERT_EQ(Acquire(m, *asha, "mem", "m")->result, AcquireResult::kGranted);
  disk_.failing = true;
  ASSERT_FALSE(Open("Mei").has_value());
  disk_.failing = false;
  ASSERT_TRUE(AwaitRecoveries(1));

  Request quiet;
  EXPECT_EQ(Acquire(quiet, *ravi, "mem", "other")->result,
            AcquireResult::kTimeout)
      << "Asha has not been told her memory locks are gone";
  auto told = service_->Run(
      [&](Engine& e, Time now) { return e.KeepAlive(now, *asha); });
  ASSERT_TRUE(told && told->has_value());
  EXPECT_TRUE(told->value().locks_lost);
  Request after;
  EXPECT_EQ(Acquire(after, *ravi, "mem", "other")->result,
            AcquireResult::kGranted);
}

// The failed store is opened again only once it has closed (Store::Close,
// which discards what the failed batch left in the files); until then it
// is kept, and Close is tried again with backoff.
TEST_F(StoreRecoveryTest, NoReopenUntilTheFailedStoreCloses) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  disk_.failing = true;
  disk_.refuse_close = true;
  ASSERT_FALSE(Open("refused").has_value());
  disk_.failing = false;
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(disk_.opens.load(), 1) << "opened again before it was closed";
  EXPECT_GE(disk_.close_attempts.load(), 2) << "Close is tried again";
  EXPECT_LE(disk_.close_attempts.load(), 12) << "with backoff (40 ms here)";
  EXPECT_EQ(service_->Recoveries(), 0u);
  EXPECT_EQ(service_->StoreFailure().code(), StatusCode::kUnavailable);
  {
    std::lock_guard lock(mu_);
    ASSERT_FALSE(log_.empty());
    EXPECT_NE(log_.back().find("cannot checkpoint"), std::string::npos)
        << log_.back();
  }

  disk_.refuse_close = false;
  ASSERT_TRUE(AwaitRecoveries(1));
  EXPECT_EQ(disk_.opens.load(), 2);
  ASSERT_TRUE(Open("after").has_value());
}

TEST_F(StoreRecoveryTest, RecoversAgainAfterASecondFailure) {
  auto asha = Open("Asha");
  ASSERT_TRUE(asha.has_value());
  for (std::uint64_t round = 1; round <= 2; ++round) {
    disk_.failing = true;
    ASSERT_FALSE(Open("x").has_value());
    disk_.failing = false;
    ASSERT_TRUE(AwaitRecoveries(round)) << "round " << round;
    ASSERT_TRUE(Open("y").has_value()) << "round " << round;
  }
  EXPECT_EQ(disk_.opens.load(), 3);
  // Counted across the three committers, as /metrics shows them.
  EXPECT_GE(service_->CommitStats().batches, 3u);
  Request r;
  EXPECT_TRUE(Acquire(r, *asha, "app", "after").has_value());
}

}  // namespace
}  // namespace leasehold
