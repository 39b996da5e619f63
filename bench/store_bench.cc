// Durable checkouts: leasehold with group commit against the reference
// article's pattern (one UPDATE per operation, one transaction each) on
// SQLite, both with synchronous=FULL, measured in the same run. Plus the
// time to restart with 1M keys and the memory each key costs, and the
// store's side of durable application locks: appending lock rows, and
// loading 1M of them.
//
// Run: build-bench/bench/store_bench --benchmark_repetitions=3
//      --benchmark_report_aggregates_only=true
// Files go to $LEASEHOLD_BENCH_DIR (default /tmp). The BM_Postgres*
// variants run the same on a PostgresStore when $LEASEHOLD_BENCH_PG_URL
// names a server (a schema of their own, dropped first), and are skipped
// otherwise.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "common/real_clock.h"
#include "pg/connection.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/running_service.h"

namespace leasehold {
namespace {

using std::chrono::seconds;

std::string BenchDir() {
  const char* dir = std::getenv("LEASEHOLD_BENCH_DIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string FreshPath(const std::string& name) {
  const std::string path =
      BenchDir() + "/leasehold-bench-" + std::to_string(getpid()) + "-" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix);
  }
  return path;
}

void RemoveDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix);
  }
}

// A fresh PostgresStore in schema "bench_NAME" of $LEASEHOLD_BENCH_PG_URL,
// or null (the benchmark skipped, saying why).
std::unique_ptr<Store> FreshPostgresStore(benchmark::State& state,
                                          const std::string& name) {
  const char* url = std::getenv("LEASEHOLD_BENCH_PG_URL");
  if (url == nullptr) {
    state.SkipWithError("set LEASEHOLD_BENCH_PG_URL to run on PostgreSQL");
    return nullptr;
  }
  const std::string schema = "bench_" + name;
  auto admin = pg::Connect(url);
  if (!admin ||
      !pg::Exec(admin->get(), "DROP SCHEMA IF EXISTS " + schema + " CASCADE")) {
    state.SkipWithError("cannot reach LEASEHOLD_BENCH_PG_URL");
    return nullptr;
  }
  auto store = OpenPostgresStore(url, {.schema = schema});
  if (!store) {
    state.SkipWithError(store.error().ToString().c_str());
    return nullptr;
  }
  return std::move(*store);
}

// --- leasehold: checkout + checkin, each acknowledged only when durable ---
// Both go through the server's write path (EngineService) with two I/O
// threads, as `leasehold serve` runs it by default.

constexpr int kIoThreads = 2;
RealClock* clock_for_bench = new RealClock();
testing::RunningService* durable = nullptr;
std::string durable_path;

// N threads, each blocking in Run() for every command.
void BM_LeaseholdDurableCheckoutCheckin(benchmark::State& state) {
  if (state.thread_index() == 0) {
    durable_path = FreshPath("leasehold.db");
    durable = testing::RunningService::Open(durable_path, *clock_for_bench,
                                            kIoThreads)
                  ->release();
  }
  const std::string owner = "writer" + std::to_string(state.thread_index());
  const std::string token = "token-" + owner;
  std::uint64_t i = 0;
  for (auto _ : state) {
    const std::string key = owner + ":" + std::to_string(i++ % 100);
    auto got = durable->service().Run([&](Engine& e, Time now) {
      return e.Checkout(now, {{"bench", key}, owner, seconds(30), token, true});
    });
    if (!got || !got->value().granted) state.SkipWithError("checkout failed");
    auto back = durable->service().Run([&](Engine& e, Time now) {
      return e.Checkin(now, {"bench", key}, {"", token});
    });
    if (!back || !back->value().done) state.SkipWithError("checkin failed");
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    const auto stats = durable->service().CommitStats();
    state.counters["entries_per_fsync"] =
        stats.batches ? static_cast<double>(stats.entries) /
                            static_cast<double>(stats.batches)
                      : 0;
    delete durable;
    durable = nullptr;
    RemoveDb(durable_path);
  }
}
BENCHMARK(BM_LeaseholdDurableCheckoutCheckin)
    ->Threads(1)
    ->Threads(16)
    ->Threads(64)
    ->UseRealTime()
    ->MinTime(2.0);

// --- leasehold as the server runs it: N concurrent writers as chains of
// asynchronous commands (Execute) on the I/O threads, not N threads.

void ServiceCheckoutCheckin(benchmark::State& state,
                            std::unique_ptr<Store> store) {
  const int writers = static_cast<int>(state.range(0));
  auto served = std::move(*testing::RunningService::Open(
      std::move(store), *clock_for_bench, kIoThreads));
  EngineService* service = &served->service();

  std::atomic<std::uint64_t> pairs{0};
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<bool> failed{false};
  // One writer: checkout, then check in, then the next key, until stopped.
  std::function<void(int, std::uint64_t)> pair = [&](int w, std::uint64_t i) {
    if (stop) {
      --running;
      return;
    }
    const std::string owner = "writer" + std::to_string(w);
    const std::string key = owner + ":" + std::to_string(i % 100);
    service->Execute<Result<CheckoutOutcome>>(
        [owner, key](Engine& e, Time now) {
          return e.Checkout(now,
                            {{"bench", key}, owner, seconds(30), owner, true});
        },
        [&, w, i, owner, key](Result<Result<CheckoutOutcome>> got) {
          if (!got || !got->has_value() || !(*got)->granted) failed = true;
          service->Execute<Result<WriteOutcome>>(
              [owner, key](Engine& e, Time now) {
                return e.Checkin(now, {"bench", key}, {"", owner});
              },
              [&, w, i](Result<Result<WriteOutcome>> back) {
                if (!back || !back->has_value() || !(*back)->done)
                  failed = true;
                ++pairs;
                pair(w, i + 1);
              });
        });
  };
  double seconds_run = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    running = writers;
    for (int w = 0; w < writers; ++w) pair(w, 0);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    stop = true;
    while (running > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seconds_run =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  if (failed) state.SkipWithError("a checkout or checkin failed");
  const auto stats = service->CommitStats();
  state.counters["pairs_per_second"] = static_cast<double>(pairs) / seconds_run;
  state.counters["entries_per_fsync"] =
      stats.batches ? static_cast<double>(stats.entries) /
                          static_cast<double>(stats.batches)
                    : 0;
  state.counters["ms_per_commit"] = stats.batches
                                        ? 1000.0 * stats.total_commit_seconds /
                                              static_cast<double>(stats.batches)
                                        : 0;
}

void BM_ServiceDurableCheckoutCheckin(benchmark::State& state) {
  const std::string path = FreshPath("service.db");
  ServiceCheckoutCheckin(state, std::move(*OpenSqliteStore(path)));
  RemoveDb(path);
}
BENCHMARK(BM_ServiceDurableCheckoutCheckin)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same with one PostgreSQL transaction per group commit.
void BM_PostgresServiceDurableCheckoutCheckin(benchmark::State& state) {
  auto store = FreshPostgresStore(state, "service");
  if (store != nullptr) ServiceCheckoutCheckin(state, std::move(store));
}
BENCHMARK(BM_PostgresServiceDurableCheckoutCheckin)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- baseline: the article's one UPDATE per operation, plain SQL ---------

std::string baseline_path;

sqlite3* OpenBaseline(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_busy_timeout(db, 60'000);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", nullptr,
               nullptr, nullptr);
  return db;
}

void BM_SqliteOneUpdatePerTransaction(benchmark::State& state) {
  if (state.thread_index() == 0) {
    baseline_path = FreshPath("baseline.db");
    sqlite3* db = OpenBaseline(baseline_path);
    sqlite3_exec(db,
                 "CREATE TABLE document (id INTEGER PRIMARY KEY, locked_by "
                 "TEXT, lock_expires INTEGER);"
                 "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n "
                 "WHERE i < 6399) INSERT INTO document (id) SELECT i FROM n;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  // Threads start their loops together, after thread 0's set-up above.
  sqlite3* db = nullptr;
  sqlite3_stmt* checkout = nullptr;
  sqlite3_stmt* checkin = nullptr;
  const std::string owner = "writer" + std::to_string(state.thread_index());
  std::uint64_t i = 0;
  bool opened = false;
  for (auto _ : state) {
    if (!opened) {
      db = OpenBaseline(baseline_path);
      sqlite3_prepare_v2(db,
                         "UPDATE document SET locked_by = ?1, lock_expires = "
                         "?2 WHERE id = ?3 AND (locked_by IS NULL OR "
                         "lock_expires < ?4)",
                         -1, &checkout, nullptr);
      sqlite3_prepare_v2(db,
                         "UPDATE document SET locked_by = NULL, lock_expires "
                         "= NULL WHERE id = ?1 AND locked_by = ?2",
                         -1, &checkin, nullptr);
      opened = true;
    }
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            clock_for_bench->Now().time_since_epoch())
            .count();
    const std::int64_t id = state.thread_index() * 100 + (i++ % 100);
    sqlite3_bind_text(checkout, 1, owner.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(checkout, 2, now + 30'000);
    sqlite3_bind_int64(checkout, 3, id);
    sqlite3_bind_int64(checkout, 4, now);
    if (sqlite3_step(checkout) != SQLITE_DONE || sqlite3_changes(db) != 1) {
      state.SkipWithError("baseline checkout failed");
    }
    sqlite3_reset(checkout);
    sqlite3_bind_int64(checkin, 1, id);
    sqlite3_bind_text(checkin, 2, owner.c_str(), -1, SQLITE_STATIC);
    if (sqlite3_step(checkin) != SQLITE_DONE) {
      state.SkipWithError("baseline checkin failed");
    }
    sqlite3_reset(checkin);
  }
  state.SetItemsProcessed(state.iterations());
  sqlite3_finalize(checkout);
  sqlite3_finalize(checkin);
  sqlite3_close(db);
}
BENCHMARK(BM_SqliteOneUpdatePerTransaction)
    ->Threads(1)
    ->Threads(16)
    ->Threads(64)
    ->UseRealTime()
    ->MinTime(2.0);

// --- restart with 1M keys ------------------------------------------------

constexpr int kRestartKeys = 1'000'000;

std::string MakeMillionKeyDb() {
  const std::string path = FreshPath("million.db");
  auto store = std::move(*OpenSqliteStore(path));
  const Time expires = clock_for_bench->Now() + seconds(3600);
  for (int start = 0; start < kRestartKeys; start += 50'000) {
    JournalBatch batch;
    for (int i = start; i < start + 50'000; ++i) {
      JournalEntry e;
      e.row.ns = "docs";
      e.row.key = "note:" + std::to_string(i);
      e.row.has_record = true;
      e.row.body = "Garden note " + std::to_string(i) + ", first draft";
      e.row.version = 1;
      if (i % 10 == 0) {  // one key in ten is checked out
        e.row.locked_by = "Asha";
        e.row.token = "3f2c9a1b7d4e8f60a1b2c3d4e5f60718";
        e.row.lock_expires_at = expires;
        e.row.fence = static_cast<Fence>(i + 1);
      }
      batch.push_back(std::move(e));
    }
    (void)store->Append(batch);
  }
  return path;
}

void BM_RestartWithOneMillionKeys(benchmark::State& state) {
  const std::string path = MakeMillionKeyDb();
  double bytes_per_key = 0, open_ms = 0, load_ms = 0;
  using Ms = std::chrono::duration<double, std::milli>;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    const auto t0 = std::chrono::steady_clock::now();
    auto store = OpenSqliteStore(path);  // includes the integrity check
    const auto t1 = std::chrono::steady_clock::now();
    auto engine = std::make_unique<Engine>();
    const Time now = clock_for_bench->Now();
    auto reserved = (*store)->Load({.key = [&](KeyRow&& row) {
      return engine->RestoreKey(now, std::move(row));
    }});
    if (!reserved || !engine->RestoreFences(reserved->fences).ok()) {
      state.SkipWithError("restore failed");
    }
    const auto t3 = std::chrono::steady_clock::now();
    const std::size_t after = mallinfo2().uordblks;
    bytes_per_key = static_cast<double>(after - before) / kRestartKeys;
    open_ms = Ms(t1 - t0).count();
    load_ms = Ms(t3 - t1).count();
    state.PauseTiming();
    engine.reset();
    store->reset();
    state.ResumeTiming();
  }
  state.counters["bytes_per_key"] = bytes_per_key;
  state.counters["open_and_check_ms"] = open_ms;
  state.counters["load_and_restore_ms"] = load_ms;
  RemoveDb(path);
}
BENCHMARK(BM_RestartWithOneMillionKeys)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- durable application locks: the store's share -----------------------

SessionRow BenchSession(SessionId id) {
  SessionRow r;
  r.id = id;
  r.name = "worker-" + std::to_string(id);
  r.caller = "svc-billing";
  r.ttl = std::chrono::milliseconds(30'000);
  r.opened_at = clock_for_bench->Now();
  return r;
}

LockRow BenchLock(SessionId session, std::uint64_t n) {
  LockRow r;
  r.session = session;
  r.owner = n % 4 == 0 ? LockOwner::kTransaction : LockOwner::kSession;
  r.ns = "docs";
  r.principal = "svc-billing";
  r.resource = "invoice:" + std::to_string(n);
  r.mode = n % 3 == 0 ? LockMode::kShared : LockMode::kExclusive;
  r.count = 1;
  r.fence = n + 1;
  r.since = clock_for_bench->Now();
  return r;
}

JournalEntry LockEntry(JournalEntry::Kind kind, LockRow row) {
  JournalEntry e;
  e.kind = kind;
  e.lock = std::move(row);
  return e;
}

// Batches of 32 lock entries as group commit would hand them over: 16
// grants and 16 releases (of the previous batch's grants), spread over 64
// sessions. One fsync per batch (synchronous=FULL).
void AppendLockBatches(benchmark::State& state, Store& store) {
  constexpr int kSessions = 64;
  constexpr int kHalf = 16;
  JournalBatch sessions;
  for (SessionId id = 1; id <= kSessions; ++id) {
    JournalEntry e;
    e.kind = JournalEntry::Kind::kPutSession;
    e.session = BenchSession(id);
    sessions.push_back(std::move(e));
  }
  if (!store.Append(sessions).ok()) state.SkipWithError("sessions failed");
  std::uint64_t n = 0;
  for (auto _ : state) {
    JournalBatch batch;
    batch.reserve(2 * kHalf);
    for (int i = 0; i < kHalf; ++i, ++n) {
      batch.push_back(LockEntry(JournalEntry::Kind::kPutLock,
                                BenchLock(n % kSessions + 1, n)));
      if (n >= kHalf) {
        const std::uint64_t old = n - kHalf;
        batch.push_back(LockEntry(JournalEntry::Kind::kDeleteLock,
                                  BenchLock(old % kSessions + 1, old)));
      }
    }
    if (!store.Append(batch).ok()) state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(state.iterations() * 2 * kHalf);
}

void BM_AppendLockBatches(benchmark::State& state) {
  const std::string path = FreshPath("locks.db");
  {
    auto store = std::move(*OpenSqliteStore(path));
    AppendLockBatches(state, *store);
  }
  RemoveDb(path);
}
BENCHMARK(BM_AppendLockBatches)->UseRealTime()->MinTime(2.0);

void BM_PostgresAppendLockBatches(benchmark::State& state) {
  auto store = FreshPostgresStore(state, "locks");
  if (store != nullptr) AppendLockBatches(state, *store);
}
BENCHMARK(BM_PostgresAppendLockBatches)->UseRealTime()->MinTime(2.0);

constexpr int kLockSessions = 100'000;
constexpr int kLocksPerSession = 10;

std::string MakeMillionLockDb() {
  const std::string path = FreshPath("million-locks.db");
  auto store = std::move(*OpenSqliteStore(path));
  JournalBatch batch;
  auto flush = [&] {
    (void)store->Append(batch);
    batch.clear();
  };
  for (SessionId id = 1; id <= kLockSessions; ++id) {
    JournalEntry e;
    e.kind = JournalEntry::Kind::kPutSession;
    e.session = BenchSession(id);
    batch.push_back(std::move(e));
    for (int i = 0; i < kLocksPerSession; ++i) {
      batch.push_back(LockEntry(JournalEntry::Kind::kPutLock,
                                BenchLock(id, id * kLocksPerSession + i)));
    }
    if (batch.size() >= 50'000) flush();
  }
  flush();
  return path;
}

// Opening (with its integrity check) and streaming every session and lock
// row through visitors that only count them: the store's share of a
// restart; the engine's restore comes on top.
void BM_LoadOneMillionLocks(benchmark::State& state) {
  const std::string path = MakeMillionLockDb();
  using Ms = std::chrono::duration<double, std::milli>;
  double open_ms = 0, load_ms = 0, load_cpu_ms = 0, heap_mb = 0;
  std::size_t sessions = 0, locks = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    const auto t0 = std::chrono::steady_clock::now();
    auto store = OpenSqliteStore(path);
    const auto t1 = std::chrono::steady_clock::now();
    sessions = locks = 0;
    const std::clock_t cpu = std::clock();  // one thread: the load's own
    auto reserved = (*store)->Load({
        .session =
            [&](SessionRow&&) {
              ++sessions;
              return Status::Ok();
            },
        .lock =
            [&](LockRow&&) {
              ++locks;
              return Status::Ok();
            },
    });
    const auto t2 = std::chrono::steady_clock::now();
    load_cpu_ms =
        1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
    if (!reserved || sessions != kLockSessions ||
        locks != std::size_t{kLockSessions} * kLocksPerSession) {
      state.SkipWithError("load failed");
    }
    heap_mb = static_cast<double>(mallinfo2().uordblks - before) / 1e6;
    open_ms = Ms(t1 - t0).count();
    load_ms = Ms(t2 - t1).count();
    state.PauseTiming();
    store->reset();
    state.ResumeTiming();
  }
  state.counters["open_and_check_ms"] = open_ms;
  state.counters["load_ms"] = load_ms;
  state.counters["load_cpu_ms"] = load_cpu_ms;
  state.counters["store_heap_mb"] = heap_mb;
  state.counters["file_mb"] =
      static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  RemoveDb(path);
}
BENCHMARK(BM_LoadOneMillionLocks)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace leasehold

BENCHMARK_MAIN();
