// RecordTable: keys per namespace, each with an optional record and an
// optional lease; the checkout rules of docs/api.md, each command one atomic
// decision. Internal to the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_RECORD_TABLE_H_
#define LEASEHOLD_ENGINE_RECORD_TABLE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/deadline_queue.h"
#include "engine/engine_types.h"
#include "engine/events.h"
#include "engine/journal.h"
#include "engine/reserved_ids.h"
#include "engine/staged_writes.h"

namespace leasehold::engine {

class RecordTable {
 public:
  // Each unexpired lease has a kLeaseExpiry deadline in `deadlines`.
  RecordTable(std::size_t max_body_bytes, FenceSource* fences,
              JournalBatch* journal, EventSink* events,
              DeadlineQueue* deadlines)
      : max_body_bytes_(max_body_bytes),
        fences_(fences),
        journal_(journal),
        events_(events),
        deadlines_(deadlines) {}

  void SetNamespaceOptions(std::string_view ns, NamespaceOptions options);
  // `fence` (0: none) is a fenced write's (engine.h, "Fenced writes"):
  // kBadRequest above every fence handed out, kStaleFence below the key's
  // write fence; otherwise it becomes the key's write fence if higher.
  Result<std::uint64_t> Insert(Time now, RecordKey key, std::string_view body,
                               Fence fence);
  Result<RecordView> Get(Time now, RecordKey key) const;
  Result<RecordPage> List(Time now, const ListRecordsQuery& query) const;
  Result<CheckoutOutcome> Checkout(Time now, const CheckoutRequest& request);
  Result<WriteOutcome> Save(Time now, RecordKey key, LeaseProof proof,
                            std::string_view body,
                            std::optional<std::uint64_t> if_version,
                            Fence fence);
  Result<WriteOutcome> Checkin(Time now, RecordKey key, LeaseProof proof);
  Result<WriteOutcome> Delete(Time now, RecordKey key, LeaseProof proof,
                              Fence fence);
  Result<std::size_t> Purge(Time now, std::string_view ns,
                            std::chrono::milliseconds older_than);
  Result<bool> Break(Time now, RecordKey key);

  // --- Staged writes (see engine.h, "Staged record writes") ---------------
  // Validates `w` against the committed state as far as it can be before
  // commit, changing nothing. Errors: names, kBodyTooLarge, kExists (insert
  // of a key with a record), kNotFound (save or delete without a record).
  // kStaleFence for a fence below the key's write fence. For a save or
  // delete, returns the refusal when the proof holds no unexpired lease,
  // else kNone and sets w.lease_fence to the lease's fence.
  Result<RefusalReason> CheckStage(Time now, StagedRecordWrite& w);

  // The commit-time check of one transaction's record writes, in staging
  // order, each against the state the earlier ones leave. Changes nothing;
  // valid while the table does not change.
  class CommitCheck {
   public:
    explicit CommitCheck(RecordTable& table) : table_(table) {}
    // Empty when `w` can be applied after the writes checked before it;
    // else why not, as "reason: explanation".
    std::optional<std::string> Check(Time now, const StagedRecordWrite& w);

   private:
    // A key as the writes checked so far leave it.
    struct Projected {
      bool has_record = false;
      std::uint64_t version = 0;
      bool lease = false;  // false once a delete took it away
      Fence write_fence = 0;
    };
    RecordTable& table_;
    std::map<std::pair<std::string, std::string>, Projected> changed_;
  };
  // Applies a write that CommitCheck passed together with every write
  // applied before it in this commit: journal entries and events as the
  // direct command makes them.
  AppliedWrite ApplyStaged(Time now, const StagedRecordWrite& w);

  // Loads one stored key. Keys arriving in (ns, key) order are appended
  // without searching.
  Status RestoreKey(Time now, KeyRow&& row);

  // Reports that lease `lease` ran out at `at` (checkout.expired): its
  // kLeaseExpiry deadline, already taken from the queue.
  void ExpireLease(std::uint64_t lease, Time at);

  // Adds each namespace's key count and unexpired leases to `out` (the
  // leases not yet reported as expired). In namespace_listing.cc.
  void CountByNamespace(
      std::map<std::string, NamespaceInfo, std::less<>>& out) const;

  std::size_t key_count() const { return key_count_; }
  std::size_t active_leases() const { return leases_.size(); }

 private:
  struct KeyState {
    bool has_record = false;
    std::string body;
    std::uint64_t version = 0;
    std::string locked_by;
    std::string token;
    std::optional<Time> expires;
    Fence fence = 0;
    std::uint64_t lease_id = 0;  // of the unexpired lease's deadline
    Fence write_fence = 0;       // the highest fence a write carried
  };
  using KeyMap = std::map<std::string, KeyState, std::less<>>;

  struct Namespace {
    KeyMap keys;
    NamespaceOptions options;
  };
  struct Found {
    Namespace* ns = nullptr;  // null when the namespace is unknown
    const std::string* ns_name = nullptr;
    KeyMap::iterator it;  // valid when ns is set; may be ns->keys.end()
  };
  // Where an unexpired lease is: its namespace's name and its key.
  struct LeaseRef {
    const std::string* ns = nullptr;
    const std::string* key = nullptr;
  };

  Found Find(RecordKey key);
  // For Save, Checkin and Delete: the key, after validating the request.
  // An error when the key is unknown (or has no record and `need_record`);
  // `refusal` says whether `proof` holds an unexpired lease on it.
  // A fence-only proof (no owner, no token) holds when nobody has the key
  // checked out.
  Result<Found> FindHeld(Time now, RecordKey key, LeaseProof proof, Fence fence,
                         bool need_record, RefusalReason& refusal);
  Found FindOrCreateNamespace(std::string_view ns);
  Status ValidateKey(RecordKey key) const;
  Status ValidateBody(std::string_view body) const;
  static Status ValidateProof(LeaseProof proof, Fence fence);
  // kBadRequest for a fence never handed out.
  Status ValidateFence(Fence fence) const;
  // kStaleFence when `fence` is below the write fence of `k`.
  static Status CheckFence(const KeyState& k, Fence fence, RecordKey key);
  // Clears a deleted key's record and lease; forgets the key unless it
  // keeps a write fence (then journaled as a tombstone).
  void DeleteKey(Namespace& ns, const std::string& ns_name,
                 KeyMap::iterator it);
  // Commit's check that the lease `w` was staged under still holds: `k` is
  // the key (null when gone), `ns` its namespace.
  static std::optional<std::string> CheckStagedLease(
      Time now, const Namespace& ns, const KeyState* k,
      const StagedRecordWrite& w);
  static RefusalReason CheckHolder(const Namespace& ns, const KeyState& k,
                                   LeaseProof proof, Time now);

  void SetLease(const std::string& ns, const std::string& key, KeyState& k,
                std::optional<Time> expires);
  // Clears the lease; forgets the key if it has no record either.
  void ClearLease(Namespace& ns, const std::string& ns_name,
                  KeyMap::iterator it, Time now);
  void JournalPut(const std::string& ns, const std::string& key,
                  const KeyState& k, JournalEntry::Kind kind);
  void JournalDelete(const std::string& ns, const std::string& key);
  RecordView View(const std::string& key, const KeyState& k, Time now,
                  bool with_body) const;
  void Emit(EventType type, Time now, std::string_view ns, std::string_view key,
            const KeyState& k);

  std::size_t max_body_bytes_;
  FenceSource* fences_;
  JournalBatch* journal_;
  EventSink* events_;
  std::map<std::string, Namespace, std::less<>> namespaces_;
  DeadlineQueue* deadlines_;
  // Unexpired leases by id, so that their expiry can be announced.
  std::unordered_map<std::uint64_t, LeaseRef> leases_;
  std::uint64_t last_lease_id_ = 0;
  std::size_t key_count_ = 0;
  Found last_restored_;  // where RestoreKey appended last
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_RECORD_TABLE_H_
