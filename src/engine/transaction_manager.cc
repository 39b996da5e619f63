#include "engine/transaction_manager.h"

#include <string>

namespace leasehold::engine {

void TransactionManager::SetLimit(std::string_view ns,
                                  std::chrono::milliseconds limit) {
  if (limit.count() > 0) {
    limits_by_ns_.insert_or_assign(std::string(ns), limit);
  } else if (auto it = limits_by_ns_.find(ns); it != limits_by_ns_.end()) {
    limits_by_ns_.erase(it);
  }
}

Result<TransactionInfo> TransactionManager::Begin(Session* s, Time now) {
  if (s->transaction != nullptr) {
    return Error(StatusCode::kTransactionOpen,
                 "session " + std::to_string(s->id) +
                     " already has transaction " +
                     std::to_string(s->transaction->id) +
                     " open; commit or roll it back first");
  }
  Transaction& t = open_[s->id];
  t.id = ids_.Next();
  t.started_at = now;
  s->transaction = &t;
  expired_.erase(s->id);
  return Info(t);
}

void TransactionManager::End(Session* s) {
  const Transaction& t = *s->transaction;
  if (t.deadline) {
    deadlines_->Remove({*t.deadline, DeadlineKind::kTransactionLimit, s->id});
  }
  s->transaction = nullptr;
  open_.erase(s->id);
}

bool TransactionManager::Bind(Session* s, std::string_view ns, Time now) {
  auto limit = limits_by_ns_.find(ns);
  if (limit == limits_by_ns_.end()) return true;
  Transaction& t = *s->transaction;
  const Time deadline = t.started_at + limit->second;
  if (!t.deadline || deadline < *t.deadline) {
    if (t.deadline) {
      deadlines_->Remove({*t.deadline, DeadlineKind::kTransactionLimit, s->id});
    }
    t.deadline = deadline;
    deadlines_->Add({deadline, DeadlineKind::kTransactionLimit, s->id});
    t.deadline_ns = std::string(ns);
    t.deadline_limit = limit->second;
  }
  return *t.deadline > now;
}

void TransactionManager::NoteExpired(const Session* s, Time at) {
  const Transaction& t = *s->transaction;
  ++expired_count_;
  expired_.insert_or_assign(s->id,
                            Expired{t.id, at, t.deadline_ns, t.deadline_limit});
}

void TransactionManager::NoteLost(const Session* s, TransactionId id,
                                  Time started_at) {
  lost_.insert_or_assign(s->id, std::pair{id, started_at});
  ids_.Restore(id);
}

Status TransactionManager::NoTransaction(const Session* s,
                                         std::string_view hint) const {
  if (auto it = lost_.find(s->id); it != lost_.end()) {
    return Status(StatusCode::kTransactionLost,
                  "transaction " + std::to_string(it->second.first) +
                      " of session " + std::to_string(s->id) +
                      " was lost when the server restarted: its staged "
                      "writes and locks are gone; begin a new transaction "
                      "and do its work again");
  }
  if (auto it = expired_.find(s->id); it != expired_.end()) {
    const Expired& x = it->second;
    return Status(StatusCode::kTransactionExpired,
                  "transaction " + std::to_string(x.id) + " of session " +
                      std::to_string(s->id) + " was rolled back at " +
                      FormatTime(x.at) + ": it stayed open longer than the " +
                      std::to_string(x.limit.count()) +
                      " ms that namespace \"" + x.ns +
                      "\" allows (max_transaction_ms); begin a new "
                      "transaction and do its work again");
  }
  return Status(StatusCode::kNoTransaction, "session " + std::to_string(s->id) +
                                                " has no open transaction" +
                                                std::string(hint));
}

TransactionInfo TransactionManager::Info(const Transaction& t) {
  TransactionInfo info;
  info.id = t.id;
  info.started_at = t.started_at;
  info.staged_writes = t.staged.size();
  info.staged_bytes = t.staged.bytes();
  info.deadline = t.deadline;
  return info;
}

std::optional<Time> TransactionManager::oldest_start() const {
  std::optional<Time> oldest;
  for (const auto& [session, t] : open_) {
    if (!oldest || t.started_at < *oldest) oldest = t.started_at;
  }
  return oldest;
}

}  // namespace leasehold::engine
