#include "store/group_commit.h"

#include <chrono>

namespace leasehold {

GroupCommitter::GroupCommitter(Store* store)
    : store_(store), writer_([this] { WriterLoop(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_one();
  writer_.join();
}

GroupCommitter::Seq GroupCommitter::Submit(JournalBatch batch) {
  std::lock_guard lock(mu_);
  const Seq seq = ++submitted_;
  if (!batch.empty()) ++stats_.submits;
  queue_.push_back(std::move(batch));
  return seq;
}

GroupCommitter::Seq GroupCommitter::last_submitted() const {
  std::lock_guard lock(mu_);
  return submitted_;
}

Status GroupCommitter::Wait(Seq seq) {
  std::unique_lock lock(mu_);
  while (durable_seq_ < seq && failure_.ok()) {
    if (!writing_) {
      CommitQueued(lock);  // become the leader
      continue;
    }
    Waiter w{seq, {}, false};
    waiters_.push_back(&w);
    w.cv.wait(lock, [&] { return w.wake; });
  }
  return durable_seq_ >= seq ? Status::Ok() : failure_;
}

void GroupCommitter::OnDurable(Seq seq, Callback done) {
  std::unique_lock lock(mu_);
  if (durable_seq_ >= seq || !failure_.ok()) {
    const Status st = durable_seq_ >= seq ? Status::Ok() : failure_;
    lock.unlock();
    done(st);
    return;
  }
  callbacks_.emplace_back(seq, std::move(done));
  work_.notify_one();
}

GroupCommitter::Seq GroupCommitter::durable_seq() const {
  std::lock_guard lock(mu_);
  return durable_seq_;
}

Status GroupCommitter::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void GroupCommitter::WakeWaiters() {
  bool leader_chosen = false;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    Waiter* w = *it;
    const bool done = w->seq <= durable_seq_ || !failure_.ok();
    if (done || !leader_chosen) {
      leader_chosen |= !done;  // it will find nobody writing and lead
      w->wake = true;
      w->cv.notify_one();
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

GroupCommitStats GroupCommitter::Stats() const {
  std::lock_guard lock(mu_);
  GroupCommitStats stats = stats_;
  if (writing_) {
    stats.commit_in_flight_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      writing_since_)
            .count();
  }
  return stats;
}

void GroupCommitter::WriterLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    work_.wait(lock,
               [&] { return stopping_ || (!callbacks_.empty() && !writing_); });
    if (stopping_) {
      while (writing_) durable_.wait(lock);
      if (!queue_.empty()) CommitQueued(lock);
      return;
    }
    CommitQueued(lock);
  }
}

void GroupCommitter::CommitQueued(std::unique_lock<std::mutex>& lock) {
  writing_ = true;
  const auto start = std::chrono::steady_clock::now();
  writing_since_ = start;
  std::vector<JournalBatch> taken;
  taken.swap(queue_);
  const Seq last = submitted_;
  const Status earlier_failure = failure_;
  lock.unlock();

  JournalBatch batch;
  for (JournalBatch& b : taken) {
    if (batch.empty()) {
      batch = std::move(b);
    } else {
      batch.insert(batch.end(), std::make_move_iterator(b.begin()),
                   std::make_move_iterator(b.end()));
    }
  }
  const Status st =
      earlier_failure.ok() ? store_->Append(batch) : earlier_failure;
  const std::chrono::duration<double> took =
      std::chrono::steady_clock::now() - start;

  lock.lock();
  writing_ = false;
  if (st.ok()) {
    durable_seq_ = last;
    if (!batch.empty()) {
      ++stats_.batches;
      stats_.entries += batch.size();
      stats_.last_batch_entries = batch.size();
      stats_.last_commit_seconds = took.count();
      stats_.total_commit_seconds += took.count();
    }
  } else {
    failure_ = st;
  }
  std::vector<std::pair<Seq, Callback>> ready;
  for (auto it = callbacks_.begin(); it != callbacks_.end();) {
    if (it->first <= durable_seq_ || !failure_.ok()) {
      ready.push_back(std::move(*it));
      it = callbacks_.erase(it);
    } else {
      ++it;
    }
  }
  durable_.notify_all();
  WakeWaiters();
  // More callbacks may wait for batches queued meanwhile.
  if (!callbacks_.empty()) work_.notify_one();
  if (ready.empty()) return;
  const Status failure = failure_;
  const Seq durable = durable_seq_;
  lock.unlock();
  for (auto& [seq, done] : ready) done(seq <= durable ? Status::Ok() : failure);
  lock.lock();
}

}  // namespace leasehold
