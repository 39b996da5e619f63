#include "store/postgres/statements.h"

#include <cstdlib>
#include <optional>

#include "pg/connection.h"
#include "store/postgres/schema.h"

namespace leasehold::postgres {
namespace {

// Parameter types, short so that each statement's list reads at a glance:
// bytea, int8, bool (F for flag), text.
constexpr Oid kB = kByteaOid, kI = kInt8Oid, kF = kBoolOid, kT = kTextOid;

struct Definition {
  const char* name;
  const char* sql;  // "{s}": the quoted schema
  int params;
  Oid types[Params::kMax];
};

constexpr const char* kPutKey = "leasehold_put_key";
constexpr const char* kPutLease = "leasehold_put_lease";
constexpr const char* kDeleteKey = "leasehold_delete_key";
constexpr const char* kReserve = "leasehold_reserve";
constexpr const char* kPutOperation = "leasehold_put_operation";
constexpr const char* kPutMessage = "leasehold_put_message";
constexpr const char* kPutSession = "leasehold_put_session";
constexpr const char* kDeleteSession = "leasehold_delete_session";
constexpr const char* kPutLock = "leasehold_put_lock";
constexpr const char* kDeleteLock = "leasehold_delete_lock";

const Definition kDefinitions[] = {
    {kPutKey,
     "INSERT INTO {s}.keys (ns, key, has_record, body, version, locked_by, "
     "token, lock_expires_us, fence) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
     "$9) ON CONFLICT (ns, key) DO UPDATE SET has_record = "
     "EXCLUDED.has_record, body = EXCLUDED.body, version = EXCLUDED.version, "
     "locked_by = EXCLUDED.locked_by, token = EXCLUDED.token, "
     "lock_expires_us = EXCLUDED.lock_expires_us, fence = EXCLUDED.fence",
     9,
     {kB, kB, kF, kB, kI, kB, kB, kI, kI}},
    {kPutLease,
     "INSERT INTO {s}.keys (ns, key, has_record, body, version, locked_by, "
     "token, lock_expires_us, fence) VALUES ($1, $2, false, '', 0, $3, $4, "
     "$5, $6) ON CONFLICT (ns, key) DO UPDATE SET locked_by = "
     "EXCLUDED.locked_by, token = EXCLUDED.token, lock_expires_us = "
     "EXCLUDED.lock_expires_us, fence = EXCLUDED.fence",
     6,
     {kB, kB, kB, kB, kI, kI}},
    {kDeleteKey,
     "DELETE FROM {s}.keys WHERE ns = $1 AND key = $2",
     2,
     {kB, kB}},
    // Reservations only grow: a lower one changes nothing.
    {kReserve,
     "UPDATE {s}.meta SET value = GREATEST(value, $1) WHERE name = $2",
     2,
     {kI, kT}},
    {kPutOperation,
     "INSERT INTO {s}.operations (ns, op_id, outcome, completed_us) VALUES "
     "($1, $2, $3, $4) ON CONFLICT (ns, op_id) DO UPDATE SET outcome = "
     "EXCLUDED.outcome, completed_us = EXCLUDED.completed_us",
     4,
     {kB, kB, kB, kI}},
    {kPutMessage,
     "INSERT INTO {s}.outbox (ns, topic, id, key, payload, enqueued_us, "
     "attempts, acked, consumer, claim_token, lease_expires_us) VALUES ($1, "
     "$2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (ns, topic, id) "
     "DO UPDATE SET key = EXCLUDED.key, payload = EXCLUDED.payload, "
     "enqueued_us = EXCLUDED.enqueued_us, attempts = EXCLUDED.attempts, "
     "acked = EXCLUDED.acked, consumer = EXCLUDED.consumer, claim_token = "
     "EXCLUDED.claim_token, lease_expires_us = EXCLUDED.lease_expires_us",
     11,
     {kB, kB, kI, kB, kB, kI, kI, kF, kB, kB, kI}},
    {kPutSession,
     "INSERT INTO {s}.sessions (id, name, caller, ttl_ms, deadlock_priority, "
     "opened_us, transaction_id, transaction_started_us, memory_locks) "
     "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO UPDATE "
     "SET name = EXCLUDED.name, caller = EXCLUDED.caller, ttl_ms = "
     "EXCLUDED.ttl_ms, deadlock_priority = EXCLUDED.deadlock_priority, "
     "opened_us = EXCLUDED.opened_us, transaction_id = "
     "EXCLUDED.transaction_id, transaction_started_us = "
     "EXCLUDED.transaction_started_us, memory_locks = EXCLUDED.memory_locks",
     9,
     {kI, kB, kB, kI, kI, kI, kI, kI, kF}},
    // The session and all its lock rows, in one statement.
    {kDeleteSession,
     "WITH gone AS (DELETE FROM {s}.locks WHERE session = $1) "
     "DELETE FROM {s}.sessions WHERE id = $1",
     1,
     {kI}},
    {kPutLock,
     "INSERT INTO {s}.locks (session, owner, ns, principal, resource, mode, "
     "count, fence, since_us) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON "
     "CONFLICT (session, owner, ns, principal, resource) DO UPDATE SET mode "
     "= EXCLUDED.mode, count = EXCLUDED.count, fence = EXCLUDED.fence, "
     "since_us = EXCLUDED.since_us",
     9,
     {kI, kI, kB, kB, kB, kI, kI, kI, kI}},
    {kDeleteLock,
     "DELETE FROM {s}.locks WHERE session = $1 AND owner = $2 AND ns = $3 "
     "AND principal = $4 AND resource = $5",
     5,
     {kI, kI, kB, kB, kB}},
};

std::int64_t Micros(Time t) { return t.time_since_epoch().count(); }

std::optional<std::int64_t> Micros(const std::optional<Time>& t) {
  if (!t) return std::nullopt;
  return Micros(*t);
}

// (session, owner, ns, principal, resource) as $1 to $5.
void BindLockKey(Params& p, const LockRow& r) {
  p.Uint(r.session)
      .Int(static_cast<std::int64_t>(r.owner))
      .Bytes(r.ns)
      .Bytes(r.principal)
      .Bytes(r.resource);
}

BoundStatement Reserve(const char* name, std::uint64_t value) {
  BoundStatement s{kReserve, {}};
  s.params.Uint(value).Bytes(name);
  return s;
}

}  // namespace

Status PrepareWriteStatements(PGconn* conn, const std::string& quoted) {
  for (const Definition& d : kDefinitions) {
    const std::string sql = WithSchema(d.sql, quoted);
    pg::PgResult r(PQprepare(conn, d.name, sql.c_str(), d.params, d.types));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      return pg::Failure(conn, std::string("prepare ") + d.name);
    }
  }
  return Status::Ok();
}

BoundStatement Bind(const JournalEntry& e) {
  using Kind = JournalEntry::Kind;
  const KeyRow& r = e.row;
  BoundStatement s;
  Params& p = s.params;
  switch (e.kind) {
    case Kind::kPutKey:
      s.name = kPutKey;
      p.Bytes(r.ns).Bytes(r.key).Bool(r.has_record).Bytes(r.body);
      p.Uint(r.version).Bytes(r.locked_by).Bytes(r.token);
      p.OptionalInt(Micros(r.lock_expires_at)).Uint(r.fence);
      return s;
    case Kind::kPutLease:
      s.name = kPutLease;
      p.Bytes(r.ns).Bytes(r.key).Bytes(r.locked_by).Bytes(r.token);
      p.OptionalInt(Micros(r.lock_expires_at)).Uint(r.fence);
      return s;
    case Kind::kDeleteKey:
      s.name = kDeleteKey;
      p.Bytes(r.ns).Bytes(r.key);
      return s;
    case Kind::kReserveFences:
      return Reserve("fences_reserved", e.fences_reserved);
    case Kind::kReserveSessionIds:
      return Reserve("session_ids_reserved", e.session_ids_reserved);
    case Kind::kReserveTransactionIds:
      return Reserve("transaction_ids_reserved", e.transaction_ids_reserved);
    case Kind::kPutOperation: {
      const OperationRow& o = e.operation;
      s.name = kPutOperation;
      p.Bytes(o.ns).Bytes(o.op_id).Bytes(o.outcome).Int(Micros(o.completed_at));
      return s;
    }
    case Kind::kPutMessage: {
      const MessageRow& m = e.message;
      s.name = kPutMessage;
      p.Bytes(m.ns).Bytes(m.topic).Uint(m.id).Bytes(m.key).Bytes(m.payload);
      p.Int(Micros(m.enqueued_at)).Uint(m.attempts).Bool(m.acked);
      p.Bytes(m.consumer).Bytes(m.claim_token);
      p.OptionalInt(Micros(m.lease_expires_at));
      return s;
    }
    case Kind::kPutSession: {
      const SessionRow& x = e.session;
      s.name = kPutSession;
      p.Uint(x.id).Bytes(x.name).Bytes(x.caller).Int(x.ttl.count());
      p.Int(x.deadlock_priority).Int(Micros(x.opened_at)).Uint(x.transaction);
      p.OptionalInt(Micros(x.transaction_started_at)).Bool(x.memory_locks);
      return s;
    }
    case Kind::kDeleteSession:
      s.name = kDeleteSession;
      p.Uint(e.session.id);
      return s;
    case Kind::kPutLock:
      s.name = kPutLock;
      BindLockKey(p, e.lock);
      p.Int(static_cast<std::int64_t>(e.lock.mode)).Uint(e.lock.count);
      p.Uint(e.lock.fence).Int(Micros(e.lock.since));
      return s;
    case Kind::kDeleteLock:
      s.name = kDeleteLock;
      BindLockKey(p, e.lock);
      return s;
  }
  std::abort();  // every kind is handled above
}

}  // namespace leasehold::postgres
