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
// completion is kept here, keyed by WaitId, and runs when the engine
// decides the request (granted, timeout, cancel, deadlock). Expiries and
// timeouts are applied by ApplyDeadlines(): one timer, set to the engine's
// NextDeadline(), calls it; with a manual clock (UseManualClock) there is
// no timer, and AdvanceClock() calls it each time it moves the clock.
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
// is loaded, reads answer kUnavailable too.
//
// Among several nodes (src/cluster) the service of a standby holds no
// store: OpenWithoutStore(), or Detach() when a leader steps down. It then
// answers every command kUnavailable, and Attach() makes it serve once the
// node leads. A leader also sets a lease deadline: past it, on the
// monotonic clock, every command answers kUnavailable, whether or not the
// node has yet learned that another one took over.
#ifndef LEASEHOLD_SERVICE_ENGINE_SERVICE_H_
#define LEASEHOLD_SERVICE_ENGINE_SERVICE_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/manual_clock.h"
#include "leasehold/clock.h"
#include "leasehold/engine.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace leasehold {

// A copy of an engine Event that owns its strings.
struct OwnedEvent {
  EventType type = EventType::kSessionOpened;
  Time at;
  SessionId session = 0;
  std::string session_name;
  TransactionId transaction = 0;
  std::string ns, principal, resource;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;
  std::uint32_t count = 0;
  std::uint32_t limit = 0;  // semaphores
  Fence fence = 0;
  std::optional<Time> until;
  std::optional<DeadlockReport> deadlock;
  std::string holder;
  std::uint64_t version = 0;
  std::string key;        // outbox: the message's deduplication key
  MessageId message = 0;  // outbox
};

// An AcquireRequest whose names live as long as it does.
struct OwnedLockRequest {
  SessionId session = 0;
  std::string ns;
  std::string principal = "public";
  std::string resource;
  LockMode mode = LockMode::kExclusive;
  LockOwner owner = LockOwner::kTransaction;
  std::chrono::milliseconds timeout = kWaitForever;
};

struct MemoryStoreData;

struct ServiceOptions {
  // Answer reads during a store outage from the last acknowledged state
  // (see above). Costs a second copy of the stored rows in memory and a
  // slower load (docs/storage.md, "Reads during an outage").
  bool outage_reads = false;
};

class EngineService {
 public:
  using EventListener = std::function<void(const std::vector<OwnedEvent>&)>;
  using WaitDone = std::function<void(const Result<FinishedWait>&)>;

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
  // leader. Only while detached (kInternal otherwise); kUnavailable when the
  // store cannot be loaded (the service stays detached). Blocks for the
  // load; not on an I/O thread.
  Status Attach(std::unique_ptr<Store> store, Duration session_grace);
  // Stops serving: answers what is in flight and every parked request with
  // `why` (kUnavailable), closes the store and forgets the engine's state;
  // no recovery until Attach(). For a leader that steps down. Thread-safe.
  void Detach(Status why);

  using LeaseClock = std::chrono::steady_clock;
  // From `deadline` on, every command answers kUnavailable (leadership
  // lapsed). time_point::max() (the default): no deadline. Thread-safe and
  // cheap (one atomic).
  void SetLeaseDeadline(LeaseClock::time_point deadline);

  // Called with the events of each durable step, in order, under the
  // service's mutex (so it must not call back into the service). Set before
  // serving.
  void SetEventListener(EventListener listener) {
    listener_ = std::move(listener);
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
      if (access == Access::kRead && outage_engine_ != nullptr) {
        ready.emplace_back(
            Deliver(std::move(done), command(*outage_engine_, clock_.Now())),
            Status::Ok());
        ForgetOutageChanges();
        return;
      }
      AfterStep(Deliver(std::move(done), command(*engine_, clock_.Now())),
                ready);
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

  // An acquire. `started` is called once the engine has decided what to do
  // at once: with the outcome (and its wait id when parked); a parked
  // request's final answer then comes to `finished`. Both run after
  // durability, on a thread as for Execute().
  void Acquire(OwnedLockRequest request,
               std::function<void(Result<AcquireOutcome>)> started,
               WaitDone finished);

  // An acquire-all, as Acquire: `started` with what the engine decided at
  // once; when a lock waits, the call's final answer comes to `finished`
  // (FinishedWait::all). The request's names need only last for the call.
  void AcquireAll(const AcquireAllRequest& request,
                  std::function<void(Result<AcquireAllOutcome>)> started,
                  WaitDone finished);

  // A semaphore's acquire, as Acquire. The request's names need only last
  // for the call.
  void AcquireSemaphore(const SemaphoreRequest& request,
                        std::function<void(Result<AcquireOutcome>)> started,
                        WaitDone finished);

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
  std::optional<Time> ManualTime() const;

  // Opens the store again, for a recovery: a new file handle or connection
  // to the same data. Runs on an I/O thread, never under the mutex.
  using StoreOpener = std::function<Result<std::unique_ptr<Store>>()>;
  struct Recovery {
    StoreOpener reopen;
    // The first attempt comes this long after the failure; each failed one
    // doubles the wait, up to max_retry.
    std::chrono::milliseconds first_retry{100};
    std::chrono::milliseconds max_retry{5000};
    // Called once per failure, under the service's mutex (so it must not
    // call the service); may be empty.
    std::function<void()> on_failure = {};
  };
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
  // another backup runs, while the store has failed or the service is
  // detached or stopping; kNotSupported from a store that has no copy of
  // its own to give. Thread-safe.
  void Backup(std::string destination, std::function<void(Status)> done);

  // Cancels every parked request (-2), stops a backup under way and waits
  // until all that was submitted is durable. Call before stopping the
  // io_context.
  void Shutdown();

  // Counted over the service's life, across recoveries.
  GroupCommitStats CommitStats() const;
  // OK while the store accepts writes; its failure once it did not, until
  // a recovery.
  Status StoreFailure() const;
  // Whether reads are answered from the last acknowledged state now (the
  // store has failed and that state is loaded). Thread-safe.
  bool ServesOutageReads() const;
  // OK while commands are served: the lease deadline has not passed and
  // the store accepts writes; else why not.
  Status Writable() const;
  // Engine statistics (during an outage, of the last acknowledged state once
  // it is loaded), the number of parked requests and the time, read under
  // the mutex; `done` runs on this thread after it is released.
  void ReadStats(std::function<void(EngineStats, std::size_t, Time)> done);

 private:
  class Sink;
  // A store to write through, and its copy of what it acknowledged (null
  // without outage reads).
  struct WrittenStore {
    std::unique_ptr<Store> store;
    std::shared_ptr<MemoryStoreData> last_durable;
  };
  // `store` itself, or with outage reads a MirroredStore over it.
  static WrittenStore Wrap(std::unique_ptr<Store> store,
                           const ServiceOptions& options);

  EngineService(boost::asio::io_context& io, WrittenStore store,
                std::unique_ptr<Engine> engine, EngineOptions options,
                ServiceOptions service_options, const Clock& clock);

  // Under mu_: for a parked outcome, keeps `finished` by its wait id and
  // makes a store failure reach the caller once.
  template <typename Outcome>
  void KeepIfParked(const Result<Outcome>& outcome,
                    std::function<void(Result<Outcome>)>& started,
                    WaitDone& finished);

  using Completion = std::move_only_function<void(const Status&)>;
  // Completions to run, with their status, once the mutex is released.
  using Completions = std::vector<std::pair<Completion, Status>>;

  // The completion that hands `value` to `done` once its step is durable,
  // or the store's failure instead.
  template <typename Done, typename T>
  static Completion Deliver(Done done, T value) {
    return [done = std::move(done),
            value = std::move(value)](const Status& st) mutable {
      if (st.ok()) {
        done(std::move(value));
      } else {
        done(std::unexpected(st));
      }
    };
  }

  // Runs body(ready) under mu_, then, released, the completions it made
  // ready: the shape of every step.
  template <typename Body>
  void Step(Body&& body) {
    Completions ready;
    {
      std::lock_guard lock(mu_);
      body(ready);
    }
    Complete(std::move(ready));
  }

  // Under mu_, after a command: journal, finished waits, events, timer.
  // `then` runs once everything so far is durable; steps already durable
  // are moved to `ready`.
  void AfterStep(Completion then, Completions& ready);
  // Under mu_: moves the completions of the steps now durable, in step
  // order, to `ready`, and publishes their events.
  void Drain(Completions& ready);
  // Not under mu_: runs `ready` here, or posts it to the io_context when
  // this thread is already deep in inline completions (a completion that
  // starts another step would otherwise recurse without bound).
  void Complete(Completions ready);
  // On an I/O thread: Drain, then Complete.
  void DrainAndComplete();

  struct PendingStep {
    GroupCommitter::Seq seq;
    std::vector<Completion> completions;
    std::vector<OwnedEvent> events;
  };
  void ArmTimer();  // under mu_

  // Recovery from a failed store (EnableRecovery). Under mu_: arms the
  // first attempt, once per failure.
  void StartRecovery();
  // Under mu_: answers the steps already durable, then every other pending
  // step and parked request with `why`, then ends the committer; returns
  // the store, which nothing writes to any more.
  std::shared_ptr<Store> DetachStore(Completions& ready, Status why);
  // On an I/O thread: detaches the failed store if still attached, closes
  // it (Store::Close), opens it again and loads a new engine; or, when any
  // of that fails, arms the next attempt.
  void OnRecoveryTimer();
  // Under mu_: makes `store` and `engine` (loaded from it) the service's.
  void Install(WrittenStore store, std::unique_ptr<Engine> engine,
               std::unique_ptr<Sink> sink);
  // Under mu_, once per failure: loads, on an I/O thread, the engine that
  // answers reads until the recovery (outage_engine_).
  void StartOutageReads();
  // On an I/O thread: loads that engine from `last_durable` and, unless the
  // service was recovered, detached or attached meanwhile (`generation`),
  // serves reads from it.
  void LoadOutageEngine(std::shared_ptr<MemoryStoreData> last_durable,
                        std::uint64_t generation);
  // Under mu_, after a read on outage_engine_: drops what it changed.
  void ForgetOutageChanges();
  // OK, or why the lease deadline has passed.
  Status LeaseLapsed() const;

  boost::asio::io_context& io_;
  mutable std::mutex mu_;  // guards everything below
  boost::asio::steady_timer timer_;
  // The store's copy of what it acknowledged (MirroredStore::mirror); null
  // while detached, and without outage reads.
  std::shared_ptr<MemoryStoreData> last_durable_;
  // Null while detached. Shared with a backup under way, which may outlive
  // its place here (it ends at its next step once the store is closed).
  std::shared_ptr<Store> store_;
  // A failed store whose Close() has not yet succeeded, between recovery
  // attempts: it is not opened again before.
  std::shared_ptr<Store> failed_store_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<Engine> engine_;
  // While the store has failed: an engine loaded from last_durable_, which
  // answers reads; null otherwise, and until it is loaded.
  std::unique_ptr<Engine> outage_engine_;
  bool outage_reads_started_ = false;  // for this failure
  const EngineOptions options_;  // without the sink: each engine has its own
  const ServiceOptions service_options_;
  const Clock& clock_;
  std::unique_ptr<GroupCommitter> committer_;  // null while detached
  // Why there is no store, while detached.
  Status detached_;
  GroupCommitStats retired_stats_;  // of the committers before this one
  std::vector<std::pair<std::string, NamespaceOptions>> namespaces_;
  std::optional<Recovery> recovery_;
  boost::asio::steady_timer recovery_timer_;
  bool recovery_armed_ = false;
  std::chrono::milliseconds next_retry_{0};
  std::uint64_t recoveries_ = 0;
  // Detached by Detach() (a standby), not by a failure: no recovery.
  bool standing_by_ = false;
  // Counts Attach() and Detach(): a recovery started before one of them
  // must not install what it loaded.
  std::uint64_t generation_ = 0;
  std::atomic<LeaseClock::rep> lease_deadline_{
      LeaseClock::time_point::max().time_since_epoch().count()};
  bool stopping_ = false;
  EventListener listener_;
  std::unordered_map<WaitId, WaitDone> parked_;
  std::deque<PendingStep> pending_;
  std::optional<Time> timer_at_;
  // Set once, before serving: no timer (UseManualClock).
  ManualClock* manual_clock_ = nullptr;
  bool backing_up_ = false;
  // The backup's thread; last, so that it is stopped and joined before the
  // rest is destroyed.
  std::jthread backup_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_ENGINE_SERVICE_H_
