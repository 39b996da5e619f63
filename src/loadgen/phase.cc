#include "loadgen/phase.h"

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <memory>
#include <thread>

#include "loadgen/process_stats.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kErrorSamples = 5;
constexpr std::size_t kSampleBodyChars = 200;

// What the server and this process spent inside the window: CPU time, and
// the server's group commits. Sampled by a coroutine of its own, on its own
// connection, at the window's edges.
class WindowProbe {
 public:
  WindowProbe(const BenchOptions& options, asio::any_io_executor executor)
      : pid_(options.server_pid),
        executor_(executor),
        timer_(executor),
        connection_(executor, options.server) {}

  asio::any_io_executor executor() const { return executor_; }

  asio::awaitable<void> Run(SteadyClock::time_point start,
                            SteadyClock::time_point end) {
    constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
    timer_.expires_at(start);
    if (auto [ec] = co_await timer_.async_wait(kNoThrow); ec) co_return;
    const Cpu server_start = ServerCpu(), client_start = CpuTime(0);
    const auto store_start = co_await ReadStoreCounters(connection_);
    timer_.expires_at(end);
    if (auto [ec] = co_await timer_.async_wait(kNoThrow); ec) co_return;
    server_ = Difference(server_start, ServerCpu());
    client_ = Difference(client_start, CpuTime(0));
    const auto store_end = co_await ReadStoreCounters(connection_);
    if (store_start && store_end) store_ = *store_end - *store_start;
    connection_.Close();
  }

  // Stops waiting (every worker has ended early). Any thread.
  void Cancel() {
    asio::post(executor_, [this] { timer_.cancel(); });
  }

  void Fill(PhaseResult& r) const {
    r.server_cpu = server_;
    r.client_cpu = client_;
    r.store = store_;
  }

 private:
  using Cpu = std::optional<std::chrono::nanoseconds>;
  Cpu ServerCpu() const { return pid_ > 0 ? CpuTime(pid_) : std::nullopt; }
  static Cpu Difference(Cpu a, Cpu b) {
    if (!a || !b) return std::nullopt;
    return *b - *a;
  }

  const int pid_;
  asio::any_io_executor executor_;
  asio::steady_timer timer_;
  http::Connection connection_;
  Cpu server_, client_;
  std::optional<StoreCounters> store_;
};

std::string Describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return std::string("worker stopped: ") + x.what();
  } catch (...) {
    return "worker stopped by an unknown exception";
  }
}

}  // namespace

Worker::Worker(int index, const BenchOptions& options,
               http::Connection& connection,
               SteadyClock::time_point window_start,
               SteadyClock::time_point window_end)
    : index_(index),
      options_(options),
      connection_(connection),
      window_start_(window_start),
      window_end_(window_end),
      random_(
          0x1ea5e401dULL * static_cast<std::uint64_t>(index + 1) ^
          static_cast<std::uint64_t>(window_start.time_since_epoch().count())) {
}

std::uint64_t Worker::Random(std::uint64_t n) {
  return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(random_);
}

asio::awaitable<Verdict> Worker::Call(std::string_view method,
                                      std::string_view target,
                                      std::string_view body, unsigned ok,
                                      unsigned refused,
                                      std::string* answer_body) {
  const auto start = SteadyClock::now();
  http::Answer answer = co_await connection_.AsyncRequest(method, target, body);
  if (options_.new_connection_per_request) connection_.Close();
  const auto end = SteadyClock::now();
  if (InWindow(end)) tally_.requests.Record(end - start);
  if (answer.error) {
    Error(std::string(method) + " " + std::string(target) + ": " +
          answer.error.message());
    co_return Verdict::kError;
  }
  if (answer_body != nullptr) *answer_body = answer.body;
  if (answer.status == ok) co_return Verdict::kOk;
  if (refused != 0 && answer.status == refused) {
    ++tally_.refused;
    co_return Verdict::kRefused;
  }
  Error(std::string(method) + " " + std::string(target) + ": " +
        std::to_string(answer.status) + " " +
        answer.body.substr(0, kSampleBodyChars));
  co_return Verdict::kError;
}

void Worker::RecordPair(SteadyClock::time_point start) {
  const auto end = SteadyClock::now();
  if (InWindow(end)) tally_.pairs.Record(end - start);
}

void Worker::Error(std::string what) {
  ++tally_.errors;
  if (tally_.error_samples.size() < kErrorSamples) {
    tally_.error_samples.push_back(std::move(what));
  }
}

void AddTally(PhaseResult& r, Tally& t) {
  r.requests.Merge(t.requests);
  r.pairs.Merge(t.pairs);
  r.errors += t.errors;
  r.refused += t.refused;
  for (auto& s : t.error_samples) {
    if (r.error_samples.size() < kErrorSamples) {
      r.error_samples.push_back(std::move(s));
    }
  }
  r.pairs_per_connection.push_back(t.pairs.count());
}

double PhaseResult::pairs_per_second() const {
  return seconds > 0 ? static_cast<double>(pairs.count()) / seconds : 0;
}

double PhaseResult::requests_per_second() const {
  return seconds > 0 ? static_cast<double>(requests.count()) / seconds : 0;
}

PhaseResult RunPhase(const BenchOptions& options, std::string name,
                     int connections,
                     std::optional<std::chrono::milliseconds> duration,
                     const WorkerBody& body) {
  asio::io_context io(options.io_threads);
  const auto begin = SteadyClock::now();
  const auto window_start = duration ? begin + options.warmup : begin;
  const auto window_end =
      duration ? window_start + *duration : SteadyClock::time_point::max();
  WindowProbe probe(options, asio::make_strand(io));
  if (duration) {
    asio::co_spawn(probe.executor(), probe.Run(window_start, window_end),
                   asio::detached);
  }
  std::atomic<int> running{connections};
  std::vector<std::unique_ptr<http::Connection>> links;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < connections; ++i) {
    auto strand = asio::make_strand(io);
    links.push_back(std::make_unique<http::Connection>(strand, options.server));
    workers.push_back(std::make_unique<Worker>(i, options, *links.back(),
                                               window_start, window_end));
    Worker& w = *workers.back();
    asio::co_spawn(strand, body(w),
                   [&w, &probe, &running](std::exception_ptr e) {
                     if (e) w.Error(Describe(e));
                     if (--running == 0) probe.Cancel();
                   });
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < options.io_threads; ++i) {
    threads.emplace_back([&io] { io.run(); });
  }
  io.run();
  for (auto& t : threads) t.join();
  const auto finish = SteadyClock::now();

  PhaseResult r;
  r.name = std::move(name);
  r.connections = connections;
  r.timed = duration.has_value();
  r.seconds =
      std::chrono::duration<double>(
          duration ? std::chrono::nanoseconds(*duration) : finish - begin)
          .count();
  for (auto& w : workers) AddTally(r, w->tally());
  probe.Fill(r);
  return r;
}

}  // namespace leasehold::loadgen
