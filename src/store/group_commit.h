// GroupCommitter: many writers, one fsync.
//
// Writers Submit() journal batches from any thread and get a sequence
// number. The first writer that then waits and finds nobody writing
// becomes the leader: it takes everything queued, appends it to the Store
// as ONE batch (one store transaction: one fsync on SQLite, one COMMIT on
// PostgreSQL), and marks every sequence number in it durable; the others
// wait for it (leveldb's writer queue). Under load, batches grow by themselves:
// while one commit is in flight, the next one fills up. A lone writer commits
// on its own thread, with no hand-off. Callers that cannot block use
// OnDurable(); a background thread then does the leader's work for them.
//
// After a failed append the committer stays failed: every later Wait()
// answers kUnavailable, because the engine's memory is then ahead of the
// disk and only a restart (which reloads from the store) can reconcile them.
#ifndef LEASEHOLD_STORE_GROUP_COMMIT_H_
#define LEASEHOLD_STORE_GROUP_COMMIT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "store/store.h"

namespace leasehold {

struct GroupCommitStats {
  std::uint64_t batches = 0;  // appends made
  std::uint64_t entries = 0;  // journal entries written
  std::uint64_t submits = 0;  // Submit() calls with entries
  std::uint64_t last_batch_entries = 0;
  double last_commit_seconds = 0;
  double total_commit_seconds = 0;
  // How long the commit now in flight has been (0: none): a stalled disk
  // or database shows here long before anything fails.
  double commit_in_flight_seconds = 0;

  // Adds the counts of `later` (a committer that came after this one's) and
  // takes its last-commit figures.
  void Add(const GroupCommitStats& later) {
    batches += later.batches;
    entries += later.entries;
    submits += later.submits;
    last_batch_entries = later.last_batch_entries;
    last_commit_seconds = later.last_commit_seconds;
    total_commit_seconds += later.total_commit_seconds;
    commit_in_flight_seconds = later.commit_in_flight_seconds;
  }
};

class GroupCommitter {
 public:
  using Seq = std::uint64_t;
  using Callback = std::function<void(const Status&)>;

  // `store` must outlive the committer. Starts the writer thread.
  explicit GroupCommitter(Store* store);
  // Writes what is queued, then stops the writer thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `batch` (may be empty) and returns its sequence number. Batches
  // are written in the order their Submit() calls returned. Thread-safe.
  Seq Submit(JournalBatch batch);
  // The sequence number of the last Submit(), durable or not.
  Seq last_submitted() const;
  // Blocks until `seq` is durable: OK, or kUnavailable if the store failed.
  // May write on the caller's thread (see above). Thread-safe.
  Status Wait(Seq seq);
  // Calls `done` once `seq` is durable (at once if it already is), on the
  // writer thread or the caller's. `done` must not call back into this.
  void OnDurable(Seq seq, Callback done);

  GroupCommitStats Stats() const;
  // The highest durable sequence number, and the sticky failure (OK if none).
  Seq durable_seq() const;
  Status failure() const;

 private:
  void WriterLoop();
  // Writes everything queued as one batch and runs the callbacks it
  // satisfies. Called and returns with `lock` held and writing_ false.
  void CommitQueued(std::unique_lock<std::mutex>& lock);

  Store* store_;
  mutable std::mutex mu_;
  // A thread blocked in Wait(). Each has its own condition variable, so a
  // commit wakes only the writers it made durable (and one new leader), not
  // every waiting thread.
  struct Waiter {
    Seq seq;
    std::condition_variable cv;
    bool wake = false;
  };
  // Wakes the waiters whose sequence is durable (all of them after a
  // failure), and the first other one to lead the next commit.
  void WakeWaiters();

  std::condition_variable work_;     // the background thread waits here
  std::condition_variable durable_;  // the background thread, when stopping
  std::deque<Waiter*> waiters_;
  std::vector<JournalBatch> queue_;
  std::vector<std::pair<Seq, Callback>> callbacks_;
  Seq submitted_ = 0;
  Seq durable_seq_ = 0;
  Status failure_;
  bool stopping_ = false;
  bool writing_ = false;  // a leader is appending
  std::chrono::steady_clock::time_point writing_since_;  // while writing_
  GroupCommitStats stats_;
  std::thread writer_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_GROUP_COMMIT_H_
