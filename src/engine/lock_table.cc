#include "engine/lock_table.h"

#include <cassert>
#include <vector>

namespace leasehold::engine {
namespace {

constexpr std::string_view kDefaultPrincipal = "public";

void AppendLength(std::string& out, std::size_t n) {
  // Names are at most 255 characters of up to 4 bytes: a 2-byte varint.
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
}

std::string_view TakeLengthPrefixed(std::string_view& in) {
  std::size_t n = 0;
  unsigned shift = 0;
  while (!in.empty()) {
    const auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    n |= static_cast<std::size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
    shift += 7;
  }
  std::string_view part = in.substr(0, n);
  in.remove_prefix(part.size());
  return part;
}

}  // namespace

ModeMask Resource::GrantedMask() const {
  ModeMask mask = 0;
  for (int m = 1; m < kLockModeCount; ++m) {
    if (granted_by_mode[m] != 0) mask |= ModeBit(static_cast<LockMode>(m));
  }
  return mask;
}

LockTable::~LockTable() {
  // Return every node to its pool so that destructors run.
  std::vector<Resource*> all;
  all.reserve(resources_.size());
  for (Resource* r : resources_) all.push_back(r);
  resources_.clear();
  for (Resource* r : all) {
    while (r->queue_head != nullptr) {
      Waiter* w = r->queue_head;
      r->queue_head = w->next;
      waiter_pool_.Delete(w);
    }
    while (r->grants != nullptr) {
      Grant* g = r->grants;
      r->grants = g->resource_next;
      grant_pool_.Delete(g);
    }
    resource_pool_.Delete(r);
  }
}

// Layout: varint(len ns) ns varint(len principal) principal resource.
// The default principal is stored as length 0 (a real principal is never
// empty), which keeps most keys within std::string's inline buffer.
std::string_view LockTable::EncodeKey(const LockKey& key) {
  scratch_.clear();
  AppendLength(scratch_, key.ns.size());
  scratch_.append(key.ns);
  const bool is_default = key.principal == kDefaultPrincipal;
  AppendLength(scratch_, is_default ? 0 : key.principal.size());
  if (!is_default) scratch_.append(key.principal);
  scratch_.append(key.resource);
  return scratch_;
}

DecodedKey LockTable::DecodeKey(std::string_view encoded) {
  DecodedKey out;
  out.ns = TakeLengthPrefixed(encoded);
  out.principal = TakeLengthPrefixed(encoded);
  if (out.principal.empty()) out.principal = kDefaultPrincipal;
  out.resource = encoded;
  return out;
}

Resource* LockTable::Find(const LockKey& key) {
  auto it = resources_.find(EncodeKey(key));
  return it == resources_.end() ? nullptr : *it;
}

Resource* LockTable::FindOrCreate(const LockKey& key) {
  auto it = resources_.find(EncodeKey(key));
  if (it != resources_.end()) return *it;
  Resource* r = resource_pool_.New();
  r->key.Assign(scratch_);
  resources_.insert(r);
  return r;
}

void LockTable::EraseIfIdle(Resource* r) {
  if (!r->idle()) return;
  resources_.erase(r);
  resource_pool_.Delete(r);
}

Grant* LockTable::FindGrant(Resource* r, Session* session,
                            LockOwner owner) const {
  // A hot resource may have thousands of holders and a busy session
  // thousands of locks; walk whichever list is shorter, alternating.
  Grant* by_resource = r->grants;
  Grant* by_session = session->grants[OwnerIndex(owner)];
  while (by_resource != nullptr && by_session != nullptr) {
    if (by_resource->session == session && by_resource->owner == owner) {
      return by_resource;
    }
    if (by_session->resource == r) return by_session;
    by_resource = by_resource->resource_next;
    by_session = by_session->session_next;
  }
  return nullptr;
}

bool LockTable::SessionHolds(Resource* r, Session* session) const {
  return FindGrant(r, session, LockOwner::kTransaction) != nullptr ||
         FindGrant(r, session, LockOwner::kSession) != nullptr;
}

ModeMask LockTable::OthersGrantedMask(Resource* r, Session* session) const {
  auto counts = r->granted_by_mode;
  for (LockOwner owner : {LockOwner::kTransaction, LockOwner::kSession}) {
    if (const Grant* g = FindGrant(r, session, owner)) {
      --counts[static_cast<std::size_t>(g->mode)];
    }
  }
  ModeMask mask = 0;
  for (int m = 1; m < kLockModeCount; ++m) {
    if (counts[m] != 0) mask |= ModeBit(static_cast<LockMode>(m));
  }
  return mask;
}

Grant* LockTable::AddGrant(Resource* r, Session* session, LockOwner owner,
                           LockMode mode, Fence fence, Time now) {
  Grant* g = grant_pool_.New();
  g->resource = r;
  g->session = session;
  g->owner = owner;
  g->mode = mode;
  g->count = 1;
  g->fence = fence;
  g->since = now;
  g->resource_next = r->grants;
  if (r->grants != nullptr) r->grants->resource_prev = g;
  r->grants = g;
  const std::size_t o = OwnerIndex(owner);
  g->session_next = session->grants[o];
  if (session->grants[o] != nullptr) session->grants[o]->session_prev = g;
  session->grants[o] = g;
  ++session->grant_count[o];
  ++r->granted_by_mode[static_cast<std::size_t>(mode)];
  return g;
}

void LockTable::SetGrantMode(Grant* g, LockMode mode) {
  auto& counts = g->resource->granted_by_mode;
  --counts[static_cast<std::size_t>(g->mode)];
  ++counts[static_cast<std::size_t>(mode)];
  g->mode = mode;
}

void LockTable::RemoveGrant(Grant* g) {
  Resource* r = g->resource;
  Session* s = g->session;
  const std::size_t o = OwnerIndex(g->owner);
  if (g->resource_prev != nullptr) {
    g->resource_prev->resource_next = g->resource_next;
  } else {
    r->grants = g->resource_next;
  }
  if (g->resource_next != nullptr)
    g->resource_next->resource_prev = g->resource_prev;
  if (g->session_prev != nullptr) {
    g->session_prev->session_next = g->session_next;
  } else {
    s->grants[o] = g->session_next;
  }
  if (g->session_next != nullptr)
    g->session_next->session_prev = g->session_prev;
  --s->grant_count[o];
  --r->granted_by_mode[static_cast<std::size_t>(g->mode)];
  grant_pool_.Delete(g);
}

Waiter* LockTable::Enqueue(Resource* r, Session* session, LockOwner owner,
                           LockMode requested, LockMode target, bool conversion,
                           Time now, std::optional<Time> deadline, WaitId id) {
  Waiter* w = waiter_pool_.New();
  w->id = id;
  w->resource = r;
  w->session = session;
  w->owner = owner;
  w->requested = requested;
  w->target = target;
  w->conversion = conversion;
  w->since = now;
  w->deadline = deadline;
  // Conversions go after the last conversion (or first); others at the tail.
  Waiter* before = conversion ? r->last_conversion : r->queue_tail;
  w->prev = before;
  w->next = before != nullptr ? before->next : r->queue_head;
  if (w->prev != nullptr) {
    w->prev->next = w;
  } else {
    r->queue_head = w;
  }
  if (w->next != nullptr) {
    w->next->prev = w;
  } else {
    r->queue_tail = w;
  }
  if (conversion) r->last_conversion = w;
  session->waiting = w;
  return w;
}

void LockTable::Dequeue(Waiter* w) {
  Resource* r = w->resource;
  if (r->last_conversion == w) {
    r->last_conversion =
        (w->prev != nullptr && w->prev->conversion) ? w->prev : nullptr;
  }
  if (w->prev != nullptr) {
    w->prev->next = w->next;
  } else {
    r->queue_head = w->next;
  }
  if (w->next != nullptr) {
    w->next->prev = w->prev;
  } else {
    r->queue_tail = w->prev;
  }
  if (w->session->waiting == w) w->session->waiting = nullptr;
  waiter_pool_.Delete(w);
}

}  // namespace leasehold::engine
