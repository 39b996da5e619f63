#include "store/postgres/postgres_store.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pg/connection.h"
#include "pg/watchdog.h"
#include "store/postgres/batch_transaction.h"
#include "store/postgres/connection_params.h"
#include "store/postgres/loader.h"
#include "store/postgres/schema.h"
#include "store/postgres/statements.h"

namespace leasehold {
namespace {

using postgres::ConnectionParams;

class PostgresStore final : public Store {
 public:
  PostgresStore(ConnectionParams params, PostgresStoreOptions options)
      : params_(std::move(params)),
        options_(std::move(options)),
        watchdog_(options_.timeout) {}

  // Connects, migrates and prepares: the first connection may create and
  // migrate the schema; a later one only checks it (Reconnect).
  Status Open() {
    auto conn = params_.Connect();
    if (!conn) return conn.error();
    auto watch = watchdog_.Arm(conn->get());
    auto quoted = postgres::QuoteSchemaName(conn->get(), options_.schema);
    if (!quoted) return watch.Explain("opening", quoted.error());
    quoted_ = std::move(*quoted);
    Status st = postgres::Migrate(conn->get(), options_.schema, quoted_);
    if (st.ok()) st = Adopt(std::move(*conn));
    return watch.Explain("opening", st);
  }

  Result<Reservations> Load(const Visitors& visit) override {
    if (Status st = EnsureLive(); !st.ok()) return std::unexpected(st);
    Result<Reservations> loaded;
    {
      auto watch = watchdog_.Arm(conn_.get());
      loaded = postgres::LoadStore(conn_.get(), options_.schema, quoted_,
                                   options_.load_fetch_rows, visit, watch);
      if (!loaded) {
        loaded = std::unexpected(watch.Explain("a load", loaded.error()));
      }
    }
    DropIfUnusable();
    return loaded;
  }

  Status Append(const JournalBatch& batch) override {
    if (batch.empty()) return Status::Ok();
    if (Status st = EnsureConnected(); !st.ok()) return st;
    bool timed_out = false;
    Status st = Write(batch, timed_out);
    if (st.ok() || conn_ != nullptr) return st;  // refused by the server
    // Unanswered: sending it again would wait as long again, behind the
    // same stalled backend. Close() settles what became of it.
    if (timed_out) return st;
    // The connection was lost: maybe before the server saw the batch, maybe
    // after it committed it. Entries are states (journal.h), so applying
    // the batch again on a new connection gives the same result either way.
    Status again = EnsureConnected();
    if (again.ok()) again = Write(batch, timed_out);
    if (again.ok()) return again;
    return Status(StatusCode::kUnavailable,
                  st.message() + "; then: " + again.message());
  }

  // A backend given up on during a batch may be alive still, its batch in
  // its socket, and commit it once it runs again: after a recovery had
  // loaded the store without it, that would bring back a refused batch
  // under the loaded state (a lock granted to two sessions). So each is
  // asked to end (pg_terminate_backend), and the store counts as closed
  // only once none of them is left.
  Status Close() override {
    if (abandoned_.empty()) return Status::Ok();
    auto conn = params_.Connect();
    if (!conn) return conn.error();
    auto watch = watchdog_.Arm(conn->get());
    if (Status st = pg::Prepare(conn->get(), std::span(&kEndBackend, 1));
        !st.ok()) {
      return watch.Explain("ending a backend", st);
    }
    for (auto it = abandoned_.begin(); it != abandoned_.end();) {
      const std::string pid = std::to_string(it->pid);
      const char* values[] = {pid.c_str(), it->started.c_str()};
      auto ended = pg::Run(conn->get(), kEndBackend, values);
      if (!ended) return watch.Explain("ending a backend", ended.error());
      if (PQntuples(ended->get()) == 0) {
        it = abandoned_.erase(it);  // gone: its transaction is decided
      } else {
        ++it;
      }
    }
    if (abandoned_.empty()) return Status::Ok();
    return Status(StatusCode::kUnavailable,
                  "PostgreSQL backend " + std::to_string(abandoned_[0].pid) +
                      ", given up on during a batch, has not ended yet "
                      "(asked to): a batch it was sent might still commit, "
                      "so the store is not loaded again until it has");
  }

  // The data is PostgreSQL's, and so is its backup: a copy taken here
  // would miss what PostgreSQL's own tools keep (WAL archive, standbys).
  Status Backup(const std::string& /*destination*/,
                std::stop_token /*stop*/) override {
    return Status(StatusCode::kNotSupported,
                  "the data is in PostgreSQL (schema " + options_.schema +
                      "): back it up with PostgreSQL's own tools "
                      "(pg_basebackup with WAL archiving for point-in-time "
                      "recovery, or pg_dump --schema), see docs/ha.md");
  }

  std::string Describe() const override {
    return params_.Describe() + " schema=" + options_.schema;
  }

 private:
  // A backend that may still be running, on the server where `started`
  // (its backend_start as text) tells it from a later one with its pid.
  struct Backend {
    int pid = 0;
    std::string started;
  };
  static constexpr std::size_t kAbandonedKept = 64;
  static constexpr pg::Statement kEndBackend{
      "end_backend",
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE pid = $1::int AND backend_start::text = $2",
      2};

  // Sends `batch`; `timed_out` says whether the server left it unanswered.
  // A connection lost or given up meanwhile is remembered (Close).
  Status Write(const JournalBatch& batch, bool& timed_out) {
    Status st;
    {
      auto watch = watchdog_.Arm(conn_.get());
      st = watch.Explain(
          "a batch", postgres::WriteBatch(conn_.get(), batch, FenceEpoch()));
      timed_out = watch.fired();
    }
    if (!st.ok() && PQstatus(conn_.get()) != CONNECTION_OK) {
      // Connections lost and then written again through (Append's retry)
      // stay listed until a Close(); the oldest of very many is long gone.
      if (abandoned_.size() >= kAbandonedKept)
        abandoned_.erase(abandoned_.begin());
      abandoned_.push_back(conn_backend_);
    }
    DropIfUnusable();
    return st;
  }

  // Before a load, which cannot be retried once visitors ran: a connection
  // that died while idle is found (one round trip) and replaced first.
  Status EnsureLive() {
    if (Status st = EnsureConnected(); !st.ok()) return st;
    bool live = false;
    {
      auto watch = watchdog_.Arm(conn_.get());
      live = pg::Exec(conn_.get(), "SELECT 1").has_value();
    }
    if (live) return Status::Ok();
    conn_.reset();
    return EnsureConnected();
  }

  Status EnsureConnected() {
    if (conn_ != nullptr) return Status::Ok();
    auto conn = params_.Connect();
    if (!conn) return conn.error();
    auto watch = watchdog_.Arm(conn->get());
    Status st = postgres::CheckVersion(conn->get(), options_.schema, quoted_);
    if (st.ok()) st = Adopt(std::move(*conn));
    return watch.Explain("setting up its connection", st);
  }

  // Makes `conn` the store's connection once it is set up for writing.
  Status Adopt(pg::Connection conn) {
    auto started = pg::Value(conn.get(),
                             "SELECT backend_start::text FROM pg_stat_activity "
                             "WHERE pid = pg_backend_pid()");
    if (!started) return started.error();
    if (Status st = KeepCommitsDurable(conn.get()); !st.ok()) return st;
    if (Status st = PlanByKey(conn.get()); !st.ok()) return st;
    if (Status st = postgres::PrepareWriteStatements(conn.get(), quoted_);
        !st.ok()) {
      return st;
    }
    if (options_.fence) {
      // A node that no longer leads must not even start writing.
      Status st = postgres::PrepareFence(conn.get(), options_.fence->sql);
      if (st.ok()) st = postgres::CheckFence(conn.get(), FenceEpoch());
      if (!st.ok()) return st;
    }
    conn_ = std::move(conn);
    conn_backend_ = {PQbackendPID(conn_.get()), std::move(*started)};
    return Status::Ok();
  }

  // An acknowledged write must survive a crash of the database server: a
  // database or role configured with synchronous_commit=off would lose the
  // last commits, so this connection turns it back on. Other values
  // (local, remote_write, on, remote_apply) are the operator's choice.
  static Status KeepCommitsDurable(PGconn* conn) {
    auto mode = pg::Value(conn, "SHOW synchronous_commit");
    if (!mode) return mode.error();
    if (*mode != "off") return Status::Ok();
    auto set = pg::Exec(conn, "SET synchronous_commit = on");
    return set ? Status::Ok() : set.error();
  }

  // Every statement this connection runs finds its rows by key, a batch's
  // few at a time: a hash or merge join would read a whole table (dead rows
  // and all) on each commit instead, as PostgreSQL picks them for small
  // tables; measured, it cost half of PostgreSQL's time per batch.
  static Status PlanByKey(PGconn* conn) {
    auto set =
        pg::Exec(conn, "SET enable_hashjoin = off; SET enable_mergejoin = off");
    return set ? Status::Ok() : set.error();
  }

  std::uint64_t FenceEpoch() const {
    return options_.fence ? options_.fence->epoch : 0;
  }

  // After a failure: a connection that is lost, or not idle, is dropped, so
  // that the next call starts on a fresh one.
  void DropIfUnusable() {
    if (conn_ == nullptr) return;
    if (PQstatus(conn_.get()) != CONNECTION_OK ||
        PQpipelineStatus(conn_.get()) != PQ_PIPELINE_OFF ||
        PQtransactionStatus(conn_.get()) != PQTRANS_IDLE) {
      conn_.reset();
    }
  }

  const ConnectionParams params_;
  const PostgresStoreOptions options_;
  std::string quoted_;  // the schema, quoted as an identifier
  pg::Watchdog watchdog_;
  pg::Connection conn_;
  Backend conn_backend_;  // conn_'s, while the connection is up
  // Backends given up on during a batch, not yet seen gone (Close).
  std::vector<Backend> abandoned_;
};

}  // namespace

bool IsPostgresUrl(const std::string& where) {
  return where.starts_with("postgresql://") || where.starts_with("postgres://");
}

int PostgresSchemaVersion() { return postgres::SchemaVersion(); }

Result<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& url, const PostgresStoreOptions& options) {
  if (options.load_fetch_rows < 1) {
    return Error(StatusCode::kBadRequest, "load_fetch_rows must be >= 1");
  }
  if (options.fence && options.fence->epoch == 0) {
    return Error(StatusCode::kBadRequest, "a fence needs an epoch above 0");
  }
  auto params = ConnectionParams::Parse(url);
  if (!params) return std::unexpected(params.error());
  auto store = std::make_unique<PostgresStore>(std::move(*params), options);
  if (Status st = store->Open(); !st.ok()) return std::unexpected(st);
  return store;
}

}  // namespace leasehold
