#include "race/postgres_target.h"

#include <fmt/format.h>

#include <array>
#include <thread>
#include <utility>

#include "pg/connection.h"

namespace leasehold::race {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr const char* kSchema = R"sql(
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

// A prepared statement: its name, its text and how many parameters it
// takes. $1 is the document, $2 the user, $3 a TTL in milliseconds, a body
// or a 0/1 answer. now() is the start of the statement's own transaction
// (every statement autocommits).
using Sql = pg::Statement;
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
constexpr Sql kTakeIfFree{
    "take_if_free",
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
constexpr std::array kStatements{kReadForNaive, kTake, kTakeIfFree, kSave,
                                 kCheckin,      kRead, kLog};

constexpr const char* kWinnersPerDocument =
    "SELECT winners, count(*) FROM (SELECT doc_id, sum(granted) AS winners "
    "FROM leasehold_race_log GROUP BY doc_id) AS d GROUP BY winners";
constexpr const char* kGrantsPerUser =
    "SELECT user_name, sum(granted) FROM leasehold_race_log GROUP BY "
    "user_name";

using pg::Connection;
using pg::Failure;
using pg::PgResult;

// Runs `sql` (no parameters, possibly several statements); no rows wanted.
Status Exec(PGconn* conn, const std::string& sql) {
  auto r = pg::Exec(conn, sql);
  return r ? Status::Ok() : r.error();
}

class PostgresSession final : public TargetSession {
 public:
  PostgresSession(Connection conn, std::string user)
      : conn_(std::move(conn)), user_(std::move(user)) {}

  Status PrepareStatements() { return pg::Prepare(conn_.get(), kStatements); }

  Result<bool> Checkout(int doc, Variant variant, milliseconds ttl,
                        microseconds gap) override {
    const std::string ms = std::to_string(ttl.count());
    if (variant == Variant::kAtomic) return Change(kTakeIfFree, doc, ms);
    auto row = Row(kReadForNaive, doc);
    if (!row) return std::unexpected(row.error());
    const auto& [holder, free] = *row;
    if (!free && holder != user_) return false;
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
    return Change(kTake, doc, ms);
  }

  Status Log(int doc, bool granted) override {
    auto r = Execute(kLog, doc, granted ? "1" : "0");
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
  Result<PgResult> Execute(const Sql& sql, int doc, const std::string& extra) {
    const std::string id = std::to_string(doc);
    const std::array<const char*, 3> values{id.c_str(), user_.c_str(),
                                            extra.c_str()};
    PgResult r(PQexecPrepared(conn_.get(), sql.name, sql.params, values.data(),
                              nullptr, nullptr, 0));
    const auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      return std::unexpected(Failure(conn_.get(), sql.name));
    }
    return r;
  }

  // An UPDATE: true iff it changed exactly one row.
  Result<bool> Change(const Sql& sql, int doc, const std::string& extra) {
    auto r = Execute(sql, doc, extra);
    if (!r) return std::unexpected(r.error());
    return std::string_view(PQcmdTuples(r->get())) == "1";
  }

  // A SELECT of (locked_by, flag) for one document.
  Result<std::pair<std::optional<std::string>, bool>> Row(const Sql& sql,
                                                          int doc) {
    auto r = Execute(sql, doc, "");
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

class PostgresTarget final : public Target {
 public:
  explicit PostgresTarget(std::string url) : url_(std::move(url)) {}

  std::string_view Engine() const override { return "PostgreSQL"; }
  bool SupportsNaive() const override { return true; }

  Status Prepare(int rows) override {
    auto conn = pg::Connect(url_);
    if (!conn) return conn.error();
    return Exec(conn->get(),
                fmt::format("BEGIN; {} INSERT INTO leasehold_race_documents "
                            "(doc_id, title, body) SELECT n, 'Document ' || "
                            "n, 'draft' FROM generate_series(1, {}) AS n; "
                            "COMMIT;",
                            kSchema, rows));
  }

  Result<std::unique_ptr<TargetSession>> Open(
      const std::string& user) override {
    auto conn = pg::Connect(url_);
    if (!conn) return std::unexpected(conn.error());
    auto session = std::make_unique<PostgresSession>(std::move(*conn), user);
    if (Status st = session->PrepareStatements(); !st.ok()) {
      return std::unexpected(st);
    }
    return session;
  }

  Result<std::optional<Tally>> TallyLog(int documents, int sessions) override {
    auto conn = pg::Connect(url_);
    if (!conn) return std::unexpected(conn.error());
    Tally tally;
    tally.documents = documents;
    for (int w = 0; w <= std::max(2, sessions); ++w) {
      tally.documents_by_winners[w] = 0;
    }
    PgResult winners(PQexec(conn->get(), kWinnersPerDocument));
    if (PQresultStatus(winners.get()) != PGRES_TUPLES_OK) {
      return std::unexpected(Failure(conn->get(), "race log query"));
    }
    int logged = 0;
    for (int i = 0; i < PQntuples(winners.get()); ++i) {
      const int w = std::stoi(PQgetvalue(winners.get(), i, 0));
      const int docs = std::stoi(PQgetvalue(winners.get(), i, 1));
      tally.documents_by_winners[w] += docs;
      logged += docs;
    }
    tally.documents_by_winners[0] += documents - logged;
    PgResult grants(PQexec(conn->get(), kGrantsPerUser));
    if (PQresultStatus(grants.get()) != PGRES_TUPLES_OK) {
      return std::unexpected(Failure(conn->get(), "race log query"));
    }
    for (int i = 0; i < PQntuples(grants.get()); ++i) {
      tally.grants_by_session[PQgetvalue(grants.get(), i, 0)] =
          std::stoi(PQgetvalue(grants.get(), i, 1));
    }
    return tally;
  }

 private:
  std::string url_;
};

}  // namespace

std::unique_ptr<Target> MakePostgresTarget(std::string url) {
  return std::make_unique<PostgresTarget>(std::move(url));
}

}  // namespace leasehold::race
