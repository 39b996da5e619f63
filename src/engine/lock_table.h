// LockTable: the resources that have holders or waiters, their granted
// entries and their wait queues. It keeps the data structures consistent
// and answers compatibility questions; the policy (who is granted when)
// lives in LockManager. Internal to the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_LOCK_TABLE_H_
#define LEASEHOLD_ENGINE_LOCK_TABLE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "engine/compact_key.h"
#include "engine/engine_types.h"
#include "engine/mode_masks.h"
#include "engine/object_pool.h"
#include "engine/session.h"

namespace leasehold::engine {

struct Resource;

// One owner's hold on one resource: mode, reference count, latest fence.
// On a semaphore: mode kNoLock, and `count` is the permits held.
struct Grant {
  Resource* resource = nullptr;
  Session* session = nullptr;
  Grant* resource_prev = nullptr;  // the resource's list of grants
  Grant* resource_next = nullptr;
  Grant* session_prev = nullptr;  // the session's list for this owner
  Grant* session_next = nullptr;
  Fence fence = 0;
  Time since;
  // Its hold limit (LockManager, hold_limits.cc): when the server takes it
  // back, and the id of that kHoldLimit deadline (0: none).
  Time hold_until{};
  std::uint64_t hold_limit = 0;
  std::uint32_t count = 0;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;
};

// A parked request.
struct Waiter {
  WaitId id = 0;
  Resource* resource = nullptr;
  Session* session = nullptr;
  Waiter* prev = nullptr;  // queue links
  Waiter* next = nullptr;
  Time since;
  std::optional<Time> deadline;
  LockOwner owner = LockOwner::kTransaction;
  LockMode requested = LockMode::kNoLock;
  LockMode target = LockMode::kNoLock;  // Combine(held by owner, requested)
  bool conversion = false;    // the session held the resource when it asked
  bool for_call = false;      // part of an acquire-all call (LockManager)
  std::uint32_t permits = 0;  // on a semaphore: asked for (modes kNoLock)
  Duration max_hold{0};       // the grant's hold limit (0: none)
};

struct Resource {
  // Encoded identity (see LockTable::EncodeKey).
  CompactKey key;
  Grant* grants = nullptr;
  Waiter* queue_head = nullptr;  // conversions first, then FIFO
  Waiter* queue_tail = nullptr;
  Waiter* last_conversion = nullptr;
  // Number of grants per mode, so "modes granted here" is O(1).
  std::array<std::uint32_t, kLockModeCount> granted_by_mode{};
  // Its namespace keeps locks in memory only: its grants are not journaled
  // (set when the resource is created; see LockManager).
  bool memory = false;
  // 0: a lock. Else a semaphore of this many permits (set when it is
  // created), of which its grants hold `permits_held`.
  std::uint32_t limit = 0;
  std::uint32_t permits_held = 0;
  // Lock-delay (LockManager): a lock grants nothing while held back; a
  // semaphore keeps `held_back_permits` out of reach. Until the latest end.
  bool held_back = false;
  std::uint32_t held_back_permits = 0;
  Time held_back_until{};

  bool idle() const {
    return grants == nullptr && queue_head == nullptr && !held_back &&
           held_back_permits == 0;
  }
  ModeMask GrantedMask() const;
};

// The parts of an encoded key.
struct DecodedKey {
  std::string_view ns;
  std::string_view principal;
  std::string_view resource;
};

class LockTable {
 public:
  LockTable() = default;
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;
  ~LockTable();

  // Null when nobody holds or waits for `key`.
  Resource* Find(const LockKey& key);
  Resource* FindOrCreate(const LockKey& key);
  // Forgets `r` if it has neither grants nor waiters.
  void EraseIfIdle(Resource* r);

  // The grant `session` holds on `r` as `owner`, or null. Walks the shorter
  // of the resource's and the session's lists.
  Grant* FindGrant(Resource* r, Session* session, LockOwner owner) const;
  bool SessionHolds(Resource* r, Session* session) const;

  // Modes granted on `r` to sessions other than `session`.
  ModeMask OthersGrantedMask(Resource* r, Session* session) const;

  Grant* AddGrant(Resource* r, Session* session, LockOwner owner, LockMode mode,
                  Fence fence, Time now);
  void SetGrantMode(Grant* g, LockMode mode);
  void RemoveGrant(Grant* g);

  // Queues a request: conversions after earlier conversions, others last.
  Waiter* Enqueue(Resource* r, Session* session, LockOwner owner,
                  LockMode requested, LockMode target, bool conversion,
                  Time now, std::optional<Time> deadline, WaitId id);
  void Dequeue(Waiter* w);  // unlinks and frees `w`

  std::size_t resource_count() const { return resources_.size(); }
  template <typename F>
  void ForEachResource(F&& f) const {
    for (const Resource* r : resources_) f(r);
  }

  static DecodedKey DecodeKey(std::string_view encoded);

 private:
  // Resources are found by their encoded key without building a Resource.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
    std::size_t operator()(const Resource* r) const { return (*this)(r->key); }
  };
  struct Eq {
    using is_transparent = void;
    static std::string_view View(std::string_view s) { return s; }
    static std::string_view View(const Resource* r) { return r->key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) == View(b);
    }
  };

  // Writes the length-prefixed encoding of `key` into scratch_.
  std::string_view EncodeKey(const LockKey& key);

  std::unordered_set<Resource*, Hash, Eq> resources_;
  ObjectPool<Resource> resource_pool_;
  ObjectPool<Grant> grant_pool_;
  ObjectPool<Waiter> waiter_pool_;
  std::string scratch_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_LOCK_TABLE_H_
