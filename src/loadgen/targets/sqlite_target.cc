// A SQLite file as a target: the reference article's design in plain SQL.
// One table of leases (id, locked_by, lock_expires in Unix ms); acquire and
// checkout are one UPDATE … WHERE free, release and check-in one UPDATE …
// WHERE mine, each its own transaction (autocommit) in WAL mode with
// synchronous=FULL, so each is on disk before it returns. One connection
// per client; a writer that finds the file locked naps 50 µs and retries
// (SQLite's own busy timeout naps up to 100 ms, which lets one writer run
// far ahead); a contender for a held row retries too (spin.h).
#include <fmt/format.h>
#include <sqlite3.h>

#include <thread>

#include "loadgen/targets/factories.h"
#include "loadgen/targets/spin.h"

namespace leasehold::loadgen {

namespace {

constexpr std::int64_t kIdleBase = std::int64_t{1} << 40;

#define LH_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
constexpr const char* kTakeIfFree =
    "UPDATE leasehold_bench_leases SET locked_by = ?2, lock_expires "
    "= " LH_NOW_MS
    " + 60000 WHERE id = ?1 AND (locked_by IS NULL OR "
    "lock_expires <= " LH_NOW_MS ")";
constexpr const char* kGiveBack =
    "UPDATE leasehold_bench_leases SET locked_by = NULL, lock_expires = NULL "
    "WHERE id = ?1 AND locked_by = ?2";
constexpr const char* kHoldIdle =
    "WITH RECURSIVE n(k) AS (SELECT ?1 UNION ALL SELECT k + 1 FROM n WHERE k "
    "< ?2) INSERT INTO leasehold_bench_leases SELECT k, 'idle', " LH_NOW_MS
    " + 3600000 FROM n";
#undef LH_NOW_MS

int RetryBusy(void*, int attempts) {
  constexpr int kMaxAttempts = 200'000;  // about 10 s of 50 µs naps
  if (attempts >= kMaxAttempts) return 0;
  std::this_thread::sleep_for(std::chrono::microseconds(50));
  return 1;
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

Status Failure(sqlite3* db, std::string_view what) {
  return Status(StatusCode::kUnavailable,
                fmt::format("SQLite {}: {}", what, sqlite3_errmsg(db)));
}

Status Exec(sqlite3* db, const std::string& sql) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Failure(db, "statement");
  }
  return Status::Ok();
}

// A connection with FULL sync (a per-connection setting) and short naps.
Result<Db> Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) return std::unexpected(Failure(db.get(), "open"));
  sqlite3_busy_handler(db.get(), &RetryBusy, nullptr);
  if (Status st = Exec(db.get(), "PRAGMA synchronous=FULL"); !st.ok()) {
    return std::unexpected(st);
  }
  return db;
}

Result<Stmt> Compile(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw,
                         nullptr) != SQLITE_OK) {
    return std::unexpected(Failure(db, "prepare"));
  }
  return Stmt(raw);
}

std::int64_t Id(std::uint64_t name) {
  return name == kHotName ? -1 : static_cast<std::int64_t>(name);
}

class SqliteClient final : public TargetClient {
 public:
  SqliteClient(Db db, Stmt take, Stmt give, int index)
      : db_(std::move(db)),
        take_(std::move(take)),
        give_(std::move(give)),
        owner_(fmt::format("c{}", index)) {}

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    if (wait.count() == 0) return Change(take_.get(), Id(name));
    return SpinAcquire(wait, [&] { return Change(take_.get(), Id(name)); });
  }
  Status Release(std::uint64_t name) override { return GiveBack(Id(name)); }
  Result<bool> Checkout(std::uint64_t key) override {
    return Change(take_.get(), Id(key));
  }
  Status Checkin(std::uint64_t key) override { return GiveBack(Id(key)); }

 private:
  // Runs an UPDATE; true iff it changed one row.
  Result<bool> Change(sqlite3_stmt* s, std::int64_t id) {
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, owner_.data(), static_cast<int>(owner_.size()),
                      SQLITE_STATIC);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return std::unexpected(Failure(db_.get(), "update"));
    return sqlite3_changes(db_.get()) == 1;
  }
  Status GiveBack(std::int64_t id) {
    auto r = Change(give_.get(), id);
    if (!r) return r.error();
    if (!*r)
      return Status(StatusCode::kNotHeld, fmt::format("row {} not held", id));
    return Status::Ok();
  }

  Db db_;
  Stmt take_, give_;
  const std::string owner_;
};

class SqliteIdle final : public IdleLocks {
 public:
  explicit SqliteIdle(Db db) : db_(std::move(db)) {}
  ~SqliteIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    auto s = Compile(db_.get(), kHoldIdle);
    if (!s) return s.error();
    sqlite3_bind_int64(s->get(), 1, kIdleBase);
    sqlite3_bind_int64(s->get(), 2,
                       kIdleBase + static_cast<std::int64_t>(count) - 1);
    if (sqlite3_step(s->get()) != SQLITE_DONE) {
      return Failure(db_.get(), "idle rows");
    }
    held_ = true;
    return Status::Ok();
  }

  Status Release() override {
    if (!held_) return Status::Ok();
    held_ = false;
    return Exec(db_.get(),
                fmt::format("DELETE FROM leasehold_bench_leases WHERE id >= {}",
                            kIdleBase));
  }

 private:
  Db db_;
  bool held_ = false;
};

class SqliteTarget final : public Target {
 public:
  explicit SqliteTarget(std::string path) : path_(std::move(path)) {}

  std::string_view Kind() const override { return "sqlite"; }

  Status Prepare(Workload, std::uint64_t keys) override {
    auto db = Open(path_);
    if (!db) return db.error();
    sqlite3* d = db->get();
    if (Status st = Exec(d, "PRAGMA journal_mode=WAL"); !st.ok()) return st;
    if (Status st = Exec(d,
                         "CREATE TABLE IF NOT EXISTS leasehold_bench_leases ("
                         "id INTEGER PRIMARY KEY, locked_by TEXT, "
                         "lock_expires INTEGER)");
        !st.ok()) {
      return st;
    }
    // Rows -1 (the hot name) and 0..keys-1, all free; rebuilt only when the
    // table holds anything else.
    auto count = Compile(
        d,
        "SELECT count(*), count(*) FILTER (WHERE locked_by IS NULL) FROM "
        "leasehold_bench_leases");
    if (!count) return count.error();
    sqlite3_step(count->get());
    const auto total = sqlite3_column_int64(count->get(), 0);
    const auto free = sqlite3_column_int64(count->get(), 1);
    count->reset();
    const auto want = static_cast<std::int64_t>(keys) + 1;
    if (total == want && free == want) return Status::Ok();
    return Exec(
        d, fmt::format("BEGIN IMMEDIATE; DELETE FROM leasehold_bench_leases; "
                       "WITH RECURSIVE n(k) AS (SELECT -1 UNION ALL SELECT "
                       "k + 1 FROM n WHERE k < {}) INSERT INTO "
                       "leasehold_bench_leases (id) SELECT k FROM n; COMMIT",
                       want - 2));
  }

  std::string Durability(Workload) const override {
    return "yes: one UPDATE per transaction, WAL, synchronous=FULL";
  }
  bool Durable(Workload) const override { return true; }

  Result<std::unique_ptr<TargetClient>> Connect(int index) override {
    auto db = Open(path_);
    if (!db) return std::unexpected(db.error());
    auto take = Compile(db->get(), kTakeIfFree);
    if (!take) return std::unexpected(take.error());
    auto give = Compile(db->get(), kGiveBack);
    if (!give) return std::unexpected(give.error());
    return std::make_unique<SqliteClient>(std::move(*db), std::move(*take),
                                          std::move(*give), index);
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto db = Open(path_);
    if (!db) return std::unexpected(db.error());
    auto idle = std::make_unique<SqliteIdle>(std::move(*db));
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  const std::string path_;
};

}  // namespace

std::unique_ptr<Target> MakeSqliteTarget(std::string path) {
  return std::make_unique<SqliteTarget>(std::move(path));
}

}  // namespace leasehold::loadgen
