#include "loadgen/phase.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <exception>
#include <memory>
#include <thread>

#include "loadgen/process_stats.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kErrorSamples = 5;
constexpr std::size_t kSampleBodyChars = 200;

const char* MethodName(Method m) {
  switch (m) {
    case Method::kGet:
      return "GET";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kDelete:
      return "DELETE";
  }
  return "?";
}

// CPU time of the server and of this process between two instants.
class CpuWindow {
 public:
  CpuWindow(asio::io_context& io, int server_pid)
      : timer_(io), pid_(server_pid) {}

  void Start(SteadyClock::time_point start, SteadyClock::time_point end) {
    timer_.expires_at(start);
    timer_.async_wait([this, end](boost::system::error_code ec) {
      if (ec) return;
      server_start_ = pid_ > 0 ? CpuTime(pid_) : std::nullopt;
      client_start_ = CpuTime(0);
      timer_.expires_at(end);
      timer_.async_wait([this](boost::system::error_code ec2) {
        if (ec2) return;
        server_ =
            Difference(server_start_, pid_ > 0 ? CpuTime(pid_) : std::nullopt);
        client_ = Difference(client_start_, CpuTime(0));
      });
    });
  }

  std::optional<std::chrono::nanoseconds> server() const { return server_; }
  std::optional<std::chrono::nanoseconds> client() const { return client_; }

 private:
  using Cpu = std::optional<std::chrono::nanoseconds>;
  static Cpu Difference(Cpu a, Cpu b) {
    if (!a || !b) return std::nullopt;
    return *b - *a;
  }

  asio::steady_timer timer_;
  const int pid_;
  Cpu server_start_, client_start_, server_, client_;
};

}  // namespace

Worker::Worker(int index, const BenchOptions& options,
               HttpConnection& connection, SteadyClock::time_point window_start,
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

asio::awaitable<Verdict> Worker::Call(Method method, std::string_view target,
                                      std::string_view body, unsigned ok,
                                      unsigned refused,
                                      std::string* answer_body) {
  const auto start = SteadyClock::now();
  HttpAnswer answer = co_await connection_.Request(method, target, body);
  const auto end = SteadyClock::now();
  if (InWindow(end)) tally_.requests.Record(end - start);
  if (answer.error) {
    Error(std::string(MethodName(method)) + " " + std::string(target) + ": " +
          answer.error.message());
    co_return Verdict::kError;
  }
  if (answer_body != nullptr) *answer_body = answer.body;
  if (answer.status == ok) co_return Verdict::kOk;
  if (refused != 0 && answer.status == refused) {
    ++tally_.refused;
    co_return Verdict::kRefused;
  }
  Error(std::string(MethodName(method)) + " " + std::string(target) + ": " +
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
  CpuWindow cpu(io, options.server_pid);
  if (duration) cpu.Start(window_start, window_end);
  std::vector<std::unique_ptr<HttpConnection>> links;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < connections; ++i) {
    auto strand = asio::make_strand(io);
    links.push_back(std::make_unique<HttpConnection>(strand, options.server));
    workers.push_back(std::make_unique<Worker>(i, options, *links.back(),
                                               window_start, window_end));
    Worker& w = *workers.back();
    asio::co_spawn(strand, body(w), [&w](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        w.Error(std::string("worker stopped: ") + x.what());
      }
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
  for (auto& w : workers) {
    Tally& t = w->tally();
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
  r.server_cpu = cpu.server();
  r.client_cpu = cpu.client();
  return r;
}

}  // namespace leasehold::loadgen
