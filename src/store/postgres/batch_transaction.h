// One journal batch as ONE PostgreSQL transaction: the batch reduced to
// one prepared statement per table and kind of change (BatchPlan,
// statements.h), sent in libpq's pipeline mode before a single Sync, so
// that the whole batch costs one round trip and commits at the Sync. This
// is the one place the transaction's body is written, with the check that
// runs inside every write transaction (a leader's epoch).
#ifndef LEASEHOLD_STORE_POSTGRES_BATCH_TRANSACTION_H_
#define LEASEHOLD_STORE_POSTGRES_BATCH_TRANSACTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "engine/journal.h"

namespace leasehold::postgres {

// Statements sent before their results are read: bounds what waits in
// memory on both sides for a batch of very many rows.
inline constexpr int kPipelineChunk = 1000;

// The statement name of a batch's fence (PrepareFence).
inline constexpr char kFenceStatement[] = "fence_epoch";

// Prepares `sql` (one bigint parameter, failing when the epoch no longer
// leads) as the batches' fence on `conn`.
Status PrepareFence(PGconn* conn, const std::string& sql);

// Runs the fence with `epoch` once, in a transaction of its own: OK while
// the epoch leads.
Status CheckFence(PGconn* conn, std::uint64_t epoch);

// Applies `batch` in one transaction on `conn` (an idle connection with the
// write statements prepared), the fence first when `fence_epoch` is not
// zero (and then prepared). OK once COMMIT succeeded. When the server
// refuses a statement, the transaction is rolled back: nothing was applied,
// kUnavailable with the server's message. When the connection is lost
// (PQstatus then says CONNECTION_BAD), kUnavailable, and whether COMMIT
// took effect is unknown.
Status WriteBatch(PGconn* conn, const JournalBatch& batch,
                  std::uint64_t fence_epoch = 0);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_BATCH_TRANSACTION_H_
