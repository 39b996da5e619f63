#include "store/postgres/statements.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "pg/connection.h"
#include "store/postgres/schema.h"

namespace leasehold::postgres {
namespace {

// Column types, short so that each statement's list reads at a glance:
// bytea, int8, bool (F for flag), text. Each parameter is an array of one.
constexpr Oid kB = kByteaOid, kI = kInt8Oid, kF = kBoolOid, kT = kTextOid;

Oid ArrayOf(Oid element) {
  switch (element) {
    case kB:
      return kByteaArrayOid;
    case kI:
      return kInt8ArrayOid;
    case kF:
      return kBoolArrayOid;
    default:
      return kTextArrayOid;
  }
}

struct Definition {
  const char* name;
  const char* sql;  // "{s}": the quoted schema
  int params;
  Oid columns[Params::kMax];  // each parameter's element type
};

constexpr const char* kReserve = "leasehold_reserve";
constexpr const char* kDeleteSessions = "leasehold_delete_sessions";
constexpr const char* kPutSessions = "leasehold_put_sessions";
constexpr const char* kDeleteLocks = "leasehold_delete_locks";
constexpr const char* kPutLocks = "leasehold_put_locks";
constexpr const char* kApplyLocks = "leasehold_apply_locks";
constexpr const char* kDeleteKeys = "leasehold_delete_keys";
constexpr const char* kPutKeys = "leasehold_put_keys";
constexpr const char* kPutLeases = "leasehold_put_leases";
constexpr const char* kPutOperations = "leasehold_put_operations";
constexpr const char* kPutMessages = "leasehold_put_messages";

// Arrays are unnested in a select list, never in FROM: a function in FROM
// fills a tuplestore, whose memory PostgreSQL took from and gave back to
// the system (brk, and a TLB flush on every core) on each batch, measured
// at a quarter of its time per batch. In a select list the unnests run in
// step, row by row, as unnest(a, b, ...) does.
const Definition kDefinitions[] = {
    // Reservations only grow: a lower one changes nothing.
    {kReserve,
     "UPDATE {s}.meta m SET value = GREATEST(m.value, r.value) FROM (SELECT "
     "unnest($1) AS name, unnest($2) AS value) AS r WHERE m.name = r.name",
     2,
     {kT, kI}},
    // Lock rows of every session deleted ($1), then the sessions that stay
    // deleted ($2).
    {kDeleteSessions,
     "WITH gone AS (DELETE FROM {s}.locks WHERE session = ANY ($1)) "
     "DELETE FROM {s}.sessions WHERE id = ANY ($2)",
     2,
     {kI, kI}},
    {kPutSessions,
     "INSERT INTO {s}.sessions (id, name, caller, ttl_ms, deadlock_priority, "
     "opened_us, transaction_id, transaction_started_us, memory_locks) "
     "SELECT unnest($1), unnest($2), unnest($3), unnest($4), unnest($5), "
     "unnest($6), unnest($7), unnest($8), unnest($9) ON CONFLICT "
     "(id) DO UPDATE SET name = EXCLUDED.name, caller = EXCLUDED.caller, "
     "ttl_ms = EXCLUDED.ttl_ms, deadlock_priority = "
     "EXCLUDED.deadlock_priority, opened_us = EXCLUDED.opened_us, "
     "transaction_id = EXCLUDED.transaction_id, transaction_started_us = "
     "EXCLUDED.transaction_started_us, memory_locks = EXCLUDED.memory_locks",
     9,
     {kI, kB, kB, kI, kI, kI, kI, kI, kF}},
    {kDeleteLocks,
     "DELETE FROM {s}.locks l USING (SELECT unnest($1) AS session, unnest($2) "
     "AS owner, unnest($3) AS ns, unnest($4) AS principal, unnest($5) AS "
     "resource) AS d WHERE l.session = d.session "
     "AND l.owner = d.owner AND l.ns = d.ns AND l.principal = d.principal "
     "AND l.resource = d.resource",
     5,
     {kI, kI, kB, kB, kB}},
    {kPutLocks,
     "INSERT INTO {s}.locks (session, owner, ns, principal, resource, mode, "
     "count, fence, since_us, semaphore_limit, hold_until_us, lost) SELECT "
     "unnest($1), unnest($2), unnest($3), unnest($4), unnest($5), "
     "unnest($6), unnest($7), unnest($8), unnest($9), unnest($10), "
     "unnest($11), unnest($12) ON CONFLICT (session, owner, ns, principal, "
     "resource) DO UPDATE SET mode = EXCLUDED.mode, count = EXCLUDED.count, "
     "fence = EXCLUDED.fence, since_us = EXCLUDED.since_us, semaphore_limit "
     "= EXCLUDED.semaphore_limit, hold_until_us = EXCLUDED.hold_until_us, "
     "lost = EXCLUDED.lost",
     12,
     {kI, kI, kB, kB, kB, kI, kI, kI, kI, kI, kI, kI}},
    // Both at once, as one statement: a batch's deleted and put lock rows
    // are distinct rows (each row's last state is one or the other), so
    // the order between the two parts does not matter.
    {kApplyLocks,
     "WITH gone AS (DELETE FROM {s}.locks l USING (SELECT unnest($1) AS "
     "session, unnest($2) AS owner, unnest($3) AS ns, unnest($4) AS "
     "principal, unnest($5) AS resource) AS d WHERE l.session = d.session "
     "AND l.owner = d.owner AND l.ns = d.ns AND l.principal = d.principal "
     "AND l.resource = d.resource) "
     "INSERT INTO {s}.locks (session, owner, ns, principal, resource, mode, "
     "count, fence, since_us, semaphore_limit, hold_until_us, lost) SELECT "
     "unnest($6), unnest($7), unnest($8), unnest($9), unnest($10), "
     "unnest($11), unnest($12), unnest($13), unnest($14), unnest($15), "
     "unnest($16), unnest($17) ON CONFLICT (session, owner, ns, principal, "
     "resource) DO UPDATE SET mode = EXCLUDED.mode, count = EXCLUDED.count, "
     "fence = EXCLUDED.fence, since_us = EXCLUDED.since_us, semaphore_limit "
     "= EXCLUDED.semaphore_limit, hold_until_us = EXCLUDED.hold_until_us, "
     "lost = EXCLUDED.lost",
     17,
     {kI, kI, kB, kB, kB, kI, kI, kB, kB, kB, kI, kI, kI, kI, kI, kI, kI}},
    {kDeleteKeys,
     "DELETE FROM {s}.keys k USING (SELECT unnest($1) AS ns, unnest($2) AS "
     "key) AS d WHERE "
     "k.ns = d.ns AND k.key = d.key",
     2,
     {kB, kB}},
    {kPutKeys,
     "INSERT INTO {s}.keys (ns, key, has_record, body, version, locked_by, "
     "token, lock_expires_us, fence, write_fence) SELECT unnest($1), "
     "unnest($2), unnest($3), unnest($4), unnest($5), unnest($6), "
     "unnest($7), unnest($8), unnest($9), unnest($10) ON CONFLICT (ns, key) "
     "DO UPDATE "
     "SET has_record = EXCLUDED.has_record, body = EXCLUDED.body, version = "
     "EXCLUDED.version, locked_by = EXCLUDED.locked_by, token = "
     "EXCLUDED.token, lock_expires_us = EXCLUDED.lock_expires_us, fence = "
     "EXCLUDED.fence, write_fence = EXCLUDED.write_fence",
     10,
     {kB, kB, kF, kB, kI, kB, kB, kI, kI, kI}},
    // A new key gets no record; an existing one keeps its record.
    {kPutLeases,
     "INSERT INTO {s}.keys (ns, key, has_record, body, version, locked_by, "
     "token, lock_expires_us, fence) SELECT l.ns, l.key, false, '', 0, "
     "l.locked_by, l.token, l.lock_expires_us, l.fence FROM (SELECT "
     "unnest($1) AS ns, unnest($2) AS key, unnest($3) AS locked_by, "
     "unnest($4) AS token, unnest($5) AS lock_expires_us, unnest($6) AS "
     "fence) AS l ON CONFLICT (ns, key) DO UPDATE SET locked_by = "
     "EXCLUDED.locked_by, token = EXCLUDED.token, lock_expires_us = "
     "EXCLUDED.lock_expires_us, fence = EXCLUDED.fence",
     6,
     {kB, kB, kB, kB, kI, kI}},
    {kPutOperations,
     "INSERT INTO {s}.operations (ns, op_id, outcome, completed_us) SELECT "
     "unnest($1), unnest($2), unnest($3), unnest($4) ON CONFLICT (ns, op_id) "
     "DO UPDATE SET "
     "outcome = EXCLUDED.outcome, completed_us = EXCLUDED.completed_us",
     4,
     {kB, kB, kB, kI}},
    {kPutMessages,
     "INSERT INTO {s}.outbox (ns, topic, id, key, payload, enqueued_us, "
     "attempts, acked, consumer, claim_token, lease_expires_us) SELECT "
     "unnest($1), unnest($2), unnest($3), unnest($4), unnest($5), "
     "unnest($6), unnest($7), unnest($8), unnest($9), unnest($10), "
     "unnest($11) ON CONFLICT "
     "(ns, topic, id) DO UPDATE SET key = EXCLUDED.key, payload = "
     "EXCLUDED.payload, enqueued_us = EXCLUDED.enqueued_us, attempts = "
     "EXCLUDED.attempts, acked = EXCLUDED.acked, consumer = "
     "EXCLUDED.consumer, claim_token = EXCLUDED.claim_token, "
     "lease_expires_us = EXCLUDED.lease_expires_us",
     11,
     {kB, kB, kI, kB, kB, kI, kI, kF, kB, kB, kI}},
};

const Definition& DefinitionOf(const char* name) {
  for (const Definition& d : kDefinitions) {
    if (std::string_view(d.name) == name) return d;
  }
  std::abort();  // every statement is defined above
}

std::int64_t Micros(Time t) { return t.time_since_epoch().count(); }

std::optional<std::int64_t> Micros(const std::optional<Time>& t) {
  if (!t) return std::nullopt;
  return Micros(*t);
}

// Builds the statements of one kind: one array per column, a row at a
// time, starting a further statement past kRowsPerStatement rows or
// kBytesPerStatement bytes.
class ColumnsBuilder {
 public:
  ColumnsBuilder(std::vector<BoundStatement>& out, const char* name)
      : out_(out), definition_(DefinitionOf(name)) {
    Reset();
  }

  // The row's columns, in the statement's order; then EndRow.
  ArrayWriter& operator[](int column) { return columns_[column]; }

  void EndRow() {
    ++rows_;
    std::size_t bytes = 0;
    for (int i = 0; i < definition_.params; ++i) bytes += columns_[i].bytes();
    if (rows_ >= kRowsPerStatement || bytes >= kBytesPerStatement) Finish();
  }

  // Binds the rows not yet bound, if any, to a statement.
  void Finish() {
    if (rows_ == 0) return;
    BoundStatement s{definition_.name, {}};
    for (int i = 0; i < definition_.params; ++i) {
      s.params.Owned(columns_[i].Take());
    }
    out_.push_back(std::move(s));
    Reset();
  }

 private:
  void Reset() {
    for (int i = 0; i < definition_.params; ++i) {
      columns_[i] = ArrayWriter(definition_.columns[i]);
    }
    rows_ = 0;
  }

  std::vector<BoundStatement>& out_;
  const Definition& definition_;
  std::array<ArrayWriter, Params::kMax> columns_;
  std::size_t rows_ = 0;
};

void BindReservations(const BatchPlan& plan, std::vector<BoundStatement>& out) {
  ColumnsBuilder b(out, kReserve);
  const std::pair<const char*, std::uint64_t> reservations[] = {
      {"fences_reserved", plan.fences_reserved},
      {"session_ids_reserved", plan.session_ids_reserved},
      {"transaction_ids_reserved", plan.transaction_ids_reserved},
      {"lock_delay_until_us", plan.lock_delay_until_us}};
  for (const auto& [name, value] : reservations) {
    if (value == 0) continue;
    b[0].Bytes(name);
    b[1].Uint(value);
    b.EndRow();
  }
  b.Finish();
}

void BindSessions(const BatchPlan& plan, std::vector<BoundStatement>& out) {
  if (!plan.purged_sessions.empty()) {
    // Both lists in one statement: at most as many ids as entries.
    ArrayWriter purged(kI), deleted(kI);
    for (SessionId id : plan.purged_sessions) purged.Uint(id);
    for (SessionId id : plan.deleted_sessions) deleted.Uint(id);
    BoundStatement s{kDeleteSessions, {}};
    s.params.Owned(purged.Take()).Owned(deleted.Take());
    out.push_back(std::move(s));
  }
  ColumnsBuilder b(out, kPutSessions);
  for (const SessionRow* x : plan.put_sessions) {
    b[0].Uint(x->id);
    b[1].Bytes(x->name);
    b[2].Bytes(x->caller);
    b[3].Int(x->ttl.count());
    b[4].Int(x->deadlock_priority);
    b[5].Int(Micros(x->opened_at));
    b[6].Uint(x->transaction);
    b[7].OptionalInt(Micros(x->transaction_started_at));
    b[8].Bool(x->memory_locks);
    b.EndRow();
  }
  b.Finish();
}

// (session, owner, ns, principal, resource) as the first five columns.
void BindLockKey(ColumnsBuilder& b, const LockRow& r) {
  b[0].Uint(r.session);
  b[1].Int(static_cast<std::int64_t>(r.owner));
  b[2].Bytes(r.ns);
  b[3].Bytes(r.principal);
  b[4].Bytes(r.resource);
}

// A batch that both deletes and puts lock rows (a grant beside a release,
// the usual batch) in one statement, when both fit one: one execution
// fewer in PostgreSQL per commit.
bool BindLocksTogether(const BatchPlan& plan,
                       std::vector<BoundStatement>& out) {
  if (plan.deleted_locks.empty() || plan.put_locks.empty() ||
      plan.deleted_locks.size() > kRowsPerStatement ||
      plan.put_locks.size() > kRowsPerStatement) {
    return false;
  }
  const Definition& d = DefinitionOf(kApplyLocks);
  std::array<ArrayWriter, Params::kMax> c;
  for (int i = 0; i < d.params; ++i) c[i] = ArrayWriter(d.columns[i]);
  auto key = [&c](int first, const LockRow& r) {
    c[first].Uint(r.session);
    c[first + 1].Int(static_cast<std::int64_t>(r.owner));
    c[first + 2].Bytes(r.ns);
    c[first + 3].Bytes(r.principal);
    c[first + 4].Bytes(r.resource);
  };
  for (const LockRow* r : plan.deleted_locks) key(0, *r);
  for (const LockRow* r : plan.put_locks) {
    key(5, *r);
    c[10].Int(static_cast<std::int64_t>(r->mode));
    c[11].Uint(r->count);
    c[12].Uint(r->fence);
    c[13].Int(Micros(r->since));
    c[14].Uint(r->limit);
    c[15].OptionalInt(Micros(r->hold_until));
    c[16].Int(static_cast<std::int64_t>(r->lost));
  }
  std::size_t bytes = 0;
  for (int i = 0; i < d.params; ++i) bytes += c[i].bytes();
  if (bytes >= kBytesPerStatement) return false;
  BoundStatement s{d.name, {}};
  for (int i = 0; i < d.params; ++i) s.params.Owned(c[i].Take());
  out.push_back(std::move(s));
  return true;
}

void BindLocks(const BatchPlan& plan, std::vector<BoundStatement>& out) {
  if (BindLocksTogether(plan, out)) return;
  {
    ColumnsBuilder b(out, kDeleteLocks);
    for (const LockRow* r : plan.deleted_locks) {
      BindLockKey(b, *r);
      b.EndRow();
    }
    b.Finish();
  }
  ColumnsBuilder b(out, kPutLocks);
  for (const LockRow* r : plan.put_locks) {
    BindLockKey(b, *r);
    b[5].Int(static_cast<std::int64_t>(r->mode));
    b[6].Uint(r->count);
    b[7].Uint(r->fence);
    b[8].Int(Micros(r->since));
    b[9].Uint(r->limit);
    b[10].OptionalInt(Micros(r->hold_until));
    b[11].Int(static_cast<std::int64_t>(r->lost));
    b.EndRow();
  }
  b.Finish();
}

void BindKeys(const BatchPlan& plan, std::vector<BoundStatement>& out) {
  {
    ColumnsBuilder b(out, kDeleteKeys);
    for (const KeyRow* r : plan.deleted_keys) {
      b[0].Bytes(r->ns);
      b[1].Bytes(r->key);
      b.EndRow();
    }
    b.Finish();
  }
  {
    ColumnsBuilder b(out, kPutKeys);
    for (const KeyRow* r : plan.put_keys) {
      b[0].Bytes(r->ns);
      b[1].Bytes(r->key);
      b[2].Bool(r->has_record);
      b[3].Bytes(r->body);
      b[4].Uint(r->version);
      b[5].Bytes(r->locked_by);
      b[6].Bytes(r->token);
      b[7].OptionalInt(Micros(r->lock_expires_at));
      b[8].Uint(r->fence);
      b[9].Uint(r->write_fence);
      b.EndRow();
    }
    b.Finish();
  }
  ColumnsBuilder b(out, kPutLeases);
  for (const KeyRow* r : plan.put_leases) {
    b[0].Bytes(r->ns);
    b[1].Bytes(r->key);
    b[2].Bytes(r->locked_by);
    b[3].Bytes(r->token);
    b[4].OptionalInt(Micros(r->lock_expires_at));
    b[5].Uint(r->fence);
    b.EndRow();
  }
  b.Finish();
}

void BindOperationsAndMessages(const BatchPlan& plan,
                               std::vector<BoundStatement>& out) {
  {
    ColumnsBuilder b(out, kPutOperations);
    for (const OperationRow* o : plan.put_operations) {
      b[0].Bytes(o->ns);
      b[1].Bytes(o->op_id);
      b[2].Bytes(o->outcome);
      b[3].Int(Micros(o->completed_at));
      b.EndRow();
    }
    b.Finish();
  }
  ColumnsBuilder b(out, kPutMessages);
  for (const MessageRow* m : plan.put_messages) {
    b[0].Bytes(m->ns);
    b[1].Bytes(m->topic);
    b[2].Uint(m->id);
    b[3].Bytes(m->key);
    b[4].Bytes(m->payload);
    b[5].Int(Micros(m->enqueued_at));
    b[6].Uint(m->attempts);
    b[7].Bool(m->acked);
    b[8].Bytes(m->consumer);
    b[9].Bytes(m->claim_token);
    b[10].OptionalInt(Micros(m->lease_expires_at));
    b.EndRow();
  }
  b.Finish();
}

}  // namespace

Status PrepareWriteStatements(PGconn* conn, const std::string& quoted) {
  for (const Definition& d : kDefinitions) {
    const std::string sql = WithSchema(d.sql, quoted);
    Oid types[Params::kMax];
    for (int i = 0; i < d.params; ++i) types[i] = ArrayOf(d.columns[i]);
    pg::PgResult r(PQprepare(conn, d.name, sql.c_str(), d.params, types));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      return pg::Failure(conn, std::string("prepare ") + d.name);
    }
  }
  return Status::Ok();
}

std::vector<BoundStatement> BindPlan(const BatchPlan& plan) {
  std::vector<BoundStatement> out;
  BindReservations(plan, out);
  BindSessions(plan, out);
  BindLocks(plan, out);
  BindKeys(plan, out);
  BindOperationsAndMessages(plan, out);
  return out;
}

}  // namespace leasehold::postgres
