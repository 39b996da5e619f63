#include "store/memory/memory_store.h"

#include <algorithm>

namespace leasehold {
namespace {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(std::shared_ptr<MemoryStoreData> data)
      : data_(std::move(data)) {}

  Result<Reservations> Load(const Visitors& visit) override;
  Status Append(const JournalBatch& batch) override;
  Status Backup(const std::string& /*destination*/,
                std::stop_token /*stop*/) override {
    return Status(StatusCode::kNotSupported,
                  "the memory store (--store memory) keeps nothing on disk: "
                  "there is nothing to back up, and its data ends with the "
                  "process");
  }

  std::string Describe() const override {
    return "memory (nothing on disk; gone when the process ends)";
  }

 private:
  Status LoadLocks(const Visitors& visit);
  void Apply(const JournalEntry& e);  // under data_->mu

  std::shared_ptr<MemoryStoreData> data_;
};

// Calls `visit` with a copy of each row of `rows` while it says OK.
template <typename Map, typename Visitor>
Status VisitEach(const Map& rows, const Visitor& visit) {
  if (!visit) return Status::Ok();
  for (const auto& [key, row] : rows) {
    auto copy = row;
    if (Status st = visit(std::move(copy)); !st.ok()) return st;
  }
  return Status::Ok();
}

Result<Store::Reservations> MemoryStore::Load(const Visitors& visit) {
  std::lock_guard lock(data_->mu);
  for (Status st : {VisitEach(data_->keys, visit.key),
                    VisitEach(data_->operations, visit.operation),
                    VisitEach(data_->messages, visit.message),
                    VisitEach(data_->sessions, visit.session)}) {
    if (!st.ok()) return std::unexpected(st);
  }
  if (Status st = LoadLocks(visit); !st.ok()) return std::unexpected(st);
  return data_->reserved;
}

// As every store: a lock row that could not have been appended is refused,
// naming it, even when no visitor reads locks.
Status MemoryStore::LoadLocks(const Visitors& visit) {
  for (const auto& [key, row] : data_->locks) {
    const std::string_view problem =
        LockRowProblem(data_->sessions.contains(row.session),
                       static_cast<std::int64_t>(row.owner),
                       static_cast<std::int64_t>(row.mode), row.count,
                       row.limit, static_cast<std::int64_t>(row.lost));
    if (!problem.empty()) {
      return Status(StatusCode::kUnavailable,
                    "memory store: " +
                        LockRowName(static_cast<std::int64_t>(row.session),
                                    static_cast<std::int64_t>(row.owner), row) +
                        " " + std::string(problem));
    }
    if (!visit.lock) continue;
    LockRow copy = row;
    if (Status st = visit.lock(std::move(copy)); !st.ok()) return st;
  }
  return Status::Ok();
}

Status MemoryStore::Append(const JournalBatch& batch) {
  std::lock_guard lock(data_->mu);
  // Only an injected refusal can fail an entry: checking them all first
  // keeps a batch all-or-nothing.
  if (data_->refuse) {
    for (const JournalEntry& e : batch) {
      if (Status st = data_->refuse(e); !st.ok()) return st;
    }
  }
  for (const JournalEntry& e : batch) Apply(e);
  return Status::Ok();
}

// The least lock key of session `id`: its rows are from here on.
std::tuple<SessionId, LockOwner, std::string, std::string, std::string>
SessionLocksFrom(SessionId id) {
  return {id, LockOwner{}, {}, {}, {}};
}

void MemoryStore::Apply(const JournalEntry& e) {
  using Kind = JournalEntry::Kind;
  MemoryStoreData& d = *data_;
  const auto lock_key = [](const LockRow& r) {
    return std::tuple(r.session, r.owner, r.ns, r.principal, r.resource);
  };
  switch (e.kind) {
    case Kind::kPutKey:
      d.keys[{e.row.ns, e.row.key}] = e.row;
      return;
    case Kind::kPutLease: {
      auto [it, created] = d.keys.try_emplace({e.row.ns, e.row.key});
      KeyRow& row = it->second;
      if (created) {
        row.ns = e.row.ns;
        row.key = e.row.key;
      }
      row.locked_by = e.row.locked_by;
      row.token = e.row.token;
      row.lock_expires_at = e.row.lock_expires_at;
      row.fence = e.row.fence;
      return;
    }
    case Kind::kDeleteKey:
      d.keys.erase({e.row.ns, e.row.key});
      return;
    case Kind::kReserveFences:
      d.reserved.fences = std::max(d.reserved.fences, e.fences_reserved);
      return;
    case Kind::kPutOperation:
      d.operations[{e.operation.ns, e.operation.op_id}] = e.operation;
      return;
    case Kind::kPutMessage:
      d.messages[{e.message.ns, e.message.topic, e.message.id}] = e.message;
      return;
    case Kind::kPutSession:
      d.sessions[e.session.id] = e.session;
      return;
    case Kind::kDeleteSession:
      d.sessions.erase(e.session.id);
      // A session's lock rows are together, first in its key: one range.
      d.locks.erase(d.locks.lower_bound(SessionLocksFrom(e.session.id)),
                    d.locks.lower_bound(SessionLocksFrom(e.session.id + 1)));
      return;
    case Kind::kPutLock:
      d.locks[lock_key(e.lock)] = e.lock;
      return;
    case Kind::kDeleteLock:
      d.locks.erase(lock_key(e.lock));
      return;
    case Kind::kReserveSessionIds:
      d.reserved.session_ids =
          std::max(d.reserved.session_ids, e.session_ids_reserved);
      return;
    case Kind::kReserveTransactionIds:
      d.reserved.transaction_ids =
          std::max(d.reserved.transaction_ids, e.transaction_ids_reserved);
      return;
    case Kind::kReserveLockDelay:
      d.reserved.lock_delay_until_us =
          std::max(d.reserved.lock_delay_until_us, e.lock_delay_until_us);
      return;
  }
}

}  // namespace

std::unique_ptr<Store> OpenMemoryStore(std::shared_ptr<MemoryStoreData> data) {
  if (data == nullptr) data = std::make_shared<MemoryStoreData>();
  return std::make_unique<MemoryStore>(std::move(data));
}

}  // namespace leasehold
