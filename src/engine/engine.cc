// Engine: a sequencer over units that own their state. Each command opens
// a Command (what fell due is applied first; acquire-all calls its units
// decided go on as it returns), checks its input, then has the units act in
// order: SessionTable (sessions), TransactionManager (transactions and
// their staged writes), LockManager (locks, waits, deadlocks), RecordTable,
// OperationTable and OutboxTable, with one DeadlineQueue as the time source
// for all of them. See docs/lock-manager.md for the rules of locks.
#include "engine/engine.h"

#include <algorithm>
#include <map>
#include <variant>

#include "engine/acquire_all.h"
#include "engine/deadline_queue.h"
#include "engine/lock_manager.h"
#include "engine/operation_table.h"
#include "engine/outbox_table.h"
#include "engine/record_table.h"
#include "engine/reserved_ids.h"
#include "engine/session_table.h"
#include "engine/transaction_manager.h"

namespace leasehold {

using engine::DeadlineKind;
using engine::DeadlineQueue;
using engine::LockManager;
using engine::Session;
using engine::SessionTable;
using engine::StagedEnqueue;
using engine::StagedOperation;
using engine::StagedRecordWrite;
using engine::StagedWrite;
using engine::TransactionManager;
using engine::WaitTerms;

Status ValidateTtl(std::chrono::milliseconds ttl) {
  if (ttl.count() > 0 && ttl <= kLongestTtl) return Status::Ok();
  return Status(StatusCode::kBadRequest,
                "ttl_ms must be between 1 and " +
                    std::to_string(kLongestTtl.count()) + " (100 years)");
}

namespace {

constexpr int kMinDeadlockPriority = -10;
constexpr int kMaxDeadlockPriority = 10;
// The longest wait a deadline is computed for. A larger timeout_ms (up to
// INT64_MAX, which overflows a Time) waits this long: in effect, forever,
// and short enough that a timer for it fits in nanoseconds.
constexpr std::chrono::milliseconds kLongestTimedWait = std::chrono::years(100);

bool IsRequestable(LockMode m) {
  return m != LockMode::kNoLock && m != LockMode::kSharedIntentExclusive &&
         m != LockMode::kUpdateIntentExclusive;
}

Status BadTimeout() {
  return Status(StatusCode::kBadTimeout,
                "timeout_ms must be -1 (wait without limit), 0 (do not "
                "wait) or a positive number of milliseconds");
}

Status BadMode() {
  return Status(StatusCode::kBadMode,
                "mode must be Shared, Update, IntentShared, "
                "IntentExclusive or Exclusive");
}

Status BadPriority() {
  return Status(StatusCode::kBadRequest,
                "deadlock_priority must be between -10 and 10");
}

Status RestoreTooLate() {
  return Status(StatusCode::kBadRequest,
                "Restore must come before any command");
}

// What OpenSession requires of a session's options (and RestoreSession of
// a row).
Status ValidateSession(std::chrono::milliseconds ttl, int deadlock_priority,
                       std::string_view name) {
  if (Status st = ValidateTtl(ttl); !st.ok()) return st;
  if (deadlock_priority < kMinDeadlockPriority ||
      deadlock_priority > kMaxDeadlockPriority) {
    return BadPriority();
  }
  if (name.empty()) return Status::Ok();
  return ValidateName(name, "session name");
}

Status SessionNotFound(SessionId id) {
  return Status(StatusCode::kSessionNotFound,
                "session " + std::to_string(id) +
                    " does not exist or has expired; open a new one");
}

// When a wait of `timeout` from `now` ends; none for kWaitForever and 0.
std::optional<Time> DeadlineAfter(Time now, std::chrono::milliseconds timeout) {
  if (timeout <= std::chrono::milliseconds::zero()) return std::nullopt;
  return now + std::min(timeout, kLongestTimedWait);
}

// `what` names key.resource in messages: a lock's "resource", a
// semaphore's "name".
Status ValidateKey(const LockKey& key, std::string_view what = "resource") {
  if (Status st = ValidateName(key.ns, "namespace"); !st.ok()) return st;
  if (Status st = ValidateName(key.principal, "principal"); !st.ok()) return st;
  return ValidateName(key.resource, what);
}

// std::visit over several lambdas, one per alternative.
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace

// The units, and the steps that involve more than one of them.
struct Engine::Units {
  explicit Units(const EngineOptions& options)
      : events(options.events),
        fences(options.fence_floor, &journal),
        records(options.max_body_bytes, &fences, &journal, options.events,
                &deadlines),
        operations(options.max_body_bytes, &journal, options.events),
        outbox(options.max_body_bytes, &journal, options.events),
        sessions(options.session_id_base, &journal, &deadlines),
        transactions({options.max_staged_writes, options.max_staged_bytes},
                     &journal, &deadlines),
        locks(&fences, &deadlines, &journal, options.events),
        acquire_all(
            &sessions, &locks,
            [this](SessionId id, std::string_view ns, LockOwner owner,
                   Time now) { return CallSession(id, ns, owner, now); }) {}

  // Applies everything due at or before `now`; returns the effective now.
  Time Advance(Time now) {
    started = true;
    now = std::max(now, last_now);
    last_now = now;
    // Each deadline is taken from the queue before it applies, so what it
    // does may add or remove others (a timeout lets a waiter in; an expiry
    // ends a transaction) and the loop sees the queue as it then is.
    while (const std::optional<engine::Deadline> d = deadlines.PopDueBy(now)) {
      switch (d->kind) {
        case DeadlineKind::kWaitTimeout:
          locks.TimeOut(d->at, d->id);
          break;
        case DeadlineKind::kTransactionLimit:
          ExpireTransaction(sessions.Find(d->id), d->at);
          break;
        case DeadlineKind::kSessionExpiry:
          EndSession(sessions.Find(d->id), d->at, EventType::kSessionExpired,
                     /*lock_delay=*/true);
          break;
        case DeadlineKind::kLeaseExpiry:
          records.ExpireLease(d->id, d->at);
          break;
        case DeadlineKind::kLockDelayEnd:
          locks.EndHold(d->at, d->id);
          break;
        case DeadlineKind::kHoldLimit:
          locks.ExpireHold(d->at, d->id);
          break;
      }
      acquire_all.Settle(d->at);
    }
    return now;
  }

  // --- Sessions and transactions --------------------------------------------

  // `lock_delay`: it did not end by its own client's hand, so what it holds
  // is held back where a namespace says so (NamespaceOptions::lock_delay).
  void EndSession(Session* s, Time now, EventType how, bool lock_delay) {
    // The session's kDeleteSession removes its lock rows.
    constexpr auto kRows = LockManager::RowDeletes::kBySessionDelete;
    if (lock_delay) locks.HoldBackAll(now, s);
    locks.Cancel(now, s);
    if (s->transaction != nullptr) {
      FinishTransaction(s, now, EventType::kTransactionRolledBack, kRows);
    }
    // A transaction lost at a restart may still hold locks.
    locks.ReleaseAll(now, s, LockOwner::kTransaction, kRows);
    locks.ReleaseAll(now, s, LockOwner::kSession, kRows);
    locks.EndQuietFor(now, s);
    Emit(SessionEvent(how, now, s));
    JournalEntry e;
    e.kind = JournalEntry::Kind::kDeleteSession;
    e.session.id = s->id;
    journal.push_back(std::move(e));
    transactions.ForgetSession(s);
    sessions.Erase(s);
  }

  // Journals the session as it now is (its row: options and transaction).
  void JournalSession(const Session* s) {
    JournalEntry e;
    e.kind = JournalEntry::Kind::kPutSession;
    SessionRow& row = e.session;
    row.id = s->id;
    row.name = s->name;
    row.caller = s->caller;
    row.ttl = s->ttl;
    row.deadlock_priority = s->deadlock_priority;
    row.opened_at = s->opened_at;
    if (s->transaction != nullptr) {
      row.transaction = s->transaction->id;
      row.transaction_started_at = s->transaction->started_at;
    } else if (const auto* lost = transactions.LostOf(s)) {
      // Kept until the session is told, across further restarts too.
      row.transaction = lost->first;
      row.transaction_started_at = lost->second;
    }
    row.memory_locks = s->memory_locks || s->memory_locks_lost;
    journal.push_back(std::move(e));
  }

  // FinishTransaction for a session that stays open.
  void EndTransaction(Session* s, Time now, EventType how) {
    FinishTransaction(s, now, how);
    JournalSession(s);
  }

  // TransactionManager::NoTransaction, for a call that needs the
  // transaction: a session told that its transaction was lost at a restart
  // is told once; the mark goes and only then the lost transaction's locks
  // are released.
  Status MissingTransaction(Session* s, Time now,
                            std::string_view hint =
                                "; begin one, or use "
                                "owner Session") {
    Status st = transactions.NoTransaction(s, hint);
    if (st.code() == StatusCode::kTransactionLost) {
      transactions.ForgetLost(s);
      locks.ReleaseAll(now, s, LockOwner::kTransaction);
      JournalSession(s);
    }
    return st;
  }

  void FinishTransaction(
      Session* s, Time now, EventType how,
      LockManager::RowDeletes rows = LockManager::RowDeletes::kEach) {
    locks.EndTransaction(now, s, rows);
    const engine::Transaction& t = *s->transaction;
    Event e = SessionEvent(how, now, s);
    e.transaction = t.id;
    const std::string deadline_ns = t.deadline_ns;
    if (how == EventType::kTransactionExpired) {
      e.ns = deadline_ns;
      e.until = t.deadline;
    }
    transactions.End(s);
    Emit(e);
  }

  // Rolls back the transaction of `s` for staying open too long.
  void ExpireTransaction(Session* s, Time at) {
    transactions.NoteExpired(s, at);
    EndTransaction(s, at, EventType::kTransactionExpired);
  }

  // TransactionManager::Bind; a transaction already past its deadline is
  // rolled back at once, and the call that used `ns` is refused with
  // kTransactionExpired.
  Status BindTransaction(Session* s, std::string_view ns, Time now) {
    if (transactions.Bind(s, ns, now)) return Status::Ok();
    ExpireTransaction(s, now);
    return transactions.NoTransaction(s);
  }

  // Whether `s` may ask for a lock as `owner` in `ns` now. May roll back a
  // transaction past its namespace's longest open time.
  Status MayRequest(Session* s, std::string_view ns, LockOwner owner,
                    Time now) {
    if (owner == LockOwner::kTransaction && s->transaction == nullptr) {
      return MissingTransaction(s, now);
    }
    if (s->waiting != nullptr) return LockManager::WaitPending(s);
    if (owner == LockOwner::kTransaction) {
      if (Status st = BindTransaction(s, ns, now); !st.ok()) return st;
    }
    if (!s->memory_locks && locks.IsMemoryNamespace(ns)) {
      // Before any such lock, so that a restart knows whom to tell.
      s->memory_locks = true;
      JournalSession(s);
    }
    return Status::Ok();
  }

  // The session of an acquire-all call, if it may ask for the call's next
  // lock now (AcquireAllCalls::MayRequest).
  Result<Session*> CallSession(SessionId id, std::string_view ns,
                               LockOwner owner, Time now) {
    Session* s = sessions.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (Status st = MayRequest(s, ns, owner, now); !st.ok()) {
      return std::unexpected(st);
    }
    return s;
  }

  // The session `id` with an open transaction, for staging a `what`.
  Result<Session*> StagingSession(SessionId id, std::string_view what,
                                  Time now) {
    Session* s = sessions.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (s->transaction == nullptr) {
      return std::unexpected(MissingTransaction(
          s, now,
          " to stage the " + std::string(what) +
              " in; begin one, or leave out \"session\" to write at once"));
    }
    return s;
  }

  Result<StageOutcome> StageRecordWrite(Time now, SessionId id,
                                        StagedRecordWrite w) {
    auto s = StagingSession(id, StagedWriteKindName(w.kind), now);
    if (!s) return std::unexpected(s.error());
    if (Status st = BindTransaction(*s, w.ns, now); !st.ok()) {
      return std::unexpected(st);
    }
    auto checked = records.CheckStage(now, w);
    if (!checked) return std::unexpected(checked.error());
    if (*checked != RefusalReason::kNone) {
      StageOutcome out;
      out.staged_writes = (*s)->transaction->staged.size();
      out.reason = *checked;
      return out;
    }
    return transactions.Stage(*s, std::move(w));
  }

  // Commit's first pass: whether every staged write can still be applied,
  // each after the ones before it. Changes nothing.
  Status CheckStaged(const engine::Transaction& t, Time now) {
    engine::RecordTable::CommitCheck record_check(records);
    engine::OperationTable::CommitCheck operation_check(operations);
    const auto& writes = t.staged.writes();
    for (std::size_t i = 0; i < writes.size(); ++i) {
      std::optional<std::string> why = std::visit(
          Overloaded{
              [&](const StagedRecordWrite& w) {
                return record_check.Check(now, w);
              },
              [&](const StagedOperation& w) {
                return operation_check.Check(w);
              },
              // A message whose key was enqueued meanwhile is skipped at
              // apply (deduplicated), never refused.
              [](const StagedEnqueue&) -> std::optional<std::string> {
                return std::nullopt;
              },
          },
          writes[i]);
      if (!why) continue;
      const std::string what =
          std::visit([](const auto& w) { return w.Describe(); }, writes[i]);
      return Status(StatusCode::kTransactionAborted,
                    "commit refused: staged write " + std::to_string(i + 1) +
                        " of " + std::to_string(writes.size()) + " (" + what +
                        ") cannot be applied: " + *why +
                        "; the transaction was rolled back and none of its "
                        "writes were applied");
    }
    return Status::Ok();
  }

  // Commit's second pass: applies every staged write, in order.
  std::vector<AppliedWrite> ApplyStaged(const engine::Transaction& t,
                                        Time now) {
    std::vector<AppliedWrite> applied;
    applied.reserve(t.staged.size());
    for (const StagedWrite& w : t.staged.writes()) {
      applied.push_back(std::visit(Overloaded{
                                       [&](const StagedRecordWrite& r) {
                                         return records.ApplyStaged(now, r);
                                       },
                                       [&](const StagedOperation& o) {
                                         return operations.ApplyStaged(now, o);
                                       },
                                       [&](const StagedEnqueue& m) {
                                         return outbox.ApplyStaged(now, m);
                                       },
                                   },
                                   w));
    }
    return applied;
  }

  SessionInfo Info(const Session* s) const {
    SessionInfo info;
    info.id = s->id;
    info.name = s->name;
    info.ttl = s->ttl;
    info.opened_at = s->opened_at;
    info.expires_at = s->expires_at;
    info.deadlock_priority = s->deadlock_priority;
    info.caller = s->caller;
    info.locks = s->total_grants();
    if (s->transaction != nullptr) {
      info.transaction = TransactionManager::Info(*s->transaction);
    }
    info.waiting = locks.WaitOf(s);
    return info;
  }

  // Every command's frame, so that none can forget either half: on entry
  // it applies what fell due by `now` and sets `now` to the instant the
  // command acts at (never before one already seen); on every exit it
  // carries on, at that instant, the acquire-all calls whose waiting lock
  // the command decided. Every Engine method that takes `now` opens one but
  // the loaders (Restore*, RestartRestoredSessions), which run before the
  // first (scripts/check-engine-commands).
  class Command {
   public:
    Command(Units& units, Time& now) : units_(units) {
      now = units_.Advance(now);
    }
    Command(const Command&) = delete;
    Command& operator=(const Command&) = delete;
    ~Command() {
      if (units_.locks.has_call_steps()) {
        units_.acquire_all.Settle(units_.last_now);
      }
    }

   private:
    Units& units_;
  };

  // --- Events
  // -----------------------------------------------------------------

  static Event SessionEvent(EventType type, Time now, const Session* s) {
    Event e;
    e.type = type;
    e.at = now;
    e.session = s->id;
    e.session_name = s->name;
    return e;
  }

  void Emit(const Event& e) {
    if (events != nullptr) events->OnEvent(e);
  }

  EventSink* events;
  JournalBatch journal;
  // Before the units that add to it, so that it outlives them.
  DeadlineQueue deadlines;
  engine::FenceSource fences;
  engine::RecordTable records;
  engine::OperationTable operations;
  engine::OutboxTable outbox;
  SessionTable sessions;
  TransactionManager transactions;
  // After the sessions its grants and waiters point to, so that it goes
  // first.
  LockManager locks;
  // After the tables and the lock manager it uses.
  engine::AcquireAllCalls acquire_all;
  bool started = false;  // a command has run: Restore is too late
  std::size_t restored_sessions = 0;
  std::size_t restored_locks = 0;
  Time last_now{};
};

Engine::Engine(EngineOptions options)
    : units_(std::make_unique<Units>(options)) {}
Engine::~Engine() = default;

// --- Sessions
// -----------------------------------------------------------------

Result<SessionInfo> Engine::OpenSession(Time now,
                                        const SessionOptions& options) {
  Units& u = *units_;
  const Units::Command command(u, now);
  if (Status st =
          ValidateSession(options.ttl, options.deadlock_priority, options.name);
      !st.ok()) {
    return std::unexpected(st);
  }
  Session* s = u.sessions.Open(options, now);
  u.JournalSession(s);
  Event e = Units::SessionEvent(EventType::kSessionOpened, now, s);
  e.until = s->expires_at;
  u.Emit(e);
  return u.Info(s);
}

Result<KeepAliveOutcome> Engine::KeepAlive(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  u.sessions.KeepAlive(s, now);
  KeepAliveOutcome out;
  out.expires_at = s->expires_at;
  if (u.locks.EndQuietFor(now, s)) {
    // Told once: its row now marks only what it asked for since the restart.
    out.locks_lost = true;
    u.JournalSession(s);
  }
  out.lost = u.locks.TakeLost(s);
  return out;
}

Status Engine::EndSession(Time now, SessionId id, SessionEnd how) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return SessionNotFound(id);
  u.EndSession(s, now, EventType::kSessionClosed,
               how == SessionEnd::kByAdministrator);
  return Status::Ok();
}

Status Engine::SetDeadlockPriority(Time now, SessionId id, int priority) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return SessionNotFound(id);
  if (priority < kMinDeadlockPriority || priority > kMaxDeadlockPriority) {
    return BadPriority();
  }
  s->deadlock_priority = priority;
  u.JournalSession(s);
  return Status::Ok();
}

Result<SessionInfo> Engine::GetSession(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  return u.Info(s);
}

std::vector<SessionInfo> Engine::ListSessions(Time now) {
  Units& u = *units_;
  const Units::Command command(u, now);
  std::vector<SessionInfo> out;
  out.reserve(u.sessions.size());
  u.sessions.ForEach([&](Session* s) { out.push_back(u.Info(s)); });
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

// --- Transactions
// -------------------------------------------------------------

Result<TransactionInfo> Engine::BeginTransaction(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (u.transactions.IsLost(s)) {
    return std::unexpected(u.MissingTransaction(s, now));
  }
  auto begun = u.transactions.Begin(s, now);
  if (!begun) return begun;
  u.JournalSession(s);
  Event e = Units::SessionEvent(EventType::kTransactionBegun, now, s);
  e.transaction = begun->id;
  u.Emit(e);
  return begun;
}

Result<CommitOutcome> Engine::CommitTransaction(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (s->transaction == nullptr) {
    return std::unexpected(u.MissingTransaction(s, now));
  }
  if (Status st = u.CheckStaged(*s->transaction, now); !st.ok()) {
    u.EndTransaction(s, now, EventType::kTransactionRolledBack);
    return std::unexpected(st);
  }
  CommitOutcome out;
  out.transaction = s->transaction->id;
  out.applied = u.ApplyStaged(*s->transaction, now);
  u.EndTransaction(s, now, EventType::kTransactionCommitted);
  return out;
}

Status Engine::Commit(Time now, SessionId id) {
  const Units::Command command(*units_, now);
  auto committed = CommitTransaction(now, id);
  return committed ? Status::Ok() : committed.error();
}

Status Engine::Rollback(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return SessionNotFound(id);
  if (s->transaction == nullptr) return u.MissingTransaction(s, now);
  u.EndTransaction(s, now, EventType::kTransactionRolledBack);
  return Status::Ok();
}

// --- Application locks
// --------------------------------------------------------

Result<AcquireOutcome> Engine::Acquire(Time now, const AcquireRequest& req) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(req.session);
  if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
  if (req.timeout < kWaitForever) return std::unexpected(BadTimeout());
  if (!IsRequestable(req.mode)) return std::unexpected(BadMode());
  if (Status st = ValidateKey(req.key); !st.ok()) return std::unexpected(st);
  auto max_hold = u.locks.HoldLimitFor(req.key.ns, req.max_hold);
  if (!max_hold) return std::unexpected(max_hold.error());
  if (Status st = u.MayRequest(s, req.key.ns, req.owner, now); !st.ok()) {
    return std::unexpected(st);
  }
  WaitTerms terms{req.timeout.count() != 0, DeadlineAfter(now, req.timeout)};
  terms.max_hold = *max_hold;
  return u.locks.Acquire(now, s, req.key, req.mode, req.owner, terms);
}

Result<AcquireAllOutcome> Engine::AcquireAll(Time now,
                                             const AcquireAllRequest& req) {
  Units& u = *units_;
  const Units::Command command(u, now);
  if (req.locks.empty()) {
    return Error(StatusCode::kBadRequest, "locks must not be empty");
  }
  if (req.locks.size() > kMaxLocksPerAcquireAll) {
    return Error(StatusCode::kBadRequest,
                 "at most " + std::to_string(kMaxLocksPerAcquireAll) +
                     " locks per call; got " +
                     std::to_string(req.locks.size()));
  }
  engine::AcquireAllCall call;
  call.session = req.session;
  call.ns = req.ns;
  call.principal = req.principal;
  call.owner = req.owner;
  for (const WantedLock& w : req.locks) {
    call.locks.emplace_back(std::string(w.resource), w.mode);
  }
  // std::string orders by unsigned bytes: the canonical order.
  std::ranges::sort(call.locks, {}, &std::pair<std::string, LockMode>::first);
  for (std::size_t i = 1; i < call.locks.size(); ++i) {
    if (call.locks[i].first == call.locks[i - 1].first) {
      return Error(StatusCode::kBadRequest,
                   "resource \"" + call.locks[i].first +
                       "\" is listed twice; list it once with the mode you "
                       "need");
    }
  }
  Session* s = u.sessions.Find(req.session);
  if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
  if (req.timeout < kWaitForever) return std::unexpected(BadTimeout());
  for (const auto& [resource, mode] : call.locks) {
    if (!IsRequestable(mode)) return std::unexpected(BadMode());
    const LockKey key{req.ns, req.principal, resource};
    if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
    if (Status st = u.locks.CheckIsLock(key); !st.ok()) {
      return std::unexpected(st);
    }
    // A release drops a reference; it cannot convert back, so a failure
    // could not undo a conversion.
    const LockMode held = u.locks.Held(s, key, req.owner);
    if (held != LockMode::kNoLock && Combine(held, mode) != held) {
      return Error(StatusCode::kBadRequest,
                   "session " + std::to_string(s->id) + " holds \"" + resource +
                       "\" as " + std::string(LockModeName(held)) +
                       "; acquire-all does not convert locks (a failure "
                       "could not undo it): ask for it with acquire");
    }
  }
  auto max_hold = u.locks.HoldLimitFor(req.ns, req.max_hold);
  if (!max_hold) return std::unexpected(max_hold.error());
  call.max_hold = *max_hold;
  call.may_wait = req.timeout.count() != 0;
  call.deadline = DeadlineAfter(now, req.timeout);
  return u.acquire_all.Start(now, std::move(call));
}

Status Engine::Release(Time now, const ReleaseRequest& req) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(req.session);
  if (s == nullptr) return SessionNotFound(req.session);
  if (Status st = ValidateKey(req.key); !st.ok()) return st;
  if (req.owner == LockOwner::kTransaction && s->transaction == nullptr) {
    return u.MissingTransaction(s, now);
  }
  return u.locks.Release(now, s, req.key, req.owner);
}

Result<LockMode> Engine::Mode(Time now, SessionId id, const LockKey& key,
                              LockOwner owner) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  // As APPLOCK_MODE (error 3918) and Test: no transaction, no answer.
  if (owner == LockOwner::kTransaction && s->transaction == nullptr) {
    return std::unexpected(u.transactions.NoTransaction(s));
  }
  return u.locks.Held(s, key, owner);
}

Result<bool> Engine::Test(Time now, SessionId id, const LockKey& key,
                          LockMode mode, LockOwner owner) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (!IsRequestable(mode)) return std::unexpected(BadMode());
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  if (owner == LockOwner::kTransaction && s->transaction == nullptr) {
    return std::unexpected(u.transactions.NoTransaction(s));
  }
  return u.locks.WouldGrant(s, key, mode, owner);
}

Result<bool> Engine::Cancel(Time now, SessionId id) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  return u.locks.Cancel(now, s);
}

bool Engine::CancelWait(Time now, WaitId wait) {
  Units& u = *units_;
  const Units::Command command(u, now);
  return u.locks.CancelWait(now, wait);
}

std::optional<LockInfo> Engine::GetLock(Time now, const LockKey& key) {
  const Units::Command command(*units_, now);
  return units_->locks.GetLock(key);
}

Result<std::vector<BrokenHold>> Engine::BreakLock(Time now, SessionId id,
                                                  const LockKey& key) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
  return u.locks.Break(now, s, key, /*semaphore=*/false);
}

Result<std::vector<BrokenHold>> Engine::BreakSemaphore(Time now, SessionId id,
                                                       const LockKey& key) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (Status st = ValidateKey(key, "name"); !st.ok()) {
    return std::unexpected(st);
  }
  return u.locks.Break(now, s, key, /*semaphore=*/true);
}

std::vector<LockInfo> Engine::ListLocks(Time now, std::string_view ns) {
  const Units::Command command(*units_, now);
  return units_->locks.List(ns);
}

Result<AcquireOutcome> Engine::AcquireSemaphore(Time now,
                                                const SemaphoreRequest& req) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(req.session);
  if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
  if (req.timeout < kWaitForever) return std::unexpected(BadTimeout());
  if (req.limit < 1 || req.limit > kMaxSemaphoreLimit) {
    return Error(StatusCode::kBadRequest,
                 "limit must be 1.." + std::to_string(kMaxSemaphoreLimit) +
                     "; got " + std::to_string(req.limit));
  }
  if (req.permits < 1 || req.permits > req.limit) {
    return Error(StatusCode::kBadRequest,
                 "permits must be 1..limit (" + std::to_string(req.limit) +
                     "); got " + std::to_string(req.permits));
  }
  if (Status st = ValidateKey(req.key, "name"); !st.ok()) {
    return std::unexpected(st);
  }
  auto max_hold = u.locks.HoldLimitFor(req.key.ns, req.max_hold);
  if (!max_hold) return std::unexpected(max_hold.error());
  if (Status st = u.MayRequest(s, req.key.ns, req.owner, now); !st.ok()) {
    return std::unexpected(st);
  }
  WaitTerms terms{req.timeout.count() != 0, DeadlineAfter(now, req.timeout)};
  terms.max_hold = *max_hold;
  return u.locks.AcquirePermits(now, s, req.key, req.permits, req.limit,
                                req.owner, terms);
}

Result<std::uint32_t> Engine::ReleaseSemaphore(
    Time now, const SemaphoreReleaseRequest& req) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(req.session);
  if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
  if (Status st = ValidateKey(req.key, "name"); !st.ok()) {
    return std::unexpected(st);
  }
  if (req.owner == LockOwner::kTransaction && s->transaction == nullptr) {
    return std::unexpected(u.MissingTransaction(s, now));
  }
  return u.locks.ReleasePermits(now, s, req.key, req.owner, req.permits);
}

std::vector<SemaphoreInfo> Engine::ListSemaphores(Time now,
                                                  std::string_view ns) {
  const Units::Command command(*units_, now);
  return units_->locks.ListSemaphores(ns);
}

std::optional<SemaphoreInfo> Engine::GetSemaphore(Time now,
                                                  const LockKey& key) {
  const Units::Command command(*units_, now);
  return units_->locks.GetSemaphore(key);
}

std::vector<NamespaceInfo> Engine::ListNamespaces(Time now) {
  Units& u = *units_;
  const Units::Command command(u, now);
  std::map<std::string, NamespaceInfo, std::less<>> by_ns;
  u.locks.CountByNamespace(by_ns);
  u.records.CountByNamespace(by_ns);
  u.outbox.ListTopics(by_ns);
  std::vector<NamespaceInfo> out;
  for (auto& [name, info] : by_ns) {
    info.ns = name;
    out.push_back(std::move(info));
  }
  return out;
}

// --- Records and checkouts
// ----------------------------------------------------

void Engine::SetNamespaceOptions(std::string_view ns, NamespaceOptions o) {
  units_->records.SetNamespaceOptions(ns, o);
  units_->locks.SetMemoryNamespace(ns, o.locks == LockDurability::kMemory);
  units_->outbox.SetMaxAttempts(ns, o.outbox_max_attempts);
  units_->transactions.SetLimit(ns, o.max_transaction);
  units_->locks.SetLockDelay(ns, o.lock_delay);
  units_->locks.SetMaxHold(ns, o.max_hold);
}

Result<std::uint64_t> Engine::InsertRecord(Time now, RecordKey key,
                                           std::string_view body, Fence fence) {
  const Units::Command command(*units_, now);
  return units_->records.Insert(now, key, body, fence);
}

Result<RecordView> Engine::GetRecord(Time now, RecordKey key) {
  const Units::Command command(*units_, now);
  return units_->records.Get(now, key);
}

Result<RecordPage> Engine::ListRecords(Time now, const ListRecordsQuery& q) {
  const Units::Command command(*units_, now);
  return units_->records.List(now, q);
}

Result<CheckoutOutcome> Engine::Checkout(Time now, const CheckoutRequest& r) {
  const Units::Command command(*units_, now);
  return units_->records.Checkout(now, r);
}

Result<WriteOutcome> Engine::Save(Time now, RecordKey key, LeaseProof proof,
                                  std::string_view body,
                                  std::optional<std::uint64_t> if_version,
                                  Fence fence) {
  const Units::Command command(*units_, now);
  return units_->records.Save(now, key, proof, body, if_version, fence);
}

Result<WriteOutcome> Engine::Checkin(Time now, RecordKey key,
                                     LeaseProof proof) {
  const Units::Command command(*units_, now);
  return units_->records.Checkin(now, key, proof);
}

Result<WriteOutcome> Engine::DeleteRecord(Time now, RecordKey key,
                                          LeaseProof proof, Fence fence) {
  const Units::Command command(*units_, now);
  return units_->records.Delete(now, key, proof, fence);
}

Result<std::size_t> Engine::PurgeExpired(Time now, std::string_view ns,
                                         std::chrono::milliseconds older) {
  const Units::Command command(*units_, now);
  return units_->records.Purge(now, ns, older);
}

Result<bool> Engine::BreakCheckout(Time now, RecordKey key) {
  const Units::Command command(*units_, now);
  return units_->records.Break(now, key);
}

// --- Staged record writes
// -----------------------------------------------------

Result<StageOutcome> Engine::StageInsert(Time now, SessionId s, RecordKey key,
                                         std::string_view body, Fence fence) {
  const Units::Command command(*units_, now);
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kInsert;
  w.ns = key.ns;
  w.key = key.key;
  w.body = body;
  w.fence = fence;
  return units_->StageRecordWrite(now, s, std::move(w));
}

Result<StageOutcome> Engine::StageSave(Time now, SessionId s, RecordKey key,
                                       LeaseProof proof, std::string_view body,
                                       std::optional<std::uint64_t> if_version,
                                       Fence fence) {
  const Units::Command command(*units_, now);
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kSave;
  w.ns = key.ns;
  w.key = key.key;
  w.body = body;
  w.owner = proof.owner;
  w.token = proof.token;
  w.if_version = if_version;
  w.fence = fence;
  return units_->StageRecordWrite(now, s, std::move(w));
}

Result<StageOutcome> Engine::StageDelete(Time now, SessionId s, RecordKey key,
                                         LeaseProof proof, Fence fence) {
  const Units::Command command(*units_, now);
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kDelete;
  w.ns = key.ns;
  w.key = key.key;
  w.owner = proof.owner;
  w.token = proof.token;
  w.fence = fence;
  return units_->StageRecordWrite(now, s, std::move(w));
}

// --- Idempotent operations
// ----------------------------------------------------

Result<OperationStatus> Engine::BeginOperation(Time now, SessionId id,
                                               OperationKey key) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = u.sessions.Find(id);
  if (s == nullptr) return std::unexpected(SessionNotFound(id));
  if (s->transaction == nullptr) {
    return std::unexpected(u.MissingTransaction(
        s, now, "; begin one, then begin the operation in it"));
  }
  if (Status st = u.BindTransaction(s, key.ns, now); !st.ok()) {
    return std::unexpected(st);
  }
  return u.operations.Get(key);
}

Result<StageOutcome> Engine::CompleteOperation(Time now, SessionId id,
                                               OperationKey key,
                                               std::string_view outcome) {
  Units& u = *units_;
  const Units::Command command(u, now);
  auto s = u.StagingSession(id, "operation's completion", now);
  if (!s) return std::unexpected(s.error());
  if (Status st = u.BindTransaction(*s, key.ns, now); !st.ok()) {
    return std::unexpected(st);
  }
  StagedOperation w{std::string(key.ns), std::string(key.op_id),
                    std::string(outcome)};
  if (Status st = u.operations.CheckStage(w); !st.ok()) {
    return std::unexpected(st);
  }
  for (const StagedWrite& staged : (*s)->transaction->staged.writes()) {
    const auto* o = std::get_if<StagedOperation>(&staged);
    if (o != nullptr && o->ns == w.ns && o->op_id == w.op_id) {
      return Error(
          StatusCode::kExists,
          "this transaction completes operation \"" + w.op_id + "\" already");
    }
  }
  return u.transactions.Stage(*s, std::move(w));
}

// --- Outbox
// -------------------------------------------------------------------

Result<EnqueueOutcome> Engine::Enqueue(Time now, const EnqueueRequest& r) {
  Units& u = *units_;
  const Units::Command command(u, now);
  Session* s = nullptr;
  if (r.session) {
    auto found = u.StagingSession(*r.session, "enqueue", now);
    if (!found) return std::unexpected(found.error());
    s = *found;
    if (Status st = u.BindTransaction(s, r.ns, now); !st.ok()) {
      return std::unexpected(st);
    }
  }
  if (Status st = u.outbox.Validate(r); !st.ok()) return std::unexpected(st);
  EnqueueOutcome out;
  if (auto existing = u.outbox.FindKey(r.ns, r.topic, r.key)) {
    out.id = *existing;
    out.duplicate = true;
    return out;
  }
  if (s == nullptr) {
    out.id = u.outbox.ReserveId();
    u.outbox.Add(now, r, out.id);
    return out;
  }
  const engine::StagedWrites& staged = s->transaction->staged;
  for (const StagedWrite& w : staged.writes()) {
    const auto* m = std::get_if<StagedEnqueue>(&w);
    if (m != nullptr && m->ns == r.ns && m->topic == r.topic &&
        m->key == r.key) {
      out.id = m->id;
      out.duplicate = true;
      out.staged = true;
      out.staged_writes = staged.size();
      return out;
    }
  }
  StagedEnqueue w{std::string(r.ns), std::string(r.topic), std::string(r.key),
                  std::string(r.payload), 0};
  // Checked before the id is reserved, so that a refusal uses none.
  if (Status st = u.transactions.Admit(s, w.bytes()); !st.ok()) {
    return std::unexpected(st);
  }
  w.id = u.outbox.ReserveId();
  out.id = w.id;
  auto added = u.transactions.Stage(s, std::move(w));
  if (!added) return std::unexpected(added.error());
  out.staged = true;
  out.staged_writes = added->staged_writes;
  return out;
}

Result<std::vector<ClaimedMessage>> Engine::Claim(Time now,
                                                  const ClaimRequest& r) {
  const Units::Command command(*units_, now);
  return units_->outbox.Claim(now, r);
}

Result<AckOutcome> Engine::Ack(Time now, std::string_view ns,
                               std::string_view topic, MessageId id,
                               std::string_view claim_token) {
  const Units::Command command(*units_, now);
  return units_->outbox.Ack(now, ns, topic, id, claim_token);
}

Result<OutboxSummary> Engine::GetOutbox(Time now, std::string_view ns,
                                        std::string_view topic) {
  const Units::Command command(*units_, now);
  return units_->outbox.Summary(now, ns, topic);
}

// --- Durability
// ---------------------------------------------------------------

Status Engine::RestoreKey(Time now, KeyRow&& row) {
  if (units_->started) return RestoreTooLate();
  units_->fences.Restore(std::max(row.fence, row.write_fence));
  return units_->records.RestoreKey(now, std::move(row));
}

Status Engine::RestoreOperation(OperationRow&& row) {
  if (units_->started) return RestoreTooLate();
  return units_->operations.Restore(std::move(row));
}

Status Engine::RestoreMessage(MessageRow&& row) {
  if (units_->started) return RestoreTooLate();
  return units_->outbox.Restore(std::move(row));
}

Status Engine::RestoreFences(Fence reserved) {
  if (units_->started) return RestoreTooLate();
  units_->fences.Restore(reserved);
  return Status::Ok();
}

Status Engine::RestoreSession(Time now, SessionRow&& row) {
  Units& u = *units_;
  if (u.started) return RestoreTooLate();
  if (row.id == 0 || u.sessions.Find(row.id) != nullptr) {
    return Status(StatusCode::kBadRequest,
                  "session " + std::to_string(row.id) +
                      " cannot be restored: its id is 0 or restored already");
  }
  if (Status st = ValidateSession(row.ttl, row.deadlock_priority, row.name);
      !st.ok()) {
    return st;
  }
  Session* s = u.sessions.Restore(row, now);
  if (row.transaction != 0) {
    u.transactions.NoteLost(s, row.transaction,
                            row.transaction_started_at.value_or(row.opened_at));
  }
  if (row.memory_locks) u.locks.QuietFor(s);
  ++u.restored_sessions;
  return Status::Ok();
}

Status Engine::RestartRestoredSessions(Time now) {
  Units& u = *units_;
  if (u.started) return RestoreTooLate();
  // A keep-alive moves only the session's deadline, never the table's
  // sessions, so the walk may make one for each.
  u.sessions.ForEach([&](engine::Session* s) { u.sessions.KeepAlive(s, now); });
  return Status::Ok();
}

Status Engine::RestoreLock(LockRow&& row) {
  Units& u = *units_;
  if (u.started) return RestoreTooLate();
  Session* s = u.sessions.Find(row.session);
  if (s == nullptr) {
    return Status(StatusCode::kBadRequest,
                  "a lock row of session " + std::to_string(row.session) +
                      " cannot be restored: the session is not restored");
  }
  const LockKey key{row.ns, row.principal, row.resource};
  if (Status st = ValidateKey(key); !st.ok()) {
    return Status(StatusCode::kBadRequest,
                  "a lock row of session " + std::to_string(row.session) +
                      " cannot be restored: " + st.message());
  }
  if (row.owner == LockOwner::kTransaction && row.lost == LostReason::kNone &&
      !u.transactions.IsLost(s)) {
    return Status(StatusCode::kBadRequest,
                  "a Transaction-owned lock row of session " +
                      std::to_string(row.session) +
                      " cannot be restored: its row has no transaction");
  }
  if (Status st = u.locks.Restore(s, key, row); !st.ok()) return st;
  u.fences.Restore(row.fence);
  ++u.restored_locks;
  return Status::Ok();
}

Status Engine::RestoreSessionIds(SessionId reserved) {
  if (units_->started) return RestoreTooLate();
  units_->sessions.RestoreIds(reserved);
  return Status::Ok();
}

Status Engine::RestoreTransactionIds(TransactionId reserved) {
  if (units_->started) return RestoreTooLate();
  units_->transactions.RestoreIds(reserved);
  return Status::Ok();
}

Status Engine::RestoreLockDelay(std::uint64_t until_us) {
  if (units_->started) return RestoreTooLate();
  if (until_us == 0) return Status::Ok();
  units_->locks.HoldBackAfterRestart(
      Time(Duration(static_cast<Duration::rep>(until_us))));
  return Status::Ok();
}

Status Engine::Restore(Time now, const DurableState& state) {
  for (const KeyRow& row : state.rows) {
    if (Status st = RestoreKey(now, KeyRow(row)); !st.ok()) return st;
  }
  for (const OperationRow& row : state.operations) {
    if (Status st = RestoreOperation(OperationRow(row)); !st.ok()) return st;
  }
  for (const MessageRow& row : state.messages) {
    if (Status st = RestoreMessage(MessageRow(row)); !st.ok()) return st;
  }
  for (const SessionRow& row : state.sessions) {
    if (Status st = RestoreSession(now, SessionRow(row)); !st.ok()) return st;
  }
  for (const LockRow& row : state.locks) {
    if (Status st = RestoreLock(LockRow(row)); !st.ok()) return st;
  }
  if (Status st = RestoreSessionIds(state.session_ids_reserved); !st.ok()) {
    return st;
  }
  if (Status st = RestoreTransactionIds(state.transaction_ids_reserved);
      !st.ok()) {
    return st;
  }
  if (Status st = RestoreLockDelay(state.lock_delay_until_us); !st.ok()) {
    return st;
  }
  return RestoreFences(state.fences_reserved);
}

JournalBatch Engine::TakeJournal() {
  return std::exchange(units_->journal, {});
}

bool Engine::HasJournal() const { return !units_->journal.empty(); }

// --- Time
// ---------------------------------------------------------------------

void Engine::AdvanceTo(Time now) { const Units::Command command(*units_, now); }

std::optional<Time> Engine::NextDeadline() const {
  return units_->deadlines.Next();
}

std::vector<FinishedWait> Engine::TakeFinishedWaits() {
  return units_->locks.TakeFinished();
}

EngineStats Engine::Stats() const {
  const Units& u = *units_;
  EngineStats st;
  st.sessions = u.sessions.size();
  st.open_transactions = u.transactions.open();
  st.oldest_transaction_start = u.transactions.oldest_start();
  st.resources = u.locks.resource_count();
  u.sessions.ForEach(
      [&](const Session* s) { st.granted_locks += s->total_grants(); });
  st.waiting = u.locks.waiting();
  st.deadlocks = u.locks.deadlocks();
  st.timeouts = u.locks.timeouts();
  st.holds_expired = u.locks.holds_expired();
  st.holds_broken = u.locks.holds_broken();
  st.transactions_expired = u.transactions.expired();
  st.last_fence = u.fences.last();
  st.keys = u.records.key_count();
  st.active_checkouts = u.records.active_leases();
  st.restored_sessions = u.restored_sessions;
  st.restored_locks = u.restored_locks;
  st.sessions_owed_lock_news = u.locks.sessions_owed_news();
  return st;
}

}  // namespace leasehold
