#include "engine/record_table.h"

#include <algorithm>
#include <cassert>

namespace leasehold::engine {
namespace {

constexpr std::size_t kMaxListLimit = 1000;

Status NotFound(RecordKey key) {
  return Status(StatusCode::kNotFound, "no key \"" + std::string(key.key) +
                                           "\" in namespace \"" +
                                           std::string(key.ns) + "\"");
}

WriteOutcome Refused(RefusalReason reason) {
  WriteOutcome out;
  out.reason = reason;
  return out;
}

}  // namespace

void RecordTable::SetNamespaceOptions(std::string_view ns,
                                      NamespaceOptions options) {
  FindOrCreateNamespace(ns).ns->options = options;
}

RecordTable::Found RecordTable::Find(RecordKey key) {
  Found f;
  auto ns = namespaces_.find(key.ns);
  if (ns == namespaces_.end()) return f;
  f.ns = &ns->second;
  f.ns_name = &ns->first;
  f.it = f.ns->keys.find(key.key);
  return f;
}

RecordTable::Found RecordTable::FindOrCreateNamespace(std::string_view ns) {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) it = namespaces_.emplace(ns, Namespace{}).first;
  Found f;
  f.ns = &it->second;
  f.ns_name = &it->first;
  f.it = f.ns->keys.end();
  return f;
}

Status RecordTable::ValidateKey(RecordKey key) const {
  if (Status st = ValidateName(key.ns, "namespace"); !st.ok()) return st;
  return ValidateName(key.key, "key");
}

Status RecordTable::ValidateBody(std::string_view body) const {
  if (body.size() <= max_body_bytes_) return Status::Ok();
  return Status(StatusCode::kBodyTooLarge,
                "record body is " + std::to_string(body.size()) +
                    " bytes; the limit is " + std::to_string(max_body_bytes_));
}

Status RecordTable::ValidateProof(LeaseProof proof, Fence fence) {
  if (proof.owner.empty() && proof.token.empty()) {
    if (fence != 0) return Status::Ok();
    return Status(StatusCode::kBadRequest,
                  "give the lease's token, the owner name, or a fence");
  }
  if (!proof.token.empty()) return ValidateName(proof.token, "token");
  return ValidateName(proof.owner, "owner");
}

Status RecordTable::ValidateFence(Fence fence) const {
  // A fence from the future would refuse every real holder's writes.
  if (fence <= fences_->last()) return Status::Ok();
  return Status(StatusCode::kBadRequest,
                "fence " + std::to_string(fence) +
                    " was never handed out (the highest so far is " +
                    std::to_string(fences_->last()) +
                    "); pass the fence of a grant you hold");
}

Status RecordTable::CheckFence(const KeyState& k, Fence fence, RecordKey key) {
  if (fence == 0 || fence >= k.write_fence) return Status::Ok();
  return Status(StatusCode::kStaleFence,
                "fence " + std::to_string(fence) + " is older than fence " +
                    std::to_string(k.write_fence) +
                    ", which has written key \"" + std::string(key.key) +
                    "\" in namespace \"" + std::string(key.ns) +
                    "\": the lock this fence came from has been taken over");
}

RefusalReason RecordTable::CheckHolder(const Namespace& ns, const KeyState& k,
                                       LeaseProof proof, Time now) {
  if (proof.token.empty() && ns.options.require_token) {
    return RefusalReason::kTokenRequired;
  }
  if (proof.owner.empty() && proof.token.empty()) {  // fence-only
    return k.expires && now < *k.expires ? RefusalReason::kNotOwner
                                         : RefusalReason::kNone;
  }
  if (!k.expires) return RefusalReason::kNotOwner;
  const bool matches = !proof.token.empty() ? proof.token == k.token
                                            : proof.owner == k.locked_by;
  if (!matches) return RefusalReason::kNotOwner;
  if (now >= *k.expires) return RefusalReason::kExpired;
  return RefusalReason::kNone;
}

Result<std::uint64_t> RecordTable::Insert(Time now, RecordKey key,
                                          std::string_view body, Fence fence) {
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  if (Status st = ValidateBody(body); !st.ok()) return std::unexpected(st);
  if (Status st = ValidateFence(fence); !st.ok()) return std::unexpected(st);
  Found f = FindOrCreateNamespace(key.ns);
  auto [it, inserted] = f.ns->keys.try_emplace(std::string(key.key));
  KeyState& k = it->second;
  if (!inserted && k.has_record) {
    return Error(StatusCode::kExists,
                 "key \"" + std::string(key.key) + "\" already has a record");
  }
  // Only a key kept before this call can carry a write fence.
  if (Status st = CheckFence(k, fence, key); !st.ok()) {
    return std::unexpected(st);
  }
  if (inserted) ++key_count_;
  k.has_record = true;
  k.body = body;
  k.version = 1;
  k.write_fence = std::max(k.write_fence, fence);
  JournalPut(*f.ns_name, it->first, k, JournalEntry::Kind::kPutKey);
  Emit(EventType::kRecordInserted, now, key.ns, key.key, k);
  return k.version;
}

Result<RecordView> RecordTable::Get(Time now, RecordKey key) const {
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  auto ns = namespaces_.find(key.ns);
  if (ns == namespaces_.end()) return std::unexpected(NotFound(key));
  auto it = ns->second.keys.find(key.key);
  if (it == ns->second.keys.end()) return std::unexpected(NotFound(key));
  return View(it->first, it->second, now, /*with_body=*/true);
}

Result<RecordPage> RecordTable::List(Time now,
                                     const ListRecordsQuery& q) const {
  if (Status st = ValidateName(q.ns, "namespace"); !st.ok()) {
    return std::unexpected(st);
  }
  if (q.limit == 0 || q.limit > kMaxListLimit) {
    return Error(StatusCode::kBadRequest, "limit must be between 1 and 1000");
  }
  RecordPage page;
  auto ns = namespaces_.find(q.ns);
  if (ns == namespaces_.end()) return page;
  const KeyMap& keys = ns->second.keys;
  auto it =
      q.after.empty() ? keys.lower_bound(q.prefix) : keys.upper_bound(q.after);
  if (!q.after.empty() && q.prefix > q.after) it = keys.lower_bound(q.prefix);
  for (; it != keys.end(); ++it) {
    if (!it->first.starts_with(q.prefix)) break;
    RecordView v = View(it->first, it->second, now, /*with_body=*/false);
    if (q.state && v.state != *q.state) continue;
    if (page.records.size() == q.limit) {
      page.next = page.records.back().key;
      break;
    }
    page.records.push_back(std::move(v));
  }
  return page;
}

Result<CheckoutOutcome> RecordTable::Checkout(Time now,
                                              const CheckoutRequest& r) {
  if (Status st = ValidateKey(r.key); !st.ok()) return std::unexpected(st);
  if (Status st = ValidateName(r.owner, "owner"); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateName(r.token, "token"); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateTtl(r.ttl); !st.ok()) return std::unexpected(st);
  Found f = FindOrCreateNamespace(r.key.ns);
  auto [it, inserted] = f.ns->keys.try_emplace(std::string(r.key.key));
  KeyState& k = it->second;
  if (inserted) ++key_count_;
  const Time expires = now + r.ttl;
  CheckoutOutcome out;
  if (k.expires && now < *k.expires) {
    const bool holder = r.client_token ? r.token == k.token
                                       : (r.owner == k.locked_by &&
                                          !f.ns->options.require_token);
    if (!holder) {
      out.locked_by = k.locked_by;
      out.lock_expires_at = k.expires;
      return out;
    }
    out.renewed = true;
    SetLease(*f.ns_name, it->first, k, expires);
    Emit(EventType::kCheckoutRenewed, now, r.key.ns, r.key.key, k);
  } else {
    k.locked_by = r.owner;
    k.token = r.token;
    k.fence = fences_->Next();
    SetLease(*f.ns_name, it->first, k, expires);
    Emit(EventType::kCheckoutGranted, now, r.key.ns, r.key.key, k);
  }
  JournalPut(*f.ns_name, it->first, k, JournalEntry::Kind::kPutLease);
  out.granted = true;
  out.token = k.token;
  out.fence = k.fence;
  out.locked_by = k.locked_by;
  out.lock_expires_at = k.expires;
  return out;
}

Result<RecordTable::Found> RecordTable::FindHeld(Time now, RecordKey key,
                                                 LeaseProof proof, Fence fence,
                                                 bool need_record,
                                                 RefusalReason& refusal) {
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  if (Status st = ValidateProof(proof, fence); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = ValidateFence(fence); !st.ok()) return std::unexpected(st);
  Found f = Find(key);
  if (f.ns == nullptr || f.it == f.ns->keys.end() ||
      (need_record && !f.it->second.has_record)) {
    return std::unexpected(NotFound(key));
  }
  refusal = CheckHolder(*f.ns, f.it->second, proof, now);
  return f;
}

Result<WriteOutcome> RecordTable::Save(Time now, RecordKey key,
                                       LeaseProof proof, std::string_view body,
                                       std::optional<std::uint64_t> if_version,
                                       Fence fence) {
  if (Status st = ValidateBody(body); !st.ok()) return std::unexpected(st);
  RefusalReason refusal = RefusalReason::kNone;
  auto held = FindHeld(now, key, proof, fence, /*need_record=*/true, refusal);
  if (!held) return std::unexpected(held.error());
  if (refusal != RefusalReason::kNone) return Refused(refusal);
  Found& f = *held;
  KeyState& k = f.it->second;
  if (Status st = CheckFence(k, fence, key); !st.ok()) {
    return std::unexpected(st);
  }
  if (if_version && *if_version != k.version) {
    return Refused(RefusalReason::kVersionMismatch);
  }
  k.body = body;
  ++k.version;
  k.write_fence = std::max(k.write_fence, fence);
  JournalPut(*f.ns_name, f.it->first, k, JournalEntry::Kind::kPutKey);
  Emit(EventType::kRecordSaved, now, key.ns, key.key, k);
  WriteOutcome out;
  out.done = true;
  out.version = k.version;
  return out;
}

Result<WriteOutcome> RecordTable::Checkin(Time now, RecordKey key,
                                          LeaseProof proof) {
  RefusalReason refusal = RefusalReason::kNone;
  if (proof.owner.empty() && proof.token.empty()) {
    return Error(StatusCode::kBadRequest,
                 "give the lease's token, or the owner name");
  }
  auto held =
      FindHeld(now, key, proof, /*fence=*/0, /*need_record=*/false, refusal);
  if (!held) return std::unexpected(held.error());
  if (refusal != RefusalReason::kNone) return Refused(refusal);
  ClearLease(*held->ns, *held->ns_name, held->it, now);
  WriteOutcome out;
  out.done = true;
  return out;
}

Result<WriteOutcome> RecordTable::Delete(Time now, RecordKey key,
                                         LeaseProof proof, Fence fence) {
  RefusalReason refusal = RefusalReason::kNone;
  auto held = FindHeld(now, key, proof, fence, /*need_record=*/true, refusal);
  if (!held) return std::unexpected(held.error());
  if (refusal != RefusalReason::kNone) return Refused(refusal);
  Found& f = *held;
  KeyState& k = f.it->second;
  if (Status st = CheckFence(k, fence, key); !st.ok()) {
    return std::unexpected(st);
  }
  k.write_fence = std::max(k.write_fence, fence);
  Emit(EventType::kRecordDeleted, now, key.ns, key.key, k);
  DeleteKey(*f.ns, *f.ns_name, f.it);
  WriteOutcome out;
  out.done = true;
  return out;
}

Result<std::size_t> RecordTable::Purge(Time now, std::string_view ns,
                                       std::chrono::milliseconds older_than) {
  if (Status st = ValidateName(ns, "namespace"); !st.ok()) {
    return std::unexpected(st);
  }
  if (older_than.count() < 0) {
    return Error(StatusCode::kBadRequest, "older_than_ms must be 0 or more");
  }
  auto found = namespaces_.find(ns);
  if (found == namespaces_.end()) return 0;
  Namespace& space = found->second;
  std::size_t purged = 0;
  for (auto it = space.keys.begin(); it != space.keys.end();) {
    auto next = std::next(it);
    const KeyState& k = it->second;
    // Compared in milliseconds: older_than in microseconds could overflow.
    if (k.expires && *k.expires <= now &&
        std::chrono::duration_cast<std::chrono::milliseconds>(
            now - *k.expires) >= older_than) {
      ClearLease(space, found->first, it, now);
      ++purged;
    }
    it = next;
  }
  return purged;
}

Result<bool> RecordTable::Break(Time now, RecordKey key) {
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  Found f = Find(key);
  if (f.ns == nullptr || f.it == f.ns->keys.end()) {
    return std::unexpected(NotFound(key));
  }
  if (!f.it->second.expires) return false;
  ClearLease(*f.ns, *f.ns_name, f.it, now);
  return true;
}

Result<RefusalReason> RecordTable::CheckStage(Time now, StagedRecordWrite& w) {
  const RecordKey key{w.ns, w.key};
  if (w.kind == StagedWriteKind::kInsert) {
    if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
    if (Status st = ValidateBody(w.body); !st.ok()) return std::unexpected(st);
    if (Status st = ValidateFence(w.fence); !st.ok()) {
      return std::unexpected(st);
    }
    Found f = Find(key);
    if (f.ns == nullptr || f.it == f.ns->keys.end()) {
      return RefusalReason::kNone;
    }
    if (f.it->second.has_record) {
      return Error(StatusCode::kExists,
                   "key \"" + w.key + "\" already has a record");
    }
    if (Status st = CheckFence(f.it->second, w.fence, key); !st.ok()) {
      return std::unexpected(st);
    }
    return RefusalReason::kNone;
  }
  if (w.kind == StagedWriteKind::kSave) {
    if (Status st = ValidateBody(w.body); !st.ok()) return std::unexpected(st);
  }
  RefusalReason refusal = RefusalReason::kNone;
  auto held =
      FindHeld(now, key, w.proof(), w.fence, /*need_record=*/true, refusal);
  if (!held) return std::unexpected(held.error());
  if (refusal != RefusalReason::kNone) return refusal;
  const KeyState& k = held->it->second;
  if (Status st = CheckFence(k, w.fence, key); !st.ok()) {
    return std::unexpected(st);
  }
  w.lease_fence = w.fence_only() ? 0 : k.fence;
  return RefusalReason::kNone;
}

std::optional<std::string> RecordTable::CheckStagedLease(
    Time now, const Namespace& ns, const KeyState* k,
    const StagedRecordWrite& w) {
  if (w.fence_only()) {
    if (k == nullptr) return std::nullopt;
    switch (CheckHolder(ns, *k, w.proof(), now)) {
      case RefusalReason::kNone:
        return std::nullopt;
      case RefusalReason::kTokenRequired:
        return std::string(
            "token_required: the namespace now refuses proof without a "
            "token");
      default:
        return "not_owner: \"" + k->locked_by + "\" has checked the key out";
    }
  }
  if (k == nullptr || !k->expires) {
    return "lease_lost: the lease it was staged under was checked in, "
           "broken or purged";
  }
  switch (CheckHolder(ns, *k, w.proof(), now)) {
    case RefusalReason::kNone:
      break;
    case RefusalReason::kExpired:
      return std::string("expired: the lease it was staged under has expired");
    case RefusalReason::kTokenRequired:
      return std::string(
          "token_required: the namespace now refuses name-only proof");
    case RefusalReason::kNotOwner:
    case RefusalReason::kVersionMismatch:
      return "not_owner: \"" + k->locked_by + "\" holds the key's lease now";
  }
  if (k->fence != w.lease_fence) {
    return "lease_lost: the key was checked out again (fence " +
           std::to_string(k->fence) + ") after the write was staged under " +
           "fence " + std::to_string(w.lease_fence);
  }
  return std::nullopt;
}

std::optional<std::string> RecordTable::CommitCheck::Check(
    Time now, const StagedRecordWrite& w) {
  const Found f = table_.Find({w.ns, w.key});
  const KeyState* k =
      f.ns != nullptr && f.it != f.ns->keys.end() ? &f.it->second : nullptr;
  auto [at, first] = changed_.try_emplace({w.ns, w.key});
  Projected& p = at->second;
  if (first && k != nullptr) {
    p.has_record = k->has_record;
    p.version = k->version;
    p.lease = k->expires.has_value();
    p.write_fence = k->write_fence;
  }
  const auto stale = [&]() -> std::optional<std::string> {
    if (w.fence == 0 || w.fence >= p.write_fence) return std::nullopt;
    return "stale_fence: fence " + std::to_string(w.fence) +
           " is older than fence " + std::to_string(p.write_fence) +
           ", which wrote the key after this write was staged";
  };
  if (w.kind == StagedWriteKind::kInsert) {
    if (p.has_record) {
      return std::string(
          "exists: the key has a record, inserted after the insert was "
          "staged");
    }
    if (auto why = stale()) return why;
    p.has_record = true;
    p.version = 1;
    p.write_fence = std::max(p.write_fence, w.fence);
    return std::nullopt;
  }
  if (!p.has_record) {
    return std::string("not_found: the key no longer has a record");
  }
  if (f.ns == nullptr || (!p.lease && !w.fence_only())) {
    return std::string(
        "lease_lost: an earlier write of this transaction deleted the key "
        "and its lease");
  }
  if (auto why = CheckStagedLease(now, *f.ns, k, w)) return why;
  if (auto why = stale()) return why;
  p.write_fence = std::max(p.write_fence, w.fence);
  if (w.kind == StagedWriteKind::kSave) {
    if (w.if_version && *w.if_version != p.version) {
      return "version_mismatch: if_version is " +
             std::to_string(*w.if_version) + " but the version is " +
             std::to_string(p.version);
    }
    ++p.version;
    return std::nullopt;
  }
  // Deleted: neither record nor lease; the write fence stays.
  p = Projected{.write_fence = p.write_fence};
  return std::nullopt;
}

AppliedWrite RecordTable::ApplyStaged(Time now, const StagedRecordWrite& w) {
  AppliedWrite out{w.kind, w.ns, w.key, 0};
  const RecordKey key{w.ns, w.key};
  switch (w.kind) {
    case StagedWriteKind::kInsert: {
      auto r = Insert(now, key, w.body, w.fence);
      assert(r.has_value());  // CommitCheck passed it
      out.version = r.value_or(0);
      break;
    }
    case StagedWriteKind::kSave: {
      auto r = Save(now, key, w.proof(), w.body, w.if_version, w.fence);
      assert(r.has_value() && r->done);
      out.version = r ? r->version : 0;
      break;
    }
    case StagedWriteKind::kDelete: {
      [[maybe_unused]] auto r = Delete(now, key, w.proof(), w.fence);
      assert(r.has_value() && r->done);
      break;
    }
    case StagedWriteKind::kCompleteOperation:
    case StagedWriteKind::kEnqueue:
      assert(false && "not a record write");
      break;
  }
  return out;
}

Status RecordTable::RestoreKey(Time now, KeyRow&& row) {
  if (Status st = ValidateKey({row.ns, row.key}); !st.ok()) return st;
  if (!row.has_record && !row.lock_expires_at && row.write_fence == 0) {
    return Status(StatusCode::kBadRequest,
                  "stored key \"" + row.key +
                      "\" has neither record, lease nor write fence");
  }
  Found& f = last_restored_;
  if (f.ns == nullptr || *f.ns_name != row.ns) {
    f = FindOrCreateNamespace(row.ns);
  }
  KeyMap& keys = f.ns->keys;
  // In order: append at the end without a search. Otherwise search.
  const bool in_order = keys.empty() || keys.rbegin()->first < row.key;
  const std::size_t before = keys.size();
  auto it = in_order
                ? keys.emplace_hint(keys.end(), std::move(row.key), KeyState{})
                : keys.try_emplace(std::move(row.key)).first;
  if (keys.size() == before) {
    return Status(StatusCode::kBadRequest,
                  "stored key \"" + it->first + "\" appears twice");
  }
  ++key_count_;
  KeyState& k = it->second;
  k.has_record = row.has_record;
  k.body = std::move(row.body);
  k.version = row.version;
  k.locked_by = std::move(row.locked_by);
  k.token = std::move(row.token);
  k.fence = row.fence;
  k.write_fence = row.write_fence;
  if (row.lock_expires_at && now < *row.lock_expires_at) {
    SetLease(*f.ns_name, it->first, k, row.lock_expires_at);
  } else {
    k.expires = row.lock_expires_at;  // ran out while the server was down
  }
  return Status::Ok();
}

void RecordTable::ExpireLease(std::uint64_t lease, Time at) {
  const auto found = leases_.find(lease);
  const LeaseRef ref = found->second;
  leases_.erase(found);
  KeyState& k = namespaces_.find(*ref.ns)->second.keys.find(*ref.key)->second;
  k.lease_id = 0;  // k.expires stays: the lease is known, and over
  Emit(EventType::kCheckoutExpired, at, *ref.ns, *ref.key, k);
}

void RecordTable::SetLease(const std::string& ns, const std::string& key,
                           KeyState& k, std::optional<Time> expires) {
  if (k.lease_id != 0) {
    deadlines_->Remove({*k.expires, DeadlineKind::kLeaseExpiry, k.lease_id});
    leases_.erase(k.lease_id);
    k.lease_id = 0;
  }
  k.expires = expires;
  if (k.expires) {
    k.lease_id = ++last_lease_id_;
    leases_.emplace(k.lease_id, LeaseRef{&ns, &key});
    deadlines_->Add({*k.expires, DeadlineKind::kLeaseExpiry, k.lease_id});
  }
}

void RecordTable::ClearLease(Namespace& ns, const std::string& ns_name,
                             KeyMap::iterator it, Time now) {
  KeyState& k = it->second;
  Emit(EventType::kCheckoutReleased, now, ns_name, it->first, k);
  SetLease(ns_name, it->first, k, std::nullopt);
  k.locked_by.clear();
  k.token.clear();
  // A tombstone's write fence keeps the key too.
  if (k.has_record || k.write_fence != 0) {
    JournalPut(ns_name, it->first, k, JournalEntry::Kind::kPutLease);
    return;
  }
  JournalDelete(ns_name, it->first);
  ns.keys.erase(it);
  --key_count_;
}

void RecordTable::DeleteKey(Namespace& ns, const std::string& ns_name,
                            KeyMap::iterator it) {
  KeyState& k = it->second;
  SetLease(ns_name, it->first, k, std::nullopt);
  if (k.write_fence == 0) {
    JournalDelete(ns_name, it->first);
    ns.keys.erase(it);
    --key_count_;
    return;
  }
  // A tombstone: an older fence may not bring the record back.
  k.has_record = false;
  k.body.clear();
  k.version = 0;
  k.locked_by.clear();
  k.token.clear();
  JournalPut(ns_name, it->first, k, JournalEntry::Kind::kPutKey);
}

void RecordTable::JournalPut(const std::string& ns, const std::string& key,
                             const KeyState& k, JournalEntry::Kind kind) {
  JournalEntry e;
  e.kind = kind;
  e.row.ns = ns;
  e.row.key = key;
  e.row.has_record = k.has_record;
  if (kind == JournalEntry::Kind::kPutKey) e.row.body = k.body;
  e.row.version = k.version;
  e.row.locked_by = k.locked_by;
  e.row.token = k.token;
  e.row.lock_expires_at = k.expires;
  e.row.fence = k.fence;
  e.row.write_fence = k.write_fence;
  journal_->push_back(std::move(e));
}

void RecordTable::JournalDelete(const std::string& ns, const std::string& key) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kDeleteKey;
  e.row.ns = ns;
  e.row.key = key;
  journal_->push_back(std::move(e));
}

RecordView RecordTable::View(const std::string& key, const KeyState& k,
                             Time now, bool with_body) const {
  RecordView v;
  v.key = key;
  v.has_record = k.has_record;
  if (with_body) v.body = k.body;
  v.version = k.version;
  v.locked_by = k.locked_by;
  v.lock_expires_at = k.expires;
  v.state =
      k.expires && now < *k.expires ? LeaseState::kLocked : LeaseState::kFree;
  v.fence = k.fence;
  v.write_fence = k.write_fence;
  return v;
}

void RecordTable::Emit(EventType type, Time now, std::string_view ns,
                       std::string_view key, const KeyState& k) {
  if (events_ == nullptr) return;
  Event e;
  e.type = type;
  e.at = now;
  e.ns = ns;
  e.resource = key;
  e.holder = k.locked_by;
  e.until = k.expires;
  e.fence = k.fence;
  e.version = k.version;
  events_->OnEvent(e);
}

}  // namespace leasehold::engine
