// The journal: the durable changes an engine command makes, in the order it
// made them. The engine produces entries; a Store makes them durable; on
// start-up the Store's state is loaded back into the engine.
#ifndef LEASEHOLD_ENGINE_JOURNAL_H_
#define LEASEHOLD_ENGINE_JOURNAL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "engine/lock_types.h"

namespace leasehold {

// The whole durable state of one key: its record and its lease.
struct KeyRow {
  std::string ns;
  std::string key;
  bool has_record = false;
  std::string body;           // meaningful when has_record
  std::uint64_t version = 0;  // 0 when there is no record
  // The lease. locked_by outlives expiry (it is the last owner's name); the
  // lease is absent when lock_expires_at is empty.
  std::string locked_by;
  std::string token;
  std::optional<Time> lock_expires_at;
  Fence fence = 0;  // of the latest checkout grant
  // The highest fence a write of this key carried (0: none). It outlives
  // the record: a key whose only state is this is a fenced delete's
  // tombstone, refusing older fences for ever.
  Fence write_fence = 0;

  friend bool operator==(const KeyRow&, const KeyRow&) = default;
};

// A completed idempotent operation (docs/api.md, "Idempotent operations and the
// outbox"): its stored outcome, kept for ever.
struct OperationRow {
  std::string ns;
  std::string op_id;
  std::string outcome;  // JSON text, as the client completed it
  Time completed_at;

  friend bool operator==(const OperationRow&, const OperationRow&) = default;
};

// One outbox message in its current state. An acknowledged message keeps its
// row (without payload) so that its key is never enqueued again and a
// repeated ack with the same claim token is recognised.
struct MessageRow {
  std::string ns;
  std::string topic;
  std::uint64_t id = 0;
  std::string key;      // the deduplication key, unique per (ns, topic)
  std::string payload;  // JSON text; empty once acknowledged
  Time enqueued_at;
  std::uint32_t attempts = 0;  // claims so far
  bool acked = false;
  // The latest claim: consumer, token and expiry (absent: never claimed).
  std::string consumer;
  std::string claim_token;
  std::optional<Time> lease_expires_at;

  friend bool operator==(const MessageRow&, const MessageRow&) = default;
};

// A session as it was opened, and whether it has a transaction open. Its
// expiry is not kept (keep-alives are not journaled): a restored session
// gets a fresh ttl, and a transaction open at a restart is lost.
struct SessionRow {
  SessionId id = 0;
  std::string name;
  std::string caller;  // the principal that opened it; "" without auth
  std::chrono::milliseconds ttl{0};
  int deadlock_priority = 0;
  Time opened_at;
  // The open transaction, or the one lost at a restart that the session has
  // not been told about yet (its Transaction-owned lock rows are kept).
  TransactionId transaction = 0;               // 0: none
  std::optional<Time> transaction_started_at;  // set when transaction != 0
  // It asked for a lock in a namespace that keeps its locks in memory: after
  // a restart it must be told they are gone (docs/storage.md).
  bool memory_locks = false;

  friend bool operator==(const SessionRow&, const SessionRow&) = default;
};

// One application lock (or semaphore's permits) an owner of a session
// holds, keyed by (session, owner, ns, principal, resource): a name is a
// lock or a semaphore, never both at once. A transaction-owned row belongs
// to the session's open transaction.
struct LockRow {
  SessionId session = 0;
  LockOwner owner = LockOwner::kSession;
  std::string ns;
  std::string principal;
  std::string resource;
  LockMode mode = LockMode::kNoLock;  // the combined mode held; a
                                      // semaphore's: kNoLock
  std::uint32_t count = 0;  // how many times it is held; a semaphore's:
                            // the permits held
  std::uint32_t limit = 0;  // 0: a lock; else the semaphore's limit
  Fence fence = 0;
  Time since;
  // When the server takes it back (its hold limit); empty: never.
  std::optional<Time> hold_until;
  // Not kNone: the row is no grant but the news that the session lost this
  // lock or these permits (mode kNoLock, count 0), kept until it is told
  // (its next keep-alive) or ends.
  LostReason lost = LostReason::kNone;

  friend bool operator==(const LockRow&, const LockRow&) = default;
};

struct JournalEntry {
  enum class Kind : std::uint8_t {
    kPutKey,         // insert or replace `row`
    kPutLease,       // set only the lease columns of `row` (creating the key
                     // without a record if it is new); body and
                     // write_fence are not carried
    kDeleteKey,      // remove (row.ns, row.key)
    kReserveFences,  // fences up to `fences_reserved` may be handed out
    kPutOperation,   // insert or replace `operation`
    kPutMessage,     // insert or replace `message`
    kPutSession,     // insert or replace `session`
    kDeleteSession,  // remove session `session.id` and all its lock rows
    kPutLock,        // insert or replace `lock`
    kDeleteLock,     // remove the lock row with `lock`'s key
    // Ids up to the value may be handed out. Like fences, each reservation
    // is kept as the highest ever appended: a lower one changes nothing.
    kReserveSessionIds,      // `session_ids_reserved`
    kReserveTransactionIds,  // `transaction_ids_reserved`
    // A lock-delay runs until `lock_delay_until_us` (microseconds since
    // 1970 UTC), kept as the highest ever appended, so that a restart
    // during it does not end it early (NamespaceOptions::lock_delay).
    kReserveLockDelay,
  };
  Kind kind = Kind::kPutKey;
  KeyRow row;
  Fence fences_reserved = 0;
  OperationRow operation = {};
  MessageRow message = {};
  SessionRow session = {};
  LockRow lock = {};
  SessionId session_ids_reserved = 0;
  TransactionId transaction_ids_reserved = 0;
  std::uint64_t lock_delay_until_us = 0;
};

using JournalBatch = std::vector<JournalEntry>;

// What a Store holds, and what the engine starts from.
struct DurableState {
  std::vector<KeyRow> rows;
  // Every fence ever handed out is at most this.
  Fence fences_reserved = 0;
  std::vector<OperationRow> operations;
  std::vector<MessageRow> messages;
  std::vector<SessionRow> sessions;  // by id
  std::vector<LockRow> locks;        // by (session, owner, ns, principal,
                                     // resource)
  // Every session id and transaction id ever handed out is at most these.
  SessionId session_ids_reserved = 0;
  TransactionId transaction_ids_reserved = 0;
  // The latest end of a lock-delay ever journaled (0: none).
  std::uint64_t lock_delay_until_us = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_JOURNAL_H_
