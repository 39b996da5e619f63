#include "leasehold/engine.h"

namespace leasehold {

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kSessionOpened:
      return "session.opened";
    case EventType::kSessionClosed:
      return "session.closed";
    case EventType::kSessionExpired:
      return "session.expired";
    case EventType::kTransactionBegun:
      return "transaction.begun";
    case EventType::kTransactionCommitted:
      return "transaction.committed";
    case EventType::kTransactionRolledBack:
      return "transaction.rolled_back";
    case EventType::kLockGranted:
      return "applock.granted";
    case EventType::kLockWaiting:
      return "applock.waiting";
    case EventType::kLockReleased:
      return "applock.released";
    case EventType::kLockTimeout:
      return "applock.timeout";
    case EventType::kLockCancelled:
      return "applock.cancelled";
    case EventType::kLockDeadlock:
      return "applock.deadlock";
  }
  return "unknown";
}

}  // namespace leasehold
