// FenceSource: hands out fences, strictly increasing across restarts.
//
// Persisting every fence would cost a disk write per lock grant. Instead the
// source reserves fences in blocks: before handing out a fence above the
// durable reservation it journals a new reservation, and after a restart it
// continues above the last reservation. Fences skipped that way are never
// handed out; fences are increasing, not dense. Internal to the engine.
#ifndef LEASEHOLD_ENGINE_FENCE_SOURCE_H_
#define LEASEHOLD_ENGINE_FENCE_SOURCE_H_

#include <algorithm>

#include "leasehold/journal.h"

namespace leasehold::engine {

class FenceSource {
 public:
  static constexpr Fence kReservationBlock = Fence{1} << 20;

  FenceSource(Fence floor, JournalBatch* journal)
      : last_(floor), reserved_(floor), journal_(journal) {}

  Fence Next() {
    if (last_ == reserved_) {
      reserved_ += kReservationBlock;
      JournalEntry e;
      e.kind = JournalEntry::Kind::kReserveFences;
      e.fences_reserved = reserved_;
      journal_->push_back(std::move(e));
    }
    return ++last_;
  }

  // Continues above everything a previous run may have handed out.
  void Restore(Fence reserved) {
    last_ = std::max(last_, reserved);
    reserved_ = std::max(reserved_, last_);
  }

  Fence last() const { return last_; }

 private:
  Fence last_;
  Fence reserved_;
  JournalBatch* journal_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_FENCE_SOURCE_H_
