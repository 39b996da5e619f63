#include "race/sqlite_target.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <thread>
#include <utility>

#include "store/sqlite/sqlite_db.h"

namespace leasehold::race {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Times are stored as UTC text with milliseconds, which sorts as it
// compares; "now" is the database's clock, fixed for one statement.
#define LH_NOW "strftime('%Y-%m-%d %H:%M:%f', 'now')"
#define LH_NOW_PLUS_TTL "strftime('%Y-%m-%d %H:%M:%f', 'now', ?3)"

constexpr const char* kSchema = R"sql(
DROP TABLE IF EXISTS leasehold_race_log;
DROP TABLE IF EXISTS leasehold_race_documents;
CREATE TABLE leasehold_race_documents (
  doc_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  locked_by TEXT,
  lock_expires TEXT
);
CREATE TABLE leasehold_race_log (
  log_id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_name TEXT NOT NULL,
  doc_id INTEGER NOT NULL,
  granted INTEGER NOT NULL
);
)sql";

constexpr const char* kReadForNaive =
    "SELECT locked_by, lock_expires IS NULL OR lock_expires <= " LH_NOW
    " FROM leasehold_race_documents WHERE doc_id = ?1";
constexpr const char* kTake =
    "UPDATE leasehold_race_documents SET locked_by = ?2, lock_expires "
    "= " LH_NOW_PLUS_TTL " WHERE doc_id = ?1";
constexpr const char* kTakeIfFree =
    "UPDATE leasehold_race_documents SET locked_by = ?2, lock_expires "
    "= " LH_NOW_PLUS_TTL
    " WHERE doc_id = ?1 AND (locked_by IS NULL OR lock_expires <= " LH_NOW
    " OR locked_by = ?2)";
constexpr const char* kSave =
    "UPDATE leasehold_race_documents SET body = ?3 WHERE doc_id = ?1 AND "
    "locked_by = ?2 AND lock_expires > " LH_NOW;
constexpr const char* kCheckin =
    "UPDATE leasehold_race_documents SET locked_by = NULL, lock_expires = "
    "NULL WHERE doc_id = ?1 AND locked_by = ?2";
constexpr const char* kRead =
    "SELECT locked_by, coalesce(lock_expires > " LH_NOW
    ", 0) FROM leasehold_race_documents WHERE doc_id = ?1";
constexpr const char* kLog =
    "INSERT INTO leasehold_race_log (user_name, doc_id, granted) VALUES "
    "(?1, ?2, ?3)";
constexpr const char* kWinnersPerDocument =
    "SELECT winners, count(*) FROM (SELECT doc_id, sum(granted) AS winners "
    "FROM leasehold_race_log GROUP BY doc_id) GROUP BY winners";
constexpr const char* kGrantsPerUser =
    "SELECT user_name, sum(granted) FROM leasehold_race_log GROUP BY "
    "user_name";

#undef LH_NOW
#undef LH_NOW_PLUS_TTL

// Waits for a lock in short, even steps (SQLite's own busy timeout sleeps
// up to 100 ms at a time, which would let one session run far ahead).
int RetryBusy(void*, int attempts) {
  constexpr int kMaxAttempts = 200'000;  // about 10 s of 50 us naps
  if (attempts >= kMaxAttempts) return 0;
  std::this_thread::sleep_for(microseconds(50));
  return 1;
}

using Db = std::unique_ptr<sqlite::Database>;

Result<Db> Connect(const std::string& path) {
  auto db = std::make_unique<sqlite::Database>();
  Status st = db->Open(
      path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX);
  if (!st.ok()) return std::unexpected(st);
  sqlite3_busy_handler(db->handle(), &RetryBusy, nullptr);
  // WAL without an fsync per commit: the race is about the decision, and
  // a flush per statement would only slow both designs alike.
  if (st = db->Exec("PRAGMA synchronous=NORMAL"); !st.ok()) {
    return std::unexpected(st);
  }
  return db;
}

std::string TtlModifier(milliseconds ttl) {
  return fmt::format("+{}.{:03} seconds", ttl.count() / 1000,
                     ttl.count() % 1000);
}

class SqliteSession final : public TargetSession {
 public:
  SqliteSession(Db db, std::string user)
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
    auto s = db_->Prepare(kLog);
    if (!s) return s.error();
    s->BindText(1, user_);
    s->BindInt(2, doc);
    s->BindInt(3, granted ? 1 : 0);
    if (s->Step() != SQLITE_DONE) return db_->LastError("race log insert");
    return Status::Ok();
  }

  Result<bool> Save(int doc, std::string_view body) override {
    auto s = db_->Prepare(kSave);
    if (!s) return std::unexpected(s.error());
    s->BindInt(1, doc);
    s->BindText(2, user_);
    s->BindText(3, body);
    return Run(*s, "save");
  }

  Result<bool> Checkin(int doc) override {
    auto s = db_->Prepare(kCheckin);
    if (!s) return std::unexpected(s.error());
    s->BindInt(1, doc);
    s->BindText(2, user_);
    return Run(*s, "check-in");
  }

  Result<DocumentView> Read(int doc) override {
    auto row = Query(kRead, doc);
    if (!row) return std::unexpected(row.error());
    return DocumentView{row->first, row->second};
  }

 private:
  // Runs an UPDATE; true iff it changed exactly one row.
  Result<bool> Run(sqlite::Statement& s, std::string_view what) {
    if (s.Step() != SQLITE_DONE) {
      return std::unexpected(db_->LastError(what));
    }
    return sqlite3_changes(db_->handle()) == 1;
  }

  Result<bool> Change(const char* sql, int doc, milliseconds ttl) {
    auto s = db_->Prepare(sql);
    if (!s) return std::unexpected(s.error());
    s->BindInt(1, doc);
    s->BindText(2, user_);
    s->BindText(3, TtlModifier(ttl));
    return Run(*s, "checkout");
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

class SqliteTarget final : public Target {
 public:
  explicit SqliteTarget(std::string path) : path_(std::move(path)) {}

  std::string_view Engine() const override { return "SQLite"; }
  bool SupportsNaive() const override { return true; }

  Status Prepare(int rows) override {
    auto conn = Connect(path_);
    if (!conn) return conn.error();
    sqlite::Database* db = conn->get();
    if (Status st = db->Exec("PRAGMA journal_mode=WAL"); !st.ok()) return st;
    if (Status st = db->Exec("BEGIN IMMEDIATE"); !st.ok()) return st;
    Status st = db->Exec(kSchema);
    if (st.ok()) {
      st = db->Exec(fmt::format(
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
          "WHERE i < {}) INSERT INTO leasehold_race_documents (doc_id, "
          "title, body) SELECT i, 'Document ' || i, 'draft' FROM n",
          rows));
    }
    if (!st.ok()) {
      (void)db->Exec("ROLLBACK");
      return st;
    }
    return db->Exec("COMMIT");
  }

  Result<std::unique_ptr<TargetSession>> Open(
      const std::string& user) override {
    auto db = Connect(path_);
    if (!db) return std::unexpected(db.error());
    return std::make_unique<SqliteSession>(std::move(*db), user);
  }

  Result<std::optional<Tally>> TallyLog(int documents, int sessions) override {
    auto conn = Connect(path_);
    if (!conn) return std::unexpected(conn.error());
    sqlite::Database* db = conn->get();
    Tally tally;
    tally.documents = documents;
    for (int w = 0; w <= std::max(2, sessions); ++w) {
      tally.documents_by_winners[w] = 0;
    }
    auto winners = db->Prepare(kWinnersPerDocument);
    if (!winners) return std::unexpected(winners.error());
    int logged = 0;
    while (winners->Step() == SQLITE_ROW) {
      const auto docs = static_cast<int>(winners->ColumnInt(1));
      tally.documents_by_winners[static_cast<int>(winners->ColumnInt(0))] +=
          docs;
      logged += docs;
    }
    tally.documents_by_winners[0] += documents - logged;
    auto grants = db->Prepare(kGrantsPerUser);
    if (!grants) return std::unexpected(grants.error());
    while (grants->Step() == SQLITE_ROW) {
      tally.grants_by_session[grants->ColumnText(0)] =
          static_cast<int>(grants->ColumnInt(1));
    }
    return tally;
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<Target> MakeSqliteTarget(std::string path) {
  return std::make_unique<SqliteTarget>(std::move(path));
}

}  // namespace leasehold::race
