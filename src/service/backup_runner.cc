#include "service/backup_runner.h"

#include <utility>

namespace leasehold {

void BackupRunner::Start(std::shared_ptr<Store> store, std::string destination,
                         std::function<void(Status)> done) {
  std::jthread finished;  // the previous backup's thread, joined unlocked
  Status refused;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      refused = Status(StatusCode::kUnavailable, "the server is stopping");
    } else if (running_) {
      refused = Status(StatusCode::kUnavailable,
                       "a backup is already under way; try again once it "
                       "has ended");
    } else {
      running_ = true;
      finished = std::move(thread_);
      thread_ = std::jthread([this, store = std::move(store),
                              destination = std::move(destination),
                              done = std::move(done)](std::stop_token stop) {
        Status result = store->Backup(destination, stop);
        {
          std::lock_guard ended(mu_);
          running_ = false;
        }
        done(std::move(result));
      });
    }
  }
  if (!refused.ok()) done(std::move(refused));
}

void BackupRunner::Stop() {
  std::jthread thread;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    thread = std::move(thread_);
  }
  if (thread.joinable()) {
    thread.request_stop();
    thread.join();
  }
}

}  // namespace leasehold
