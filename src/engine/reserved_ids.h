// ReservedIds: hands out fences, session ids or transaction ids, strictly
// increasing across restarts.
//
// Persisting every id would cost a disk write per lock grant, session or
// transaction. Instead the source reserves ids in blocks: before handing out
// an id above the durable reservation it journals a new reservation, and
// after a restart it continues above the last reservation. Ids skipped that
// way are never handed out; ids are increasing, not dense. Internal to the
// engine.
#ifndef LEASEHOLD_ENGINE_RESERVED_IDS_H_
#define LEASEHOLD_ENGINE_RESERVED_IDS_H_

#include <algorithm>
#include <cstdint>

#include "engine/journal.h"

namespace leasehold::engine {

// `kind` is the journal entry that carries the reservation in `field`.
template <typename Id, JournalEntry::Kind kind, Id JournalEntry::*field>
class ReservedIds {
 public:
  static constexpr Id kReservationBlock = Id{1} << 20;

  ReservedIds(Id floor, JournalBatch* journal)
      : last_(floor), reserved_(floor), journal_(journal) {}

  Id Next() {
    if (last_ == reserved_) {
      reserved_ += kReservationBlock;
      JournalEntry e;
      e.kind = kind;
      e.*field = reserved_;
      journal_->push_back(std::move(e));
    }
    return ++last_;
  }

  // Continues above everything a previous run may have handed out.
  void Restore(Id reserved) {
    last_ = std::max(last_, reserved);
    reserved_ = std::max(reserved_, last_);
  }

  Id last() const { return last_; }

 private:
  Id last_;
  Id reserved_;
  JournalBatch* journal_;
};

using FenceSource = ReservedIds<Fence, JournalEntry::Kind::kReserveFences,
                                &JournalEntry::fences_reserved>;
using SessionIdSource =
    ReservedIds<SessionId, JournalEntry::Kind::kReserveSessionIds,
                &JournalEntry::session_ids_reserved>;
using TransactionIdSource =
    ReservedIds<TransactionId, JournalEntry::Kind::kReserveTransactionIds,
                &JournalEntry::transaction_ids_reserved>;

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_RESERVED_IDS_H_
