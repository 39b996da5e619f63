// The prepared statements that apply journal entries (one statement per
// entry), and how an entry binds to its statement.
#ifndef LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_
#define LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_

#include <libpq-fe.h>

#include <string>

#include "leasehold/journal.h"
#include "leasehold/status.h"
#include "store/postgres/wire.h"

namespace leasehold::postgres {

// A prepared statement's name and its parameters, ready to send.
struct BoundStatement {
  const char* name = nullptr;
  Params params;
};

// Prepares every write statement on `conn` (prepared statements belong to
// a connection: again after each reconnection), for the schema `quoted`.
Status PrepareWriteStatements(PGconn* conn, const std::string& quoted);

// The statement that applies `e`. Its parameters point into `e`, which
// must outlive sending it.
BoundStatement Bind(const JournalEntry& e);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_STATEMENTS_H_
