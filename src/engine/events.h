// The engine's events: every state change, reported to an EventSink
// (EngineOptions::events) while the command that made it runs.
#ifndef LEASEHOLD_ENGINE_EVENTS_H_
#define LEASEHOLD_ENGINE_EVENTS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/clock.h"
#include "engine/engine_types.h"
#include "engine/lock_types.h"
#include "engine/outbox.h"

namespace leasehold {

enum class EventType : std::uint8_t {
  kSessionOpened,
  kSessionClosed,
  kSessionExpired,
  kTransactionBegun,
  kTransactionCommitted,
  kTransactionRolledBack,
  kLockGranted,  // at once or after a wait; `count` is the new count
  kLockWaiting,
  kLockReleased,  // one reference dropped; `count` is what is left
  kLockTimeout,
  kLockCancelled,
  kLockDeadlock,  // `deadlock` is set; `session` is the victim
  // The same for semaphores: `resource` is its name, `count` the owner's
  // permits after the change (waiting: asked for), `limit` its limit.
  kSemaphoreGranted,
  kSemaphoreWaiting,
  kSemaphoreReleased,
  kSemaphoreTimeout,
  kSemaphoreCancelled,
  kSemaphoreDeadlock,
  // Taken back from its holder, who had not released it: at its hold limit
  // (expired), or by an administrator (broken). `mode`, `count` and `fence`
  // are what it held; the semaphore twins as above.
  kLockExpired,
  kLockBroken,
  kSemaphoreExpired,
  kSemaphoreBroken,
  kCheckoutGranted,   // `holder`, `until`, `fence`
  kCheckoutRenewed,   // `holder`, `until`
  kCheckoutReleased,  // checked in, broken or purged; `holder` was the owner
  kCheckoutExpired,   // the lease ran out (nothing on disk changes)
  kRecordInserted,    // `version`
  kRecordSaved,       // `version`, `holder`
  kRecordDeleted,
  kOperationCompleted,  // at commit; `resource` is the operation id
  kOutboxEnqueued,      // `resource` topic, `key`, `message`
  kOutboxClaimed,       // `holder` consumer, `until`, `count` the attempt
  kOutboxAcked,         // `holder` consumer
  // Rolled back for staying open past `until`, the limit of namespace `ns`
  // (NamespaceOptions::max_transaction).
  kTransactionExpired,
  // Not the engine's: the server announces that its node has become the
  // leader among several (docs/ha.md); `holder` is its URL, `version` its
  // epoch.
  kClusterLeader,
};

// "session.opened", "applock.granted", ... (the names of docs/api.md's events).
std::string_view EventTypeName(EventType type);
// An application lock's event (applock.*), or a semaphore's (semaphore.*).
bool IsLockEvent(EventType type);
bool IsSemaphoreEvent(EventType type);

// A state change. The string views point into the engine and are valid only
// during EventSink::OnEvent. For records and checkouts, `ns` and `resource`
// name the key.
struct Event {
  EventType type = EventType::kSessionOpened;
  Time at;
  SessionId session = 0;
  std::string_view session_name;
  TransactionId transaction = 0;
  std::string_view ns;
  std::string_view principal;
  std::string_view resource;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;  // held (granted/released) or wanted
  std::uint32_t count = 0;
  std::uint32_t limit = 0;  // semaphores
  Fence fence = 0;
  std::optional<Time> until;  // wait deadline, or session expiry
  const DeadlockReport* deadlock = nullptr;
  std::string_view holder;    // checkouts and records: the lease owner's name
  std::uint64_t version = 0;  // records
  std::string_view key;       // outbox: the message's deduplication key
  MessageId message = 0;      // outbox
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Called synchronously inside engine commands. Must not call the engine.
  virtual void OnEvent(const Event& event) = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_EVENTS_H_
