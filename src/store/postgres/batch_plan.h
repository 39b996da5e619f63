// BatchPlan: a journal batch reduced to the last state of each row it
// touches, table by table, so that one PostgreSQL transaction applies it
// with one statement per table and kind of change (arrays of rows) instead
// of one statement per entry: a group commit of 30 lock grants and
// releases is then two statements, not thirty. Entries are states, not
// deltas (journal.h), so only the last one of each row matters, except
// where a later entry sets part of a row (a lease) or a session's deletion
// removes lock rows that entries before it put.
#ifndef LEASEHOLD_STORE_POSTGRES_BATCH_PLAN_H_
#define LEASEHOLD_STORE_POSTGRES_BATCH_PLAN_H_

#include <deque>
#include <vector>

#include "engine/journal.h"

namespace leasehold::postgres {

// Applied in the order of its members, the plan leaves what appending the
// batch's entries one by one leaves. Within one member every row key is
// distinct (PostgreSQL's ON CONFLICT may not touch a row twice in one
// statement), and no key is in two members of one table except where the
// order above makes that right (a session's lock purge, then its rows put
// after its last deletion). Pointers point into the batch, or into
// merged_keys; the plan must not outlive the batch.
struct BatchPlan {
  // The highest reservation of each kind in the batch; 0: none.
  Fence fences_reserved = 0;
  SessionId session_ids_reserved = 0;
  TransactionId transaction_ids_reserved = 0;
  std::uint64_t lock_delay_until_us = 0;

  // Sessions deleted in the batch: their lock rows are removed (all of
  // them, as the entry says), and those not put again are removed too.
  std::vector<SessionId> purged_sessions;
  std::vector<SessionId> deleted_sessions;
  std::vector<const SessionRow*> put_sessions;

  // Lock entries after their session's last deletion in the batch.
  std::vector<const LockRow*> deleted_locks;
  std::vector<const LockRow*> put_locks;

  std::vector<const KeyRow*> deleted_keys;
  std::vector<const KeyRow*> put_keys;    // every column
  std::vector<const KeyRow*> put_leases;  // the lease columns only

  std::vector<const OperationRow*> put_operations;
  std::vector<const MessageRow*> put_messages;

  // Rows made when a lease follows a put or a deletion of its key in the
  // same batch: the whole row it leaves. A deque: pointers stay valid.
  std::deque<KeyRow> merged_keys;

  BatchPlan() = default;
  BatchPlan(BatchPlan&&) = default;
  BatchPlan& operator=(BatchPlan&&) = default;
  BatchPlan(const BatchPlan&) = delete;  // pointers into merged_keys
  BatchPlan& operator=(const BatchPlan&) = delete;
};

BatchPlan PlanBatch(const JournalBatch& batch);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_BATCH_PLAN_H_
