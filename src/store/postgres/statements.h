// The prepared statements that apply a journal batch, one per table and
// kind of change, each taking its rows as arrays (one array per column,
// unnested by the statement), and how a BatchPlan binds to them.
#ifndef LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_
#define LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_

#include <libpq-fe.h>

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/postgres/batch_plan.h"
#include "store/postgres/wire.h"

namespace leasehold::postgres {

// A prepared statement's name and its parameters, ready to send.
struct BoundStatement {
  const char* name = nullptr;
  Params params;
};

// Rows bound to one statement at most: more go to a further statement of
// the same kind, so that no message nears PostgreSQL's 1 GiB limit.
inline constexpr std::size_t kRowsPerStatement = 1000;
inline constexpr std::size_t kBytesPerStatement = 64u << 20;

// Prepares every write statement on `conn` (prepared statements belong to
// a connection: again after each reconnection), for the schema `quoted`.
Status PrepareWriteStatements(PGconn* conn, const std::string& quoted);

// The statements that apply `plan`, in the order they must run; none for a
// plan that changes nothing. Their parameters own their bytes.
std::vector<BoundStatement> BindPlan(const BatchPlan& plan);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_
