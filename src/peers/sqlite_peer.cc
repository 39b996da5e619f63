// A SQLite file as a peer: the reference article's design in plain SQL,
// through src/sqlite. Times are Unix milliseconds (INTEGER), "now" the
// database's clock, fixed for one statement. A claim is one UPDATE … WHERE
// free, a give-back one UPDATE … WHERE mine, each its own transaction
// (autocommit) in WAL mode. SQLite has one writer at a time: every UPDATE
// waits for the database's write lock, so an atomic UPDATE sees the other
// connection's committed claim. A writer that finds the file locked naps
// 50 µs and retries (SQLite's own busy timeout naps up to 100 ms, which
// lets one writer run far ahead).
//
// The race: tables leasehold_race_documents and leasehold_race_log, with
// synchronous=NORMAL (the race is about the decision; a flush per statement
// would only slow both designs alike). The benchmarks: one table of leases,
// leasehold_bench_leases, with synchronous=FULL, so each claim is on disk
// before it returns; a contender for a held row retries too (spin.h).
#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "peers/factories.h"
#include "peers/spin.h"
#include "sqlite/database.h"

namespace leasehold::peers {

namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

#define LH_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

// --- the race: ?1 document, ?2 user, ?3 TTL in ms, a body or a 0/1 answer.
constexpr const char* kRaceSchema = R"sql(
DROP TABLE IF EXISTS leasehold_race_log;
DROP TABLE IF EXISTS leasehold_race_documents;
CREATE TABLE leasehold_race_documents (
  doc_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  locked_by TEXT,
  lock_expires INTEGER
);
CREATE TABLE leasehold_race_log (
  log_id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_name TEXT NOT NULL,
  doc_id INTEGER NOT NULL,
  granted INTEGER NOT NULL
);
)sql";
constexpr const char* kReadForNaive =
    "SELECT locked_by, lock_expires IS NULL OR lock_expires <= " LH_NOW_MS
    " FROM leasehold_race_documents WHERE doc_id = ?1";
constexpr const char* kTake =
    "UPDATE leasehold_race_documents SET locked_by = ?2, lock_expires "
    "= " LH_NOW_MS " + ?3 WHERE doc_id = ?1";
constexpr const char* kTakeIfFree =
    "UPDATE leasehold_race_documents SET locked_by = ?2, lock_expires "
    "= " LH_NOW_MS
    " + ?3 WHERE doc_id = ?1 AND (locked_by IS NULL OR lock_expires "
    "<= " LH_NOW_MS " OR locked_by = ?2)";
constexpr const char* kSave =
    "UPDATE leasehold_race_documents SET body = ?3 WHERE doc_id = ?1 AND "
    "locked_by = ?2 AND lock_expires > " LH_NOW_MS;
constexpr const char* kCheckin =
    "UPDATE leasehold_race_documents SET locked_by = NULL, lock_expires = "
    "NULL WHERE doc_id = ?1 AND locked_by = ?2";
constexpr const char* kRead =
    "SELECT locked_by, coalesce(lock_expires > " LH_NOW_MS
    ", 0) FROM leasehold_race_documents WHERE doc_id = ?1";
constexpr const char* kLog =
    "INSERT INTO leasehold_race_log (user_name, doc_id, granted) VALUES "
    "(?2, ?1, ?3)";
constexpr const char* kWinnersPerDocument =
    "SELECT winners, count(*) FROM (SELECT doc_id, sum(granted) AS winners "
    "FROM leasehold_race_log GROUP BY doc_id) GROUP BY winners";
constexpr const char* kGrantsPerUser =
    "SELECT user_name, sum(granted) FROM leasehold_race_log GROUP BY "
    "user_name";

// --- the benchmarks: ?1 lease id, ?2 owner.
constexpr std::int64_t kIdleBase = std::int64_t{1} << 40;
constexpr const char* kLeaseSchema =
    "CREATE TABLE IF NOT EXISTS leasehold_bench_leases (id INTEGER PRIMARY "
    "KEY, locked_by TEXT, lock_expires INTEGER)";
constexpr const char* kLeaseIfFree =
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
  std::this_thread::sleep_for(microseconds(50));
  return 1;
}

using Db = std::unique_ptr<sqlite::Database>;

// A connection with short naps and `synchronous` (a per-connection
// setting: "NORMAL" or "FULL").
Result<Db> Open(const std::string& path, std::string_view synchronous) {
  auto db = std::make_unique<sqlite::Database>();
  Status st = db->Open(
      path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  if (!st.ok()) return std::unexpected(st);
  sqlite3_busy_handler(db->handle(), &RetryBusy, nullptr);
  st = db->Exec(fmt::format("PRAGMA synchronous={}", synchronous));
  if (!st.ok()) return std::unexpected(st);
  return db;
}

// Runs `s` (an UPDATE or INSERT) to the end; true iff it changed one row.
Result<bool> ChangedOneRow(sqlite::Database& db, sqlite::Statement& s,
                           std::string_view what) {
  const int rc = s.Step();
  s.Reset();
  if (rc != SQLITE_DONE) return std::unexpected(db.LastError(what));
  return db.Changes() == 1;
}

// Runs `sql` in one IMMEDIATE transaction, rolled back if it fails.
Status InTransaction(sqlite::Database& db, const std::string& sql) {
  if (Status st = db.Exec("BEGIN IMMEDIATE"); !st.ok()) return st;
  if (Status st = db.Exec(sql); !st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st;
  }
  return db.Exec("COMMIT");
}

class SqliteDocumentSession final : public DocumentSession {
 public:
  SqliteDocumentSession(Db db, std::string user)
      : db_(std::move(db)), user_(std::move(user)) {}

  Result<bool> Checkout(int doc, Variant variant, milliseconds ttl,
                        microseconds gap) override {
    if (variant == Variant::kAtomic) return Change(kTakeIfFree, doc, ttl);
    auto view = Query(kReadForNaive, doc);
    if (!view) return std::unexpected(view.error());
    const auto& [holder, free] = *view;
    if (!free && holder != user_) return false;
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
    return Change(kTake, doc, ttl);
  }

  Status Log(int doc, bool granted) override {
    auto s = Statement(kLog, doc);
    if (!s) return s.error();
    s->BindInt(3, granted ? 1 : 0);
    auto r = ChangedOneRow(*db_, *s, "race log insert");
    return r ? Status::Ok() : r.error();
  }

  Result<bool> Save(int doc, std::string_view body) override {
    auto s = Statement(kSave, doc);
    if (!s) return std::unexpected(s.error());
    s->BindText(3, body);
    return ChangedOneRow(*db_, *s, "save");
  }

  Result<bool> Checkin(int doc) override {
    auto s = Statement(kCheckin, doc);
    if (!s) return std::unexpected(s.error());
    return ChangedOneRow(*db_, *s, "check-in");
  }

  Result<DocumentView> Read(int doc) override {
    auto row = Query(kRead, doc);
    if (!row) return std::unexpected(row.error());
    return DocumentView{row->first, row->second};
  }

 private:
  // `sql` with ?1 the document and ?2 this user bound.
  Result<sqlite::Statement> Statement(const char* sql, int doc) {
    auto s = db_->Prepare(sql);
    if (!s) return std::unexpected(s.error());
    s->BindInt(1, doc);
    s->BindText(2, user_);
    return s;
  }

  Result<bool> Change(const char* sql, int doc, milliseconds ttl) {
    auto s = Statement(sql, doc);
    if (!s) return std::unexpected(s.error());
    s->BindInt(3, ttl.count());
    return ChangedOneRow(*db_, *s, "checkout");
  }

  // One row of (locked_by, flag) for `doc`.
  Result<std::pair<std::optional<std::string>, bool>> Query(const char* sql,
                                                            int doc) {
    auto s = db_->Prepare(sql);
    if (!s) return std::unexpected(s.error());
    s->BindInt(1, doc);
    const int rc = s->Step();
    if (rc == SQLITE_DONE) {
      return leasehold::Error(StatusCode::kNotFound,
                              fmt::format("document {} does not exist", doc));
    }
    if (rc != SQLITE_ROW) return std::unexpected(db_->LastError("read"));
    std::optional<std::string> holder;
    if (!s->ColumnIsNull(0)) holder = s->ColumnText(0);
    return std::pair{holder, s->ColumnInt(1) != 0};
  }

  Db db_;
  std::string user_;
};

std::int64_t LeaseId(std::uint64_t name) {
  return name == kHotName ? -1 : static_cast<std::int64_t>(name);
}

class SqliteLockClient final : public LockClient {
 public:
  SqliteLockClient(Db db, sqlite::Statement take, sqlite::Statement give,
                   int index)
      : db_(std::move(db)),
        take_(std::move(take)),
        give_(std::move(give)),
        owner_(fmt::format("c{}", index)) {}

  Result<bool> Acquire(std::uint64_t name, milliseconds wait) override {
    if (wait.count() == 0) return Change(take_, LeaseId(name));
    return SpinAcquire(wait, [&] { return Change(take_, LeaseId(name)); });
  }
  Status Release(std::uint64_t name) override {
    return GiveBack(LeaseId(name));
  }
  Result<bool> Checkout(std::uint64_t key) override {
    return Change(take_, LeaseId(key));
  }
  Status Checkin(std::uint64_t key) override { return GiveBack(LeaseId(key)); }

 private:
  Result<bool> Change(sqlite::Statement& s, std::int64_t id) {
    s.BindInt(1, id);
    s.BindText(2, owner_);
    return ChangedOneRow(*db_, s, "update");
  }
  Status GiveBack(std::int64_t id) {
    auto r = Change(give_, id);
    if (!r) return r.error();
    if (!*r) {
      return Status(StatusCode::kNotHeld, fmt::format("row {} not held", id));
    }
    return Status::Ok();
  }

  Db db_;
  sqlite::Statement take_, give_;
  const std::string owner_;
};

class SqliteIdle final : public IdleLocks {
 public:
  explicit SqliteIdle(Db db) : db_(std::move(db)) {}
  ~SqliteIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    auto s = db_->Prepare(kHoldIdle);
    if (!s) return s.error();
    s->BindInt(1, kIdleBase);
    s->BindInt(2, kIdleBase + static_cast<std::int64_t>(count) - 1);
    if (s->Step() != SQLITE_DONE) return db_->LastError("idle rows");
    held_ = true;
    return Status::Ok();
  }

  Status Release() override {
    if (!held_) return Status::Ok();
    held_ = false;
    return db_->Exec(fmt::format(
        "DELETE FROM leasehold_bench_leases WHERE id >= {}", kIdleBase));
  }

 private:
  Db db_;
  bool held_ = false;
};

class SqlitePeer final : public Peer {
 public:
  explicit SqlitePeer(std::string path) : path_(std::move(path)) {}

  std::string_view Kind() const override { return "sqlite"; }
  std::string_view Name() const override { return "SQLite"; }

  bool HasDocuments() const override { return true; }
  bool SupportsNaive() const override { return true; }

  Status PrepareDocuments(int rows) override {
    auto db = Open(path_, "NORMAL");
    if (!db) return db.error();
    if (Status st = (*db)->Exec("PRAGMA journal_mode=WAL"); !st.ok()) {
      return st;
    }
    return InTransaction(
        **db, fmt::format("{} WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                          "SELECT i + 1 FROM n WHERE i < {}) INSERT INTO "
                          "leasehold_race_documents (doc_id, title, body) "
                          "SELECT i, 'Document ' || i, 'draft' FROM n",
                          kRaceSchema, rows));
  }

  Result<std::unique_ptr<DocumentSession>> OpenDocumentSession(
      const std::string& user) override {
    auto db = Open(path_, "NORMAL");
    if (!db) return std::unexpected(db.error());
    return std::make_unique<SqliteDocumentSession>(std::move(*db), user);
  }

  Result<std::optional<RaceLog>> CountRaceLog() override {
    auto db = Open(path_, "NORMAL");
    if (!db) return std::unexpected(db.error());
    RaceLog log;
    auto winners = (*db)->Prepare(kWinnersPerDocument);
    if (!winners) return std::unexpected(winners.error());
    while (winners->Step() == SQLITE_ROW) {
      log.documents_by_winners[static_cast<int>(winners->ColumnInt(0))] =
          static_cast<int>(winners->ColumnInt(1));
    }
    auto grants = (*db)->Prepare(kGrantsPerUser);
    if (!grants) return std::unexpected(grants.error());
    while (grants->Step() == SQLITE_ROW) {
      log.grants_by_user[grants->ColumnText(0)] =
          static_cast<int>(grants->ColumnInt(1));
    }
    return log;
  }

  Status Prepare(Workload, std::uint64_t keys) override {
    auto db = Open(path_, "FULL");
    if (!db) return db.error();
    sqlite::Database& d = **db;
    if (Status st = d.Exec("PRAGMA journal_mode=WAL"); !st.ok()) return st;
    if (Status st = d.Exec(kLeaseSchema); !st.ok()) return st;
    // Rows -1 (the hot name) and 0..keys-1, all free; rebuilt only when the
    // table holds anything else.
    const auto want = static_cast<std::int64_t>(keys) + 1;
    auto total = d.QueryInt("SELECT count(*) FROM leasehold_bench_leases");
    auto free = d.QueryInt(
        "SELECT count(*) FROM leasehold_bench_leases WHERE locked_by IS NULL");
    if (!total) return total.error();
    if (!free) return free.error();
    if (*total == want && *free == want) return Status::Ok();
    return InTransaction(
        d, fmt::format("DELETE FROM leasehold_bench_leases; WITH RECURSIVE "
                       "n(k) AS (SELECT -1 UNION ALL SELECT k + 1 FROM n "
                       "WHERE k < {}) INSERT INTO leasehold_bench_leases (id) "
                       "SELECT k FROM n",
                       want - 2));
  }

  std::string Durability(Workload) const override {
    return "yes: one UPDATE per transaction, WAL, synchronous=FULL";
  }
  bool Durable(Workload) const override { return true; }

  Result<std::unique_ptr<LockClient>> Connect(int index) override {
    auto db = Open(path_, "FULL");
    if (!db) return std::unexpected(db.error());
    auto take = (*db)->Prepare(kLeaseIfFree);
    if (!take) return std::unexpected(take.error());
    auto give = (*db)->Prepare(kGiveBack);
    if (!give) return std::unexpected(give.error());
    return std::make_unique<SqliteLockClient>(std::move(*db), std::move(*take),
                                              std::move(*give), index);
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto db = Open(path_, "FULL");
    if (!db) return std::unexpected(db.error());
    auto idle = std::make_unique<SqliteIdle>(std::move(*db));
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  const std::string path_;
};

}  // namespace

std::unique_ptr<Peer> MakeSqlitePeer(std::string path) {
  return std::make_unique<SqlitePeer>(std::move(path));
}

}  // namespace leasehold::peers
