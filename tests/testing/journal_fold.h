// JournalFold: what a store would hold after appending an engine's journal,
// for engine tests that restart an engine without a store. It keeps key
// rows, session and lock rows (a session's deletion removes its locks, as in
// a Store), and the fence and id reservations; operations and messages are
// other tests' business.
#ifndef LEASEHOLD_TESTS_TESTING_JOURNAL_FOLD_H_
#define LEASEHOLD_TESTS_TESTING_JOURNAL_FOLD_H_

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "engine/engine.h"
#include "engine/journal.h"

namespace leasehold::testing {

class JournalFold {
 public:
  void Absorb(Engine& engine) {
    for (JournalEntry& e : engine.TakeJournal()) Apply(e);
  }

  // Absorbs `engine`'s journal, then returns the state it adds up to.
  DurableState Stored(Engine& engine) {
    Absorb(engine);
    DurableState state = reservations_;
    for (const auto& [key, row] : keys_) state.rows.push_back(row);
    for (const auto& [id, row] : sessions_) state.sessions.push_back(row);
    for (const auto& [key, row] : locks_) state.locks.push_back(row);
    return state;
  }

  // A new engine with `options`, restored at `now` from what `engine`
  // journaled.
  std::unique_ptr<Engine> Restart(Engine& engine, Time now,
                                  EngineOptions options = {}) {
    auto restored = std::make_unique<Engine>(options);
    const Status st = restored->Restore(now, Stored(engine));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return restored;
  }

  void Clear() { *this = JournalFold(); }

  const std::map<SessionId, SessionRow>& sessions() const { return sessions_; }
  std::size_t lock_rows() const { return locks_.size(); }

 private:
  using LockKeyTuple =
      std::tuple<SessionId, LockOwner, std::string, std::string, std::string>;
  static LockKeyTuple KeyOf(const LockRow& r) {
    return {r.session, r.owner, r.ns, r.principal, r.resource};
  }

  void Apply(const JournalEntry& e) {
    using Kind = JournalEntry::Kind;
    switch (e.kind) {
      case Kind::kPutKey:
        keys_[{e.row.ns, e.row.key}] = e.row;
        break;
      case Kind::kPutLease: {  // the lease columns only, as a Store does
        KeyRow& row = keys_[{e.row.ns, e.row.key}];
        row.ns = e.row.ns;
        row.key = e.row.key;
        row.locked_by = e.row.locked_by;
        row.token = e.row.token;
        row.lock_expires_at = e.row.lock_expires_at;
        row.fence = e.row.fence;
        break;
      }
      case Kind::kDeleteKey:
        keys_.erase({e.row.ns, e.row.key});
        break;
      case Kind::kPutSession:
        sessions_[e.session.id] = e.session;
        break;
      case Kind::kDeleteSession:
        sessions_.erase(e.session.id);
        std::erase_if(locks_, [&](const auto& kv) {
          return kv.second.session == e.session.id;
        });
        break;
      case Kind::kPutLock:
        locks_[KeyOf(e.lock)] = e.lock;
        break;
      case Kind::kDeleteLock:
        locks_.erase(KeyOf(e.lock));
        break;
      case Kind::kReserveFences:
        reservations_.fences_reserved =
            std::max(reservations_.fences_reserved, e.fences_reserved);
        break;
      case Kind::kReserveSessionIds:
        reservations_.session_ids_reserved = std::max(
            reservations_.session_ids_reserved, e.session_ids_reserved);
        break;
      case Kind::kReserveTransactionIds:
        reservations_.transaction_ids_reserved = std::max(
            reservations_.transaction_ids_reserved, e.transaction_ids_reserved);
        break;
      case Kind::kReserveLockDelay:
        reservations_.lock_delay_until_us =
            std::max(reservations_.lock_delay_until_us, e.lock_delay_until_us);
        break;
      default:
        break;
    }
  }

  std::map<std::pair<std::string, std::string>, KeyRow> keys_;
  std::map<SessionId, SessionRow> sessions_;
  std::map<LockKeyTuple, LockRow> locks_;
  DurableState reservations_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_JOURNAL_FOLD_H_
