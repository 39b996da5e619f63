// The crash test's child: writes acknowledged pairs from several threads
// until it is killed. Usage: crash_writer STORE ACKS THREADS SEED
// STORE is a SQLite file or a PostgreSQL URL (tests/store/any_store.h).
// Every command goes through the server's write path (EngineService, with
// two I/O threads as `leasehold serve` has by default). After each
// acknowledged command it appends "key_a version key_b version" to ACKS with
// one write(2), so the parent knows what was acknowledged.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/real_clock.h"
#include "tests/store/any_store.h"
#include "tests/store/crash_pattern.h"

namespace leasehold::crash {
namespace {

constexpr int kPairsPerThread = 20;
constexpr int kIoThreads = 2;

// Brings both keys of a pair to the next version in one command, so the
// journal of both lands in one batch. Returns the new versions.
std::pair<std::uint64_t, std::uint64_t> WritePair(Engine& engine, Time now,
                                                  int thread, int pair) {
  std::uint64_t versions[2] = {0, 0};
  const std::string owner = "writer" + std::to_string(thread);
  int i = 0;
  for (char side : {'a', 'b'}) {
    const std::string key = PairKey(thread, pair, side);
    const RecordKey rk{kNamespace, key};
    auto current = engine.GetRecord(now, rk);
    if (!current) {
      versions[i++] = *engine.InsertRecord(now, rk, BodyFor(key, 1));
      continue;
    }
    const std::uint64_t next = current->version + 1;
    auto c = engine.Checkout(
        now, {rk, owner, std::chrono::seconds(30), "tok-" + owner, true});
    if (!c || !c->granted) std::abort();
    auto saved = engine.Save(now, rk, {owner, ""}, BodyFor(key, next), {});
    if (!saved || !saved->done) std::abort();
    if (!engine.Checkin(now, rk, {owner, ""})->done) std::abort();
    versions[i++] = saved->version;
  }
  return {versions[0], versions[1]};
}

int Main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: crash_writer STORE ACKS THREADS SEED\n");
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
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(seed * 7919 + static_cast<unsigned>(t));
      while (true) {
        const int pair = static_cast<int>(rng() % kPairsPerThread);
        auto versions = service.Run(
            [&](Engine& e, Time now) { return WritePair(e, now, t, pair); });
        if (!versions) std::abort();
        const std::string line = PairKey(t, pair, 'a') + " " +
                                 std::to_string(versions->first) + " " +
                                 PairKey(t, pair, 'b') + " " +
                                 std::to_string(versions->second) + "\n";
        if (write(acks, line.data(), line.size()) !=
            static_cast<ssize_t>(line.size())) {
          std::abort();
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  return 0;
}

}  // namespace
}  // namespace leasehold::crash

int main(int argc, char** argv) { return leasehold::crash::Main(argc, argv); }
