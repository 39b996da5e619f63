// leasehold_pg: the small libpq helpers of the PostgreSQL peer
// (src/peers/postgres_peer.cc, for the race and the benchmarks) and the
// PostgreSQL store (src/store/postgres, which uses the owned connections and
// results and the errors): owned connections and results, errors as Status,
// statements prepared once per connection and run with text parameters.
#ifndef LEASEHOLD_PG_CONNECTION_H_
#define LEASEHOLD_PG_CONNECTION_H_

#include <libpq-fe.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace leasehold::pg {

struct ConnectionCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultClearer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Connection = std::unique_ptr<PGconn, ConnectionCloser>;
using PgResult = std::unique_ptr<PGresult, ResultClearer>;

// A statement to prepare: its name, its text, how many parameters it takes.
struct Statement {
  const char* name;
  const char* text;
  int params;
};

// kUnavailable "PostgreSQL WHAT: <libpq's message>".
Status Failure(PGconn* conn, std::string_view what);

// Connects to `url` (a libpq connection string or URI), with server notices
// silenced (DROP … IF EXISTS would print them).
Result<Connection> Connect(const std::string& url);

// Runs `sql` without parameters (possibly several statements); fails unless
// it ends in COMMAND_OK or TUPLES_OK.
Result<PgResult> Exec(PGconn* conn, const std::string& sql);

// The first column of the first row of `sql` as text ("" without rows).
Result<std::string> Value(PGconn* conn, const std::string& sql);

// Prepares every statement on `conn`.
Status Prepare(PGconn* conn, std::span<const Statement> statements);

// Runs prepared `statement` with the first statement.params of `values`
// (text). Fails unless it ends in COMMAND_OK or TUPLES_OK; then `sqlstate`,
// if given, gets the error's SQLSTATE ("55P03": lock_timeout ran out).
Result<PgResult> Run(PGconn* conn, const Statement& statement,
                     std::span<const char* const> values,
                     std::string* sqlstate = nullptr);

// True when the command of `result` (an UPDATE) changed exactly one row.
bool ChangedOneRow(const PgResult& result);

}  // namespace leasehold::pg

#endif  // LEASEHOLD_PG_CONNECTION_H_
