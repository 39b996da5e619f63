#include "service/engine_service.h"

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

Result<std::unique_ptr<EngineService>> EngineService::Open(
    asio::io_context& io, std::unique_ptr<Store> store, EngineOptions options,
    const Clock& clock) {
  auto sink = std::make_unique<Sink>();
  options.events = sink.get();
  auto engine = RestoreEngine(*store, options, clock.Now());
  if (!engine) return std::unexpected(engine.error());
  sink->events.clear();  // restoring announces nothing
  std::unique_ptr<EngineService> service(
      new EngineService(io, std::move(store), std::move(*engine), clock));
  service->sink_ = std::move(sink);
  {
    std::lock_guard lock(service->mu_);
    service->ArmTimer();
  }
  return service;
}

EngineService::EngineService(asio::io_context& io, std::unique_ptr<Store> store,
                             std::unique_ptr<Engine> engine, const Clock& clock)
    : io_(io),
      timer_(io),
      store_(std::move(store)),
      engine_(std::move(engine)),
      clock_(clock),
      committer_(store_.get()) {}

EngineService::~EngineService() = default;

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
  Step([&](Completions& ready) {
    Result<AcquireAllOutcome> outcome =
        engine_->AcquireAll(clock_.Now(), request);
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
    stats = engine_->Stats();
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
    AfterStep([&drained](const Status&) { drained.set_value(); }, ready);
  });
  drained.get_future().wait();
}

void EngineService::AfterStep(Completion then, Completions& ready) {
  PendingStep step;
  step.seq = engine_->HasJournal() ? committer_.Submit(engine_->TakeJournal())
                                   : committer_.last_submitted();
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
  const GroupCommitter::Seq seq = step.seq;
  pending_.push_back(std::move(step));
  if (committer_.durable_seq() >= seq) {
    Drain(ready);  // nothing to wait for: answer on this thread
    return;
  }
  committer_.OnDurable(seq, [this](const Status&) {
    asio::post(io_, [this] { DrainAndComplete(); });
  });
}

void EngineService::Drain(Completions& ready) {
  const GroupCommitter::Seq durable = committer_.durable_seq();
  const Status failure = committer_.failure();
  while (!pending_.empty() &&
         (pending_.front().seq <= durable || !failure.ok())) {
    PendingStep step = std::move(pending_.front());
    pending_.pop_front();
    const Status st = step.seq <= durable ? Status::Ok() : failure;
    if (st.ok() && listener_ && !step.events.empty()) listener_(step.events);
    for (auto& done : step.completions) ready.emplace_back(std::move(done), st);
  }
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

void EngineService::ArmTimer() {
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
    OnTimer();
  });
}

void EngineService::OnTimer() {
  Step([&](Completions& ready) {
    timer_at_.reset();
    engine_->AdvanceTo(clock_.Now());
    AfterStep(nullptr, ready);
  });
}

}  // namespace leasehold
