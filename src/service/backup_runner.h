// BackupRunner: an EngineService's backups, one at a time, each on a thread
// of its own while commands go on. Thread-safe.
#ifndef LEASEHOLD_SERVICE_BACKUP_RUNNER_H_
#define LEASEHOLD_SERVICE_BACKUP_RUNNER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "store/store.h"

namespace leasehold {

class BackupRunner {
 public:
  BackupRunner() = default;
  BackupRunner(const BackupRunner&) = delete;
  BackupRunner& operator=(const BackupRunner&) = delete;
  ~BackupRunner() { Stop(); }

  // Runs store->Backup(destination) on a thread of its own; `done` gets
  // its result there. While another backup runs, or once stopped, `done`
  // gets kUnavailable here instead.
  void Start(std::shared_ptr<Store> store, std::string destination,
             std::function<void(Status)> done);
  // Stops a backup under way (Store::Backup sees its stop token), waits
  // for its thread, and refuses every later backup.
  void Stop();

 private:
  std::mutex mu_;  // guards what follows
  bool running_ = false;
  bool stopped_ = false;
  std::jthread thread_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_BACKUP_RUNNER_H_
