// The lock crash test's child: sessions that take and let go of
// application locks from several threads until it is killed.
// Usage: lock_crash_writer STORE ACKS THREADS SEED NS
// STORE is a SQLite file or a PostgreSQL URL (tests/store/any_store.h).
// Every call goes through the server's write path (EngineService, with two
// I/O threads as `leasehold serve` has by default). Each thread has its own
// session, with a transaction open, and takes locks of every requestable
// mode as Session or Transaction (re-acquiring counts up) on a few
// resources of NS, never waiting; it logs each call before it asks and once
// it is answered (lock_crash_history.h), with one write(2) per line.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/real_clock.h"
#include "tests/store/any_store.h"
#include "tests/store/lock_crash_history.h"

namespace leasehold::lock_crash {
namespace {

constexpr int kResources = 4;
constexpr int kIoThreads = 2;
constexpr std::array kModes = {LockMode::kIntentShared, LockMode::kShared,
                               LockMode::kUpdate, LockMode::kIntentExclusive,
                               LockMode::kExclusive};

void Log(int fd, const std::string& line) {
  if (write(fd, line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    std::abort();
  }
}

// One thread's session: acquires (timeout 0) or releases at random, more
// often releasing the more it holds.
void Drive(EngineService& service, int acks, const std::string& ns,
           unsigned seed) {
  auto opened = service.Run([](Engine& e, Time now) {
    auto s = e.OpenSession(now, {"locker", std::chrono::hours(1), 0, ""});
    if (!s || !e.BeginTransaction(now, s->id)) std::abort();
    return s->id;
  });
  if (!opened) std::abort();
  const SessionId session = *opened;
  std::mt19937 rng(seed);
  // References held, by (resource, owner).
  std::map<std::pair<std::string, LockOwner>, std::uint32_t> held;
  while (true) {
    std::size_t references = 0;
    for (const auto& [key, count] : held) references += count;
    const std::string resource = "r" + std::to_string(rng() % kResources);
    const LockOwner owner =
        rng() % 2 == 0 ? LockOwner::kSession : LockOwner::kTransaction;
    const std::string grant = GrantName(session, owner, ns, resource);
    const LockKey key{ns, "public", resource};
    const bool release = held[{resource, owner}] > 0 && rng() % 8 < references;
    if (release) {
      Log(acks, DropLine(grant));
      auto done = service.Run([&](Engine& e, Time now) {
        return e.Release(now, {session, key, owner}).ok();
      });
      if (!done || !*done) std::abort();
      --held[{resource, owner}];
      Log(acks, DroppedLine(grant));
      continue;
    }
    const LockMode mode = kModes[rng() % kModes.size()];
    Log(acks, WantLine(grant, mode));
    auto outcome = service.Run([&](Engine& e, Time now) {
      auto r = e.Acquire(
          now, {session, key, mode, owner, std::chrono::milliseconds(0)});
      if (!r || r->wait) std::abort();
      return *r;
    });
    if (!outcome) std::abort();
    if (outcome->result == AcquireResult::kGranted) {
      held[{resource, owner}] = outcome->count;
      Log(acks, GotLine(grant, outcome->held, outcome->count, outcome->fence));
    } else {
      Log(acks, RefusedLine(grant));
    }
  }
}

int Main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: lock_crash_writer STORE ACKS THREADS SEED NS\n");
    return 2;
  }
  RealClock clock;
  auto running = OpenServiceAt(argv[1], clock, kIoThreads);
  if (!running) {
    std::fprintf(stderr, "%s\n", running.error().ToString().c_str());
    return 1;
  }
  EngineService& service = (*running)->service();
  const int acks = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (acks < 0) return 1;
  const int threads = std::atoi(argv[3]);
  const unsigned seed = static_cast<unsigned>(std::atoi(argv[4]));
  const std::string ns = argv[5];
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Drive(service, acks, ns, seed * 7919 + static_cast<unsigned>(t));
    });
  }
  for (auto& w : workers) w.join();
  return 0;
}

}  // namespace
}  // namespace leasehold::lock_crash

int main(int argc, char** argv) {
  return leasehold::lock_crash::Main(argc, argv);
}
