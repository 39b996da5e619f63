#include "store/postgres/batch_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

namespace leasehold::postgres {
namespace {

using Kind = JournalEntry::Kind;

// The last entry of a row: put (whole, or a lease only) or deleted.
enum class Last : std::uint8_t { kPut, kLease, kDeleted };

template <typename Row>
struct Slot {
  Last last;
  const Row* row;
};

using KeyOf = std::pair<std::string_view, std::string_view>;  // ns, key
using LockKeyOf = std::tuple<SessionId, int, std::string_view, std::string_view,
                             std::string_view>;

LockKeyOf LockKey(const LockRow& r) {
  return {r.session, static_cast<int>(r.owner), r.ns, r.principal, r.resource};
}

// The row a put or a deletion of `before`'s key, then the lease of
// `lease`, leaves.
KeyRow WithLease(const KeyRow* before, const KeyRow& lease) {
  KeyRow row;
  if (before != nullptr) {
    row = *before;
  } else {  // deleted: the lease alone, as kPutLease creates a key
    row.ns = lease.ns;
    row.key = lease.key;
  }
  row.locked_by = lease.locked_by;
  row.token = lease.token;
  row.lock_expires_at = lease.lock_expires_at;
  row.fence = lease.fence;
  return row;
}

class Planner {
 public:
  void Add(const JournalEntry& e) {
    switch (e.kind) {
      case Kind::kPutKey:
        keys_[{e.row.ns, e.row.key}] = {Last::kPut, &e.row};
        return;
      case Kind::kPutLease:
        return AddLease(e.row);
      case Kind::kDeleteKey:
        keys_[{e.row.ns, e.row.key}] = {Last::kDeleted, &e.row};
        return;
      case Kind::kReserveFences:
        plan_.fences_reserved =
            std::max(plan_.fences_reserved, e.fences_reserved);
        return;
      case Kind::kReserveSessionIds:
        plan_.session_ids_reserved =
            std::max(plan_.session_ids_reserved, e.session_ids_reserved);
        return;
      case Kind::kReserveTransactionIds:
        plan_.transaction_ids_reserved = std::max(
            plan_.transaction_ids_reserved, e.transaction_ids_reserved);
        return;
      case Kind::kReserveLockDelay:
        plan_.lock_delay_until_us =
            std::max(plan_.lock_delay_until_us, e.lock_delay_until_us);
        return;
      case Kind::kPutOperation:
        operations_[{e.operation.ns, e.operation.op_id}] = &e.operation;
        return;
      case Kind::kPutMessage:
        messages_[{e.message.ns, e.message.topic, e.message.id}] = &e.message;
        return;
      case Kind::kPutSession:
        sessions_[e.session.id] = {Last::kPut, &e.session};
        return;
      case Kind::kDeleteSession:
        return DeleteSession(e.session);
      case Kind::kPutLock:
        locks_[LockKey(e.lock)] = {Last::kPut, &e.lock};
        return;
      case Kind::kDeleteLock:
        locks_[LockKey(e.lock)] = {Last::kDeleted, &e.lock};
        return;
    }
  }

  BatchPlan Finish() && {
    for (const auto& [key, slot] : keys_) {
      if (slot.last == Last::kPut) plan_.put_keys.push_back(slot.row);
      if (slot.last == Last::kLease) plan_.put_leases.push_back(slot.row);
      if (slot.last == Last::kDeleted) plan_.deleted_keys.push_back(slot.row);
    }
    plan_.purged_sessions.assign(purged_.begin(), purged_.end());
    for (const auto& [id, slot] : sessions_) {
      if (slot.last == Last::kPut) {
        plan_.put_sessions.push_back(slot.row);
      } else {
        plan_.deleted_sessions.push_back(id);
      }
    }
    for (const auto& [key, slot] : locks_) {
      if (slot.last == Last::kPut) {
        plan_.put_locks.push_back(slot.row);
      } else {
        plan_.deleted_locks.push_back(slot.row);
      }
    }
    for (const auto& [key, row] : operations_) {
      plan_.put_operations.push_back(row);
    }
    for (const auto& [key, row] : messages_) plan_.put_messages.push_back(row);
    return std::move(plan_);
  }

 private:
  // A lease after a put or a deletion of its key leaves a whole row.
  void AddLease(const KeyRow& lease) {
    auto [it, added] =
        keys_.try_emplace({lease.ns, lease.key}, Slot{Last::kLease, &lease});
    if (added) return;
    Slot<KeyRow>& slot = it->second;
    if (slot.last == Last::kLease) {
      slot.row = &lease;
      return;
    }
    plan_.merged_keys.push_back(
        WithLease(slot.last == Last::kPut ? slot.row : nullptr, lease));
    slot = {Last::kPut, &plan_.merged_keys.back()};
  }

  // Removes the session's lock rows, stored and put earlier in the batch.
  void DeleteSession(const SessionRow& session) {
    sessions_[session.id] = {Last::kDeleted, &session};
    purged_.insert(session.id);
    constexpr int kLowestOwner = std::numeric_limits<int>::min();
    auto it = locks_.lower_bound({session.id, kLowestOwner, {}, {}, {}});
    while (it != locks_.end() && std::get<0>(it->first) == session.id) {
      it = locks_.erase(it);
    }
  }

  BatchPlan plan_;
  std::map<KeyOf, Slot<KeyRow>> keys_;
  std::map<KeyOf, const OperationRow*> operations_;
  std::map<std::tuple<std::string_view, std::string_view, std::uint64_t>,
           const MessageRow*>
      messages_;
  std::map<SessionId, Slot<SessionRow>> sessions_;
  std::set<SessionId> purged_;
  std::map<LockKeyOf, Slot<LockRow>> locks_;
};

}  // namespace

BatchPlan PlanBatch(const JournalBatch& batch) {
  Planner planner;
  for (const JournalEntry& e : batch) planner.Add(e);
  return std::move(planner).Finish();
}

}  // namespace leasehold::postgres
