#include "store/mirrored_store.h"

#include <tuple>
#include <utility>

namespace leasehold {

MirroredStore::MirroredStore(std::unique_ptr<Store> inner)
    : inner_(std::move(inner)),
      mirror_(std::make_shared<MemoryStoreData>()),
      mirror_store_(OpenMemoryStore(mirror_)) {}

namespace {

// Copies each row into `rows` under `key_of(row)`, then hands it on to
// `next` (if any). Rows arrive in key order, so each goes at the end.
template <typename Row, typename Map, typename KeyOf>
std::function<Status(Row&&)> CopyInto(
    Map& rows, KeyOf key_of, const std::function<Status(Row&&)>& next) {
  return [&rows, key_of, &next](Row&& row) {
    rows.emplace_hint(rows.end(), key_of(row), row);
    return next ? next(std::move(row)) : Status::Ok();
  };
}

}  // namespace

Result<Store::Reservations> MirroredStore::Load(const Visitors& visit) {
  MemoryStoreData& m = *mirror_;
  std::lock_guard lock(m.mu);
  m.keys.clear();
  m.operations.clear();
  m.messages.clear();
  m.sessions.clear();
  m.locks.clear();
  Visitors copy;
  copy.key = CopyInto<KeyRow>(
      m.keys, [](const KeyRow& r) { return std::pair(r.ns, r.key); },
      visit.key);
  copy.operation = CopyInto<OperationRow>(
      m.operations,
      [](const OperationRow& r) { return std::pair(r.ns, r.op_id); },
      visit.operation);
  copy.message = CopyInto<MessageRow>(
      m.messages,
      [](const MessageRow& r) { return std::tuple(r.ns, r.topic, r.id); },
      visit.message);
  copy.session = CopyInto<SessionRow>(
      m.sessions, [](const SessionRow& r) { return r.id; }, visit.session);
  copy.lock = CopyInto<LockRow>(
      m.locks,
      [](const LockRow& r) {
        return std::tuple(r.session, r.owner, r.ns, r.principal, r.resource);
      },
      visit.lock);
  auto reserved = inner_->Load(copy);
  m.reserved = reserved ? *reserved : Reservations{};
  return reserved;
}

Status MirroredStore::Append(const JournalBatch& batch) {
  Status st = inner_->Append(batch);
  // A memory store refuses nothing (it has no `refuse`): once the wrapped
  // store has the batch, so does the mirror.
  if (st.ok()) (void)mirror_store_->Append(batch);
  return st;
}

}  // namespace leasehold
