// OwnedEvent: an engine Event that owns its strings, and the EventSink that
// collects them. The engine's events hold views that die with the call;
// the service keeps copies until the step that made them is durable.
#ifndef LEASEHOLD_SERVICE_OWNED_EVENT_H_
#define LEASEHOLD_SERVICE_OWNED_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace leasehold {

struct OwnedEvent {
  EventType type = EventType::kSessionOpened;
  Time at;
  SessionId session = 0;
  std::string session_name;
  TransactionId transaction = 0;
  std::string ns, principal, resource;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;
  std::uint32_t count = 0;
  std::uint32_t limit = 0;  // semaphores
  Fence fence = 0;
  std::optional<Time> until;
  std::optional<DeadlockReport> deadlock;
  std::string holder;
  std::uint64_t version = 0;
  std::string key;        // outbox: the message's deduplication key
  MessageId message = 0;  // outbox
};

// Copies each event it is given, in order, until Take().
class EventCollector final : public EventSink {
 public:
  void OnEvent(const Event& e) override;
  // The events since the last Take(), oldest first.
  std::vector<OwnedEvent> Take();

 private:
  std::vector<OwnedEvent> events_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_OWNED_EVENT_H_
