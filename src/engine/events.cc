#include "engine/events.h"

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
    case EventType::kSemaphoreGranted:
      return "semaphore.granted";
    case EventType::kSemaphoreWaiting:
      return "semaphore.waiting";
    case EventType::kSemaphoreReleased:
      return "semaphore.released";
    case EventType::kSemaphoreTimeout:
      return "semaphore.timeout";
    case EventType::kSemaphoreCancelled:
      return "semaphore.cancelled";
    case EventType::kSemaphoreDeadlock:
      return "semaphore.deadlock";
    case EventType::kLockExpired:
      return "applock.expired";
    case EventType::kLockBroken:
      return "applock.broken";
    case EventType::kSemaphoreExpired:
      return "semaphore.expired";
    case EventType::kSemaphoreBroken:
      return "semaphore.broken";
    case EventType::kCheckoutGranted:
      return "checkout.granted";
    case EventType::kCheckoutRenewed:
      return "checkout.renewed";
    case EventType::kCheckoutReleased:
      return "checkout.released";
    case EventType::kCheckoutExpired:
      return "checkout.expired";
    case EventType::kRecordInserted:
      return "record.inserted";
    case EventType::kRecordSaved:
      return "record.saved";
    case EventType::kRecordDeleted:
      return "record.deleted";
    case EventType::kOperationCompleted:
      return "operation.completed";
    case EventType::kOutboxEnqueued:
      return "outbox.enqueued";
    case EventType::kOutboxClaimed:
      return "outbox.claimed";
    case EventType::kOutboxAcked:
      return "outbox.acked";
    case EventType::kTransactionExpired:
      return "transaction.expired";
    case EventType::kClusterLeader:
      return "cluster.leader";
  }
  return "unknown";
}

std::string_view LeaseStateName(LeaseState state) {
  return state == LeaseState::kLocked ? "locked" : "free";
}

std::string_view RefusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kNone:
      return "none";
    case RefusalReason::kNotOwner:
      return "not_owner";
    case RefusalReason::kExpired:
      return "expired";
    case RefusalReason::kVersionMismatch:
      return "version_mismatch";
    case RefusalReason::kTokenRequired:
      return "token_required";
  }
  return "none";
}

std::string_view StagedWriteKindName(StagedWriteKind kind) {
  switch (kind) {
    case StagedWriteKind::kInsert:
      return "insert";
    case StagedWriteKind::kSave:
      return "save";
    case StagedWriteKind::kDelete:
      return "delete";
    case StagedWriteKind::kCompleteOperation:
      return "complete";
    case StagedWriteKind::kEnqueue:
      return "enqueue";
  }
  return "insert";
}

}  // namespace leasehold

namespace leasehold {

std::string_view OperationStateName(OperationState state) {
  return state == OperationState::kCompleted ? "completed" : "new";
}

std::string_view MessageStateName(MessageState state) {
  switch (state) {
    case MessageState::kPending:
      return "pending";
    case MessageState::kClaimed:
      return "claimed";
    case MessageState::kDead:
      return "dead";
    case MessageState::kAcked:
      return "acked";
  }
  return "pending";
}

bool IsLockEvent(EventType type) {
  return (type >= EventType::kLockGranted &&
          type <= EventType::kLockDeadlock) ||
         type == EventType::kLockExpired || type == EventType::kLockBroken;
}

bool IsSemaphoreEvent(EventType type) {
  return (type >= EventType::kSemaphoreGranted &&
          type <= EventType::kSemaphoreDeadlock) ||
         type == EventType::kSemaphoreExpired ||
         type == EventType::kSemaphoreBroken;
}

}  // namespace leasehold
