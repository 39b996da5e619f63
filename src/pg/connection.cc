#include "pg/connection.h"

#include <fmt/format.h>

namespace leasehold::pg {
namespace {

void IgnoreNotice(void*, const char*) {}

}  // namespace

Status Failure(PGconn* conn, std::string_view what) {
  std::string message = PQerrorMessage(conn);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return Status(StatusCode::kUnavailable,
                fmt::format("PostgreSQL {}: {}", what, message));
}

Result<Connection> Connect(const std::string& url) {
  Connection conn(PQconnectdb(url.c_str()));
  if (conn == nullptr || PQstatus(conn.get()) != CONNECTION_OK) {
    return std::unexpected(Failure(conn.get(), "connect"));
  }
  PQsetNoticeProcessor(conn.get(), &IgnoreNotice, nullptr);
  return conn;
}

Result<PgResult> Exec(PGconn* conn, const std::string& sql) {
  PgResult r(PQexec(conn, sql.c_str()));
  const auto st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return std::unexpected(Failure(conn, "statement"));
  }
  return r;
}

Result<std::string> Value(PGconn* conn, const std::string& sql) {
  auto r = Exec(conn, sql);
  if (!r) return std::unexpected(r.error());
  if (PQntuples(r->get()) < 1) return std::string();
  return std::string(PQgetvalue(r->get(), 0, 0));
}

Status Prepare(PGconn* conn, std::span<const Statement> statements) {
  for (const Statement& s : statements) {
    PgResult r(PQprepare(conn, s.name, s.text, s.params, nullptr));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      return Failure(conn, "prepare");
    }
  }
  return Status::Ok();
}

Result<PgResult> Run(PGconn* conn, const Statement& statement,
                     std::span<const char* const> values,
                     std::string* sqlstate) {
  PgResult r(PQexecPrepared(conn, statement.name, statement.params,
                            values.data(), nullptr, nullptr, 0));
  const auto st = PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  if (sqlstate != nullptr) {
    const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
    *sqlstate = state != nullptr ? state : "";
  }
  return std::unexpected(Failure(conn, statement.name));
}

bool ChangedOneRow(const PgResult& result) {
  return std::string_view(PQcmdTuples(result.get())) == "1";
}

}  // namespace leasehold::pg
