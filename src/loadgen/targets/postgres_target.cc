// PostgreSQL as a target (libpq, one blocking connection per client, every
// statement its own transaction, prepared once per connection).
//
// Application locks, mode "advisory" (the default): pg_try_advisory_lock
// when not waiting; pg_advisory_lock under lock_timeout when waiting, so a
// contender queues in the server's lock manager; pg_advisory_unlock.
// Advisory locks live in shared memory and end with their connection.
// Checkouts (and application locks in mode "update"): the reference
// article's one UPDATE … WHERE free on a lease table, and an UPDATE to
// check in; each commits with the server's synchronous_commit and fsync
// settings, read at Prepare. A waiting UPDATE contender retries (spin.h).
#include <fmt/format.h>

#include <array>
#include <thread>
#include <vector>

#include "loadgen/targets/factories.h"
#include "loadgen/targets/spin.h"
#include "pg/connection.h"

namespace leasehold::loadgen {

namespace {

// Idle locks and rows use names from here up, apart from the scenarios'.
constexpr std::int64_t kIdleBase = std::int64_t{1} << 40;
constexpr int kIdleConnections = 4;

using pg::Connection;
using pg::Exec;
using pg::Failure;
using pg::PgResult;
using pg::Value;

using Sql = pg::Statement;
constexpr Sql kTryAdvisory{"try_advisory",
                           "SELECT pg_try_advisory_lock($1::bigint)", 1};
constexpr Sql kAdvisory{"advisory", "SELECT pg_advisory_lock($1::bigint)", 1};
constexpr Sql kUnlockAdvisory{"unlock_advisory",
                              "SELECT pg_advisory_unlock($1::bigint)", 1};
constexpr Sql kTakeIfFree{
    "take_if_free",
    "UPDATE leasehold_bench_leases SET locked_by = $2, lock_expires = now() "
    "+ interval '60 seconds' WHERE id = $1::bigint AND (locked_by IS NULL "
    "OR lock_expires <= now())",
    2};
constexpr Sql kGiveBack{"give_back",
                        "UPDATE leasehold_bench_leases SET locked_by = NULL, "
                        "lock_expires = NULL WHERE id = $1::bigint AND "
                        "locked_by = $2",
                        2};
constexpr std::array kStatements{kTryAdvisory, kAdvisory, kUnlockAdvisory,
                                 kTakeIfFree, kGiveBack};

std::string Id(std::uint64_t name) {
  return name == kHotName ? "-1" : std::to_string(name);
}

class PostgresClient final : public TargetClient {
 public:
  PostgresClient(Connection conn, bool advisory, int index)
      : conn_(std::move(conn)),
        advisory_(advisory),
        owner_(fmt::format("c{}", index)) {}

  Status PrepareStatements() { return pg::Prepare(conn_.get(), kStatements); }

  Result<bool> Acquire(std::uint64_t name,
                       std::chrono::milliseconds wait) override {
    const std::string id = Id(name);
    if (!advisory_) {
      if (wait.count() == 0) return Change(kTakeIfFree, id);
      return SpinAcquire(wait, [&] { return Change(kTakeIfFree, id); });
    }
    if (wait.count() == 0) return Flag(kTryAdvisory, id);
    if (wait != lock_timeout_) {
      auto set =
          Exec(conn_.get(), fmt::format("SET lock_timeout = {}", wait.count()));
      if (!set) return std::unexpected(set.error());
      lock_timeout_ = wait;
    }
    auto r = Run(kAdvisory, id);
    if (r) return true;
    if (LockTimedOut()) return false;
    return std::unexpected(r.error());
  }

  Status Release(std::uint64_t name) override {
    if (!advisory_) return GiveBack(Id(name));
    auto r = Flag(kUnlockAdvisory, Id(name));
    if (!r) return r.error();
    if (!*r) return Status(StatusCode::kNotHeld, "advisory lock not held");
    return Status::Ok();
  }

  Result<bool> Checkout(std::uint64_t key) override {
    return Change(kTakeIfFree, std::to_string(key));
  }
  Status Checkin(std::uint64_t key) override {
    return GiveBack(std::to_string(key));
  }

 private:
  Result<PgResult> Run(const Sql& sql, const std::string& id) {
    const std::array<const char*, 2> values{id.c_str(), owner_.c_str()};
    PgResult r(PQexecPrepared(conn_.get(), sql.name, sql.params, values.data(),
                              nullptr, nullptr, 0));
    const auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      last_state_ = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE)
                        ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE)
                        : "";
      return std::unexpected(Failure(conn_.get(), sql.name));
    }
    return r;
  }
  // lock_not_available: lock_timeout ran out.
  bool LockTimedOut() const { return last_state_ == "55P03"; }

  // A SELECT of one boolean.
  Result<bool> Flag(const Sql& sql, const std::string& id) {
    auto r = Run(sql, id);
    if (!r) return std::unexpected(r.error());
    return PQntuples(r->get()) == 1 &&
           std::string_view(PQgetvalue(r->get(), 0, 0)) == "t";
  }
  // An UPDATE: true iff it changed one row.
  Result<bool> Change(const Sql& sql, const std::string& id) {
    auto r = Run(sql, id);
    if (!r) return std::unexpected(r.error());
    return std::string_view(PQcmdTuples(r->get())) == "1";
  }
  Status GiveBack(const std::string& id) {
    auto r = Change(kGiveBack, id);
    if (!r) return r.error();
    if (!*r) return Status(StatusCode::kNotHeld, "row " + id + " not held");
    return Status::Ok();
  }

  Connection conn_;
  const bool advisory_;
  const std::string owner_;
  std::chrono::milliseconds lock_timeout_{0};
  std::string last_state_;
};

// Advisory: kIdleConnections connections each holding a share. Update:
// rows marked held, deleted on release.
class PostgresIdle final : public IdleLocks {
 public:
  PostgresIdle(std::string url, bool advisory)
      : url_(std::move(url)), advisory_(advisory) {}
  ~PostgresIdle() override { (void)Release(); }

  Status Build(std::uint64_t count) {
    const int n = advisory_ ? kIdleConnections : 1;
    for (int i = 0; i < n; ++i) {
      auto c = pg::Connect(url_);
      if (!c) return c.error();
      const std::int64_t first =
          kIdleBase + static_cast<std::int64_t>(count * i / n);
      const std::int64_t last =
          kIdleBase + static_cast<std::int64_t>(count * (i + 1) / n) - 1;
      const std::string sql =
          advisory_ ? fmt::format(
                          "SELECT count(pg_advisory_lock(k)) FROM "
                          "generate_series({}::bigint, {}::bigint) AS k",
                          first, last)
                    : fmt::format(
                          "INSERT INTO leasehold_bench_leases SELECT k, "
                          "'idle', now() + interval '1 hour' FROM "
                          "generate_series({}::bigint, {}::bigint) AS k",
                          first, last);
      if (auto r = Exec(c->get(), sql); !r) return r.error();
      connections_.push_back(std::move(*c));
    }
    return Status::Ok();
  }

  Status Release() override {
    Status first;
    if (!advisory_ && !connections_.empty()) {
      auto r = Exec(connections_.front().get(),
                    fmt::format("DELETE FROM leasehold_bench_leases WHERE "
                                "id >= {}",
                                kIdleBase));
      if (!r) first = r.error();
    }
    connections_.clear();  // ends the sessions: advisory locks go
    return first;
  }

 private:
  const std::string url_;
  const bool advisory_;
  std::vector<Connection> connections_;
};

class PostgresTarget final : public Target {
 public:
  PostgresTarget(std::string url, std::string mode)
      : url_(std::move(url)), mode_(std::move(mode)) {}

  std::string_view Kind() const override { return "postgresql"; }

  Status Prepare(Workload w, std::uint64_t keys) override {
    advisory_ = w == Workload::kApplock && mode_ != "update";
    auto c = pg::Connect(url_);
    if (!c) return c.error();
    auto sync = Value(c->get(), "SHOW synchronous_commit");
    auto fsync = Value(c->get(), "SHOW fsync");
    if (!sync || !fsync) return Failure(c->get(), "settings");
    settings_ = fmt::format("synchronous_commit={}, fsync={}", *sync, *fsync);
    on_disk_ = *sync != "off" && *fsync == "on";
    // Every client prepares every statement, so the table exists in both
    // modes.
    return FillLeases(c->get(), keys);
  }

  std::string Durability(Workload) const override {
    if (advisory_)
      return "no: advisory locks live in memory, end with the connection";
    return fmt::format("{}: one UPDATE per transaction, {}",
                       on_disk_ ? "yes" : "no", settings_);
  }
  bool Durable(Workload) const override { return !advisory_ && on_disk_; }

  Result<std::unique_ptr<TargetClient>> Connect(int index) override {
    auto c = pg::Connect(url_);
    if (!c) return std::unexpected(c.error());
    auto client =
        std::make_unique<PostgresClient>(std::move(*c), advisory_, index);
    if (Status st = client->PrepareStatements(); !st.ok()) {
      return std::unexpected(st);
    }
    return client;
  }

  Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) override {
    auto idle = std::make_unique<PostgresIdle>(url_, advisory_);
    if (Status st = idle->Build(count); !st.ok()) return std::unexpected(st);
    return idle;
  }

 private:
  // Rows -1 (the hot name) and 0..keys-1, all free; rebuilt only when the
  // table does not already hold exactly those.
  static Status FillLeases(PGconn* c, std::uint64_t keys) {
    auto made = Exec(c,
                     "CREATE TABLE IF NOT EXISTS leasehold_bench_leases ("
                     "id bigint PRIMARY KEY, locked_by text, "
                     "lock_expires timestamptz)");
    if (!made) return made.error();
    auto rows = Value(c,
                      "SELECT count(*) FILTER (WHERE locked_by IS NULL) || "
                      "'/' || count(*) FROM leasehold_bench_leases");
    if (!rows) return rows.error();
    const std::string want = fmt::format("{0}/{0}", keys + 1);
    if (*rows == want) return Status::Ok();
    auto filled = Exec(
        c, fmt::format("BEGIN; TRUNCATE leasehold_bench_leases; INSERT INTO "
                       "leasehold_bench_leases (id) SELECT k FROM "
                       "generate_series(-1, {}) AS k; COMMIT; ANALYZE "
                       "leasehold_bench_leases",
                       keys - 1));
    return filled ? Status::Ok() : filled.error();
  }

  const std::string url_;
  const std::string mode_;
  bool advisory_ = true;
  bool on_disk_ = false;
  std::string settings_;
};

}  // namespace

std::unique_ptr<Target> MakePostgresTarget(std::string url, std::string mode) {
  return std::make_unique<PostgresTarget>(std::move(url), std::move(mode));
}

}  // namespace leasehold::loadgen
