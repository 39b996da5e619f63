// TransactionManager: the open transactions (one per session at most),
// their staged writes and the namespaces' longest open times
// (NamespaceOptions::max_transaction), and the record of transactions
// rolled back for staying open too long or lost at a restart. Internal to the
// engine; single-threaded. See engine.h, "Stale transactions" and "Staged
// record writes", and docs/transactions.md.
//
// It keeps the state; the engine sequences what a transaction's end does
// to other units (locks released, staged writes applied at commit).
#ifndef LEASEHOLD_ENGINE_TRANSACTION_MANAGER_H_
#define LEASEHOLD_ENGINE_TRANSACTION_MANAGER_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/deadline_queue.h"
#include "engine/engine_types.h"
#include "engine/journal.h"
#include "engine/reserved_ids.h"
#include "engine/session.h"
#include "engine/staged_writes.h"

namespace leasehold::engine {

struct Transaction {
  TransactionId id = 0;
  Time started_at;
  StagedWrites staged;
  // Set once it uses a namespace with max_transaction: the earliest such
  // deadline, that namespace and its limit.
  std::optional<Time> deadline;
  std::string deadline_ns;
  std::chrono::milliseconds deadline_limit{0};
};

class TransactionManager {
 public:
  // Each bound transaction has a kTransactionLimit deadline (id: the
  // session) in `deadlines`. Id reservations are journaled to `journal`.
  TransactionManager(StagingLimits limits, JournalBatch* journal,
                     DeadlineQueue* deadlines)
      : limits_(limits), deadlines_(deadlines), ids_(0, journal) {}
  TransactionManager(const TransactionManager&) = delete;
  TransactionManager& operator=(const TransactionManager&) = delete;

  // Applies to transactions that use `ns` from now on; 0 removes the limit.
  void SetLimit(std::string_view ns, std::chrono::milliseconds limit);

  // Opens a transaction for `s` (s->transaction). kTransactionOpen if it
  // has one. Forgets the last expired one.
  Result<TransactionInfo> Begin(Session* s, Time now);
  // Forgets the open transaction of `s`: its staged writes and deadline.
  void End(Session* s);
  // Forgets everything about `s` (it ends).
  void ForgetSession(const Session* s) {
    expired_.erase(s->id);
    lost_.erase(s->id);
  }

  // Ids continue above `reserved`.
  void RestoreIds(TransactionId reserved) { ids_.Restore(reserved); }
  // Records that `s` had transaction `id` (begun at `started_at`) open when
  // the server stopped: it is lost (a restart never brings back staged
  // writes; its locks are held until the session is told).
  void NoteLost(const Session* s, TransactionId id, Time started_at);
  bool IsLost(const Session* s) const { return lost_.contains(s->id); }
  // The lost transaction of `s` and its start, for the session's row; null
  // when none.
  const std::pair<TransactionId, Time>* LostOf(const Session* s) const {
    auto it = lost_.find(s->id);
    return it != lost_.end() ? &it->second : nullptr;
  }
  // The session was told its transaction was lost.
  void ForgetLost(const Session* s) { lost_.erase(s->id); }

  // Binds the open transaction of `s` to the longest open time of `ns`, if
  // it has one (the earliest deadline wins). False when the transaction is
  // past its deadline at `now`: the caller must expire it.
  bool Bind(Session* s, std::string_view ns, Time now);
  // Records that the open transaction of `s` is rolled back at `at` for
  // staying open too long (the caller then ends it), for NoTransaction.
  void NoteExpired(const Session* s, Time at);

  // Why `s` has no transaction to act in: kTransactionLost while it is
  // marked lost, kTransactionExpired just after one was rolled back for
  // staying open too long, else kNoTransaction with `hint` appended.
  Status NoTransaction(const Session* s, std::string_view hint =
                                             "; begin one, or use owner "
                                             "Session") const;

  // Appends `w` to the open transaction of `s` if one more write of
  // w.bytes() fits the limits; else kTransactionTooLarge, nothing staged.
  template <typename W>
  Result<StageOutcome> Stage(Session* s, W&& w) {
    const std::size_t bytes = w.bytes();
    if (Status st = Admit(s, bytes); !st.ok()) return std::unexpected(st);
    s->transaction->staged.Add(std::forward<W>(w), bytes);
    StageOutcome out;
    out.staged = true;
    out.staged_writes = s->transaction->staged.size();
    return out;
  }
  // OK when one more write of `bytes` fits the open transaction of `s`.
  Status Admit(const Session* s, std::size_t bytes) const {
    return s->transaction->staged.Admit(limits_, bytes);
  }

  // For GetSession and ListSessions.
  static TransactionInfo Info(const Transaction& t);

  std::size_t open() const { return open_.size(); }
  std::uint64_t expired() const { return expired_count_; }
  std::optional<Time> oldest_start() const;

 private:
  struct Expired {
    TransactionId id = 0;
    Time at;
    std::string ns;
    std::chrono::milliseconds limit{0};
  };

  StagingLimits limits_;
  DeadlineQueue* deadlines_;
  std::map<std::string, std::chrono::milliseconds, std::less<>> limits_by_ns_;
  // Open transactions by session; Session::transaction points into it.
  std::unordered_map<SessionId, Transaction> open_;
  // The last transaction of each session rolled back for staying open too
  // long, until the session begins another.
  std::unordered_map<SessionId, Expired> expired_;
  // The transaction each restored session had open, until it is told.
  std::unordered_map<SessionId, std::pair<TransactionId, Time>> lost_;
  TransactionIdSource ids_;
  std::uint64_t expired_count_ = 0;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_TRANSACTION_MANAGER_H_
