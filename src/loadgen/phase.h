// A phase of a benchmark: N connections, each driven by one coroutine (a
// Worker), closed loop, on 1 or 2 I/O threads, until a time window ends or
// until each has done its share. Each worker keeps its own Tally; the phase
// merges them into a PhaseResult.
//
// A timed phase runs `warmup` unmeasured, then measures for `duration`:
// a request or pair counts when it completes inside the window. Workers stop
// starting pairs once the window has ended and finish the one in hand
// (releasing what they hold), so nothing is left behind.
#ifndef LEASEHOLD_LOADGEN_PHASE_H_
#define LEASEHOLD_LOADGEN_PHASE_H_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "http/connection.h"
#include "loadgen/bench_options.h"
#include "loadgen/latency_histogram.h"
#include "loadgen/store_counters.h"

namespace leasehold::loadgen {

using SteadyClock = std::chrono::steady_clock;

// What one connection counted.
struct Tally {
  LatencyHistogram requests;  // measured requests, each on its own
  LatencyHistogram pairs;     // measured pairs (e.g. acquire + release)
  std::uint64_t errors = 0;   // unexpected answers or transport failures
  std::uint64_t refused = 0;  // expected refusals (busy key, timeout)
  std::vector<std::string> error_samples;  // the first few, for the report
};

// How an answer is judged.
enum class Verdict { kOk, kRefused, kError };

class Worker {
 public:
  Worker(int index, const BenchOptions& options, http::Connection& connection,
         SteadyClock::time_point window_start,
         SteadyClock::time_point window_end);

  int index() const { return index_; }
  const BenchOptions& options() const { return options_; }
  // True until the measured window has ended.
  bool Running() const { return SteadyClock::now() < window_end_; }
  // A uniformly random number in [0, n).
  std::uint64_t Random(std::uint64_t n);

  // Sends a request, records its latency when it completes inside the
  // window, and judges it: `ok` is the expected status, `refused` (0: none)
  // the expected refusal. Anything else counts as an error.
  boost::asio::awaitable<Verdict> Call(std::string_view method,
                                       std::string_view target,
                                       std::string_view body, unsigned ok,
                                       unsigned refused = 0,
                                       std::string* answer_body = nullptr);
  // Records a pair that started at `start` and ended now.
  void RecordPair(SteadyClock::time_point start);
  // Counts an error found by the scenario itself.
  void Error(std::string what);

  Tally& tally() { return tally_; }

 private:
  bool InWindow(SteadyClock::time_point t) const {
    return t >= window_start_ && t < window_end_;
  }

  const int index_;
  const BenchOptions& options_;
  http::Connection& connection_;
  const SteadyClock::time_point window_start_;
  const SteadyClock::time_point window_end_;
  std::mt19937_64 random_;
  Tally tally_;
};

struct PhaseResult {
  std::string name;
  int connections = 0;
  bool timed = false;  // a measured window (else: until every worker ended)
  double seconds = 0;  // the measured span (wall time for untimed phases)
  LatencyHistogram requests;
  LatencyHistogram pairs;
  std::uint64_t errors = 0;
  std::uint64_t refused = 0;
  std::vector<std::string> error_samples;
  std::vector<std::uint64_t> pairs_per_connection;
  // CPU time used inside the window (timed phases), by the server (when its
  // pid is known) and by this load generator.
  std::optional<std::chrono::nanoseconds> server_cpu;
  std::optional<std::chrono::nanoseconds> client_cpu;
  // The server's group commits inside the window (from GET /metrics).
  std::optional<StoreCounters> store;

  double pairs_per_second() const;
  double requests_per_second() const;
};

// Adds one connection's tally to `r` (its pairs become one entry of
// pairs_per_connection).
void AddTally(PhaseResult& r, Tally& t);

using WorkerBody = std::function<boost::asio::awaitable<void>(Worker&)>;

// Runs `body` on `connections` workers. With `duration`, a timed phase
// (warmup, then the window); without, every request is measured and the
// phase lasts until every worker returns. `options.server_pid` (if not 0)
// is the process whose CPU time is read at the window's edges.
PhaseResult RunPhase(const BenchOptions& options, std::string name,
                     int connections,
                     std::optional<std::chrono::milliseconds> duration,
                     const WorkerBody& body);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_PHASE_H_
