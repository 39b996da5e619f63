// Micro-benchmarks of the application-lock engine, on one thread.
//
// What each benchmark measures, how to run them and the numbers measured so
// far are in bench/README.md. Every benchmark drives the engine at a fixed
// instant (2026-01-01T00:00:00Z) with sessions whose ttl is far longer than
// any run, so no expiry or timeout fires while it is measured. Results are
// checked inside the timed loops (a cheap branch): a benchmark whose engine
// call does not do what the benchmark assumes stops with an error instead of
// reporting a meaningless number.
#include <malloc.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/deadlock_detector.h"
#include "engine/engine.h"
#include "engine/lock_table.h"

namespace {

using namespace std::chrono_literals;

using leasehold::AcquireOutcome;
using leasehold::AcquireRequest;
using leasehold::AcquireResult;
using leasehold::Engine;
using leasehold::EngineOptions;
using leasehold::Event;
using leasehold::EventSink;
using leasehold::kWaitForever;
using leasehold::LockKey;
using leasehold::LockMode;
using leasehold::LockOwner;
using leasehold::ReleaseRequest;
using leasehold::Result;
using leasehold::SemaphoreReleaseRequest;
using leasehold::SemaphoreRequest;
using leasehold::SessionId;
using leasehold::SessionOptions;
using leasehold::Time;
using leasehold::WaitId;

constexpr std::string_view kNs = "bench";
constexpr std::string_view kPrincipal = "public";
constexpr std::size_t kMillion = 1'000'000;

const Time kNow = std::chrono::sys_days{std::chrono::year{2026} / 1 / 1};

// "r0001234": a prefix letter and seven digits (fits std::string's SSO).
std::string Name(char prefix, std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%07zu", prefix, i);
  return buf;
}

std::vector<std::string> MakeNames(char prefix, std::size_t n) {
  std::vector<std::string> names;
  names.reserve(n);
  for (std::size_t i = 0; i < n; ++i) names.push_back(Name(prefix, i));
  return names;
}

// 1M resource names, made once per process (outside every timed region).
const std::vector<std::string>& MillionNames() {
  static const std::vector<std::string> names = MakeNames('r', kMillion);
  return names;
}
// 1M other names, for a table that already holds 1M locks.
const std::vector<std::string>& MillionOtherNames() {
  static const std::vector<std::string> names = MakeNames('h', kMillion);
  return names;
}

LockKey Key(std::string_view resource) {
  return LockKey{.ns = kNs, .principal = kPrincipal, .resource = resource};
}

// The namespace as a server configured with "locks": "memory" runs it: no
// journal entry per grant, as every lock was before locks were durable, so
// these figures compare with earlier ones. BM_AcquireRelease_OneResource/
// durable measures what the journal adds.
void KeepLocksInMemory(Engine& engine) {
  leasehold::NamespaceOptions options;
  options.locks = leasehold::LockDurability::kMemory;
  engine.SetNamespaceOptions(kNs, options);
}

SessionId OpenSession(Engine& engine) {
  SessionOptions options;
  options.ttl = 24h;
  auto info = engine.OpenSession(kNow, options);
  if (!info) std::abort();
  return info->id;
}

AcquireRequest Request(SessionId session, std::string_view resource,
                       std::chrono::milliseconds timeout) {
  return AcquireRequest{.session = session,
                        .key = Key(resource),
                        .mode = LockMode::kExclusive,
                        .owner = LockOwner::kSession,
                        .timeout = timeout};
}

ReleaseRequest Release(SessionId session, std::string_view resource) {
  return ReleaseRequest{
      .session = session, .key = Key(resource), .owner = LockOwner::kSession};
}

bool GrantedAtOnce(const Result<AcquireOutcome>& out) {
  return out.has_value() && !out->wait &&
         out->result == AcquireResult::kGranted;
}

bool Parked(const Result<AcquireOutcome>& out) {
  return out.has_value() && out->wait.has_value();
}

// Acquires outside any timed region; aborts on surprise (setup bug).
void MustGrant(Engine& engine, SessionId session, std::string_view resource) {
  if (!GrantedAtOnce(engine.Acquire(kNow, Request(session, resource, 0ms)))) {
    std::abort();
  }
}
void MustPark(Engine& engine, SessionId session, std::string_view resource) {
  if (!Parked(engine.Acquire(kNow, Request(session, resource, kWaitForever)))) {
    std::abort();
  }
}

// The least an event consumer can do: look at the event.
class CountingSink : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    ++events_;
    checksum_ += event.fence + event.count + event.resource.size();
  }
  std::uint64_t events() const { return events_; }
  std::uint64_t checksum() const { return checksum_; }

 private:
  std::uint64_t events_ = 0;
  std::uint64_t checksum_ = 0;
};

// Heap in use according to glibc: small chunks plus mmap-ed blocks (large
// blocks such as a hash table's bucket array are mmap-ed).
std::size_t HeapInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// --- Baselines --------------------------------------------------------------
// The minimum a hash-table lock manager does per acquire+release pair: insert
// a key, then erase it (one node allocation and free, two hashes).

void BM_Baseline_MapInsertErase_OneKey(benchmark::State& state) {
  std::unordered_map<std::string, int> map;
  const std::string key = Name('r', 1);
  for (auto _ : state) {
    auto [it, inserted] = map.try_emplace(key, 1);
    benchmark::DoNotOptimize(it);
    benchmark::DoNotOptimize(map.erase(key));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Baseline_MapInsertErase_OneKey);

void BM_Baseline_MapInsertErase_Distinct1M(benchmark::State& state) {
  const auto& names = MillionNames();
  std::unordered_map<std::string, int> map;
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& key = names[i];
    if (++i == names.size()) i = 0;
    auto [it, inserted] = map.try_emplace(key, 1);
    benchmark::DoNotOptimize(it);
    benchmark::DoNotOptimize(map.erase(key));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Baseline_MapInsertErase_Distinct1M);

// As above, with 1M other keys already in the map (a large, cache-cold table).
void BM_Baseline_MapInsertErase_Distinct1M_Holding1M(benchmark::State& state) {
  const auto& names = MillionNames();
  std::unordered_map<std::string, int> map;
  for (const std::string& other : MillionOtherNames()) map.emplace(other, 0);
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& key = names[i];
    if (++i == names.size()) i = 0;
    auto [it, inserted] = map.try_emplace(key, 1);
    benchmark::DoNotOptimize(it);
    benchmark::DoNotOptimize(map.erase(key));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Baseline_MapInsertErase_Distinct1M_Holding1M);

// --- 1. Uncontended acquire+release pairs on one resource ------------------

// durable: locks journaled, and the journal taken after every call as the
// server's write path does (the store's append is not part of it).
void BM_AcquireRelease_OneResource(benchmark::State& state, bool with_events,
                                   bool durable) {
  CountingSink sink;
  EngineOptions options;
  options.events = with_events ? &sink : nullptr;
  Engine engine(options);
  if (!durable) KeepLocksInMemory(engine);
  const SessionId s = OpenSession(engine);
  const std::string resource = Name('r', 1);
  const AcquireRequest acquire = Request(s, resource, 0ms);
  const ReleaseRequest release = Release(s, resource);
  for (auto _ : state) {
    if (!GrantedAtOnce(engine.Acquire(kNow, acquire))) {
      state.SkipWithError("acquire was not granted at once");
      break;
    }
    if (durable) benchmark::DoNotOptimize(engine.TakeJournal());
    if (!engine.Release(kNow, release).ok()) {
      state.SkipWithError("release failed");
      break;
    }
    if (durable) benchmark::DoNotOptimize(engine.TakeJournal());
  }
  state.SetItemsProcessed(state.iterations());
  if (with_events) {
    benchmark::DoNotOptimize(sink.checksum());
    state.counters["events_per_pair"] =
        static_cast<double>(sink.events()) /
        static_cast<double>(
            std::max<benchmark::IterationCount>(state.iterations(), 1));
  }
}
BENCHMARK_CAPTURE(BM_AcquireRelease_OneResource, no_events, false, false);
BENCHMARK_CAPTURE(BM_AcquireRelease_OneResource, with_events, true, false);
BENCHMARK_CAPTURE(BM_AcquireRelease_OneResource, durable, false, true);

// --- 1b. Semaphore acquire+release pairs, beside the lock pairs above -------
// One permit of a semaphore of 10 taken and given back; `others` sessions
// hold one permit each all along (the grant counts them, the release lets
// the queue, empty here, move). Compare with BM_AcquireRelease_OneResource
// of the same durability.

void BM_SemaphorePair_OneName(benchmark::State& state, bool durable) {
  Engine engine;
  if (!durable) KeepLocksInMemory(engine);
  const auto others = static_cast<int>(state.range(0));
  const std::string name = Name('s', 1);
  const auto request = [&](SessionId s) {
    return SemaphoreRequest{
        s, LockKey{"bench", "public", name}, 1, 10, LockOwner::kSession, 0ms};
  };
  for (int i = 0; i < others; ++i) {
    if (!GrantedAtOnce(
            engine.AcquireSemaphore(kNow, request(OpenSession(engine))))) {
      state.SkipWithError("another holder was not granted");
      return;
    }
  }
  const SessionId s = OpenSession(engine);
  const SemaphoreRequest acquire = request(s);
  const SemaphoreReleaseRequest release{s, acquire.key, LockOwner::kSession, 0};
  (void)engine.TakeJournal();
  for (auto _ : state) {
    if (!GrantedAtOnce(engine.AcquireSemaphore(kNow, acquire))) {
      state.SkipWithError("acquire was not granted at once");
      break;
    }
    if (durable) benchmark::DoNotOptimize(engine.TakeJournal());
    if (!engine.ReleaseSemaphore(kNow, release).has_value()) {
      state.SkipWithError("release failed");
      break;
    }
    if (durable) benchmark::DoNotOptimize(engine.TakeJournal());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_SemaphorePair_OneName, no_events, false)
    ->ArgName("others")
    ->Arg(0)
    ->Arg(9);
BENCHMARK_CAPTURE(BM_SemaphorePair_OneName, durable, true)
    ->ArgName("others")
    ->Arg(0)
    ->Arg(9);

// --- 2. Uncontended pairs over 1M distinct resources ------------------------
// Each pair creates the resource and forgets it again. With holding_1m, one
// other session holds 1M other locks first, so the lookups hit a table of 1M
// resources instead of an (almost) empty one.

void BM_AcquireRelease_Distinct1M(benchmark::State& state, bool holding_1m) {
  const auto& names = MillionNames();
  Engine engine;
  KeepLocksInMemory(engine);
  if (holding_1m) {
    const SessionId other = OpenSession(engine);
    for (const std::string& n : MillionOtherNames())
      MustGrant(engine, other, n);
  }
  const SessionId s = OpenSession(engine);
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& resource = names[i];
    if (++i == names.size()) i = 0;
    if (!GrantedAtOnce(engine.Acquire(kNow, Request(s, resource, 0ms)))) {
      state.SkipWithError("acquire was not granted at once");
      break;
    }
    if (!engine.Release(kNow, Release(s, resource)).ok()) {
      state.SkipWithError("release failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_AcquireRelease_Distinct1M, empty_table, false);
// Setting up 1M held locks takes a while: run a fixed number of pairs (two
// passes over the 1M names) instead of letting the library rerun the setup
// while it searches for an iteration count.
BENCHMARK_CAPTURE(BM_AcquireRelease_Distinct1M, holding_1m, true)
    ->Iterations(2 * kMillion);

// --- 3. Re-acquisition -------------------------------------------------------
// Acquires one lock `depth` times (the count grows to depth), then releases
// it `depth` times. items_per_second counts acquire+release pairs.

void BM_Reacquire(benchmark::State& state) {
  const auto depth = static_cast<std::uint32_t>(state.range(0));
  Engine engine;
  KeepLocksInMemory(engine);
  const SessionId s = OpenSession(engine);
  const std::string resource = Name('r', 1);
  const AcquireRequest acquire = Request(s, resource, 0ms);
  const ReleaseRequest release = Release(s, resource);
  for (auto _ : state) {
    for (std::uint32_t k = 1; k <= depth; ++k) {
      auto out = engine.Acquire(kNow, acquire);
      if (!GrantedAtOnce(out) || out->count != k) {
        state.SkipWithError("re-acquisition did not grow the count");
        return;
      }
    }
    for (std::uint32_t k = 0; k < depth; ++k) {
      if (!engine.Release(kNow, release).ok()) {
        state.SkipWithError("release failed");
        return;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Reacquire)->Arg(2)->Arg(10)->Arg(100);

// --- 4. Hand-off between two sessions ---------------------------------------
// The holder H holds X; the other session W asks for X with timeout -1 and is
// parked (a deadlock check runs); H releases, W is granted after its wait and
// the result is drained with TakeFinishedWaits. Then the roles swap. One
// iteration is one hand-off.

void BM_HandOff(benchmark::State& state) {
  Engine engine;
  KeepLocksInMemory(engine);
  SessionId holder = OpenSession(engine);
  SessionId waiter = OpenSession(engine);
  const std::string resource = Name('x', 1);
  MustGrant(engine, holder, resource);
  for (auto _ : state) {
    const auto out =
        engine.Acquire(kNow, Request(waiter, resource, kWaitForever));
    if (!Parked(out)) {
      state.SkipWithError("the request was not parked");
      break;
    }
    if (!engine.Release(kNow, Release(holder, resource)).ok()) {
      state.SkipWithError("release failed");
      break;
    }
    const auto done = engine.TakeFinishedWaits();
    if (done.size() != 1 || done[0].wait != *out->wait ||
        done[0].result != AcquireResult::kGrantedAfterWait) {
      state.SkipWithError("the waiter was not granted after its wait");
      break;
    }
    std::swap(holder, waiter);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HandOff);

// --- 5. Deadlock check cost -------------------------------------------------
// Background: N sessions each parked on its own resource, which N other
// sessions hold (2N sessions, N wait-for edges unrelated to the measured
// request). Chain: c1 holds "c1"; for k = 2..L, ck holds "ck" and waits on
// "c(k-1)". The measured session m holds "o0" (so that a check could find a
// cycle through it: a session that holds nothing and waits last in its queue
// has no incoming edge, and a detector may rightly skip it), then asks for
// "cL" with timeout -1: it is parked and the deadlock check walks
// m -> cL -> ... -> c1 (L edges, no cycle).
//
// BM_DeadlockCheck_Engine measures the whole request through the Engine:
// Acquire (parks, checks) + CancelWait + TakeFinishedWaits, so the state is
// the same before every iteration. BM_DeadlockCheck_Detector measures
// DeadlockDetector::FindCycle alone on the same graph, built directly in a
// LockTable.

void SetUpChain(Engine& engine, std::size_t length, std::string* last) {
  for (std::size_t k = 1; k <= length; ++k) {
    const SessionId c = OpenSession(engine);
    const std::string mine = Name('c', k);
    MustGrant(engine, c, mine);
    if (k > 1) MustPark(engine, c, Name('c', k - 1));
    *last = mine;
  }
}

void BM_DeadlockCheck_Engine(benchmark::State& state) {
  const auto waiting = static_cast<std::size_t>(state.range(0));
  const auto length = static_cast<std::size_t>(state.range(1));
  Engine engine;
  KeepLocksInMemory(engine);
  for (std::size_t i = 0; i < waiting; ++i) {
    const SessionId holder = OpenSession(engine);
    const SessionId waiter = OpenSession(engine);
    const std::string resource = Name('w', i);
    MustGrant(engine, holder, resource);
    MustPark(engine, waiter, resource);
  }
  std::string target;
  SetUpChain(engine, length, &target);
  const SessionId m = OpenSession(engine);
  MustGrant(engine, m, Name('o', 0));
  const AcquireRequest request = Request(m, target, kWaitForever);
  if (engine.Stats().waiting != waiting + length - 1) std::abort();
  for (auto _ : state) {
    const auto out = engine.Acquire(kNow, request);
    if (!Parked(out)) {
      state.SkipWithError("the request was not parked");
      break;
    }
    if (!engine.CancelWait(kNow, *out->wait)) {
      state.SkipWithError("cancel failed");
      break;
    }
    benchmark::DoNotOptimize(engine.TakeFinishedWaits());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["waiting_sessions"] = static_cast<double>(waiting);
  state.counters["chain_edges"] = static_cast<double>(length);
}
BENCHMARK(BM_DeadlockCheck_Engine)
    ->ArgNames({"waiting", "chain"})
    ->Args({0, 2})
    ->Args({1'000, 2})
    ->Args({10'000, 2})
    ->Args({0, 10})
    ->Args({0, 100})
    ->Args({0, 1'000})
    ->Args({10'000, 1'000});

// The same graph built straight into a LockTable, for FindCycle alone.
class Graph {
 public:
  leasehold::engine::Session* NewSession() {
    sessions_.emplace_back();
    sessions_.back().id = sessions_.size();
    return &sessions_.back();
  }
  void Hold(leasehold::engine::Session* s, std::string_view resource) {
    table_.AddGrant(table_.FindOrCreate(Key(resource)), s, LockOwner::kSession,
                    LockMode::kExclusive, ++fence_, kNow);
  }
  void Wait(leasehold::engine::Session* s, std::string_view resource) {
    table_.Enqueue(table_.FindOrCreate(Key(resource)), s, LockOwner::kSession,
                   LockMode::kExclusive, LockMode::kExclusive,
                   /*conversion=*/false, kNow, std::nullopt, ++wait_id_);
  }

 private:
  std::deque<leasehold::engine::Session> sessions_;  // stable addresses
  leasehold::engine::LockTable table_;
  leasehold::Fence fence_ = 0;
  WaitId wait_id_ = 0;
};

void BM_DeadlockCheck_Detector(benchmark::State& state) {
  const auto waiting = static_cast<std::size_t>(state.range(0));
  const auto length = static_cast<std::size_t>(state.range(1));
  Graph graph;
  for (std::size_t i = 0; i < waiting; ++i) {
    const std::string resource = Name('w', i);
    graph.Hold(graph.NewSession(), resource);
    graph.Wait(graph.NewSession(), resource);
  }
  for (std::size_t k = 1; k <= length; ++k) {
    auto* c = graph.NewSession();
    graph.Hold(c, Name('c', k));
    if (k > 1) graph.Wait(c, Name('c', k - 1));
  }
  auto* m = graph.NewSession();
  graph.Hold(m, Name('o', 0));
  graph.Wait(m, Name('c', length));
  leasehold::engine::DeadlockDetector detector;
  for (auto _ : state) {
    auto cycle = detector.FindCycle(m);
    if (cycle) {
      state.SkipWithError("unexpected cycle");
      break;
    }
    benchmark::DoNotOptimize(cycle);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["waiting_sessions"] = static_cast<double>(waiting);
  state.counters["chain_edges"] = static_cast<double>(length);
  state.counters["visited"] = static_cast<double>(detector.last_visited());
}
BENCHMARK(BM_DeadlockCheck_Detector)
    ->ArgNames({"waiting", "chain"})
    ->Args({0, 2})
    ->Args({1'000, 2})
    ->Args({10'000, 2})
    ->Args({0, 10})
    ->Args({0, 100})
    ->Args({0, 1'000})
    ->Args({10'000, 1'000});

// A hot resource: one session holds X and Q sessions queue behind it (all
// Exclusive, timeout -1). The measured session joins the queue and is
// cancelled again. Its check must look at every waiter ahead (each waits for
// it, directly or not); the point is how the cost grows with Q.
//
// With holds_other = 1 the measured session already holds a lock on another
// resource (as a session inside a transaction often does).
void BM_DeadlockCheck_HotQueue(benchmark::State& state) {
  const auto queued = static_cast<std::size_t>(state.range(0));
  Engine engine;
  KeepLocksInMemory(engine);
  const std::string resource = Name('q', 0);
  MustGrant(engine, OpenSession(engine), resource);
  for (std::size_t i = 0; i < queued; ++i) {
    MustPark(engine, OpenSession(engine), resource);
  }
  const SessionId m = OpenSession(engine);
  if (state.range(1) != 0) MustGrant(engine, m, Name('o', 0));
  const AcquireRequest request = Request(m, resource, kWaitForever);
  for (auto _ : state) {
    const auto out = engine.Acquire(kNow, request);
    if (!Parked(out)) {
      state.SkipWithError("the request was not parked");
      break;
    }
    if (!engine.CancelWait(kNow, *out->wait)) {
      state.SkipWithError("cancel failed");
      break;
    }
    benchmark::DoNotOptimize(engine.TakeFinishedWaits());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["queued"] = static_cast<double>(queued);
}
BENCHMARK(BM_DeadlockCheck_HotQueue)
    ->ArgNames({"queued", "holds_other"})
    ->ArgsProduct({{10, 100, 1'000}, {0, 1}});

// A request that closes a cycle of L+1 sessions: m holds "c0", c1 waits on
// it, the chain runs up to cL, and m asks for "cL". With equal priorities the
// requester closed the cycle and is the victim: Acquire answers -3 at once,
// with the cycle's report, and the state is unchanged.
void BM_DeadlockFound_Engine(benchmark::State& state) {
  const auto length = static_cast<std::size_t>(state.range(0));
  Engine engine;
  KeepLocksInMemory(engine);
  const SessionId m = OpenSession(engine);
  MustGrant(engine, m, Name('c', 0));
  for (std::size_t k = 1; k <= length; ++k) {
    const SessionId c = OpenSession(engine);
    MustGrant(engine, c, Name('c', k));
    MustPark(engine, c, Name('c', k - 1));
  }
  const std::string target = Name('c', length);
  const AcquireRequest request = Request(m, target, kWaitForever);
  for (auto _ : state) {
    const auto out = engine.Acquire(kNow, request);
    if (!out || out->wait || out->result != AcquireResult::kDeadlock ||
        !out->deadlock || out->deadlock->cycle.size() != length + 1) {
      state.SkipWithError("expected the requester to be the victim");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["cycle_edges"] = static_cast<double>(length + 1);
}
BENCHMARK(BM_DeadlockFound_Engine)->ArgName("chain")->Arg(2)->Arg(10)->Arg(100);

// --- 6. Bytes per held lock -------------------------------------------------
// Holds 1M Exclusive Session-owned locks (`sessions` sessions, 1M/sessions
// locks each) and reports the heap growth per lock (glibc mallinfo2, taken
// after the sessions are open and the names made, so neither is counted).
// The timed part is the 1M acquisitions; teardown is not timed.
//
// name_len 8 uses "r0001234" (the engine's encoded key, namespace "bench" +
// default principal + name, is 15 bytes and fits std::string's inline
// buffer); name_len 18 uses "invoice:0000001234", whose 25-byte encoded key
// needs a heap block of its own.

const std::vector<std::string>& MillionLongNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    v.reserve(kMillion);
    char buf[32];
    for (std::size_t i = 0; i < kMillion; ++i) {
      std::snprintf(buf, sizeof buf, "invoice:%010zu", i);
      v.emplace_back(buf);
    }
    return v;
  }();
  return names;
}

void BM_MemoryPerHeldLock(benchmark::State& state) {
  const auto session_count = static_cast<std::size_t>(state.range(0));
  const std::size_t per_session = kMillion / session_count;
  const auto& names = state.range(1) == 8 ? MillionNames() : MillionLongNames();
  if (names[0].size() != static_cast<std::size_t>(state.range(1))) {
    state.SkipWithError("no names of that length");
    return;
  }
  std::size_t grown = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto engine = std::make_unique<Engine>();
    KeepLocksInMemory(*engine);
    std::vector<SessionId> sessions;
    sessions.reserve(session_count);
    for (std::size_t i = 0; i < session_count; ++i) {
      sessions.push_back(OpenSession(*engine));
    }
    const std::size_t before = HeapInUse();
    state.ResumeTiming();
    for (std::size_t i = 0; i < kMillion; ++i) {
      const auto out = engine->Acquire(
          kNow, Request(sessions[i / per_session], names[i], 0ms));
      if (!GrantedAtOnce(out)) {
        state.SkipWithError("acquire was not granted at once");
        return;
      }
    }
    state.PauseTiming();
    grown = HeapInUse() - before;
    if (engine->Stats().granted_locks != kMillion) std::abort();
    engine.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(kMillion));
  state.counters["bytes_per_lock"] =
      static_cast<double>(grown) / static_cast<double>(kMillion);
  state.counters["heap_MiB"] = static_cast<double>(grown) / (1024.0 * 1024.0);
}
BENCHMARK(BM_MemoryPerHeldLock)
    ->ArgNames({"sessions", "name_len"})
    ->Args({10'000, 8})
    ->Args({1, 8})
    ->Args({10'000, 18})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
