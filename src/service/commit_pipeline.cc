#include "service/commit_pipeline.h"

#include <boost/asio/post.hpp>

namespace leasehold {

namespace {
// How deep this thread is in inline completions.
thread_local int inline_depth = 0;
constexpr int kMaxInlineDepth = 8;
}  // namespace

void RunCompletions(boost::asio::io_context& io, Completions ready) {
  if (ready.empty()) return;
  if (inline_depth >= kMaxInlineDepth) {
    for (auto& [done, st] : ready) {
      boost::asio::post(
          io, [done = std::move(done), st = st]() mutable { done(st); });
    }
    return;
  }
  ++inline_depth;
  for (auto& [done, st] : ready) done(st);
  --inline_depth;
}

void CommitPipeline::Attach(std::shared_ptr<Store> store) {
  store_ = std::move(store);
  committer_ = std::make_unique<GroupCommitter>(store_.get());
  detached_ = Status::Ok();
}

std::shared_ptr<Store> CommitPipeline::Detach(Completions& ready, Status why) {
  detached_ = std::move(why);
  if (committer_ == nullptr) {
    FailParked(ready);
    return nullptr;
  }
  Drain(ready);  // the durable steps; with a failed store, every step
  for (PendingStep& step : pending_) {
    for (auto& done : step.completions) {
      ready.emplace_back(std::move(done), detached_);
    }
  }
  pending_.clear();
  FailParked(ready);
  retired_stats_.Add(committer_->Stats());
  committer_.reset();  // its thread ends; nothing it holds can be written
  return std::move(store_);
}

void CommitPipeline::FailParked(Completions& ready) {
  for (auto& [wait, done] : parked_) {
    ready.emplace_back([done = std::move(done)](
                           const Status& st) { done(std::unexpected(st)); },
                       detached_);
  }
  parked_.clear();
}

Status CommitPipeline::failure() const {
  return committer_ ? committer_->failure() : detached_;
}

std::vector<WaitId> CommitPipeline::ParkedWaits() const {
  std::vector<WaitId> waits;
  for (const auto& [id, done] : parked_) waits.push_back(id);
  return waits;
}

bool CommitPipeline::AfterStep(LoadedEngine& loaded, Completion then,
                               Completions& ready) {
  Engine& engine = *loaded.engine;
  PendingStep step;
  // Detached (between a failure and its recovery, or standing by): every
  // step fails at once, one that only read too. The engine is then ahead
  // of the store (the failed batch, and whatever steps changed since), and
  // a read would show what the recovery takes back.
  if (committer_ == nullptr) {
    if (engine.HasJournal()) (void)engine.TakeJournal();
  } else {
    step.seq = engine.HasJournal() ? committer_->Submit(engine.TakeJournal())
                                   : committer_->last_submitted();
  }
  for (FinishedWait& f : engine.TakeFinishedWaits()) {
    auto it = parked_.find(f.wait);
    if (it == parked_.end()) continue;
    step.completions.push_back(Deliver(std::move(it->second), std::move(f)));
    parked_.erase(it);
  }
  if (then) step.completions.push_back(std::move(then));
  step.events = loaded.events->Take();
  if (committer_ == nullptr) {
    for (auto& done : step.completions) {
      ready.emplace_back(std::move(done), detached_);
    }
    FailParked(ready);  // a wait parked now was refused at once
    return true;
  }
  const GroupCommitter::Seq seq = step.seq;
  pending_.push_back(std::move(step));
  if (committer_->durable_seq() >= seq) {
    return Drain(ready);  // nothing to wait for: answer on this thread
  }
  committer_->OnDurable(seq, [this](const Status&) { on_durable_(); });
  return true;
}

bool CommitPipeline::Drain(Completions& ready) {
  if (committer_ == nullptr) return true;  // detached: nothing is pending
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
  return failure.ok();
}

GroupCommitStats CommitPipeline::Stats() const {
  GroupCommitStats total = retired_stats_;
  if (committer_) total.Add(committer_->Stats());
  return total;
}

}  // namespace leasehold
