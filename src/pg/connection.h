// leasehold_pg: the small libpq helpers that `leasehold race` and `leasehold
// bench --target postgresql://` share: owned connections and results,
// errors as Status, statements prepared once per connection.
#ifndef LEASEHOLD_PG_CONNECTION_H_
#define LEASEHOLD_PG_CONNECTION_H_

#include <libpq-fe.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "leasehold/status.h"

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

}  // namespace leasehold::pg

#endif  // LEASEHOLD_PG_CONNECTION_H_
