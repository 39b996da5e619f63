#include "store/postgres/schema.h"

#include <cstdlib>
#include <iterator>
#include <string>

#include "pg/connection.h"

namespace leasehold::postgres {
namespace {

// Names and bodies are bytea: any byte (NUL included) round-trips, and
// bytea compares as bytes, the order Store::Load promises, whatever the
// database's collation. Times are microseconds since 1970 UTC, as in the
// SQLite store. No foreign keys: a lock row without its session is refused
// by Load, naming it (store.h).
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE {s}.meta (
  name   text   PRIMARY KEY,
  value  bigint NOT NULL
);
INSERT INTO {s}.meta (name, value) VALUES ('fences_reserved', 0),
  ('session_ids_reserved', 0), ('transaction_ids_reserved', 0);
CREATE TABLE {s}.keys (
  ns               bytea   NOT NULL,
  key              bytea   NOT NULL,
  has_record       boolean NOT NULL,
  body             bytea   NOT NULL,
  version          bigint  NOT NULL,
  locked_by        bytea   NOT NULL,
  token            bytea   NOT NULL,
  lock_expires_us  bigint,            -- NULL: no lease
  fence            bigint  NOT NULL,
  PRIMARY KEY (ns, key)
);
CREATE TABLE {s}.operations (
  ns            bytea  NOT NULL,
  op_id         bytea  NOT NULL,
  outcome       bytea  NOT NULL,     -- JSON text
  completed_us  bigint NOT NULL,
  PRIMARY KEY (ns, op_id)
);
CREATE TABLE {s}.outbox (
  ns                bytea   NOT NULL,
  topic             bytea   NOT NULL,
  id                bigint  NOT NULL,
  key               bytea   NOT NULL,
  payload           bytea   NOT NULL,   -- JSON text; empty once acked
  enqueued_us       bigint  NOT NULL,
  attempts          bigint  NOT NULL,
  acked             boolean NOT NULL,
  consumer          bytea   NOT NULL,
  claim_token       bytea   NOT NULL,
  lease_expires_us  bigint,             -- NULL: never claimed
  PRIMARY KEY (ns, topic, id)
);
CREATE TABLE {s}.sessions (
  id                      bigint  NOT NULL,
  name                    bytea   NOT NULL,
  caller                  bytea   NOT NULL,   -- empty without auth
  ttl_ms                  bigint  NOT NULL,
  deadlock_priority       bigint  NOT NULL,
  opened_us               bigint  NOT NULL,
  transaction_id          bigint  NOT NULL,   -- 0: none open
  transaction_started_us  bigint,             -- NULL: none open
  memory_locks            boolean NOT NULL,
  PRIMARY KEY (id)
);
CREATE TABLE {s}.locks (
  session    bigint NOT NULL,
  owner      bigint NOT NULL,   -- LockOwner: 0 transaction, 1 session
  ns         bytea  NOT NULL,
  principal  bytea  NOT NULL,
  resource   bytea  NOT NULL,
  mode       bigint NOT NULL,   -- LockMode, the combined mode held
  count      bigint NOT NULL,
  fence      bigint NOT NULL,
  since_us   bigint NOT NULL,
  PRIMARY KEY (session, owner, ns, principal, resource)
);
)sql"},
    {2, R"sql(
-- 0: a lock row. Else the row holds permits of a semaphore of this limit:
-- mode is 0 (NoLock) and count is the permits held.
ALTER TABLE {s}.locks ADD COLUMN semaphore_limit bigint NOT NULL DEFAULT 0;
)sql"},
    {3, R"sql(
-- Microseconds since 1970 UTC until which a lock-delay runs (0: none).
INSERT INTO {s}.meta (name, value) VALUES ('lock_delay_until_us', 0);
)sql"},
    {4, R"sql(
-- The highest fence a write of the key carried (0: none); a row with
-- neither record nor lease but a write fence is a fenced delete's tombstone.
ALTER TABLE {s}.keys ADD COLUMN write_fence bigint NOT NULL DEFAULT 0;
)sql"},
    {5, R"sql(
-- When the server takes the grant back (its hold limit), microseconds since
-- 1970 UTC; NULL: never.
ALTER TABLE {s}.locks ADD COLUMN hold_until_us bigint;
-- 0: a grant. Else the row is the news that the session lost this lock (1:
-- its hold limit, 2: broken), kept until the session is told.
ALTER TABLE {s}.locks ADD COLUMN lost bigint NOT NULL DEFAULT 0;
)sql"},
};

Status Refuse(const std::string& name, const std::string& why) {
  return Status(StatusCode::kUnavailable,
                "refusing to use PostgreSQL schema \"" + name + "\": " + why +
                    ". Nothing was modified.");
}

// Runs `sql` with text parameters; fails unless it succeeds.
Result<pg::PgResult> Query(PGconn* conn, const std::string& sql,
                           std::initializer_list<const char*> params) {
  pg::PgResult r(PQexecParams(conn, sql.c_str(),
                              static_cast<int>(params.size()), nullptr,
                              std::data(params), nullptr, nullptr, 0));
  const auto st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return std::unexpected(pg::Failure(conn, "statement"));
  }
  return r;
}

// The schema's version: 0 when it is missing or empty, -1 when it holds
// tables without leasehold's version row. The leader lease's tables
// (src/cluster/leader_lease.h) do not count: a node may create them first.
Result<int> StoredVersion(PGconn* conn, const std::string& name,
                          const std::string& quoted) {
  auto found = Query(conn,
                     "SELECT (SELECT count(*) FROM pg_class c JOIN "
                     "pg_namespace n ON n.oid = c.relnamespace WHERE "
                     "n.nspname = $1 AND c.relname NOT IN ('leader', "
                     "'leader_pkey', 'nodes', 'nodes_pkey')), "
                     "to_regclass($2) IS NOT NULL",
                     {name.c_str(), (quoted + ".meta").c_str()});
  if (!found) return std::unexpected(found.error());
  const long relations = std::atol(PQgetvalue(found->get(), 0, 0));
  const bool has_meta = PQgetvalue(found->get(), 0, 1)[0] == 't';
  if (relations == 0) return 0;
  if (!has_meta) return -1;
  auto version = pg::Value(conn, "SELECT value FROM " + quoted +
                                     ".meta WHERE name = 'schema_version'");
  if (!version) return std::unexpected(version.error());
  if (version->empty()) return -1;
  return std::atoi(version->c_str());
}

Status CheckPrimary(PGconn* conn) {
  auto recovery = pg::Value(conn, "SELECT pg_is_in_recovery()");
  if (!recovery) return recovery.error();
  if (*recovery == "t") {
    return Status(StatusCode::kUnavailable,
                  "PostgreSQL server is a standby (read-only): give the "
                  "primary, or several hosts with "
                  "target_session_attrs=read-write");
  }
  return Status::Ok();
}

Status CheckIdentity(const std::string& name, int version) {
  if (version < 0) {
    return Refuse(name,
                  "it holds tables that are not leasehold's (no "
                  "schema_version in its meta table); choose another schema");
  }
  if (version > SchemaVersion()) {
    return Refuse(name, "its schema version " + std::to_string(version) +
                            " is newer than this leasehold understands (" +
                            std::to_string(SchemaVersion()) +
                            "); run a newer leasehold");
  }
  return Status::Ok();
}

// Applies migration `m` in one transaction, unless another server applied
// it first (the version row, locked FOR UPDATE, says so).
Status Apply(PGconn* conn, const std::string& quoted, const Migration& m) {
  std::string sql = "BEGIN;";
  if (m.version == 1) {
    sql += "CREATE SCHEMA IF NOT EXISTS " + quoted + ";";
  } else {
    sql += "SELECT value FROM " + quoted +
           ".meta WHERE name = 'schema_version' FOR UPDATE;";
  }
  sql += WithSchema(m.sql, quoted);
  sql += "INSERT INTO " + quoted +
         ".meta (name, value) VALUES ('schema_version', " +
         std::to_string(m.version) +
         ") ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;COMMIT;";
  auto done = pg::Exec(conn, sql);
  if (!done) {
    (void)pg::Exec(conn, "ROLLBACK");
    return done.error();
  }
  return Status::Ok();
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

int SchemaVersion() { return kMigrations[std::size(kMigrations) - 1].version; }

std::string WithSchema(std::string_view sql, const std::string& schema) {
  std::string out;
  out.reserve(sql.size() + 16 * schema.size());
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if (sql.substr(i, 3) == "{s}") {
      out += schema;
      i += 2;
    } else {
      out += sql[i];
    }
  }
  return out;
}

Result<std::string> QuoteSchemaName(PGconn* conn, const std::string& name) {
  if (name.empty() || name.size() > 63) {
    return Error(StatusCode::kBadRequest,
                 "a PostgreSQL schema name has 1 to 63 bytes");
  }
  char* quoted = PQescapeIdentifier(conn, name.c_str(), name.size());
  if (quoted == nullptr) {
    return std::unexpected(pg::Failure(conn, "schema name"));
  }
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

Status Migrate(PGconn* conn, const std::string& name,
               const std::string& quoted) {
  if (Status st = CheckPrimary(conn); !st.ok()) return st;
  auto version = StoredVersion(conn, name, quoted);
  if (!version) return version.error();
  if (Status st = CheckIdentity(name, *version); !st.ok()) return st;
  for (const Migration& m : Migrations()) {
    if (m.version <= *version) continue;
    if (Status st = Apply(conn, quoted, m); !st.ok()) {
      // Another server may have applied it meanwhile (two creating the
      // schema at once collide): fine if the version now says so.
      auto now = StoredVersion(conn, name, quoted);
      if (!now || *now < m.version) {
        return Status(StatusCode::kUnavailable,
                      "migration of PostgreSQL schema \"" + name +
                          "\" to version " + std::to_string(m.version) +
                          " failed: " + st.message());
      }
    }
    *version = m.version;
  }
  return Status::Ok();
}

Status CheckVersion(PGconn* conn, const std::string& name,
                    const std::string& quoted) {
  auto version = StoredVersion(conn, name, quoted);
  if (!version) return version.error();
  if (*version != SchemaVersion()) {
    return Refuse(name, "after reconnecting, its schema version is " +
                            std::to_string(*version) + ", expected " +
                            std::to_string(SchemaVersion()) +
                            " (is this the same database?)");
  }
  return Status::Ok();
}

}  // namespace leasehold::postgres
