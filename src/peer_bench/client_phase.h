// The peer benchmarks' driver: a phase of N clients, one thread each, every
// call blocking, closed loop. One model for every peer: hiredis, libpq and
// SQLite block, so the leasehold server and etcd are driven the same way
// (a blocking HTTP connection per client), never by a cheaper client.
//
// As in phase.h, a timed phase runs `warmup` unmeasured and then measures
// for `duration`; an operation or pair counts when it completes inside the
// window. Clients connect before the warmup begins. Here a "request" is one
// operation of the peer's interface (an acquire with all its retries, a
// release, a checkout, a check-in), not one message on the wire.
#ifndef LEASEHOLD_PEER_BENCH_CLIENT_PHASE_H_
#define LEASEHOLD_PEER_BENCH_CLIENT_PHASE_H_

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "common/status.h"
#include "loadgen/bench_options.h"
#include "loadgen/phase.h"
#include "peers/peer.h"

namespace leasehold::peer_bench {

using loadgen::BenchOptions;
using loadgen::PhaseResult;
using loadgen::SteadyClock;
using loadgen::Tally;

class ClientWorker {
 public:
  ClientWorker(int index, const BenchOptions& options,
               peers::LockClient& client, SteadyClock::time_point window_start,
               SteadyClock::time_point window_end);

  int index() const { return index_; }
  const BenchOptions& options() const { return options_; }
  peers::LockClient& client() { return client_; }
  bool Running() const { return SteadyClock::now() < window_end_; }
  std::uint64_t Random(std::uint64_t n);

  // Runs one operation, records its latency when it ends inside the window
  // and counts an error (with `what`) when it failed.
  template <typename Op>
  auto Time(std::string_view what, Op op) -> decltype(op()) {
    const auto start = SteadyClock::now();
    auto result = op();
    Record(start);
    if (!Ok(result)) Error(std::string(what) + ": " + Message(result));
    return result;
  }
  void RecordPair(SteadyClock::time_point start);
  void Refused() { ++tally_.refused; }
  void Error(std::string what);
  Tally& tally() { return tally_; }

 private:
  void Record(SteadyClock::time_point start);
  static bool Ok(const Status& s) { return s.ok(); }
  template <typename T>
  static bool Ok(const Result<T>& r) {
    return r.has_value();
  }
  static std::string Message(const Status& s) { return s.message(); }
  template <typename T>
  static std::string Message(const Result<T>& r) {
    return r.error().message();
  }
  bool InWindow(SteadyClock::time_point t) const {
    return t >= window_start_ && t < window_end_;
  }

  const int index_;
  const BenchOptions& options_;
  peers::LockClient& client_;
  const SteadyClock::time_point window_start_;
  const SteadyClock::time_point window_end_;
  std::mt19937_64 random_;
  Tally tally_;
};

using ClientBody = std::function<void(ClientWorker&)>;

// Connects `clients` clients to `peer`, then runs `body` on each in its
// own thread: a timed phase with `duration`, else until every body returns.
// A client that cannot connect counts as an error and does not run.
PhaseResult RunClientPhase(const BenchOptions& options, peers::Peer& peer,
                           std::string name, int clients,
                           std::optional<std::chrono::milliseconds> duration,
                           const ClientBody& body);

}  // namespace leasehold::peer_bench

#endif  // LEASEHOLD_PEER_BENCH_CLIENT_PHASE_H_
