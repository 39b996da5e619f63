// EngineService: the one write path. The engine behind one mutex,
// asynchronous and durable; the server, the store tests, the crash writer and
// store_bench all go through it.
//
// A command handed to Execute() runs at once on the caller's thread, under
// the service's mutex, at clock.Now(); its journal goes to the
// GroupCommitter, and the completion runs only once that journal — and
// everything submitted before it — is on disk. So the engine decides in one
// order, the disk sees the same order, and no reply, and no event, ever
// shows state that a crash could take back. A step with nothing to write
// whose predecessors are durable completes on the caller's thread, right
// after the mutex is released: no queue, no thread hand-off (an in-memory
// lock request costs one mutex, not three executor hops; see
// docs/benchmarks.md, "Profiles"). Other completions run on an I/O thread.
// Run() is Execute() for callers that may block (tests, tools).
//
// A lock request that must wait is parked in the engine as data; its
// completion is kept (CommitPipeline), keyed by WaitId, and runs when the
// engine decides the request (granted, timeout, cancel, deadlock). Expiries
// and timeouts are applied by ApplyDeadlines(): one timer (DeadlineTimer),
// set to the engine's NextDeadline(), calls it; with a manual clock
// (UseManualClock) there is no timer, and AdvanceClock() calls it each time
// it moves the clock.
//
// A store that fails (a full disk, an fsync error, a lost database
// connection) stays failed for the committer: the engine's memory is then
// ahead of the disk. With EnableRecovery(), the service recovers by itself,
// as a restart would, without one: it answers what was in flight
// (kUnavailable), and, retrying with backoff, closes the store
// (Store::Close, which discards what the failed batch left in the files),
// opens it again and loads a new engine from it. Meanwhile every command
// answers kUnavailable at once, never from the engine, which is ahead of the
// store (the failed batch, and what was changed since) and would show what
// the recovery takes back. With ServiceOptions::outage_reads, a read
// (Access::kRead) is answered instead from the state the store last
// acknowledged: the store is wrapped in a MirroredStore, and on a failure a
// second engine is loaded from its copy, as a restart would load it
// (sessions with a fresh ttl), to answer reads until the recovery; until it
// is loaded, reads answer kUnavailable too (StoreSupervisor).
//
// Among several nodes (src/cluster) the service of a standby holds no
// store: OpenWithoutStore(), or Detach() when a leader steps down. It then
// answers every command kUnavailable, and Attach() makes it serve once the
// node leads. A leader also sets a lease deadline: past it, on the
// monotonic clock, every command answers kUnavailable, whether or not the
// node has yet learned that another one took over.
//
// Its modes (serving, failed, recovering, standing by, stopping) and the
// moves between them are one table (service_state.h); the units that do
// its jobs each hold what their job needs, under the service's one mutex:
// CommitPipeline (steps, completions, parked waits), DeadlineTimer,
// StoreSupervisor (outage reads, recovery), EngineLoader (the engines it
// loads) and BackupRunner.
#ifndef LEASEHOLD_SERVICE_ENGINE_SERVICE_H_
#define LEASEHOLD_SERVICE_ENGINE_SERVICE_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/manual_clock.h"
#include "engine/engine.h"
#include "service/backup_runner.h"
#include "service/commit_pipeline.h"
#include "service/deadline_timer.h"
#include "service/engine_loader.h"
#include "service/lease_deadline.h"
#include "service/owned_event.h"
#include "service/service_state.h"
#include "service/store_supervisor.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace leasehold {

class EngineService {
 public:
  // Loads `store` into a new engine. `io` runs the timer and the
  // completions of steps that waited for the disk; `io` and `clock` must
  // outlive the service. Fails (kUnavailable) when the store cannot be read
  // or holds rows the engine refuses.
  static Result<std::unique_ptr<EngineService>> Open(
      boost::asio::io_context& io, std::unique_ptr<Store> store,
      EngineOptions options, const Clock& clock,
      ServiceOptions service_options = {});
  // A service with no store and an empty engine, answering every command
  // kUnavailable until Attach() and a lease deadline in the future: a
  // standby's. `why` is what StoreFailure() says meanwhile.
  static std::unique_ptr<EngineService> OpenWithoutStore(
      boost::asio::io_context& io, EngineOptions options, const Clock& clock,
      Status why, ServiceOptions service_options = {});
  ~EngineService();

  // Loads `store` into a new engine, its sessions with a fresh ttl plus
  // `session_grace`, and serves it: for a node that has just become the
  // leader. Only while standing by (kInternal otherwise); kUnavailable when
  // the store cannot be loaded (the service stays standing by). Blocks for
  // the load; not on an I/O thread.
  Status Attach(std::unique_ptr<Store> store, Duration session_grace);
  // Stands by: answers what is in flight and every parked request with
  // `why` (kUnavailable), closes the store and forgets the engine's state;
  // no recovery until Attach(). For a leader that steps down. Thread-safe.
  void Detach(Status why);

  using LeaseClock = LeaseDeadline::Clock;
  // From `deadline` on, every command answers kUnavailable (leadership
  // lapsed). time_point::max() (the default): no deadline. Thread-safe and
  // cheap (one atomic).
  void SetLeaseDeadline(LeaseClock::time_point deadline) {
    lease_.Set(deadline);
  }

  // Called with the events of each durable step, in order, under the
  // service's mutex (so it must not call back into the service). Set before
  // serving.
  void SetEventListener(EventListener listener) {
    pipeline_.SetEventListener(std::move(listener));
  }

  // What a command does to the engine. A kRead command only asks (the
  // engine's reads: a record, a listing, a lock's mode); while the store has
  // failed it runs on the engine loaded from the last acknowledged state,
  // and what it changes there (expiries it applies) is dropped.
  enum class Access { kWrite, kRead };

  // Runs command(engine, now) now, under the mutex; calls done(result) once
  // durable, or done(kUnavailable) if the store failed (for kRead: once the
  // engine of the last acknowledged state is loaded, with its answer). `done`
  // runs on this thread when nothing had to be written (and the nesting of
  // inline completions is shallow), else on an I/O thread; never under the
  // mutex. Past the lease deadline, kUnavailable for both: a node that cannot
  // vouch that it leads cannot vouch that its state is current.
  template <typename R>
  void Execute(std::function<R(Engine&, Time)> command,
               std::function<void(Result<R>)> done,
               Access access = Access::kWrite) {
    if (Status lapsed = LeaseLapsed(); !lapsed.ok()) {
      return done(std::unexpected(std::move(lapsed)));
    }
    Step([&](Completions& ready) {
      Engine* outage = supervisor_.outage_engine();
      if (access == Access::kRead && outage != nullptr) {
        ready.emplace_back(Deliver(std::move(done), command(*outage, Now())),
                           Status::Ok());
        supervisor_.ForgetOutageChanges();
        return;
      }
      AfterStep(Deliver(std::move(done), command(*engine_.engine, Now())),
                ready);
    });
  }

  // Execute() for a command that may park (an acquire of locks or
  // permits): `started` gets the outcome the engine decided at once, with
  // its wait id when parked, and a parked request's final answer then comes
  // to `finished`. Both run after durability, on a thread as for Execute().
  // A store failure reaches the caller once, to whichever comes first.
  template <typename Outcome>
  void ExecuteParkable(std::function<Result<Outcome>(Engine&, Time)> command,
                       std::function<void(Result<Outcome>)> started,
                       WaitDone finished) {
    if (Status lapsed = LeaseLapsed(); !lapsed.ok()) {
      return started(std::unexpected(std::move(lapsed)));
    }
    Step([&](Completions& ready) {
      Result<Outcome> outcome = command(*engine_.engine, Now());
      pipeline_.KeepIfParked(outcome, started, finished);
      AfterStep(Deliver(std::move(started), std::move(outcome)), ready);
    });
  }

  // Execute() for a caller that may block: runs command(engine, now) and
  // returns its result once durable, or kUnavailable if the store failed
  // (the command may then have taken effect in memory but was never
  // acknowledged). Someone must be running `io`, and this must not be
  // called from a completion or on an I/O thread, whose work the answer may
  // wait for. Thread-safe.
  template <typename F>
  Result<std::invoke_result_t<F&, Engine&, Time>> Run(
      F&& command, Access access = Access::kWrite) {
    using R = std::invoke_result_t<F&, Engine&, Time>;
    std::promise<Result<R>> answer;
    std::future<Result<R>> answered = answer.get_future();
    Execute<R>(
        std::forward<F>(command),
        [&answer](Result<R> r) { answer.set_value(std::move(r)); }, access);
    return answered.get();
  }

  // Ends a parked request with -2 (e.g. its client hung up).
  void CancelWait(WaitId wait);

  // Applies, as one step, everything the engine had due at or before
  // clock.Now(): session and lease expiries, wait timeouts, transaction
  // limits, the ends of lock-delays. `done` (may be empty) runs once that step
  // is durable and its events have gone to the listener, with OK or the store's
  // failure; on a thread as for Execute(). Thread-safe.
  void ApplyDeadlines(std::function<void(const Status&)> done);
  // Makes `clock`, the clock the service was opened with, move only by
  // AdvanceClock(): the service keeps no timer (it would wait on real
  // time for a deadline of the manual one). Call before serving; `clock`
  // must outlive the service.
  void UseManualClock(ManualClock& clock);
  // With a manual clock: moves it forward by `by`, then ApplyDeadlines();
  // `done` gets the new time once every deadline up to it is applied and
  // its events published. kBadRequest when the clock refuses the move
  // (ManualClock::Advance), kNotFound without a manual clock. Thread-safe.
  void AdvanceClock(Duration by, std::function<void(Result<Time>)> done);
  // The manual clock's time; nullopt without one. Thread-safe.
  std::optional<Time> ManualTime() const { return deadlines_.ManualNow(); }

  using StoreOpener = StoreSupervisor::StoreOpener;
  using Recovery = StoreSupervisor::Recovery;
  // Makes the service recover from a failed store by itself (see above).
  // Call before serving, at most once.
  void EnableRecovery(Recovery recovery);
  // How many times the service has recovered from a failed store.
  std::uint64_t Recoveries() const;

  // Sets a namespace's options in the engine, and in every engine a
  // recovery loads. Thread-safe.
  void SetNamespaceOptions(std::string ns, NamespaceOptions options);

  // Writes a consistent copy of the store's durable state to `destination`
  // (Store::Backup: an empty file, or none) on a thread of its own, while
  // commands go on; `done` gets OK or why not, on that thread. Every
  // command acknowledged before the call is in the copy. kUnavailable while
  // another backup runs, while the store has failed or the service stands
  // by or is stopping; kNotSupported from a store that has no copy of its
  // own to give. Thread-safe.
  void Backup(std::string destination, std::function<void(Status)> done);

  // Cancels every parked request (-2), stops a backup under way and waits
  // until all that was submitted is durable. Call before stopping the
  // io_context.
  void Shutdown();

  // Counted over the service's life, across recoveries.
  GroupCommitStats CommitStats() const;
  // OK while the store accepts writes; its failure once it did not, until
  // a recovery; while standing by, why.
  Status StoreFailure() const;
  // Whether reads are answered from the last acknowledged state now (the
  // store has failed and that state is loaded). Thread-safe.
  bool ServesOutageReads() const;
  // OK while commands are served: the lease deadline has not passed and
  // the store accepts writes; else why not.
  Status Writable() const;
  // The service's mode now. Thread-safe.
  ServiceMode Mode() const;
  // Engine statistics (during an outage, of the last acknowledged state once
  // it is loaded), the number of parked requests and the time, read under
  // the mutex; `done` runs on this thread after it is released.
  void ReadStats(std::function<void(EngineStats, std::size_t, Time)> done);

 private:
  // Standing by, with an empty engine and no store.
  EngineService(boost::asio::io_context& io, EngineOptions options,
                ServiceOptions service_options, const Clock& clock);

  Time Now() const { return loader_.clock().Now(); }

  // Runs body(ready) under mu_, then, released, the completions it made
  // ready: the shape of every step.
  template <typename Body>
  void Step(Body&& body) {
    Completions ready;
    {
      std::lock_guard lock(mu_);
      body(ready);
    }
    RunCompletions(io_, std::move(ready));
  }

  // Under mu_, after a command: the pipeline's part (journal, finished
  // waits, events), then the timer; a store found failed starts what a
  // failure starts. `then` runs once everything so far is durable.
  void AfterStep(Completion then, Completions& ready);
  // On an I/O thread, once steps are durable: the pipeline drains.
  void DrainAndComplete();
  // Under mu_, when a step finds the store failed: moves to kFailed or
  // kRecovering, once per failure, and starts loading the engine for
  // outage reads.
  void OnStoreFailure();
  // On an I/O thread: loads that engine from `last_durable` and, unless the
  // service moved meanwhile (`epoch`), serves reads from it.
  void LoadOutageEngine(std::shared_ptr<MemoryStoreData> last_durable,
                        std::uint64_t epoch);
  // On an I/O thread, when a recovery attempt is due: detaches the failed
  // store if still attached, closes it, opens it again and loads a new
  // engine; or, when any of that fails, arms the next attempt.
  void OnRecoveryAttempt();
  // Under mu_: serves `engine`, loaded from `store`.
  void Install(WrittenStore store, LoadedEngine engine);
  Status LeaseLapsed() const { return lease_.Lapsed(); }

  boost::asio::io_context& io_;
  mutable std::mutex mu_;  // guards everything below but lease_
  ServiceState state_;
  EngineLoader loader_;
  CommitPipeline pipeline_;
  DeadlineTimer deadlines_;
  StoreSupervisor supervisor_;
  LoadedEngine engine_;  // an empty one while standing by
  LeaseDeadline lease_;
  // Last, so that a backup under way is stopped and joined before the rest
  // is destroyed.
  BackupRunner backups_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_ENGINE_SERVICE_H_
