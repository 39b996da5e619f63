#include "tests/property/ops.h"

#include "tests/property/invariants.h"

namespace leasehold::property {
namespace {

void PrintKey(std::ostream& os, const Op& op) {
  os << kNamespaces[static_cast<std::size_t>(op.ns)] << "/"
     << kPrincipals[static_cast<std::size_t>(op.principal)] << "/'"
     << kResources[static_cast<std::size_t>(op.resource)] << "'";
}

const char* OwnerName(LockOwner owner) {
  return owner == LockOwner::kSession ? "Session" : "Transaction";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Op& op) {
  if (op.kind != OpKind::kAdvance) os << "s" << op.slot << ".";
  switch (op.kind) {
    case OpKind::kAcquire:
      os << "Acquire(";
      PrintKey(os, op);
      os << ", " << ShortModeName(op.mode) << ", " << OwnerName(op.owner)
         << ", " << op.timeout_ms << "ms)";
      break;
    case OpKind::kRelease:
      os << "Release(";
      if (op.value > 0) {
        os << "held entry " << op.value - 1 << ", else ";
      }
      PrintKey(os, op);
      os << ", " << OwnerName(op.owner) << ")";
      break;
    case OpKind::kBegin:
      os << "Begin()";
      break;
    case OpKind::kCommit:
      os << "Commit()";
      break;
    case OpKind::kRollback:
      os << "Rollback()";
      break;
    case OpKind::kCancel:
      os << "Cancel()";
      break;
    case OpKind::kCancelWait:
      os << "CancelWait("
         << (op.value == 0   ? "current"
             : op.value == 1 ? "last finished"
                             : "unknown id")
         << ")";
      break;
    case OpKind::kEndSession:
      os << "EndSession()";
      break;
    case OpKind::kOpenSession:
      os << "OpenSession(ttl " << op.value << "ms)";
      break;
    case OpKind::kKeepAlive:
      os << "KeepAlive()";
      break;
    case OpKind::kSetPriority:
      os << "SetDeadlockPriority(" << op.value << ")";
      break;
    case OpKind::kAdvance:
      os << "Advance(" << op.value << "ms, "
         << (op.advance == AdvanceKind::kJump   ? "jump"
             : op.advance == AdvanceKind::kStep ? "step"
                                                : "lazy")
         << ")";
      break;
    case OpKind::kTest:
      os << "Test(";
      PrintKey(os, op);
      os << ", " << ShortModeName(op.mode) << ", " << OwnerName(op.owner)
         << ")";
      break;
    case OpKind::kMode:
      os << "Mode(";
      PrintKey(os, op);
      os << ", " << OwnerName(op.owner) << ")";
      break;
  }
  if (op.late) os << " sent 50ms late";
  return os;
}

std::ostream& operator<<(std::ostream& os, const Scenario& scenario) {
  os << scenario.sessions << " sessions (ttl";
  for (int ttl : scenario.ttl_ms) os << " " << ttl;
  os << " ms; in transaction at start:";
  for (bool b : scenario.start_in_txn) os << " " << (b ? "y" : "n");
  os << "), fence floor " << scenario.fence_floor << ", " << scenario.ops.size()
     << " ops:\n";
  for (std::size_t i = 0; i < scenario.ops.size(); ++i) {
    os << "  " << i << ": " << scenario.ops[i] << "\n";
  }
  return os;
}

}  // namespace leasehold::property
