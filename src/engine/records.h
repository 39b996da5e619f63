// Records and checkouts: the vocabulary of visible locks with an expiry.
// The commands are Engine methods (engine.h); semantics in docs/api.md,
// "Records and checkouts".
#ifndef LEASEHOLD_ENGINE_RECORDS_H_
#define LEASEHOLD_ENGINE_RECORDS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "engine/lock_types.h"

namespace leasehold {

struct RecordKey {
  std::string_view ns;
  std::string_view key;
};

// How a caller proves it holds a lease: the token when not empty, else the
// owner name (refused where the namespace requires tokens).
struct LeaseProof {
  std::string_view owner;
  std::string_view token;
};

enum class LeaseState : std::uint8_t { kFree, kLocked };
std::string_view LeaseStateName(LeaseState state);  // "free", "locked"

// A key as a reader sees it at `now`.
struct RecordView {
  std::string key;
  bool has_record = false;
  std::string body;           // empty in listings
  std::uint64_t version = 0;  // 0 when there is no record
  std::string locked_by;  // empty: no owner (never checked out, or released)
  std::optional<Time> lock_expires_at;
  LeaseState state = LeaseState::kFree;  // locked while now < lock_expires_at
  Fence fence = 0;                       // of the latest checkout grant
  Fence write_fence = 0;  // the highest fence a write carried; 0: none
};

struct RecordPage {
  std::vector<RecordView> records;  // in key order, bodies left out
  std::optional<std::string> next;  // pass as `after` for the next page
};

struct ListRecordsQuery {
  std::string_view ns{};
  std::optional<LeaseState> state{};  // only keys in this state
  std::string_view prefix{};          // only keys starting with this
  std::string_view after{};           // only keys after this one
  std::size_t limit = 100;            // 1..1000
};

struct CheckoutRequest {
  RecordKey key;
  std::string_view owner;            // 1..255 characters
  std::chrono::milliseconds ttl{0};  // > 0
  // The caller's token. The server makes a random one (128 bits) when the
  // client sends none; a client that sends its own makes retries idempotent.
  std::string_view token;
  // True when the token came from the client: then only the token can renew.
  // False: a checkout by the current holder's name renews its lease.
  bool client_token = false;
};

struct CheckoutOutcome {
  bool granted = false;
  bool renewed = false;  // granted to the holder again: same token and fence
  std::string token;     // on a grant
  Fence fence = 0;       // on a grant
  // On a grant: the new expiry. On a refusal: who holds it until when.
  std::string locked_by;
  std::optional<Time> lock_expires_at;
};

// Why a holder-only command was refused.
enum class RefusalReason : std::uint8_t {
  kNone = 0,
  kNotOwner,         // someone else holds the lease, or there is none
  kExpired,          // the caller's lease has expired
  kVersionMismatch,  // if_version did not match
  kTokenRequired,    // the namespace refuses name-only proof
};
// "not_owner", "expired", "version_mismatch", "token_required".
std::string_view RefusalReasonName(RefusalReason reason);

struct WriteOutcome {
  bool done = false;  // saved, released, deleted
  RefusalReason reason = RefusalReason::kNone;
  std::uint64_t version = 0;  // after a save
};

// Writes that a transaction stages and applies at commit (docs/api.md: "In a
// transaction ... save, PUT and DELETE are staged and applied at commit"),
// and the completion of an idempotent operation and outbox messages
// (docs/api.md, "Idempotent operations and the outbox").
enum class StagedWriteKind : std::uint8_t {
  kInsert,
  kSave,
  kDelete,
  kCompleteOperation,
  kEnqueue,
};
// "insert", "save", "delete", "complete", "enqueue".
std::string_view StagedWriteKindName(StagedWriteKind kind);

// What staging decided. Refusals (not staged) carry a reason, like
// WriteOutcome; errors come as a Status instead.
struct StageOutcome {
  bool staged = false;
  RefusalReason reason = RefusalReason::kNone;  // when not staged
  std::size_t staged_writes = 0;  // the transaction's count, this one included
};

// One staged write as commit applied it.
struct AppliedWrite {
  StagedWriteKind kind = StagedWriteKind::kInsert;
  std::string ns;
  std::string key;            // the record key, operation id or message key
  std::uint64_t version = 0;  // after an insert or save; 0 after a delete
  std::string topic = {};     // kEnqueue
  std::uint64_t message = 0;  // kEnqueue: the message's id
  // kEnqueue: the key had been enqueued (committed) after this message was
  // staged, so nothing new was enqueued and `message` is the existing one.
  bool duplicate = false;
};

// The default of NamespaceOptions::outbox_max_attempts.
inline constexpr std::uint32_t kDefaultOutboxMaxAttempts = 10;

// Where a namespace keeps its application locks.
enum class LockDurability : std::uint8_t {
  kDurable,  // journaled: a restart keeps every lock a live session holds
  // Memory only: faster (no disk write per grant); after a restart the
  // namespace grants nothing until every restored session that asked for
  // such a lock has been told they are gone (its keep-alive answers
  // locks_lost) or has ended.
  kMemory,
};

struct NamespaceOptions {
  bool require_token = false;
  // An outbox message claimed this many times whose last claim ran out
  // without an ack is a dead letter. At least 1.
  std::uint32_t outbox_max_attempts = kDefaultOutboxMaxAttempts;
  // The longest a transaction may stay open once it has used this
  // namespace (a Transaction-owned lock, a staged write, an operation or a
  // staged message there); past it the transaction is rolled back. 0: no
  // limit.
  std::chrono::milliseconds max_transaction{0};
  LockDurability locks = LockDurability::kDurable;
  // Lock-delay (as Chubby's and Consul's): when a session expires, or an
  // administrator ends it, holding locks or semaphore permits here, they
  // are granted to nobody else for this long, since their holder may still
  // be at work. A lock so held back grants nothing in any mode; a
  // semaphore holds back just those permits. An explicit release, or a
  // session ended by its own client, frees at once. The end of every delay
  // is journaled: after a restart, these namespaces grant nothing new (to
  // sessions not holding the name) until the latest one has passed. 0: none.
  std::chrono::milliseconds lock_delay{0};
  // The longest a lock or a semaphore's permits may be held here: the
  // server takes them back after it (engine_types.h, "Hold limits"), and a
  // request may ask for less, never more. 0: no limit.
  std::chrono::milliseconds max_hold{0};
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_RECORDS_H_
