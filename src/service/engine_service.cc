#include "service/engine_service.h"

#include "common/log.h"
#include "store/memory/memory_store.h"
#include "store/mirrored_store.h"
#include "store/restore.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <future>

namespace leasehold {

namespace asio = boost::asio;

// Copies each engine event (its views die with the call) for publication
// once the step that made it is durable.
class EngineService::Sink final : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    OwnedEvent o;
    o.type = e.type;
    o.at = e.at;
    o.session = e.session;
    o.session_name = e.session_name;
    o.transaction = e.transaction;
    o.ns = e.ns;
    o.principal = e.principal;
    o.resource = e.resource;
    o.owner = e.owner;
    o.mode = e.mode;
    o.count = e.count;
    o.limit = e.limit;
    o.fence = e.fence;
    o.until = e.until;
    if (e.deadlock != nullptr) o.deadlock = *e.deadlock;
    o.holder = e.holder;
    o.version = e.version;
    o.key = e.key;
    o.message = e.message;
    events.push_back(std::move(o));
  }
  std::vector<OwnedEvent> events;
};

namespace {

// A new engine holding everything `store` holds, its events going to
// `sink` (restoring announces nothing).
template <typename Sink>
Result<std::unique_ptr<Engine>> LoadEngine(
    Store& store, EngineOptions options, Sink& sink, const Clock& clock,
    Duration session_grace = Duration::zero()) {
  options.events = &sink;
  auto engine = RestoreEngine(store, options, clock, session_grace);
  sink.events.clear();
  return engine;
}

}  // namespace

EngineService::WrittenStore EngineService::Wrap(std::unique_ptr<Store> store,
                                                const ServiceOptions& options) {
  if (!options.outage_reads) return {std::move(store), nullptr};
  auto mirrored = std::make_unique<MirroredStore>(std::move(store));
  auto last_durable = mirrored->mirror();
  return {std::move(mirrored), std::move(last_durable)};
}

Result<std::unique_ptr<EngineService>> EngineService::Open(
    asio::io_context& io, std::unique_ptr<Store> plain, EngineOptions options,
    const Clock& clock, ServiceOptions service_options) {
  WrittenStore store = Wrap(std::move(plain), service_options);
  auto sink = std::make_unique<Sink>();
  auto engine = LoadEngine(*store.store, options, *sink, clock);
  if (!engine) return std::unexpected(engine.error());
  std::unique_ptr<EngineService> service(
      new EngineService(io, std::move(store), std::move(*engine), options,
                        service_options, clock));
  service->sink_ = std::move(sink);
  {
    std::lock_guard lock(service->mu_);
    service->ArmTimer();
  }
  return service;
}

std::unique_ptr<EngineService> EngineService::OpenWithoutStore(
    asio::io_context& io, EngineOptions options, const Clock& clock, Status why,
    ServiceOptions service_options) {
  auto sink = std::make_unique<Sink>();
  EngineOptions with_sink = options;
  with_sink.events = sink.get();
  std::unique_ptr<EngineService> service(
      new EngineService(io, {}, std::make_unique<Engine>(with_sink), options,
                        service_options, clock));
  service->sink_ = std::move(sink);
  service->detached_ = std::move(why);
  service->standing_by_ = true;
  service->SetLeaseDeadline(LeaseClock::time_point::min());
  return service;
}

EngineService::EngineService(asio::io_context& io, WrittenStore store,
                             std::unique_ptr<Engine> engine,
                             EngineOptions options,
                             ServiceOptions service_options, const Clock& clock)
    : io_(io),
      timer_(io),
      last_durable_(std::move(store.last_durable)),
      store_(std::move(store.store)),
      engine_(std::move(engine)),
      options_(options),
      service_options_(service_options),
      clock_(clock),
      committer_(store_ ? std::make_unique<GroupCommitter>(store_.get())
                        : nullptr),
      recovery_timer_(io) {}

void EngineService::SetLeaseDeadline(LeaseClock::time_point deadline) {
  lease_deadline_.store(deadline.time_since_epoch().count(),
                        std::memory_order_relaxed);
}

Status EngineService::LeaseLapsed() const {
  const LeaseClock::rep deadline =
      lease_deadline_.load(std::memory_order_relaxed);
  if (LeaseClock::now().time_since_epoch().count() < deadline) {
    return Status::Ok();
  }
  return Status(StatusCode::kUnavailable,
                "this node does not lead now (it stands by, or could not "
                "renew its lease in time): GET /v1/cluster names the leader");
}

Status EngineService::Attach(std::unique_ptr<Store> plain,
                             Duration session_grace) {
  std::uint64_t generation;
  {
    std::lock_guard lock(mu_);
    if (committer_ != nullptr || stopping_) {
      return Status(StatusCode::kInternal,
                    "Attach: the service already has a store or is stopping");
    }
    generation = generation_;
  }
  WrittenStore store = Wrap(std::move(plain), service_options_);
  auto sink = std::make_unique<Sink>();
  auto engine =
      LoadEngine(*store.store, options_, *sink, clock_, session_grace);
  if (!engine) return engine.error();
  std::lock_guard lock(mu_);
  if (generation != generation_ || committer_ != nullptr || stopping_) {
    return Status(StatusCode::kUnavailable,
                  "Attach: the service changed during the load");
  }
  Install(std::move(store), std::move(*engine), std::move(sink));
  standing_by_ = false;
  return Status::Ok();
}

void EngineService::Detach(Status why) {
  SetLeaseDeadline(LeaseClock::time_point::min());  // serves nothing now
  Completions ended;
  {
    std::lock_guard lock(mu_);
    ++generation_;
    standing_by_ = true;
    recovery_armed_ = false;
    recovery_timer_.cancel();
    if (committer_ != nullptr) DetachStore(ended, why);
    failed_store_.reset();
    last_durable_.reset();
    outage_engine_.reset();
    detached_ = std::move(why);
    // A standby shows nothing of what it led: its state is the next
    // leader's to tell.
    auto sink = std::make_unique<Sink>();
    EngineOptions with_sink = options_;
    with_sink.events = sink.get();
    engine_ = std::make_unique<Engine>(with_sink);
    sink_ = std::move(sink);
    timer_at_.reset();
    ArmTimer();
  }
  Complete(std::move(ended));
}

EngineService::~EngineService() = default;

GroupCommitStats EngineService::CommitStats() const {
  std::lock_guard lock(mu_);
  GroupCommitStats total = retired_stats_;
  if (committer_) total.Add(committer_->Stats());
  return total;
}

Status EngineService::Writable() const {
  if (Status lapsed = LeaseLapsed(); !lapsed.ok()) return lapsed;
  return StoreFailure();
}

Status EngineService::StoreFailure() const {
  std::lock_guard lock(mu_);
  return committer_ ? committer_->failure() : detached_;
}

bool EngineService::ServesOutageReads() const {
  std::lock_guard lock(mu_);
  return outage_engine_ != nullptr;
}

std::uint64_t EngineService::Recoveries() const {
  std::lock_guard lock(mu_);
  return recoveries_;
}

void EngineService::SetNamespaceOptions(std::string ns,
                                        NamespaceOptions options) {
  std::lock_guard lock(mu_);
  engine_->SetNamespaceOptions(ns, options);
  if (outage_engine_) outage_engine_->SetNamespaceOptions(ns, options);
  std::erase_if(namespaces_,
                [&](const auto& kept) { return kept.first == ns; });
  namespaces_.emplace_back(std::move(ns), options);
}

void EngineService::EnableRecovery(Recovery recovery) {
  std::lock_guard lock(mu_);
  recovery_ = std::move(recovery);
}

template <typename Outcome>
void EngineService::KeepIfParked(const Result<Outcome>& outcome,
                                 std::function<void(Result<Outcome>)>& started,
                                 WaitDone& finished) {
  if (!outcome || !outcome->wait) return;
  // A parked request is answered once. If the store fails, both of its
  // steps fail, possibly on two threads in either order: only the first
  // failure is passed on.
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

void EngineService::Acquire(OwnedLockRequest request,
                            std::function<void(Result<AcquireOutcome>)> started,
                            WaitDone finished) {
  if (Status lapsed = LeaseLapsed(); !lapsed.ok()) {
    return started(std::unexpected(std::move(lapsed)));
  }
  Step([&](Completions& ready) {
    const AcquireRequest req{
        request.session,
        LockKey{request.ns, request.principal, request.resource}, request.mode,
        request.owner, request.timeout};
    Result<AcquireOutcome> outcome = engine_->Acquire(clock_.Now(), req);
    KeepIfParked(outcome, started, finished);
    AfterStep(Deliver(std::move(started), std::move(outcome)), ready);
  });
}

void EngineService::AcquireAll(
    const AcquireAllRequest& request,
    std::function<void(Result<AcquireAllOutcome>)> started, WaitDone finished) {
  if (Status lapsed = LeaseLapsed(); !lapsed.ok()) {
    return started(std::unexpected(std::move(lapsed)));
  }
  Step([&](Completions& ready) {
    Result<AcquireAllOutcome> outcome =
        engine_->AcquireAll(clock_.Now(), request);
    KeepIfParked(outcome, started, finished);
    AfterStep(Deliver(std::move(started), std::move(outcome)), ready);
  });
}

void EngineService::AcquireSemaphore(
    const SemaphoreRequest& request,
    std::function<void(Result<AcquireOutcome>)> started, WaitDone finished) {
  if (Status lapsed = LeaseLapsed(); !lapsed.ok()) {
    return started(std::unexpected(std::move(lapsed)));
  }
  Step([&](Completions& ready) {
    Result<AcquireOutcome> outcome =
        engine_->AcquireSemaphore(clock_.Now(), request);
    KeepIfParked(outcome, started, finished);
    AfterStep(Deliver(std::move(started), std::move(outcome)), ready);
  });
}

void EngineService::CancelWait(WaitId wait) {
  Step([&](Completions& ready) {
    engine_->CancelWait(clock_.Now(), wait);
    AfterStep(nullptr, ready);
  });
}

void EngineService::ReadStats(
    std::function<void(EngineStats, std::size_t, Time)> done) {
  EngineStats stats;
  std::size_t parked;
  Time now;
  {
    std::lock_guard lock(mu_);
    stats = (outage_engine_ ? outage_engine_ : engine_)->Stats();
    parked = parked_.size();
    now = clock_.Now();
  }
  done(std::move(stats), parked, now);
}

void EngineService::Shutdown() {
  std::promise<void> drained;
  Step([&](Completions& ready) {
    std::vector<WaitId> waits;
    for (const auto& [id, done] : parked_) waits.push_back(id);
    for (WaitId id : waits) engine_->CancelWait(clock_.Now(), id);
    timer_.cancel();
    stopping_ = true;  // no recovery from here on
    recovery_timer_.cancel();
    AfterStep([&drained](const Status&) { drained.set_value(); }, ready);
  });
  drained.get_future().wait();
  std::jthread backup;
  {
    std::lock_guard lock(mu_);
    backup = std::move(backup_);
  }
  if (backup.joinable()) {
    backup.request_stop();
    backup.join();
  }
}

void EngineService::Backup(std::string destination,
                           std::function<void(Status)> done) {
  std::jthread finished;  // the previous backup's thread, joined unlocked
  Status refused;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      refused = Status(StatusCode::kUnavailable, "the server is stopping");
    } else if (backing_up_) {
      refused = Status(StatusCode::kUnavailable,
                       "a backup is already under way; try again once it "
                       "has ended");
    } else if (committer_ == nullptr) {
      refused = !detached_.ok() ? detached_
                                : Status(StatusCode::kUnavailable,
                                         "the service has no store now");
    } else if (Status failed = committer_->failure(); !failed.ok()) {
      refused = std::move(failed);
    }
    if (refused.ok()) {
      backing_up_ = true;
      finished = std::move(backup_);
      // Everything acknowledged so far has been appended: the store's copy,
      // begun after this, holds it.
      backup_ = std::jthread([this, store = store_,
                              destination = std::move(destination),
                              done = std::move(done)](std::stop_token stop) {
        Status result = store->Backup(destination, stop);
        {
          std::lock_guard ended(mu_);
          backing_up_ = false;
        }
        done(std::move(result));
      });
    }
  }
  if (!refused.ok()) done(std::move(refused));
}

void EngineService::AfterStep(Completion then, Completions& ready) {
  PendingStep step;
  // Detached (between a failure and its recovery): every step fails at
  // once, one that only read too. The engine is then ahead of the store
  // (the failed batch, and whatever steps changed since), and a read would
  // show what the recovery takes back.
  if (committer_ == nullptr) {
    if (engine_->HasJournal()) (void)engine_->TakeJournal();
  } else {
    step.seq = engine_->HasJournal()
                   ? committer_->Submit(engine_->TakeJournal())
                   : committer_->last_submitted();
  }
  for (FinishedWait& f : engine_->TakeFinishedWaits()) {
    auto it = parked_.find(f.wait);
    if (it == parked_.end()) continue;
    step.completions.push_back(Deliver(std::move(it->second), std::move(f)));
    parked_.erase(it);
  }
  if (then) step.completions.push_back(std::move(then));
  step.events = std::move(sink_->events);
  sink_->events.clear();
  ArmTimer();
  if (committer_ == nullptr) {
    for (auto& done : step.completions) {
      ready.emplace_back(std::move(done), detached_);
    }
    return;
  }
  const GroupCommitter::Seq seq = step.seq;
  pending_.push_back(std::move(step));
  if (committer_->durable_seq() >= seq) {
    Drain(ready);  // nothing to wait for: answer on this thread
    return;
  }
  committer_->OnDurable(seq, [this](const Status&) {
    asio::post(io_, [this] { DrainAndComplete(); });
  });
}

void EngineService::Drain(Completions& ready) {
  if (committer_ == nullptr) return;  // detached: nothing is pending
  const GroupCommitter::Seq durable = committer_->durable_seq();
  const Status failure = committer_->failure();
  while (!pending_.empty() &&
         (pending_.front().seq <= durable || !failure.ok())) {
    PendingStep step = std::move(pending_.front());
    pending_.pop_front();
    const Status st = step.seq <= durable ? Status::Ok() : failure;
    if (st.ok() && listener_ && !step.events.empty()) listener_(step.events);
    for (auto& done : step.completions) ready.emplace_back(std::move(done), st);
  }
  if (!failure.ok()) {
    StartOutageReads();
    StartRecovery();
  }
}

void EngineService::StartOutageReads() {
  if (outage_reads_started_ || stopping_ || last_durable_ == nullptr) return;
  outage_reads_started_ = true;
  asio::post(io_,
             [this, last_durable = last_durable_, generation = generation_] {
               LoadOutageEngine(last_durable, generation);
             });
}

void EngineService::LoadOutageEngine(
    std::shared_ptr<MemoryStoreData> last_durable, std::uint64_t generation) {
  // The copy holds no more than what was acknowledged: the committer
  // appends nothing after a failure.
  auto copy = OpenMemoryStore(std::move(last_durable));
  EngineOptions options = options_;
  options.events = nullptr;  // nothing it does is an event
  auto engine = RestoreEngine(*copy, options, clock_);
  std::lock_guard lock(mu_);
  if (stopping_ || generation != generation_) return;
  if (!engine) {
    log::Error("cannot load the last acknowledged state for reads",
               {{"error", engine.error().message()}});
    return;
  }
  for (const auto& [ns, ns_options] : namespaces_) {
    (*engine)->SetNamespaceOptions(ns, ns_options);
  }
  outage_engine_ = std::move(*engine);
  log::Info(
      "reads are answered from the last acknowledged state until the "
      "store recovers");
}

void EngineService::ForgetOutageChanges() {
  if (outage_engine_->HasJournal()) (void)outage_engine_->TakeJournal();
  (void)outage_engine_->TakeFinishedWaits();
}

void EngineService::StartRecovery() {
  if (!recovery_ || recovery_armed_ || stopping_ || standing_by_) return;
  recovery_armed_ = true;
  next_retry_ = recovery_->first_retry;
  if (recovery_->on_failure) recovery_->on_failure();
  log::Error(
      "store failed: writes answer unavailable until it is opened "
      "again",
      {{"error", committer_->failure().message()}});
  recovery_timer_.expires_after(next_retry_);
  recovery_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) OnRecoveryTimer();
  });
}

std::shared_ptr<Store> EngineService::DetachStore(Completions& ready,
                                                  Status why) {
  detached_ = std::move(why);
  Drain(ready);  // the durable steps; with a failed store, every step
  for (PendingStep& step : pending_) {
    for (auto& done : step.completions) {
      ready.emplace_back(std::move(done), detached_);
    }
  }
  pending_.clear();
  for (auto& [wait, done] : parked_) {
    ready.emplace_back([done = std::move(done)](
                           const Status& st) { done(std::unexpected(st)); },
                       detached_);
  }
  parked_.clear();
  retired_stats_.Add(committer_->Stats());
  committer_.reset();  // its thread ends; nothing it holds can be written
  return std::move(store_);
}

namespace {

// Closes the failed store (Store::Close: until then, what the files hold
// may include the refused batch), then opens it again. `failed` stays set
// while it cannot be closed.
Result<std::unique_ptr<Store>> CloseAndReopen(
    std::shared_ptr<Store>& failed, const EngineService::StoreOpener& reopen) {
  if (failed != nullptr) {
    if (Status st = failed->Close(); !st.ok()) return std::unexpected(st);
    failed.reset();
  }
  return reopen();
}

}  // namespace

void EngineService::OnRecoveryTimer() {
  Completions ended;
  StoreOpener reopen;
  std::string cause;
  std::uint64_t generation;
  std::shared_ptr<Store> failed;  // closed (and dropped) after the lock
  {
    std::lock_guard lock(mu_);
    if (stopping_ || standing_by_ || !recovery_armed_) return;
    generation = generation_;
    if (committer_ != nullptr) {
      failed_store_ = DetachStore(ended, committer_->failure());
    }
    failed = std::move(failed_store_);
    reopen = recovery_->reopen;
    cause = detached_.message();
  }
  Complete(std::move(ended));
  auto store = CloseAndReopen(failed, reopen);
  WrittenStore written =
      store ? Wrap(std::move(*store), service_options_) : WrittenStore{};
  auto sink = std::make_unique<Sink>();
  Result<std::unique_ptr<Engine>> engine =
      store ? LoadEngine(*written.store, options_, *sink, clock_)
            : Result<std::unique_ptr<Engine>>(std::unexpected(store.error()));
  std::lock_guard lock(mu_);
  // Shut down, or detached or attached meanwhile: this recovery is over.
  if (stopping_ || generation != generation_) return;
  if (!engine) {
    failed_store_ = std::move(failed);  // if it could not be closed
    log::Warn("store still unavailable",
              {{"error", engine.error().message()},
               {"next_attempt_ms", std::to_string(next_retry_.count())}});
    next_retry_ = std::min(next_retry_ * 2, recovery_->max_retry);
    recovery_timer_.expires_after(next_retry_);
    recovery_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) OnRecoveryTimer();
    });
    return;
  }
  // As a restart: the new engine holds what the store holds, sessions with
  // a fresh TTL; what the old one decided without the disk is gone.
  Install(std::move(written), std::move(*engine), std::move(sink));
  ++recoveries_;
  log::Info("store recovered",
            {{"store", store_->Describe()}, {"after", cause}});
}

void EngineService::Install(WrittenStore store, std::unique_ptr<Engine> engine,
                            std::unique_ptr<Sink> sink) {
  last_durable_ = std::move(store.last_durable);
  outage_engine_.reset();
  outage_reads_started_ = false;
  store_ = std::move(store.store);
  committer_ = std::make_unique<GroupCommitter>(store_.get());
  engine_ = std::move(engine);
  sink_ = std::move(sink);
  for (const auto& [ns, options] : namespaces_) {
    engine_->SetNamespaceOptions(ns, options);
  }
  detached_ = Status::Ok();
  recovery_armed_ = false;
  recovery_timer_.cancel();
  ++generation_;
  timer_at_.reset();
  ArmTimer();
}

void EngineService::DrainAndComplete() {
  Step([&](Completions& ready) { Drain(ready); });
}

namespace {
// How deep this thread is in inline completions.
thread_local int inline_depth = 0;
constexpr int kMaxInlineDepth = 8;
}  // namespace

void EngineService::Complete(Completions ready) {
  if (ready.empty()) return;
  if (inline_depth >= kMaxInlineDepth) {
    for (auto& [done, st] : ready) {
      asio::post(io_,
                 [done = std::move(done), st = st]() mutable { done(st); });
    }
    return;
  }
  ++inline_depth;
  for (auto& [done, st] : ready) done(st);
  --inline_depth;
}

void EngineService::UseManualClock(ManualClock& clock) {
  std::lock_guard lock(mu_);
  manual_clock_ = &clock;
  timer_at_.reset();
  timer_.cancel();
}

void EngineService::AdvanceClock(Duration by,
                                 std::function<void(Result<Time>)> done) {
  if (manual_clock_ == nullptr) {
    return done(Error(StatusCode::kNotFound, "the clock is not manual"));
  }
  auto now = manual_clock_->Advance(by);
  if (!now) return done(std::unexpected(now.error()));
  ApplyDeadlines([done = std::move(done), now = *now](const Status& st) {
    st.ok() ? done(now) : done(std::unexpected(st));
  });
}

std::optional<Time> EngineService::ManualTime() const {
  if (manual_clock_ == nullptr) return std::nullopt;
  return manual_clock_->Now();
}

void EngineService::ArmTimer() {
  if (manual_clock_ != nullptr) return;
  const std::optional<Time> next = engine_->NextDeadline();
  if (next == timer_at_) return;
  timer_at_ = next;
  if (!next) {
    timer_.cancel();
    return;
  }
  const auto delay = *next - clock_.Now();
  timer_.expires_after(std::max(delay, Duration::zero()) +
                       std::chrono::microseconds(1));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed or cancelled
    ApplyDeadlines(nullptr);
  });
}

void EngineService::ApplyDeadlines(std::function<void(const Status&)> done) {
  Step([&](Completions& ready) {
    timer_at_.reset();
    engine_->AdvanceTo(clock_.Now());
    AfterStep(done ? Completion(std::move(done)) : Completion(), ready);
  });
}

}  // namespace leasehold
