// EngineService: the engine behind one strand, asynchronous and durable.
//
// The server's I/O threads never touch the engine. They hand a command to
// Execute(); it runs on the engine's strand at clock.Now(), its journal goes
// to the GroupCommitter, and the completion runs only once that journal —
// and everything submitted before it — is on disk. So no reply, and no
// event, ever shows state that a crash could take back.
//
// A lock request that must wait is parked in the engine as data; its
// completion is kept here, keyed by WaitId, and runs when the engine
// decides the request (granted, timeout, cancel, deadlock). One timer,
// set to the engine's NextDeadline(), drives expiries and timeouts.
#ifndef LEASEHOLD_SERVER_ENGINE_SERVICE_H_
#define LEASEHOLD_SERVER_ENGINE_SERVICE_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "leasehold/clock.h"
#include "leasehold/engine.h"
#include "store/group_commit.h"
#include "store/store.h"

namespace leasehold::server {

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

class EngineService {
 public:
  using EventListener = std::function<void(const std::vector<OwnedEvent>&)>;
  using WaitDone = std::function<void(const Result<FinishedWait>&)>;

  // Loads `store` into a new engine. `io` runs the strand and the timer;
  // `clock` must outlive the service.
  static Result<std::unique_ptr<EngineService>> Open(
      boost::asio::io_context& io, std::unique_ptr<Store> store,
      EngineOptions options, const Clock& clock);
  ~EngineService();

  // Called with the events of each durable step, in order, on an I/O thread.
  // Set before serving.
  void SetEventListener(EventListener listener) {
    listener_ = std::move(listener);
  }

  // Runs command(engine, now) on the strand; calls done(result) on an I/O
  // thread once durable, or done(kUnavailable) if the store failed.
  template <typename R>
  void Execute(std::function<R(Engine&, Time)> command,
               std::function<void(Result<R>)> done) {
    boost::asio::post(strand_, [this, command = std::move(command),
                                done = std::move(done)]() mutable {
      auto result = std::make_shared<R>(command(*engine_, clock_.Now()));
      AfterStep([done = std::move(done), result](const Status& st) {
        if (st.ok()) {
          done(std::move(*result));
        } else {
          done(std::unexpected(st));
        }
      });
    });
  }

  // An acquire. `started` is called once the engine has decided what to do
  // at once: with the outcome (and its wait id when parked); a parked
  // request's final answer then comes to `finished`. Both run on I/O
  // threads, after durability.
  void Acquire(OwnedLockRequest request,
               std::function<void(Result<AcquireOutcome>)> started,
               WaitDone finished);

  // Ends a parked request with -2 (e.g. its client hung up).
  void CancelWait(WaitId wait);

  // Cancels every parked request (-2) and waits until all that was
  // submitted is durable. Call before stopping the io_context.
  void Shutdown();

  GroupCommitStats CommitStats() const { return committer_.Stats(); }
  // OK while the store accepts writes; its failure once it did not.
  Status StoreFailure() const { return committer_.failure(); }
  // Engine statistics, read on the strand.
  // Engine statistics, the number of parked requests and the time, read on
  // the strand; `done` runs there too, so it must be quick.
  void ReadStats(std::function<void(EngineStats, std::size_t, Time)> done);

 private:
  class Sink;
  EngineService(boost::asio::io_context& io, std::unique_ptr<Store> store,
                std::unique_ptr<Engine> engine, const Clock& clock);

  // On the strand, after a command: journal, finished waits, events, timer.
  // `then` runs on an I/O thread once everything so far is durable.
  void AfterStep(std::function<void(const Status&)> then);
  // On the strand: completes, in step order, the steps now durable.
  void Drain();

  struct PendingStep {
    GroupCommitter::Seq seq;
    std::vector<std::function<void(const Status&)>> completions;
    std::vector<OwnedEvent> events;
  };
  void ArmTimer();
  void OnTimer();

  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<Engine> engine_;
  const Clock& clock_;
  GroupCommitter committer_;
  EventListener listener_;
  std::unordered_map<WaitId, WaitDone> parked_;  // strand only
  std::deque<PendingStep> pending_;              // strand only
  std::optional<Time> timer_at_;                 // strand only
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_ENGINE_SERVICE_H_
