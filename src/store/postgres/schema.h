// The store's PostgreSQL schema: its own PostgreSQL schema (namespace,
// "leasehold" by default), numbered migrations recorded in its meta table
// (row 'schema_version'), and the checks made before anything is written.
// Logged tables only: an UNLOGGED table is emptied by a crash and is not
// replicated, so it would not survive a failover. Add a migration to change
// the schema; never edit a released one.
#ifndef LEASEHOLD_STORE_POSTGRES_SCHEMA_H_
#define LEASEHOLD_STORE_POSTGRES_SCHEMA_H_

#include <libpq-fe.h>

#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace leasehold::postgres {

struct Migration {
  int version;
  // Every "{s}" stands for the quoted schema name.
  std::string_view sql;
};

std::span<const Migration> Migrations();

// The schema version this build writes.
int SchemaVersion();

// `sql` with every "{s}" replaced by `schema` (already quoted).
std::string WithSchema(std::string_view sql, const std::string& schema);

// `name` as a quoted SQL identifier ("leasehold"), or kBadRequest.
Result<std::string> QuoteSchemaName(PGconn* conn, const std::string& name);

// Brings schema `name` (`quoted` as an identifier) to SchemaVersion(),
// creating it if missing, each migration in its own transaction. Refuses
// (kUnavailable, nothing written) a server in recovery (a standby), a
// schema holding tables that are not leasehold's, or a newer version. Safe
// when several servers open the same schema at once.
Status Migrate(PGconn* conn, const std::string& name,
               const std::string& quoted);

// After a reconnection: the schema must be exactly at SchemaVersion(). A
// missing schema is refused, never created again: a server that lost it
// (a failover to the wrong database, a restore) must not start empty.
Status CheckVersion(PGconn* conn, const std::string& name,
                    const std::string& quoted);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_SCHEMA_H_
