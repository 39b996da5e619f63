#include "service/engine_service.h"

#include "common/log.h"

#include <boost/asio/post.hpp>
#include <string>

namespace leasehold {

namespace asio = boost::asio;
using M = ServiceMode;

EngineService::EngineService(asio::io_context& io, EngineOptions options,
                             ServiceOptions service_options, const Clock& clock)
    : io_(io),
      state_(M::kStandingBy),
      loader_(options, service_options, clock),
      pipeline_([this] { asio::post(io_, [this] { DrainAndComplete(); }); }),
      deadlines_(io, clock, [this] { ApplyDeadlines(nullptr); }),
      supervisor_(io, [this] { OnRecoveryAttempt(); }),
      engine_(loader_.Empty()) {}

EngineService::~EngineService() = default;

Result<std::unique_ptr<EngineService>> EngineService::Open(
    asio::io_context& io, std::unique_ptr<Store> plain, EngineOptions options,
    const Clock& clock, ServiceOptions service_options) {
  std::unique_ptr<EngineService> service(
      new EngineService(io, options, service_options, clock));
  WrittenStore store = service->loader_.Wrap(std::move(plain));
  auto engine = service->loader_.Load(*store.store);
  if (!engine) return std::unexpected(engine.error());
  {
    std::lock_guard lock(service->mu_);
    service->Install(std::move(store), std::move(*engine));
  }
  return service;
}

std::unique_ptr<EngineService> EngineService::OpenWithoutStore(
    asio::io_context& io, EngineOptions options, const Clock& clock, Status why,
    ServiceOptions service_options) {
  std::unique_ptr<EngineService> service(
      new EngineService(io, options, service_options, clock));
  Completions none;
  (void)service->pipeline_.Detach(none, std::move(why));
  service->SetLeaseDeadline(LeaseClock::time_point::min());
  return service;
}

Status EngineService::Attach(std::unique_ptr<Store> plain,
                             Duration session_grace) {
  std::uint64_t epoch;
  {
    std::lock_guard lock(mu_);
    if (!state_.Is(M::kStandingBy)) {
      return Status(StatusCode::kInternal,
                    "Attach: the service is not standing by (it has a store, "
                    "or is stopping)");
    }
    epoch = state_.epoch();
  }
  WrittenStore store = loader_.Wrap(std::move(plain));
  auto engine = loader_.Load(*store.store, session_grace);
  if (!engine) return engine.error();
  std::lock_guard lock(mu_);
  if (state_.epoch() != epoch) {
    return Status(StatusCode::kUnavailable,
                  "Attach: the service changed during the load");
  }
  Install(std::move(store), std::move(*engine));
  return Status::Ok();
}

void EngineService::Detach(Status why) {
  SetLeaseDeadline(LeaseClock::time_point::min());  // serves nothing now
  Completions ended;
  {
    std::lock_guard lock(mu_);
    if (state_.Is(M::kStopping)) return;  // Shutdown answers what is left
    state_.MoveTo(M::kStandingBy);
    supervisor_.Reset(nullptr);
    (void)pipeline_.Detach(ended, std::move(why));
    // A standby shows nothing of what it led: its state is the next
    // leader's to tell.
    (void)std::exchange(engine_, loader_.Empty());
    deadlines_.Forget();
    deadlines_.Arm(engine_.engine->NextDeadline());
  }
  RunCompletions(io_, std::move(ended));
}

void EngineService::Install(WrittenStore store, LoadedEngine engine) {
  supervisor_.Reset(std::move(store.last_durable));
  pipeline_.Attach(std::move(store.store));
  // Exchanged, not assigned: the old engine goes before the collector of
  // its events.
  (void)std::exchange(engine_, std::move(engine));
  loader_.ApplyNamespaces(*engine_.engine);
  state_.MoveTo(M::kServing);
  deadlines_.Forget();
  deadlines_.Arm(engine_.engine->NextDeadline());
}

void EngineService::AfterStep(Completion then, Completions& ready) {
  const bool healthy = pipeline_.AfterStep(engine_, std::move(then), ready);
  deadlines_.Arm(engine_.engine->NextDeadline());
  if (!healthy) OnStoreFailure();
}

void EngineService::DrainAndComplete() {
  Step([&](Completions& ready) {
    if (!pipeline_.Drain(ready)) OnStoreFailure();
  });
}

void EngineService::OnStoreFailure() {
  if (!state_.Is(M::kServing)) return;  // already failed, or not serving
  state_.MoveTo(supervisor_.recovers() ? M::kRecovering : M::kFailed);
  if (supervisor_.last_durable() != nullptr) {
    asio::post(io_, [this, last_durable = supervisor_.last_durable(),
                     epoch = state_.epoch()] {
      LoadOutageEngine(last_durable, epoch);
    });
  }
  if (supervisor_.recovers()) supervisor_.BeginRecovery(pipeline_.failure());
}

void EngineService::LoadOutageEngine(
    std::shared_ptr<MemoryStoreData> last_durable, std::uint64_t epoch) {
  auto engine = loader_.LoadForReads(std::move(last_durable));
  std::lock_guard lock(mu_);
  if (state_.epoch() != epoch) return;  // recovered, detached or stopped
  if (!engine) {
    log::Error("cannot load the last acknowledged state for reads",
               {{"error", engine.error().message()}});
    return;
  }
  loader_.ApplyNamespaces(**engine);
  supervisor_.ServeOutageReads(std::move(*engine));
  log::Info(
      "reads are answered from the last acknowledged state until the "
      "store recovers");
}

void EngineService::OnRecoveryAttempt() {
  Completions ended;
  std::shared_ptr<Store> failed;  // closed (and dropped) after the lock
  std::uint64_t epoch;
  {
    std::lock_guard lock(mu_);
    if (!state_.Is(M::kRecovering)) return;
    epoch = state_.epoch();
    if (pipeline_.attached()) {
      supervisor_.KeepFailed(pipeline_.Detach(ended, pipeline_.failure()));
    }
    failed = supervisor_.TakeFailed();
  }
  RunCompletions(io_, std::move(ended));
  auto reloaded = supervisor_.Reopen(failed, loader_);
  std::lock_guard lock(mu_);
  if (state_.epoch() != epoch) return;  // detached or stopped meanwhile
  if (!reloaded) {
    supervisor_.KeepFailed(std::move(failed));  // if it could not be closed
    supervisor_.RetryLater(reloaded.error());
    return;
  }
  // As a restart: the new engine holds what the store holds, sessions with
  // a fresh TTL; what the old one decided without the disk is gone.
  const std::string cause = pipeline_.failure().message();
  Install(std::move(reloaded->store), std::move(reloaded->engine));
  supervisor_.CountRecovery();
  log::Info("store recovered",
            {{"store", pipeline_.store()->Describe()}, {"after", cause}});
}

void EngineService::CancelWait(WaitId wait) {
  Step([&](Completions& ready) {
    engine_.engine->CancelWait(Now(), wait);
    AfterStep(nullptr, ready);
  });
}

void EngineService::ApplyDeadlines(std::function<void(const Status&)> done) {
  Step([&](Completions& ready) {
    deadlines_.Forget();
    engine_.engine->AdvanceTo(Now());
    AfterStep(done ? Completion(std::move(done)) : Completion(), ready);
  });
}

void EngineService::Shutdown() {
  backups_.Stop();  // and refuses the next
  std::promise<void> drained;
  Step([&](Completions& ready) {
    for (WaitId id : pipeline_.ParkedWaits()) {
      engine_.engine->CancelWait(Now(), id);
    }
    deadlines_.Stop();
    if (!state_.Is(M::kStopping)) state_.MoveTo(M::kStopping);
    supervisor_.StopAttempts();
    AfterStep([&drained](const Status&) { drained.set_value(); }, ready);
  });
  drained.get_future().wait();
}

void EngineService::Backup(std::string destination,
                           std::function<void(Status)> done) {
  std::shared_ptr<Store> store;
  Status refused;
  {
    std::lock_guard lock(mu_);
    if (Status failure = pipeline_.failure(); !failure.ok()) {
      refused = std::move(failure);  // failed, or standing by
    } else {
      // Everything acknowledged so far has been appended: the store's
      // copy, begun after this, holds it.
      store = pipeline_.store();
    }
  }
  if (!refused.ok()) return done(std::move(refused));
  backups_.Start(std::move(store), std::move(destination), std::move(done));
}

void EngineService::UseManualClock(ManualClock& clock) {
  std::lock_guard lock(mu_);
  deadlines_.UseManualClock(clock);
}

void EngineService::AdvanceClock(Duration by,
                                 std::function<void(Result<Time>)> done) {
  auto now = deadlines_.AdvanceManualClock(by);
  if (!now) return done(std::unexpected(now.error()));
  ApplyDeadlines([done = std::move(done), now = *now](const Status& st) {
    st.ok() ? done(now) : done(std::unexpected(st));
  });
}

void EngineService::EnableRecovery(Recovery recovery) {
  std::lock_guard lock(mu_);
  supervisor_.EnableRecovery(std::move(recovery));
}

void EngineService::SetNamespaceOptions(std::string ns,
                                        NamespaceOptions options) {
  std::lock_guard lock(mu_);
  engine_.engine->SetNamespaceOptions(ns, options);
  if (Engine* outage = supervisor_.outage_engine()) {
    outage->SetNamespaceOptions(ns, options);
  }
  loader_.SetNamespaceOptions(std::move(ns), options);
}

void EngineService::ReadStats(
    std::function<void(EngineStats, std::size_t, Time)> done) {
  EngineStats stats;
  std::size_t parked;
  Time now;
  {
    std::lock_guard lock(mu_);
    Engine* outage = supervisor_.outage_engine();
    stats = (outage != nullptr ? outage : engine_.engine.get())->Stats();
    parked = pipeline_.parked();
    now = Now();
  }
  done(std::move(stats), parked, now);
}

GroupCommitStats EngineService::CommitStats() const {
  std::lock_guard lock(mu_);
  return pipeline_.Stats();
}

Status EngineService::StoreFailure() const {
  std::lock_guard lock(mu_);
  return pipeline_.failure();
}

Status EngineService::Writable() const {
  if (Status lapsed = LeaseLapsed(); !lapsed.ok()) return lapsed;
  return StoreFailure();
}

bool EngineService::ServesOutageReads() const {
  std::lock_guard lock(mu_);
  return supervisor_.outage_engine() != nullptr;
}

std::uint64_t EngineService::Recoveries() const {
  std::lock_guard lock(mu_);
  return supervisor_.recoveries();
}

ServiceMode EngineService::Mode() const {
  std::lock_guard lock(mu_);
  return state_.mode();
}

}  // namespace leasehold
