#include "store/postgres/loader.h"

#include <cstdlib>
#include <functional>
#include <optional>
#include <string_view>

#include "pg/connection.h"
#include "store/postgres/schema.h"
#include "store/postgres/wire.h"

namespace leasehold::postgres {
namespace {

Time FromMicros(std::int64_t us) { return Time(Duration(us)); }

std::optional<Time> FromMicros(std::optional<std::int64_t> us) {
  if (!us) return std::nullopt;
  return FromMicros(*us);
}

class Loader {
 public:
  Loader(PGconn* conn, const std::string& name, const std::string& quoted,
         int fetch_rows, pg::Watchdog::Watch& watch)
      : conn_(conn),
        name_(name),
        quoted_(quoted),
        fetch_rows_(fetch_rows),
        watch_(watch) {}

  Result<Store::Reservations> Load(const Store::Visitors& visit) {
    auto begun =
        pg::Exec(conn_, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    if (!begun) return std::unexpected(begun.error());
    auto loaded = LoadInTransaction(visit);
    if (PQstatus(conn_) == CONNECTION_OK) {
      auto ended = pg::Exec(conn_, loaded ? "COMMIT" : "ROLLBACK");
      if (loaded && !ended) return std::unexpected(ended.error());
    }
    return loaded;
  }

 private:
  using RowVisitor = std::function<Status(RowReader&)>;

  Result<Store::Reservations> LoadInTransaction(const Store::Visitors& v) {
    if (v.key) {
      if (Status st = Scan("keys", kKeys, KeyRows(v.key)); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (v.operation) {
      if (Status st = Scan("operations", kOperations, OperationRows(v));
          !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (v.message) {
      if (Status st = Scan("the outbox", kMessages, MessageRows(v)); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (v.session) {
      if (Status st = Scan("sessions", kSessions, SessionRows(v)); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (v.lock) {
      if (Status st = Scan("locks", kLocks, LockRows(v)); !st.ok()) {
        return std::unexpected(st);
      }
    }
    return ReadReservations();
  }

  // Runs `select` through a cursor and calls `on_row` for each row.
  Status Scan(const char* what, const char* select, const RowVisitor& on_row) {
    auto declared =
        pg::Exec(conn_, "DECLARE leasehold_load NO SCROLL CURSOR FOR " +
                            WithSchema(select, quoted_));
    if (!declared) return declared.error();
    const std::string fetch =
        "FETCH FORWARD " + std::to_string(fetch_rows_) + " FROM leasehold_load";
    while (true) {
      pg::PgResult rows(PQexecParams(conn_, fetch.c_str(), 0, nullptr, nullptr,
                                     nullptr, nullptr, 1));
      if (PQresultStatus(rows.get()) != PGRES_TUPLES_OK) {
        return pg::Failure(conn_, std::string("reading ") + what);
      }
      watch_.Restart();
      const int n = PQntuples(rows.get());
      for (int i = 0; i < n; ++i) {
        RowReader row(rows.get(), i);
        if (Status st = on_row(row); !st.ok()) return st;
      }
      if (n < fetch_rows_) break;
    }
    auto closed = pg::Exec(conn_, "CLOSE leasehold_load");
    return closed ? Status::Ok() : closed.error();
  }

  Status Corrupt(const std::string& what) const {
    return Status(StatusCode::kUnavailable,
                  "refusing to load PostgreSQL schema \"" + name_ +
                      "\": " + what + " has a value of an unexpected type");
  }

  static constexpr const char* kKeys =
      "SELECT ns, key, has_record, body, version, locked_by, token, "
      "lock_expires_us, fence, write_fence FROM {s}.keys ORDER BY ns, key";
  RowVisitor KeyRows(const Store::KeyVisitor& visit) const {
    return [this, &visit](RowReader& in) {
      KeyRow row;
      row.ns = in.Bytes(0);
      row.key = in.Bytes(1);
      row.has_record = in.Bool(2);
      row.body = in.Bytes(3);
      row.version = static_cast<std::uint64_t>(in.Int(4));
      row.locked_by = in.Bytes(5);
      row.token = in.Bytes(6);
      row.lock_expires_at = FromMicros(in.OptionalInt(7));
      row.fence = static_cast<Fence>(in.Int(8));
      row.write_fence = static_cast<Fence>(in.Int(9));
      if (in.bad()) return Corrupt("a key row");
      return visit(std::move(row));
    };
  }

  static constexpr const char* kOperations =
      "SELECT ns, op_id, outcome, completed_us FROM {s}.operations "
      "ORDER BY ns, op_id";
  RowVisitor OperationRows(const Store::Visitors& v) const {
    return [this, &v](RowReader& in) {
      OperationRow row;
      row.ns = in.Bytes(0);
      row.op_id = in.Bytes(1);
      row.outcome = in.Bytes(2);
      row.completed_at = FromMicros(in.Int(3));
      if (in.bad()) return Corrupt("an operation row");
      return v.operation(std::move(row));
    };
  }

  static constexpr const char* kMessages =
      "SELECT ns, topic, id, key, payload, enqueued_us, attempts, acked, "
      "consumer, claim_token, lease_expires_us FROM {s}.outbox "
      "ORDER BY ns, topic, id";
  RowVisitor MessageRows(const Store::Visitors& v) const {
    return [this, &v](RowReader& in) {
      MessageRow row;
      row.ns = in.Bytes(0);
      row.topic = in.Bytes(1);
      row.id = static_cast<std::uint64_t>(in.Int(2));
      row.key = in.Bytes(3);
      row.payload = in.Bytes(4);
      row.enqueued_at = FromMicros(in.Int(5));
      row.attempts = static_cast<std::uint32_t>(in.Int(6));
      row.acked = in.Bool(7);
      row.consumer = in.Bytes(8);
      row.claim_token = in.Bytes(9);
      row.lease_expires_at = FromMicros(in.OptionalInt(10));
      if (in.bad()) return Corrupt("an outbox row");
      return v.message(std::move(row));
    };
  }

  static constexpr const char* kSessions =
      "SELECT id, name, caller, ttl_ms, deadlock_priority, opened_us, "
      "transaction_id, transaction_started_us, memory_locks "
      "FROM {s}.sessions ORDER BY id";
  RowVisitor SessionRows(const Store::Visitors& v) const {
    return [this, &v](RowReader& in) {
      SessionRow row;
      row.id = static_cast<SessionId>(in.Int(0));
      row.name = in.Bytes(1);
      row.caller = in.Bytes(2);
      row.ttl = std::chrono::milliseconds(in.Int(3));
      row.deadlock_priority = static_cast<int>(in.Int(4));
      row.opened_at = FromMicros(in.Int(5));
      row.transaction = static_cast<TransactionId>(in.Int(6));
      row.transaction_started_at = FromMicros(in.OptionalInt(7));
      row.memory_locks = in.Bool(8);
      if (in.bad()) return Corrupt("a session row");
      return v.session(std::move(row));
    };
  }

  // Whether each lock row's session exists comes with the row: one index
  // probe each, and no list of session ids held in memory.
  static constexpr const char* kLocks =
      "SELECT l.session, l.owner, l.ns, l.principal, l.resource, l.mode, "
      "l.count, l.fence, l.since_us, EXISTS (SELECT 1 FROM {s}.sessions s "
      "WHERE s.id = l.session), l.semaphore_limit, l.hold_until_us, l.lost "
      "FROM {s}.locks l ORDER BY l.session, l.owner, l.ns, l.principal, "
      "l.resource";
  RowVisitor LockRows(const Store::Visitors& v) const {
    return [this, &v](RowReader& in) {
      const std::int64_t session = in.Int(0);
      const std::int64_t owner = in.Int(1);
      LockRow row;
      row.session = static_cast<SessionId>(session);
      row.ns = in.Bytes(2);
      row.principal = in.Bytes(3);
      row.resource = in.Bytes(4);
      const std::int64_t mode = in.Int(5);
      const std::int64_t count = in.Int(6);
      row.fence = static_cast<Fence>(in.Int(7));
      row.since = FromMicros(in.Int(8));
      const bool has_session = in.Bool(9);
      const std::int64_t limit = in.Int(10);
      const std::optional<std::int64_t> hold_until = in.OptionalInt(11);
      const std::int64_t lost = in.Int(12);
      if (in.bad()) return Corrupt("a lock row");
      const std::string_view why =
          LockRowProblem(has_session, owner, mode, count, limit, lost);
      if (!why.empty()) {  // named only when refused: there may be millions
        return Status(StatusCode::kUnavailable,
                      "refusing to load PostgreSQL schema \"" + name_ +
                          "\": " + LockRowName(session, owner, row) + " " +
                          std::string(why) + "; restore it from a backup");
      }
      row.owner = static_cast<LockOwner>(owner);
      row.mode = static_cast<LockMode>(mode);
      row.count = static_cast<std::uint32_t>(count);
      row.limit = static_cast<std::uint32_t>(limit);
      if (hold_until) row.hold_until = FromMicros(*hold_until);
      row.lost = static_cast<LostReason>(lost);
      return v.lock(std::move(row));
    };
  }

  Result<Store::Reservations> ReadReservations() {
    Store::Reservations reserved;
    auto rows = pg::Exec(
        conn_, WithSchema("SELECT name, value FROM {s}.meta", quoted_));
    if (!rows) return std::unexpected(rows.error());
    int found = 0;
    for (int i = 0; i < PQntuples(rows->get()); ++i) {
      const std::string_view name = PQgetvalue(rows->get(), i, 0);
      const auto value =
          static_cast<std::uint64_t>(std::atoll(PQgetvalue(rows->get(), i, 1)));
      std::uint64_t* to =
          name == "fences_reserved"            ? &reserved.fences
          : name == "session_ids_reserved"     ? &reserved.session_ids
          : name == "transaction_ids_reserved" ? &reserved.transaction_ids
          : name == "lock_delay_until_us"      ? &reserved.lock_delay_until_us
                                               : nullptr;
      if (to != nullptr) {
        *to = value;
        ++found;
      }
    }
    if (found != 4) {
      return std::unexpected(Corrupt("the meta table (a reservation)"));
    }
    return reserved;
  }

  PGconn* conn_;
  const std::string& name_;
  const std::string& quoted_;
  int fetch_rows_;
  pg::Watchdog::Watch& watch_;
};

}  // namespace

Result<Store::Reservations> LoadStore(PGconn* conn, const std::string& name,
                                      const std::string& quoted, int fetch_rows,
                                      const Store::Visitors& visit,
                                      pg::Watchdog::Watch& watch) {
  return Loader(conn, name, quoted, fetch_rows, watch).Load(visit);
}

}  // namespace leasehold::postgres
