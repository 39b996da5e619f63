#include "engine/operation_table.h"

namespace leasehold::engine {

Status OperationTable::ValidateKey(OperationKey key) const {
  if (Status st = ValidateName(key.ns, "namespace"); !st.ok()) return st;
  return ValidateName(key.op_id, "op_id");
}

const OperationTable::Operation* OperationTable::Find(OperationKey key) const {
  auto ns = namespaces_.find(key.ns);
  if (ns == namespaces_.end()) return nullptr;
  auto it = ns->second.find(key.op_id);
  return it == ns->second.end() ? nullptr : &it->second;
}

Result<OperationStatus> OperationTable::Get(OperationKey key) const {
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  OperationStatus out;
  if (const Operation* op = Find(key)) {
    out.state = OperationState::kCompleted;
    out.outcome = op->outcome;
    out.completed_at = op->completed_at;
  }
  return out;
}

Status OperationTable::CheckStage(const StagedOperation& w) const {
  const OperationKey key{w.ns, w.op_id};
  if (Status st = ValidateKey(key); !st.ok()) return st;
  if (w.outcome.size() > max_outcome_bytes_) {
    return Status(StatusCode::kBodyTooLarge,
                  "outcome is " + std::to_string(w.outcome.size()) +
                      " bytes; the limit is " +
                      std::to_string(max_outcome_bytes_));
  }
  if (Find(key) != nullptr) {
    return Status(StatusCode::kExists,
                  "operation \"" + w.op_id +
                      "\" is completed already; begin answers its outcome");
  }
  return Status::Ok();
}

std::optional<std::string> OperationTable::CommitCheck::Check(
    const StagedOperation& w) {
  if (table_.Find({w.ns, w.op_id}) != nullptr ||
      !completed_.emplace(w.ns, w.op_id).second) {
    return std::string(
        "completed: another transaction completed the operation after this "
        "one began it");
  }
  return std::nullopt;
}

AppliedWrite OperationTable::ApplyStaged(Time now, const StagedOperation& w) {
  auto ns = namespaces_.try_emplace(w.ns).first;
  auto [it, inserted] =
      ns->second.try_emplace(w.op_id, Operation{w.outcome, now});
  if (inserted) ++count_;
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutOperation;
  e.operation = OperationRow{w.ns, w.op_id, w.outcome, now};
  journal_->push_back(std::move(e));
  if (events_ != nullptr) {
    Event ev;
    ev.type = EventType::kOperationCompleted;
    ev.at = now;
    ev.ns = ns->first;
    ev.resource = it->first;
    events_->OnEvent(ev);
  }
  AppliedWrite out;
  out.kind = StagedWriteKind::kCompleteOperation;
  out.ns = w.ns;
  out.key = w.op_id;
  return out;
}

Status OperationTable::Restore(OperationRow&& row) {
  if (Status st = ValidateKey({row.ns, row.op_id}); !st.ok()) return st;
  auto ns = namespaces_.try_emplace(std::move(row.ns)).first;
  auto [it, inserted] = ns->second.try_emplace(
      std::move(row.op_id),
      Operation{std::move(row.outcome), row.completed_at});
  if (!inserted) {
    return Status(StatusCode::kBadRequest,
                  "stored operation \"" + it->first + "\" appears twice");
  }
  ++count_;
  return Status::Ok();
}

}  // namespace leasehold::engine
