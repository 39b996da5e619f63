// DurableEngine: an Engine that many threads may use, whose answers are
// durable. It pairs the engine (behind one mutex: the engine itself is
// single-threaded) with a Store and a GroupCommitter:
//
//   lock; run the command at clock.Now(); queue its journal; unlock;
//   wait until that journal (and everything queued before it) is durable.
//
// So the engine decides in one order, the disk sees the same order, and no
// answer shows state that a crash could take back: even a command that
// wrote nothing waits for the writes queued before it, whose effects it may
// have observed.
#ifndef LEASEHOLD_STORE_DURABLE_ENGINE_H_
#define LEASEHOLD_STORE_DURABLE_ENGINE_H_

#include <memory>
#include <mutex>
#include <type_traits>

#include "leasehold/clock.h"
#include "leasehold/engine.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace leasehold {

class DurableEngine {
 public:
  // Loads `store` into a new engine made with `options`. `clock` must
  // outlive the result. Fails when the store cannot be read or holds rows
  // the engine refuses.
  static Result<std::unique_ptr<DurableEngine>> Open(
      std::unique_ptr<Store> store, EngineOptions options, const Clock& clock);

  // Runs command(engine, now) under the engine lock and returns its result
  // once durable. If the store failed, returns kUnavailable instead: the
  // command may have taken effect in memory but was never acknowledged.
  // Thread-safe.
  template <typename F>
  Result<std::invoke_result_t<F, Engine&, Time>> Run(F&& command) {
    GroupCommitter::Seq seq;
    std::optional<std::invoke_result_t<F, Engine&, Time>> result;
    {
      std::lock_guard lock(mu_);
      result.emplace(command(*engine_, clock_.Now()));
      seq = engine_->HasJournal() ? committer_.Submit(engine_->TakeJournal())
                                  : committer_.last_submitted();
    }
    if (Status st = committer_.Wait(seq); !st.ok()) {
      return std::unexpected(st);
    }
    return std::move(*result);
  }

  GroupCommitStats CommitStats() const { return committer_.Stats(); }
  const Store& store() const { return *store_; }

 private:
  DurableEngine(std::unique_ptr<Store> store, std::unique_ptr<Engine> engine,
                const Clock& clock)
      : store_(std::move(store)),
        engine_(std::move(engine)),
        clock_(clock),
        committer_(store_.get()) {}

  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  const Clock& clock_;
  std::mutex mu_;
  GroupCommitter committer_;  // last: stops before the store goes
};

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_DURABLE_ENGINE_H_
