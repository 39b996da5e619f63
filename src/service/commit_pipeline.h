// CommitPipeline: the write path of an EngineService's store. Each step's
// journal goes to a GroupCommitter; the step's completions (its caller's,
// and those of the parked requests it decided) and its events wait, in step
// order, until the step is durable. Parked requests' completions are kept
// here by wait id. Every method runs under the service's mutex.
#ifndef LEASEHOLD_SERVICE_COMMIT_PIPELINE_H_
#define LEASEHOLD_SERVICE_COMMIT_PIPELINE_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "service/engine_loader.h"
#include "service/owned_event.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace leasehold {

using Completion = std::move_only_function<void(const Status&)>;
// Completions to run, with their status, once the mutex is released.
using Completions = std::vector<std::pair<Completion, Status>>;
using WaitDone = std::function<void(const Result<FinishedWait>&)>;
using EventListener = std::function<void(const std::vector<OwnedEvent>&)>;

// Runs `ready` here, or posts it to `io` when this thread is already deep
// in inline completions (a completion that starts another step would
// otherwise recurse without bound). Never under the service's mutex.
void RunCompletions(boost::asio::io_context& io, Completions ready);

// The completion that hands `value` to `done` once its step is durable, or
// the store's failure instead.
template <typename Done, typename T>
Completion Deliver(Done done, T value) {
  return [done = std::move(done),
          value = std::move(value)](const Status& st) mutable {
    if (st.ok()) {
      done(std::move(value));
    } else {
      done(std::unexpected(st));
    }
  };
}

class CommitPipeline {
 public:
  // `on_durable` is called, on the committer's thread, once steps it was
  // waiting for are durable (or failed): the service then calls Drain().
  explicit CommitPipeline(std::function<void()> on_durable)
      : on_durable_(std::move(on_durable)) {}

  // Called with the events of each durable step, in order, under the
  // service's mutex.
  void SetEventListener(EventListener listener) {
    listener_ = std::move(listener);
  }

  // Starts writing to `store`; only while detached.
  void Attach(std::shared_ptr<Store> store);
  // Stops writing: answers the steps already durable, then every other
  // pending step and parked request with `why`; returns the store, which
  // nothing writes to any more (null if none was attached). Until the next
  // Attach(), every step fails at once with `why`.
  std::shared_ptr<Store> Detach(Completions& ready, Status why);
  bool attached() const { return committer_ != nullptr; }
  // The store written to; null while detached.
  const std::shared_ptr<Store>& store() const { return store_; }
  // OK while the store accepts writes; its failure once it did not; while
  // detached, why.
  Status failure() const;

  // For a parked outcome, keeps `finished` by its wait id, and makes a
  // store failure reach the caller once: both of a parked request's steps
  // fail then, possibly on two threads in either order.
  template <typename Outcome>
  void KeepIfParked(const Result<Outcome>& outcome,
                    std::function<void(Result<Outcome>)>& started,
                    WaitDone& finished);
  // The parked requests' wait ids, and how many there are.
  std::vector<WaitId> ParkedWaits() const;
  std::size_t parked() const { return parked_.size(); }

  // After a command on `engine`: submits its journal, takes the waits it
  // finished and the events it made. `then` runs once everything so far is
  // durable; steps already durable are moved to `ready`. Returns false when
  // the store has failed (the caller then starts what a failure starts).
  bool AfterStep(LoadedEngine& engine, Completion then, Completions& ready);
  // Moves the completions of the steps now durable, in step order, to
  // `ready`, and publishes their events; with a failed store, every step's
  // with the failure. Returns false when the store has failed.
  bool Drain(Completions& ready);

  // Counted over the pipeline's life, across stores.
  GroupCommitStats Stats() const;

 private:
  struct PendingStep {
    GroupCommitter::Seq seq;
    std::vector<Completion> completions;
    std::vector<OwnedEvent> events;
  };

  // Answers every parked request with detached_: its wait ends with the
  // engine it was parked in.
  void FailParked(Completions& ready);

  std::function<void()> on_durable_;
  EventListener listener_;
  std::shared_ptr<Store> store_;               // shared with a backup under way
  std::unique_ptr<GroupCommitter> committer_;  // null while detached
  Status detached_ = Status(StatusCode::kUnavailable, "no store");
  GroupCommitStats retired_stats_;  // of the committers before this one
  std::unordered_map<WaitId, WaitDone> parked_;
  std::deque<PendingStep> pending_;
};

template <typename Outcome>
void CommitPipeline::KeepIfParked(const Result<Outcome>& outcome,
                                  std::function<void(Result<Outcome>)>& started,
                                  WaitDone& finished) {
  if (!outcome || !outcome->wait) return;
  auto failed = std::make_shared<std::atomic<bool>>(false);
  started = [started = std::move(started), failed](Result<Outcome> r) {
    if (!r && failed->exchange(true)) return;
    started(std::move(r));
  };
  parked_.emplace(*outcome->wait, [finished = std::move(finished),
                                   failed](const Result<FinishedWait>& r) {
    if (!r && failed->exchange(true)) return;
    finished(r);
  });
}

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_COMMIT_PIPELINE_H_
