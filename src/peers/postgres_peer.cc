// PostgreSQL as a peer (libpq through src/pg, one blocking connection per
// session or client, every statement its own transaction, prepared once per
// connection). now() is the start of the statement's own transaction.
//
// The race: tables leasehold_race_documents and leasehold_race_log; the
// naive checkout reads then writes, the atomic one is one UPDATE whose
// WHERE holds the whole condition.
//
// The benchmarks' application locks, mode "advisory" (the default):
// pg_try_advisory_lock when not waiting; pg_advisory_lock under lock_timeout
// when waiting, so a contender queues in the server's lock manager;
// pg_advisory_unlock. Advisory locks live in shared memory and end with their
// connection. Checkouts (and application locks in mode "update"): the reference
// article's one UPDATE … WHERE free on a lease table, and an UPDATE to
// check in; each commits with the server's synchronous_commit and fsync
// settings, read at Prepare. A waiting UPDATE contender retries (spin.h).
#include <fmt/format.h>

#include <array>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "peers/factories.h"
#include "peers/spin.h"
#include "pg/connection.h"

namespace leasehold::peers {

namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

using pg::Connection;
using pg::Exec;
using pg::Failure;
using pg::PgResult;
using pg::Value;
using Sql = pg::Statement;

// --- the race: $1 document, $2 user, $3 TTL in ms, a body or a 0/1 answer.
constexpr const char* kRaceSchema = R"sql(
DROP TABLE IF EXISTS leasehold_race_log;
DROP TABLE IF EXISTS leasehold_race_documents;
CREATE TABLE leasehold_race_documents (
  doc_id integer PRIMARY KEY,
  title varchar(40) NOT NULL,
  body varchar(200) NOT NULL,
  locked_by varchar(40),
  lock_expires timestamptz
);
CREATE TABLE leasehold_race_log (
  log_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_name varchar(40) NOT NULL,
  doc_id integer NOT NULL,
  granted integer NOT NULL
);
)sql";
constexpr Sql kReadForNaive{
    "read_for_naive",
    "SELECT locked_by, lock_expires IS NULL OR lock_expires <= now() "
    "FROM leasehold_race_documents WHERE doc_id = $1",
    1};
constexpr Sql kTake{
    "take",
    "UPDATE leasehold_race_documents SET locked_by = $2, "
    "lock_expires = now() + $3::integer * interval '1 millisecond' "
    "WHERE doc_id = $1",
    3};
constexpr Sql kTakeDocumentIfFree{
    "take_document_if_free",
    "UPDATE leasehold_race_documents SET locked_by = $2, "
    "lock_expires = now() + $3::integer * interval '1 millisecond' "
    "WHERE doc_id = $1 AND (locked_by IS NULL OR lock_expires <= now() "
    "OR locked_by = $2)",
    3};
constexpr Sql kSave{"save",
                    "UPDATE leasehold_race_documents SET body = $3 WHERE "
                    "doc_id = $1 AND locked_by = $2 AND lock_expires > now()",
                    3};
constexpr Sql kCheckin{"checkin",
                       "UPDATE leasehold_race_documents SET locked_by = NULL, "
                       "lock_expires = NULL WHERE doc_id = $1 AND "
                       "locked_by = $2",
                       2};
constexpr Sql kRead{"read",
                    "SELECT locked_by, coalesce(lock_expires > now(), false) "
                    "FROM leasehold_race_documents WHERE doc_id = $1",
                    1};
constexpr Sql kLog{"log",
                   "INSERT INTO leasehold_race_log (user_name, doc_id, "
                   "granted) VALUES ($2, $1, $3)",
                   3};
constexpr std::array kRaceStatements{
    kReadForNaive, kTake, kTakeDocumentIfFree, kSave, kCheckin, kRead, kLog};
constexpr const char* kWinnersPerDocument =
    "SELECT winners, count(*) FROM (SELECT doc_id, sum(granted) AS winners "
    "FROM leasehold_race_log GROUP BY doc_id) AS d GROUP BY winners";
constexpr const char* kGrantsPerUser =
    "SELECT user_name, sum(granted) FROM leasehold_race_log GROUP BY "
    "user_name";

class PostgresDocumentSession final : public DocumentSession {
 public:
  PostgresDocumentSession(Connection conn, std::string user)
      : conn_(std::move(conn)), user_(std::move(user)) {}

  Status PrepareStatements() {
    return pg::Prepare(conn_.get(), kRaceStatements);
  }

  Result<bool> Checkout(int doc, Variant variant, milliseconds ttl,
                        microseconds gap) override {
    const std::string ms = std::to_string(ttl.count());
    if (variant == Variant::kAtomic) {
      return Change(kTakeDocumentIfFree, doc, ms);
    }
    auto row = Row(kReadForNaive, doc);
    if (!row) return std::unexpected(row.error());
    const auto& [holder, free] = *row;
    if (!free && holder != user_) return false;
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
    return Change(kTake, doc, ms);
  }

  Status Log(int doc, bool granted) override {
    auto r = Run(kLog, doc, granted ? "1" : "0");
    return r ? Status::Ok() : r.error();
  }

  Result<bool> Save(int doc, std::string_view body) override {
    return Change(kSave, doc, std::string(body));
  }

  Result<bool> Checkin(int doc) override { return Change(kCheckin, doc, ""); }

  Result<DocumentView> Read(int doc) override {
    auto row = Row(kRead, doc);
    if (!row) return std::unexpected(row.error());
    return DocumentView{row->first, row->second};
  }

 private:
  // Runs a prepared statement with ($1 doc, $2 user[, $3 extra]).
  Result<PgResult> Run(const Sql& sql, int doc, const std::string& extra) {
    const std::string id = std::to_string(doc);
    const std::array<const char*, 3> values{id.c_str(), user_.c_str(),
                                            extra.c_str()};
    return pg::Run(conn_.get(), sql, values);
  }

  Result<bool> Change(const Sql& sql, int doc, const std::string& extra) {
    auto r = Run(sql, doc, extra);
    if (!r) return std::unexpected(r.error());
    return pg::ChangedOneRow(*r);
  }

  // A SELECT of (locked_by, flag) for one document.
  Result<std::pair<std::optional<std::string>, bool>> Row(const Sql& sql,
                                                          int doc) {
    auto r = Run(sql, doc, "");
    if (!r) return std::unexpected(r.error());
    PGresult* res = r->get();
    if (PQntuples(res) != 1) {
      return leasehold::Error(StatusCode::kNotFound,
                              fmt::format("document {} does not exist", doc));
    }
    std::optional<std::string> holder;
    if (PQgetisnull(res, 0, 0) == 0) holder = PQgetvalue(res, 0, 0);
    return std::pair{holder, std::string_view(PQgetvalue(res, 0, 1)) == "t"};
  }

  Connection conn_;
  std::string user_;
};

// Rows of (integer, integer) of `sql` into `out`.
Status CountInto(PGconn* conn, const char* sql, std::map<int, int>& out) {
  auto r = Exec(conn, sql);
  if (!r) return r.error();
  for (int i = 0; i < PQntuples(r->get()); ++i) {
    out[std::stoi(PQgetvalue(r->get(), i, 0))] =
        std::stoi(PQgetvalue(r->get(), i, 1));
  }
  return Status::Ok();
}

// --- the benchmarks: $1 lease id, $2 owner.

// Idle locks and rows use names from here up, apart from the scenarios'.
constexpr std::int64_t kIdleBase = std::int64_t{1} << 40;
constexpr int kIdleConnections = 4;

constexpr Sql kTryAdvisory{"try_advisory",
                           "SELECT pg_try_advisory_lock($1::bigint)", 1};
constexpr Sql kAdvisory{"advisory", "SELECT pg_advisory_lock($1::bigint)", 1};
constexpr Sql kUnlockAdvisory{"unlock_advisory",
                              "SELECT pg_advisory_unlock($1::bigint)", 1};
constexpr Sql kTakeIfFree{
    "take_if_free",
    "UPDATE leasehold_bench_leases SET locked_by = $2, lock_expires = now() "
    "+ interval '60 seconds' WHERE id = $1::bigint AND (locked_by IS NULL "
    "OR lock_expires <= now())",
    2};
constexpr Sql kGiveBack{"give_back",
                        "UPDATE leasehold_bench_leases SET locked_by = NULL, "
                        "lock_expires = NULL WHERE id = $1::bigint AND "
                        "locked_by = $2",
                        2};
constexpr std::array kStatements{kTryAdvisory, kAdvisory, kUnlockAdvisory,
                                 kTakeIfFree, kGiveBack};

std::string Id(std::uint64_t name) {
  return name == kHotName ? "-1" : std::to_string(name);
}

class PostgresLockClient final : public LockClient {
 public:
  PostgresLockClient(Connection conn, bool advisory, int index)
      : conn_(std::move(conn)),
        advisory_(advisory),
        owner_(fmt::format("c{}", index)) {}

  Status PrepareStatements() { return pg::Prepare(conn_.get(), kStatements); }

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    const std::string id = Id(name);
    if (!advisory_) {
      if (wait.count() == 0) return Change(kTakeIfFree, id);
      return SpinAcquire(wait, [&] { return Change(kTakeIfFree, id); });
    }
    if (wait.count() == 0) return Flag(kTryAdvisory, id);
    if (wait != lock_timeout_) {
      auto set =
          Exec(conn_.get(), fmt::format("SET lock_timeout = {}", wait.count()));
      if (!set) return std::unexpected(set.error());
      lock_timeout_ = wait;
    }
    auto r = Run(kAdvisory, id);
    if (r) return true;
    if (LockTimedOut()) return false;
    return std::unexpected(r.error());
  }

  Status Release(std::uint64_t name) override {
    if (!advisory_) return GiveBack(Id(name));
    auto r = Flag(kUnlockAdvisory, Id(name));
    if (!r) return r.error();
    if (!*r) return Status(StatusCode::kNotHeld, "advisory lock not held");
    return Status::Ok();
  }

  Result<bool> Checkout(std::uint64_t key) override {
    return Change(kTakeIfFree, std::to_string(key));
  }
  Status Checkin(std::uint64_t key) override {
    return GiveBack(std::to_string(key));
  }

 private:
  Result<PgResult> Run(const Sql& sql, const std::string& id) {
    const std::array<const char*, 2> values{id.c_str(), owner_.c_str()};
    return pg::Run(conn_.get(), sql, values, &last_state_);
  }
  // lock_not_available: lock_timeout ran out.
  bool LockTimedOut() const { return last_state_ == "55P03"; }

  // A SELECT of one boolean.
  Result<bool> Flag(const Sql& sql, const std::string& id) {
    auto r = Run(sql, id);
    if (!r) return std::unexpected(r.error());
    return PQntuples(r->get()) == 1 &&
           std::string_view(PQgetvalue(r->get(), 0, 0)) == "t";
  }
  // An UPDATE: true iff it changed one row.
  Result<bool> Change(const Sql& sql, const std::string& id) {
    auto r = Run(sql, id);
    if (!r) return std::unexpected(r.error());
    return pg::ChangedOneRow(*r);
  }
  Status GiveBack(const std::string& id) {
    auto r = Change(kGiveBack, id);
    if (!r) return r.error();
    if (!*r) return Status(StatusCode::kNotHeld, "row " + id + " not held");
    return Status::Ok();
  }

  Connection conn_;
  const bool advisory_;
  const std::string owner_;
  std::chrono::milliseconds lock_timeout_{0};
  std::string last_state_;
};

// Advisory: kIdleConnections connections each holding a share. Update:
// rows marked held, deleted on release.
class PostgresIdle final : public IdleLocks {
 public:
  PostgresIdle(std::string url, bool advisory)
      : url_(std::move(url)), advisory_(advisory) {}
  ~PostgresIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    const int n = advisory_ ? kIdleConnections : 1;
    for (int i = 0; i < n; ++i) {
      auto c = pg::Connect(url_);
      if (!c) return c.error();
      const std::int64_t first =
          kIdleBase + static_cast<std::int64_t>(count * i / n);
      const std::int64_t last =
          kIdleBase + static_cast<std::int64_t>(count * (i + 1) / n) - 1;
      const std::string sql =
          advisory_ ? fmt::format(
                          "SELECT count(pg_advisory_lock(k)) FROM "
                          "generate_series({}::bigint, {}::bigint) AS k",
                          first, last)
                    : fmt::format(
                          "INSERT INTO leasehold_bench_leases SELECT k, "
                          "'idle', now() + interval '1 hour' FROM "
                          "generate_series({}::bigint, {}::bigint) AS k",
                          first, last);
      if (auto r = Exec(c->get(), sql); !r) return r.error();
      connections_.push_back(std::move(*c));
    }
    return Status::Ok();
  }

  Status Release() override {
    Status first;
    if (!advisory_ && !connections_.empty()) {
      auto r = Exec(connections_.front().get(),
                    fmt::format("DELETE FROM leasehold_bench_leases WHERE "
                                "id >= {}",
                                kIdleBase));
      if (!r) first = r.error();
    }
    connections_.clear();  // ends the sessions: advisory locks go
    return first;
  }

 private:
  const std::string url_;
  const bool advisory_;
  std::vector<Connection> connections_;
};

class PostgresPeer final : public Peer {
 public:
  PostgresPeer(std::string url, std::string mode)
      : url_(std::move(url)), mode_(std::move(mode)) {}

  std::string_view Kind() const override { return "postgresql"; }
  std::string_view Name() const override { return "PostgreSQL"; }

  bool HasDocuments() const override { return true; }
  bool SupportsNaive() const override { return true; }

  Status PrepareDocuments(int rows) override {
    auto conn = pg::Connect(url_);
    if (!conn) return conn.error();
    auto r = Exec(conn->get(),
                  fmt::format("BEGIN; {} INSERT INTO leasehold_race_documents "
                              "(doc_id, title, body) SELECT n, 'Document ' || "
                              "n, 'draft' FROM generate_series(1, {}) AS n; "
                              "COMMIT;",
                              kRaceSchema, rows));
    return r ? Status::Ok() : r.error();
  }

  Result<std::unique_ptr<DocumentSession>> OpenDocumentSession(
      const std::string& user) override {
    auto conn = pg::Connect(url_);
    if (!conn) return std::unexpected(conn.error());
    auto session =
        std::make_unique<PostgresDocumentSession>(std::move(*conn), user);
    if (Status st = session->PrepareStatements(); !st.ok()) {
      return std::unexpected(st);
    }
    return session;
  }

  Result<std::optional<RaceLog>> CountRaceLog() override {
    auto conn = pg::Connect(url_);
    if (!conn) return std::unexpected(conn.error());
    RaceLog log;
    Status st =
        CountInto(conn->get(), kWinnersPerDocument, log.documents_by_winners);
    if (!st.ok()) return std::unexpected(st);
    auto grants = Exec(conn->get(), kGrantsPerUser);
    if (!grants) return std::unexpected(grants.error());
    for (int i = 0; i < PQntuples(grants->get()); ++i) {
      log.grants_by_user[PQgetvalue(grants->get(), i, 0)] =
          std::stoi(PQgetvalue(grants->get(), i, 1));
    }
    return log;
  }

  Status Prepare(Workload w, std::uint64_t keys) override {
    advisory_ = w == Workload::kApplock && mode_ != "update";
    auto c = pg::Connect(url_);
    if (!c) return c.error();
    auto sync = Value(c->get(), "SHOW synchronous_commit");
    auto fsync = Value(c->get(), "SHOW fsync");
    if (!sync || !fsync) return Failure(c->get(), "settings");
    settings_ = fmt::format("synchronous_commit={}, fsync={}", *sync, *fsync);
    on_disk_ = *sync != "off" && *fsync == "on";
    // Every client prepares every statement, so the table exists in both
    // modes.
    return FillLeases(c->get(), keys);
  }

  std::string Durability(Workload) const override {
    if (advisory_)
      return "no: advisory locks live in memory, end with the connection";
    return fmt::format("{}: one UPDATE per transaction, {}",
                       on_disk_ ? "yes" : "no", settings_);
  }
  bool Durable(Workload) const override { return !advisory_ && on_disk_; }

  Result<std::unique_ptr<LockClient>> Connect(int index) override {
    auto c = pg::Connect(url_);
    if (!c) return std::unexpected(c.error());
    auto client =
        std::make_unique<PostgresLockClient>(std::move(*c), advisory_, index);
    if (Status st = client->PrepareStatements(); !st.ok()) {
      return std::unexpected(st);
    }
    return client;
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto idle = std::make_unique<PostgresIdle>(url_, advisory_);
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  // Rows -1 (the hot name) and 0..keys-1, all free; rebuilt only when the
  // table does not already hold exactly those.
  static Status FillLeases(PGconn* c, std::uint64_t keys) {
    auto made = Exec(c,
                     "CREATE TABLE IF NOT EXISTS leasehold_bench_leases ("
                     "id bigint PRIMARY KEY, locked_by text, "
                     "lock_expires timestamptz)");
    if (!made) return made.error();
    auto rows = Value(c,
                      "SELECT count(*) FILTER (WHERE locked_by IS NULL) || "
                      "'/' || count(*) FROM leasehold_bench_leases");
    if (!rows) return rows.error();
    const std::string want = fmt::format("{0}/{0}", keys + 1);
    if (*rows == want) return Status::Ok();
    auto filled = Exec(
        c, fmt::format("BEGIN; TRUNCATE leasehold_bench_leases; INSERT INTO "
                       "leasehold_bench_leases (id) SELECT k FROM "
                       "generate_series(-1, {}) AS k; COMMIT; ANALYZE "
                       "leasehold_bench_leases",
                       keys - 1));
    return filled ? Status::Ok() : filled.error();
  }

  const std::string url_;
  const std::string mode_;
  bool advisory_ = true;
  bool on_disk_ = false;
  std::string settings_;
};

}  // namespace

std::unique_ptr<Peer> MakePostgresPeer(std::string url, std::string mode) {
  return std::make_unique<PostgresPeer>(std::move(url), std::move(mode));
}

}  // namespace leasehold::peers
