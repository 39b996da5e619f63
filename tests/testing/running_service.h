// RunningService: the server's write path (EngineService) on a store (a
// SQLite file, or any Store given), with an io_context of its own run by I/O
// threads, as `leasehold serve` runs it, for tests and tools that call it
// from their own threads (Run()).
// Destroying it shuts the service down (parked requests end, everything
// submitted becomes durable) and then stops the threads.
#ifndef LEASEHOLD_TESTS_TESTING_RUNNING_SERVICE_H_
#define LEASEHOLD_TESTS_TESTING_RUNNING_SERVICE_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "service/engine_service.h"
#include "store/sqlite/sqlite_store.h"

namespace leasehold::testing {

class RunningService {
 public:
  // Opens the store at `path` and starts `io_threads` threads. `clock` must
  // outlive the result. Fails as OpenSqliteStore and EngineService::Open do.
  static Result<std::unique_ptr<RunningService>> Open(const std::string& path,
                                                      const Clock& clock,
                                                      int io_threads = 1) {
    auto store = OpenSqliteStore(path);
    if (!store) return std::unexpected(store.error());
    return Open(std::move(*store), clock, io_threads);
  }

  // The same on `store`. Fails as EngineService::Open does.
  static Result<std::unique_ptr<RunningService>> Open(
      std::unique_ptr<Store> store, const Clock& clock, int io_threads = 1) {
    std::unique_ptr<RunningService> running(new RunningService());
    auto service =
        EngineService::Open(running->io_, std::move(store), {}, clock);
    if (!service) return std::unexpected(service.error());
    running->service_ = std::move(*service);
    for (int i = 0; i < io_threads; ++i) {
      running->threads_.emplace_back([io = &running->io_] { io->run(); });
    }
    return running;
  }

  ~RunningService() {
    if (service_) service_->Shutdown();
    io_.stop();  // the timer may still be armed, as in `leasehold serve`
    for (auto& t : threads_) t.join();
    service_.reset();  // before the io_context its timer belongs to
  }
  RunningService(const RunningService&) = delete;
  RunningService& operator=(const RunningService&) = delete;

  EngineService& service() { return *service_; }

 private:
  RunningService() : work_(boost::asio::make_work_guard(io_)) {}

  boost::asio::io_context io_;
  // Keeps the threads running while nothing is queued.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work_;
  std::unique_ptr<EngineService> service_;
  std::vector<std::thread> threads_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_RUNNING_SERVICE_H_
