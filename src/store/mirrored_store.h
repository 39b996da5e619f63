// MirroredStore: a Store that keeps, beside the store it wraps, a copy in
// this process's memory of everything that store has acknowledged: the
// rows it loaded, then each batch whose Append succeeded. While the
// wrapped store has failed (a database that cannot be reached, a full
// disk), that copy is the last acknowledged state, which reads may still
// show (EngineService; docs/storage.md, "Reads during an outage"). It costs
// a second copy of the rows in memory, and applying each batch to it.
#ifndef LEASEHOLD_STORE_MIRRORED_STORE_H_
#define LEASEHOLD_STORE_MIRRORED_STORE_H_

#include <memory>
#include <string>

#include "store/memory/memory_store.h"
#include "store/store.h"

namespace leasehold {

class MirroredStore final : public Store {
 public:
  explicit MirroredStore(std::unique_ptr<Store> inner);

  // The wrapped store's rows, each copied into the mirror as it passes.
  // The mirror is emptied first: it holds what the latest load read.
  Result<Reservations> Load(const Visitors& visit) override;
  // The wrapped store's Append; once it succeeds, the batch is applied to
  // the mirror too (before this returns, so that an acknowledged batch is
  // never missing from it). Nothing is mirrored from a failed Append.
  Status Append(const JournalBatch& batch) override;
  Status Close() override { return inner_->Close(); }
  Status Backup(const std::string& destination, std::stop_token stop) override {
    return inner_->Backup(destination, stop);
  }
  std::string Describe() const override { return inner_->Describe(); }

  // The copy: a memory store opened on it loads the last acknowledged
  // state. Thread-safe to read while Append goes on (it has its own mutex).
  std::shared_ptr<MemoryStoreData> mirror() const { return mirror_; }

 private:
  std::unique_ptr<Store> inner_;
  std::shared_ptr<MemoryStoreData> mirror_;
  std::unique_ptr<Store> mirror_store_;  // a MemoryStore over mirror_
};

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_MIRRORED_STORE_H_
