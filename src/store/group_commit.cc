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
  work_.notify_one();
  return seq;
}

GroupCommitter::Seq GroupCommitter::last_submitted() const {
  std::lock_guard lock(mu_);
  return submitted_;
}

Status GroupCommitter::Wait(Seq seq) {
  std::unique_lock lock(mu_);
  durable_.wait(lock, [&] { return durable_seq_ >= seq || !failure_.ok(); });
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
}

GroupCommitStats GroupCommitter::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void GroupCommitter::WriterLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is written
    std::vector<JournalBatch> taken;
    taken.swap(queue_);
    const Seq last = submitted_;
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
    const auto start = std::chrono::steady_clock::now();
    Status st = failure_.ok() ? store_->Append(batch) : failure_;
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;

    lock.lock();
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
    if (!ready.empty()) {
      const Status failure = failure_;
      const Seq durable = durable_seq_;
      lock.unlock();
      for (auto& [seq, done] : ready) {
        done(seq <= durable ? Status::Ok() : failure);
      }
      lock.lock();
    }
  }
}

}  // namespace leasehold
