// BenchOptions: what `leasehold bench` or `leasehold-peers bench` was asked
// to do. Defaults are the command line's.
#ifndef LEASEHOLD_LOADGEN_BENCH_OPTIONS_H_
#define LEASEHOLD_LOADGEN_BENCH_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "http/connection.h"

namespace leasehold::loadgen {

enum class Scenario {
  kApplock,   // acquire + release of random resources, own session each
  kCheckout,  // durable checkout + checkin of random keys, own owner each
  kHot,       // every connection contends for one resource
  kIdle,      // build many held locks, report RSS, then kApplock on top
};

struct BenchOptions {
  http::Address server;
  // `leasehold-peers bench --target URL` (src/peers/peer.h): the peer the
  // blocking one-thread-per-client driver (src/peer_bench) runs against.
  // Empty: `server` is a leasehold server driven by the coroutine driver
  // (phase.h).
  std::string target;
  Scenario scenario = Scenario::kApplock;
  int connections = 50;
  int io_threads = 1;  // threads driving the connections
  // Each worker's connection is closed after every request (the next one
  // connects, and for TLS shakes hands, again): connections per second.
  bool new_connection_per_request = false;
  std::chrono::milliseconds duration{10'000};  // measured
  std::chrono::milliseconds warmup{2'000};     // run, not measured
  std::uint64_t keys = 1'000'000;              // key space of random names
  std::string ns = "bench";                    // namespace used
  // kHot: how long an acquire may wait.
  std::chrono::milliseconds hot_timeout{5'000};
  // kIdle: sessions opened, and locks each holds (with a peer:
  // idle_sessions × locks_per_session idle locks in the peer's way).
  int idle_sessions = 10'000;
  int locks_per_session = 100;
  // The server's process id for RSS (0: look it up by the listen port when
  // the server is on this machine).
  int server_pid = 0;
};

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_BENCH_OPTIONS_H_
