// Store: where the engine's durable state lives.
//
// The engine produces journal entries (engine/journal.h); a Store makes a
// batch of them durable at once and gives the whole state back at start-up.
// Implementations: SqliteStore (sqlite/), PostgresStore (postgres/),
// MemoryStore (memory/: nothing on disk, for tests). Every
// implementation passes tests/store/store_conformance_test.cc.
#ifndef LEASEHOLD_STORE_STORE_H_
#define LEASEHOLD_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/status.h"
#include "engine/journal.h"

namespace leasehold {

class Store {
 public:
  virtual ~Store() = default;

  // The highest reservations ever appended: every fence, session id and
  // transaction id handed out is at most these.
  struct Reservations {
    Fence fences = 0;
    SessionId session_ids = 0;
    TransactionId transaction_ids = 0;
    // The latest end of a lock-delay, in microseconds since 1970 UTC (0:
    // none); kept like the others, as the highest appended.
    std::uint64_t lock_delay_until_us = 0;
  };

  // Calls `key` for every stored key, in (ns, key) byte order, then
  // `operation` for every completed operation, then `message` for every
  // outbox message (in (ns, topic, id) order), then `session` for every
  // session (by id), then `lock` for every lock row (by session, owner, ns,
  // principal, resource: after its session), then returns the reservations.
  // Names compare as bytes. An empty visitor skips its rows. Stops at the
  // first error a visitor returns, and returns it. Fails (kUnavailable) when
  // the data cannot be read, or names the row when it is not one that could
  // have been appended: a lock row of a session that has no row, an owner or
  // mode out of range. Streaming keeps a restart's memory to the engine's.
  using KeyVisitor = std::function<Status(KeyRow&& row)>;
  struct Visitors {
    KeyVisitor key = {};
    std::function<Status(OperationRow&& row)> operation = {};
    std::function<Status(MessageRow&& row)> message = {};
    std::function<Status(SessionRow&& row)> session = {};
    std::function<Status(LockRow&& row)> lock = {};
  };
  virtual Result<Reservations> Load(const Visitors& visit) = 0;

  // Everything stored, collected (for tests and tools).
  Result<DurableState> LoadAll();

  // Applies `batch` atomically and durably: when this returns OK every entry
  // survives a crash of the process or the machine; on an error none of them
  // was applied. Entries apply in order. Not thread-safe: one writer.
  virtual Status Append(const JournalBatch& batch) = 0;

  // Before a store whose Append failed is closed and opened again: makes
  // every batch whose Append succeeded durable where the next open reads it
  // first, and discards whatever a failed Append left behind, so that the
  // next open loads exactly the acknowledged batches, never a refused one.
  // Fails (kUnavailable) while the data cannot be written; the store stays
  // as it was, and Close may be called again. Append must not be called
  // after it. The default does nothing, for a store whose failed Append
  // leaves nothing behind. (PostgreSQL rolls a failed batch back, but one
  // whose server stopped answering may still commit later: its Close waits
  // until that can no longer happen.)
  virtual Status Close() { return Status::Ok(); }

  // Writes a consistent copy of the durable state to `destination` (an
  // empty file, or none: it is created), in the form the store opens as
  // its data (SQLite: a database file). Runs on a thread of its own while
  // Append goes on: every batch whose Append returned before the call is in
  // the copy, and an Append waits at most for one short step of it, never
  // for the whole copy; nothing is held in memory whole. kUnavailable when
  // `stop` is requested or the store is closed meanwhile (`destination` is
  // then incomplete), or when writing it fails. The default, for stores
  // whose data is not theirs to copy, answers kNotSupported, saying how it
  // is backed up instead.
  virtual Status Backup(const std::string& destination, std::stop_token stop);
  // Where the data lives, for logs: "sqlite:/var/lib/leasehold/leasehold.db".
  virtual std::string Describe() const = 0;
};

// For implementations of Load: why a lock row read back could not have been
// appended ("" when it could): its session has no row, or its owner, mode,
// count or semaphore limit (as stored) is out of range.
std::string_view LockRowProblem(bool has_session, std::int64_t owner,
                                std::int64_t mode, std::int64_t count,
                                std::int64_t limit, std::int64_t lost);
// How a refusal names that row: the lock row (session S, owner O, "ns",
// "principal", "resource").
std::string LockRowName(std::int64_t session, std::int64_t owner,
                        const LockRow& row);

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_STORE_H_
