// SpinAcquire: waiting for a lock on a target that cannot wait by itself
// (Redis SET NX, an etcd transaction, the one-UPDATE on SQLite or
// PostgreSQL). Tries, and while refused sleeps and tries again until
// `wait` has passed: sleeps start at 100 µs and double up to 2 ms, each
// with random jitter of up to its own length, as a careful client of such a
// lock would do. There is no queue, so nothing makes it fair: whoever tries
// just after a release wins.
#ifndef LEASEHOLD_PEERS_SPIN_H_
#define LEASEHOLD_PEERS_SPIN_H_

#include <chrono>
#include <random>
#include <thread>

#include "common/status.h"

namespace leasehold::peers {

// `attempt()` returns Result<bool> (true: granted). Returns its first grant
// or error, or false once `wait` has passed without a grant.
template <typename Attempt>
Result<bool> SpinAcquire(std::chrono::milliseconds wait, Attempt attempt) {
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::microseconds kFirst{100}, kMost{2000};
  thread_local std::minstd_rand random(std::random_device{}());
  const auto deadline = Clock::now() + wait;
  auto nap = kFirst;
  while (true) {
    Result<bool> got = attempt();
    if (!got || *got || Clock::now() >= deadline) return got;
    const auto jitter = std::chrono::microseconds(
        std::uniform_int_distribution<long>(0, nap.count())(random));
    std::this_thread::sleep_for(nap + jitter);
    nap = std::min(nap * 2, kMost);
  }
}

}  // namespace leasehold::peers

#endif  // LEASEHOLD_PEERS_SPIN_H_
