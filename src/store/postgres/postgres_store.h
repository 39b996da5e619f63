// PostgresStore: the Store on a PostgreSQL server, for running leasehold on
// a database that is already replicated (docs/storage.md, "PostgreSQL").
#ifndef LEASEHOLD_STORE_POSTGRES_POSTGRES_STORE_H_
#define LEASEHOLD_STORE_POSTGRES_POSTGRES_STORE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "store/store.h"

namespace leasehold {

struct PostgresStoreOptions {
  // The PostgreSQL schema (namespace) holding leasehold's tables, created
  // if missing. Servers sharing a database use one schema each.
  std::string schema = "leasehold";
  // Rows a start-up load holds in memory at once (one FETCH of a cursor).
  int load_fetch_rows = 500;
  // For a leader among several nodes (src/cluster): every batch's
  // transaction runs `sql` first, with $1 = `epoch`, a statement that fails
  // once the epoch no longer leads (cluster::LeaderLease::EpochCheckSql), so
  // no batch of an old leader commits after a takeover. Opening and each
  // reconnection check it too.
  struct Fence {
    std::string sql;
    std::uint64_t epoch = 0;
  };
  std::optional<Fence> fence = {};
  // How long one round trip with the server may go unanswered before the
  // store gives its connection up (pg::Watchdog): a batch's transaction,
  // each FETCH of a load, the opening (a migration included: raise it for
  // a migration of a very large store) and a reconnection.
  std::chrono::milliseconds timeout{10000};
};

// Connects to `url` (a libpq URL or key=value string; several hosts with
// target_session_attrs=read-write follow a failover), checks that the
// schema is leasehold's and not newer than this build, and migrates it.
// Fails with kBadRequest for a URL or option that cannot work, and with
// kUnavailable, saying why, when the server cannot be reached, is a
// standby, or holds a schema this build must not touch (left unmodified).
//
// Append writes each batch as ONE transaction (batch_transaction.h), fenced
// by options.fence when given (refused, kUnavailable, once it fails). The
// store keeps one connection. A call that finds it lost reconnects (to
// whichever host is now the primary), checks the schema version and
// prepares its statements again; Append also sends its batch once more on
// the new connection, since a lost connection may have cut it before the
// server saw it (resending is harmless: entries are states). When that
// fails too, Append answers kUnavailable, and the batch may or may not have
// been committed: the answer of its COMMIT was lost, nothing was
// acknowledged, and a restart loads whichever it was. A batch the server
// does not answer within options.timeout (a stopped backend, a COMMIT
// waiting for a synchronous standby that is gone) is given up at once,
// kUnavailable, without sending it again. Its backend may still commit it
// later; so Close() asks the server to end every backend given up on
// during a batch, and fails (kUnavailable) until each is gone: a recovery
// never loads the store while a batch it refused may still appear. Not
// thread-safe, as every Store.
Result<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& url, const PostgresStoreOptions& options = {});

// True when `where` is a PostgreSQL URL ("postgresql://…" or
// "postgres://…").
bool IsPostgresUrl(const std::string& where);

// The schema version this build writes.
int PostgresSchemaVersion();

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_POSTGRES_POSTGRES_STORE_H_
