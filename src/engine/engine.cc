// Engine: the policy of application locks over LockTable and SessionTable.
// See docs/lock-manager.md for the rules and why they are so.
#include "leasehold/engine.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "engine/deadline_queue.h"
#include "engine/deadlock_detector.h"
#include "engine/fence_source.h"
#include "engine/lock_table.h"
#include "engine/operation_table.h"
#include "engine/outbox_table.h"
#include "engine/record_table.h"
#include "engine/session_table.h"

namespace leasehold {

using engine::ConflictsWithAny;
using engine::CycleEdge;
using engine::DeadlineKind;
using engine::DeadlineQueue;
using engine::DeadlockDetector;
using engine::Grant;
using engine::LockTable;
using engine::ModeBit;
using engine::ModeMask;
using engine::OwnerIndex;
using engine::Resource;
using engine::Session;
using engine::SessionTable;
using engine::StagedEnqueue;
using engine::StagedOperation;
using engine::StagedRecordWrite;
using engine::StagedWrite;
using engine::Waiter;

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

// When a wait of `timeout` from `now` ends; none for kWaitForever and 0.
std::optional<Time> DeadlineAfter(Time now, std::chrono::milliseconds timeout) {
  if (timeout <= std::chrono::milliseconds::zero()) return std::nullopt;
  return now + std::min(timeout, kLongestTimedWait);
}

Status SessionNotFound(SessionId id) {
  return Status(StatusCode::kSessionNotFound,
                "session " + std::to_string(id) +
                    " does not exist or has expired; open a new one");
}

// std::visit over several lambdas, one per alternative.
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

// Why `s` has no transaction to act in: kTransactionExpired just after one
// was rolled back for staying open too long, else kNoTransaction + `hint`.
Status NoTransaction(const Session* s, std::string_view hint =
                                           "; begin one, or use owner "
                                           "Session") {
  if (const auto& x = s->expired_transaction) {
    return Status(StatusCode::kTransactionExpired,
                  "transaction " + std::to_string(x->id) + " of session " +
                      std::to_string(s->id) + " was rolled back at " +
                      FormatTime(x->at) + ": it stayed open longer than the " +
                      std::to_string(x->limit.count()) +
                      " ms that namespace \"" + x->ns +
                      "\" allows (max_transaction_ms); begin a new "
                      "transaction and do its work again");
  }
  return Status(StatusCode::kNoTransaction, "session " + std::to_string(s->id) +
                                                " has no open transaction" +
                                                std::string(hint));
}

}  // namespace

class Engine::Impl {
 public:
  explicit Impl(EngineOptions options)
      : events_(options.events),
        fences_(options.fence_floor, &journal_),
        records_(options.max_body_bytes, &fences_, &journal_, options.events,
                 &deadlines_),
        operations_(options.max_body_bytes, &journal_, options.events),
        outbox_(options.max_body_bytes, &journal_, options.events),
        sessions_(options.session_id_base, &deadlines_),
        staging_limits_{options.max_staged_writes, options.max_staged_bytes} {}

  ~Impl() {
    // Drop parked requests and grants before the sessions they point to.
    std::vector<Session*> all;
    sessions_.ForEach([&](Session* s) { all.push_back(s); });
    for (Session* s : all) {
      if (s->waiting != nullptr) table_.Dequeue(s->waiting);
      for (LockOwner o : {LockOwner::kTransaction, LockOwner::kSession}) {
        while (s->grants[OwnerIndex(o)] != nullptr) {
          Grant* g = s->grants[OwnerIndex(o)];
          Resource* r = g->resource;
          table_.RemoveGrant(g);
          table_.EraseIfIdle(r);
        }
      }
    }
  }

  // --- Sessions -------------------------------------------------------------

  Result<SessionInfo> OpenSession(Time now, const SessionOptions& options) {
    now = AdvanceTo(now);
    if (options.ttl.count() <= 0) {
      return Error(StatusCode::kBadRequest, "ttl_ms must be greater than 0");
    }
    if (options.deadlock_priority < kMinDeadlockPriority ||
        options.deadlock_priority > kMaxDeadlockPriority) {
      return Error(StatusCode::kBadRequest,
                   "deadlock_priority must be between -10 and 10");
    }
    if (!options.name.empty()) {
      if (Status st = ValidateName(options.name, "session name"); !st.ok()) {
        return std::unexpected(st);
      }
    }
    Session* s = sessions_.Open(options, now);
    Event e = SessionEvent(EventType::kSessionOpened, now, s);
    e.until = s->expires_at;
    Emit(e);
    return Info(s);
  }

  Result<Time> KeepAlive(Time now, SessionId id) {
    now = AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    sessions_.KeepAlive(s, now);
    return s->expires_at;
  }

  Status EndSession(Time now, SessionId id) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return SessionNotFound(id);
    End(s, now, EventType::kSessionClosed);
    return Status::Ok();
  }

  Status SetDeadlockPriority(Time now, SessionId id, int priority) {
    AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return SessionNotFound(id);
    if (priority < kMinDeadlockPriority || priority > kMaxDeadlockPriority) {
      return Status(StatusCode::kBadRequest,
                    "deadlock_priority must be between -10 and 10");
    }
    s->deadlock_priority = priority;
    return Status::Ok();
  }

  Result<SessionInfo> GetSession(Time now, SessionId id) {
    AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    return Info(s);
  }

  std::vector<SessionInfo> ListSessions(Time now) {
    AdvanceTo(now);
    std::vector<SessionInfo> out;
    out.reserve(sessions_.size());
    sessions_.ForEach([&](Session* s) { out.push_back(Info(s)); });
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    return out;
  }

  // --- Transactions ---------------------------------------------------------

  Result<TransactionInfo> BeginTransaction(Time now, SessionId id) {
    now = AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (s->transaction) {
      return Error(StatusCode::kTransactionOpen,
                   "session " + std::to_string(id) +
                       " already has transaction " +
                       std::to_string(s->transaction->id) +
                       " open; commit or roll it back first");
    }
    s->transaction.emplace();
    s->transaction->id = sessions_.NextTransactionId();
    s->transaction->started_at = now;
    s->expired_transaction.reset();
    ++open_transactions_;
    Event e = SessionEvent(EventType::kTransactionBegun, now, s);
    e.transaction = s->transaction->id;
    Emit(e);
    return *s->transaction;
  }

  Result<CommitOutcome> Commit(Time now, SessionId id) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (!s->transaction) return std::unexpected(NoTransaction(s));
    if (Status st = CheckStaged(s, now); !st.ok()) {
      FinishTransaction(s, now, EventType::kTransactionRolledBack);
      return std::unexpected(st);
    }
    CommitOutcome out;
    out.transaction = s->transaction->id;
    out.applied.reserve(s->staged.size());
    for (const StagedWrite& w : s->staged.writes()) {
      out.applied.push_back(
          std::visit(Overloaded{
                         [&](const StagedRecordWrite& r) {
                           return records_.ApplyStaged(now, r);
                         },
                         [&](const StagedOperation& o) {
                           return operations_.ApplyStaged(now, o);
                         },
                         [&](const StagedEnqueue& m) {
                           return outbox_.ApplyStaged(now, m);
                         },
                     },
                     w));
    }
    FinishTransaction(s, now, EventType::kTransactionCommitted);
    return out;
  }

  Status Rollback(Time now, SessionId id) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return SessionNotFound(id);
    if (!s->transaction) return NoTransaction(s);
    FinishTransaction(s, now, EventType::kTransactionRolledBack);
    return Status::Ok();
  }

  // --- Staged writes --------------------------------------------------------

  // The session `id` with an open transaction, for staging a `what`.
  Result<Session*> StagingSession(SessionId id, std::string_view what) {
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (!s->transaction) {
      return std::unexpected(NoTransaction(
          s, " to stage the " + std::string(what) +
                 " in; begin one, or leave out \"session\" to write at once"));
    }
    return s;
  }

  // Appends a checked write to the transaction if it fits the limits.
  template <typename W>
  Result<StageOutcome> Admit(Session* s, W&& w) {
    const std::size_t bytes = w.bytes();
    if (Status st = s->staged.Admit(staging_limits_, bytes); !st.ok()) {
      return std::unexpected(st);
    }
    s->staged.Add(std::forward<W>(w), bytes);
    StageOutcome out;
    out.staged = true;
    out.staged_writes = s->staged.size();
    return out;
  }

  Result<StageOutcome> Stage(Time now, SessionId id, StagedRecordWrite w) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    auto s = StagingSession(id, StagedWriteKindName(w.kind));
    if (!s) return std::unexpected(s.error());
    if (Status st = BindTransaction(*s, w.ns, now); !st.ok()) {
      return std::unexpected(st);
    }
    auto checked = records_.CheckStage(now, w);
    if (!checked) return std::unexpected(checked.error());
    if (*checked != RefusalReason::kNone) {
      StageOutcome out;
      out.staged_writes = (*s)->staged.size();
      out.reason = *checked;
      return out;
    }
    return Admit(*s, std::move(w));
  }

  // --- Idempotent operations ------------------------------------------------

  Result<OperationStatus> BeginOperation(Time now, SessionId id,
                                         OperationKey key) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (!s->transaction) {
      return std::unexpected(
          NoTransaction(s, "; begin one, then begin the operation in it"));
    }
    if (Status st = BindTransaction(s, key.ns, now); !st.ok()) {
      return std::unexpected(st);
    }
    return operations_.Get(key);
  }

  Result<StageOutcome> CompleteOperation(Time now, SessionId id,
                                         OperationKey key,
                                         std::string_view outcome) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    auto s = StagingSession(id, "operation's completion");
    if (!s) return std::unexpected(s.error());
    if (Status st = BindTransaction(*s, key.ns, now); !st.ok()) {
      return std::unexpected(st);
    }
    StagedOperation w{std::string(key.ns), std::string(key.op_id),
                      std::string(outcome)};
    if (Status st = operations_.CheckStage(w); !st.ok()) {
      return std::unexpected(st);
    }
    for (const StagedWrite& staged : (*s)->staged.writes()) {
      const auto* o = std::get_if<StagedOperation>(&staged);
      if (o != nullptr && o->ns == w.ns && o->op_id == w.op_id) {
        return Error(
            StatusCode::kExists,
            "this transaction completes operation \"" + w.op_id + "\" already");
      }
    }
    return Admit(*s, std::move(w));
  }

  // --- Outbox ---------------------------------------------------------------

  Result<EnqueueOutcome> Enqueue(Time now, const EnqueueRequest& r) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = nullptr;
    if (r.session) {
      auto found = StagingSession(*r.session, "enqueue");
      if (!found) return std::unexpected(found.error());
      s = *found;
      if (Status st = BindTransaction(s, r.ns, now); !st.ok()) {
        return std::unexpected(st);
      }
    }
    if (Status st = outbox_.Validate(r); !st.ok()) return std::unexpected(st);
    EnqueueOutcome out;
    if (auto existing = outbox_.FindKey(r.ns, r.topic, r.key)) {
      out.id = *existing;
      out.duplicate = true;
      return out;
    }
    if (s == nullptr) {
      out.id = outbox_.ReserveId();
      outbox_.Add(now, r, out.id);
      return out;
    }
    for (const StagedWrite& staged : s->staged.writes()) {
      const auto* m = std::get_if<StagedEnqueue>(&staged);
      if (m != nullptr && m->ns == r.ns && m->topic == r.topic &&
          m->key == r.key) {
        out.id = m->id;
        out.duplicate = true;
        out.staged = true;
        out.staged_writes = s->staged.size();
        return out;
      }
    }
    StagedEnqueue w{std::string(r.ns), std::string(r.topic), std::string(r.key),
                    std::string(r.payload), 0};
    if (Status st = s->staged.Admit(staging_limits_, w.bytes()); !st.ok()) {
      return std::unexpected(st);
    }
    w.id = outbox_.ReserveId();
    out.id = w.id;
    auto staged = Admit(s, std::move(w));
    if (!staged) return std::unexpected(staged.error());
    out.staged = true;
    out.staged_writes = staged->staged_writes;
    return out;
  }

  engine::OutboxTable& outbox() { return outbox_; }

  // --- Application locks ----------------------------------------------------

  Result<AcquireOutcome> Acquire(Time now, const AcquireRequest& req) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(req.session);
    if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
    if (req.timeout < kWaitForever) return std::unexpected(BadTimeout());
    if (!IsRequestable(req.mode)) return std::unexpected(BadMode());
    if (Status st = ValidateKey(req.key); !st.ok()) return std::unexpected(st);
    if (Status st = MayRequest(s, req.key.ns, req.owner, now); !st.ok()) {
      return std::unexpected(st);
    }
    Resource* r = table_.FindOrCreate(req.key);
    const Decision d = Decide(r, s, req.owner, req.mode);
    AcquireOutcome out;
    if (d.grantable) {  // the common case, without the detour through Decided
      const Grant* g = GrantTo(r, s, req.owner, req.mode, now);
      out.fence = g->fence;
      out.held = g->mode;
      out.count = g->count;
      return out;
    }
    WaitId id = 0;
    std::optional<Decided> done = WaitOrTimeOut(
        now, s, r, req.owner, req.mode, d, req.timeout.count() != 0,
        DeadlineAfter(now, req.timeout), id);
    if (!done) {
      out.wait = id;
      return out;
    }
    out.result = done->result;
    out.fence = done->fence;
    out.held = done->held;
    out.count = done->count;
    out.deadlock = std::move(done->deadlock);
    return out;
  }

  Result<AcquireAllOutcome> AcquireAll(Time now, const AcquireAllRequest& req) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    if (req.locks.empty()) {
      return Error(StatusCode::kBadRequest, "locks must not be empty");
    }
    if (req.locks.size() > kMaxLocksPerAcquireAll) {
      return Error(StatusCode::kBadRequest,
                   "at most " + std::to_string(kMaxLocksPerAcquireAll) +
                       " locks per call; got " +
                       std::to_string(req.locks.size()));
    }
    AllOrNothing run;
    run.session = req.session;
    run.ns = req.ns;
    run.principal = req.principal;
    run.owner = req.owner;
    for (const WantedLock& w : req.locks) {
      run.locks.emplace_back(std::string(w.resource), w.mode);
    }
    // std::string orders by unsigned bytes: the canonical order.
    std::ranges::sort(run.locks, {}, &std::pair<std::string, LockMode>::first);
    for (std::size_t i = 1; i < run.locks.size(); ++i) {
      if (run.locks[i].first == run.locks[i - 1].first) {
        return Error(StatusCode::kBadRequest,
                     "resource \"" + run.locks[i].first +
                         "\" is listed twice; list it once with the mode you "
                         "need");
      }
    }
    Session* s = sessions_.Find(req.session);
    if (s == nullptr) return std::unexpected(SessionNotFound(req.session));
    if (req.timeout < kWaitForever) return std::unexpected(BadTimeout());
    for (const auto& [resource, mode] : run.locks) {
      if (!IsRequestable(mode)) return std::unexpected(BadMode());
      const LockKey key{req.ns, req.principal, resource};
      if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
      // A release drops a reference; it cannot convert back, so a failure
      // could not undo a conversion.
      Resource* r = table_.Find(key);
      const Grant* g =
          r != nullptr ? table_.FindGrant(r, s, req.owner) : nullptr;
      if (g != nullptr && Combine(g->mode, mode) != g->mode) {
        return Error(StatusCode::kBadRequest,
                     "session " + std::to_string(s->id) + " holds \"" +
                         resource + "\" as " +
                         std::string(LockModeName(g->mode)) +
                         "; acquire-all does not convert locks (a failure "
                         "could not undo it): ask for it with acquire");
      }
    }
    run.may_wait = req.timeout.count() != 0;
    run.deadline = DeadlineAfter(now, req.timeout);
    WaitId id = 0;
    if (!Continue(run, now, id)) {
      runs_.emplace(id, std::move(run));
      AcquireAllOutcome out;
      out.wait = id;
      return out;
    }
    if (!run.result.error.ok()) return std::unexpected(run.result.error);
    AcquireAllOutcome out;
    out.result = std::move(run.result);
    return out;
  }

  Status Release(Time now, const ReleaseRequest& req) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(req.session);
    if (s == nullptr) return SessionNotFound(req.session);
    if (Status st = ValidateKey(req.key); !st.ok()) return st;
    if (req.owner == LockOwner::kTransaction && !s->transaction) {
      return NoTransaction(s);
    }
    Resource* r = table_.Find(req.key);
    Grant* g = r != nullptr ? table_.FindGrant(r, s, req.owner) : nullptr;
    if (g == nullptr) {
      return Status(StatusCode::kNotHeld,
                    "session " + std::to_string(s->id) + " does not hold \"" +
                        std::string(req.key.resource) + "\" as owner " +
                        std::string(LockOwnerName(req.owner)));
    }
    if (s->waiting != nullptr && s->waiting->resource == r) {
      return Status(StatusCode::kWaitPending,
                    "session " + std::to_string(s->id) +
                        " is waiting to change its lock on this resource; "
                        "cancel the wait before releasing");
    }
    DropReference(g, now);
    return Status::Ok();
  }

  Result<LockMode> Mode(Time now, SessionId id, const LockKey& key,
                        LockOwner owner) {
    AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
    Resource* r = table_.Find(key);
    const Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
    return g != nullptr ? g->mode : LockMode::kNoLock;
  }

  Result<bool> Test(Time now, SessionId id, const LockKey& key, LockMode mode,
                    LockOwner owner) {
    AdvanceTo(now);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (!IsRequestable(mode)) return std::unexpected(BadMode());
    if (Status st = ValidateKey(key); !st.ok()) return std::unexpected(st);
    if (owner == LockOwner::kTransaction && !s->transaction) {
      return std::unexpected(NoTransaction(s));
    }
    Resource* r = table_.Find(key);
    if (r == nullptr) return true;
    return Decide(r, s, owner, mode).grantable;
  }

  Result<bool> Cancel(Time now, SessionId id) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    Session* s = sessions_.Find(id);
    if (s == nullptr) return std::unexpected(SessionNotFound(id));
    if (s->waiting == nullptr) return false;
    AbortWait(s->waiting, AcquireResult::kCancelled, now, nullptr);
    return true;
  }

  bool CancelWait(Time now, WaitId id) {
    now = AdvanceTo(now);
    const SettleOnReturn settle(this);
    auto it = waits_.find(id);
    if (it == waits_.end()) return false;
    AbortWait(it->second, AcquireResult::kCancelled, now, nullptr);
    return true;
  }

  std::vector<LockInfo> ListLocks(Time now, std::string_view ns) {
    AdvanceTo(now);
    std::vector<LockInfo> out;
    table_.ForEachResource([&](const Resource* r) {
      const auto key = LockTable::DecodeKey(r->key);
      if (!ns.empty() && key.ns != ns) return;
      out.push_back(Describe(r, key));
    });
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.ns, a.principal, a.resource) <
             std::tie(b.ns, b.principal, b.resource);
    });
    return out;
  }

  std::vector<NamespaceInfo> ListNamespaces(Time now) {
    AdvanceTo(now);
    std::map<std::string, NamespaceInfo, std::less<>> by_ns;
    table_.ForEachResource([&](const Resource* r) {
      const std::string_view ns = LockTable::DecodeKey(r->key).ns;
      auto it = by_ns.find(ns);
      if (it == by_ns.end())
        it = by_ns.emplace(std::string(ns), NamespaceInfo{}).first;
      ++it->second.lock_resources;
    });
    records_.CountByNamespace(by_ns);
    outbox_.ListTopics(by_ns);
    std::vector<NamespaceInfo> out;
    for (auto& [name, info] : by_ns) {
      info.ns = name;
      out.push_back(std::move(info));
    }
    return out;
  }

  // --- Records and checkouts -------------------------------------------------

  engine::RecordTable& records() { return records_; }

  // Applies to transactions that use `ns` from now on; 0 removes the limit.
  void SetTransactionLimit(std::string_view ns, std::chrono::milliseconds m) {
    if (m.count() > 0) {
      transaction_limits_.insert_or_assign(std::string(ns), m);
    } else if (auto it = transaction_limits_.find(ns);
               it != transaction_limits_.end()) {
      transaction_limits_.erase(it);
    }
  }

  Status RestoreOperation(OperationRow&& row) {
    if (started_) {
      return Status(StatusCode::kBadRequest,
                    "Restore must come before any command");
    }
    return operations_.Restore(std::move(row));
  }

  Status RestoreMessage(MessageRow&& row) {
    if (started_) {
      return Status(StatusCode::kBadRequest,
                    "Restore must come before any command");
    }
    return outbox_.Restore(std::move(row));
  }

  Status RestoreKey(Time now, KeyRow&& row) {
    if (started_) {
      return Status(StatusCode::kBadRequest,
                    "Restore must come before any command");
    }
    fences_.Restore(row.fence);
    return records_.RestoreKey(now, std::move(row));
  }

  Status RestoreFences(Fence reserved) {
    if (started_) {
      return Status(StatusCode::kBadRequest,
                    "Restore must come before any command");
    }
    fences_.Restore(reserved);
    return Status::Ok();
  }

  JournalBatch TakeJournal() { return std::exchange(journal_, {}); }
  bool HasJournal() const { return !journal_.empty(); }

  // --- Time -----------------------------------------------------------------

  // Applies everything due at or before `now`; returns the effective now.
  Time AdvanceTo(Time now) {
    started_ = true;
    now = std::max(now, last_now_);
    last_now_ = now;
    // Each deadline is taken from the queue before it applies, so what it
    // does may add or remove others (a timeout lets a waiter in; an expiry
    // ends a transaction) and the loop sees the queue as it then is.
    while (const std::optional<engine::Deadline> d = deadlines_.PopDueBy(now)) {
      switch (d->kind) {
        case DeadlineKind::kWaitTimeout:
          ++timeouts_;
          AbortWait(waits_.at(d->id), AcquireResult::kTimeout, d->at, nullptr);
          break;
        case DeadlineKind::kTransactionLimit:
          ExpireTransaction(sessions_.Find(d->id), d->at);
          break;
        case DeadlineKind::kSessionExpiry:
          End(sessions_.Find(d->id), d->at, EventType::kSessionExpired);
          break;
        case DeadlineKind::kLeaseExpiry:
          records_.ExpireLease(d->id, d->at);
          break;
      }
      SettleRuns(d->at);
    }
    return now;
  }

  std::optional<Time> NextDeadline() const { return deadlines_.Next(); }

  std::vector<FinishedWait> TakeFinishedWaits() {
    return std::exchange(finished_, {});
  }

  EngineStats Stats() const {
    EngineStats st;
    st.sessions = sessions_.size();
    st.open_transactions = open_transactions_;
    st.resources = table_.resource_count();
    sessions_.ForEach([&](const Session* s) {
      st.granted_locks += s->total_grants();
      if (s->transaction &&
          (!st.oldest_transaction_start ||
           s->transaction->started_at < *st.oldest_transaction_start)) {
        st.oldest_transaction_start = s->transaction->started_at;
      }
    });
    st.waiting = waits_.size();
    st.deadlocks = deadlocks_;
    st.timeouts = timeouts_;
    st.transactions_expired = transactions_expired_;
    st.last_fence = fences_.last();
    st.keys = records_.key_count();
    st.active_checkouts = records_.active_leases();
    return st;
  }

 private:
  struct Decision {
    bool grantable = false;
    bool conversion = false;  // the session already holds the resource
    LockMode target = LockMode::kNoLock;
  };

  // What a lock request got: at once (Lock), or after its wait.
  struct Decided {
    AcquireResult result = AcquireResult::kGranted;
    Fence fence = 0;                    // on a grant
    LockMode held = LockMode::kNoLock;  // on a grant
    std::uint32_t count = 0;            // on a grant
    std::optional<DeadlockReport> deadlock;
  };

  // An acquire-all call on its way, while one of its locks waits (see
  // Engine::AcquireAll).
  struct AllOrNothing {
    SessionId session = 0;
    std::string ns;
    std::string principal;
    LockOwner owner = LockOwner::kTransaction;
    std::vector<std::pair<std::string, LockMode>> locks;  // canonical order
    bool may_wait = true;
    std::optional<Time> deadline;  // of the whole call
    bool waited = false;
    AcquireAllResult result;  // result.locks: those granted so far
    // The decision on the waiting lock, until SettleRuns takes it.
    std::optional<FinishedWait> step;
  };

  Status ValidateKey(const LockKey& key) const {
    if (Status st = ValidateName(key.ns, "namespace"); !st.ok()) return st;
    if (Status st = ValidateName(key.principal, "principal"); !st.ok())
      return st;
    return ValidateName(key.resource, "resource");
  }

  // Whether `s` asking `owner`/`mode` on `r` may be granted now. A holder's
  // request (re-acquisition or conversion) waits only on other sessions'
  // granted modes; anyone else also queues behind every conflicting waiter.
  Decision Decide(Resource* r, Session* s, LockOwner owner, LockMode mode) {
    Decision d;
    const Grant* own = table_.FindGrant(r, s, owner);
    d.target = own != nullptr ? Combine(own->mode, mode) : mode;
    if (own != nullptr && d.target == own->mode) {
      d.conversion = true;
      d.grantable = true;  // nothing changes for others
      return d;
    }
    d.conversion = own != nullptr || table_.SessionHolds(r, s);
    const ModeMask granted =
        d.conversion ? table_.OthersGrantedMask(r, s) : r->GrantedMask();
    if (ConflictsWithAny(d.target, granted)) return d;
    if (!d.conversion) {
      for (const Waiter* w = r->queue_head; w != nullptr; w = w->next) {
        if (!Compatible(w->target, d.target)) return d;
      }
    }
    d.grantable = true;
    return d;
  }

  Grant* GrantTo(Resource* r, Session* s, LockOwner owner, LockMode mode,
                 Time now) {
    Grant* g = table_.FindGrant(r, s, owner);
    if (g == nullptr) {
      g = table_.AddGrant(r, s, owner, mode, fences_.Next(), now);
    } else {
      table_.SetGrantMode(g, Combine(g->mode, mode));
      ++g->count;
      g->fence = fences_.Next();
    }
    Event e = LockEvent(EventType::kLockGranted, now, s, r, owner);
    e.mode = g->mode;
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
    return g;
  }

  // Whether `s` may ask for a lock as `owner` in `ns` now. May roll back a
  // transaction past its namespace's longest open time (BindTransaction).
  Status MayRequest(Session* s, std::string_view ns, LockOwner owner,
                    Time now) {
    if (owner == LockOwner::kTransaction && !s->transaction) {
      return NoTransaction(s);
    }
    if (s->waiting != nullptr) {
      return Status(StatusCode::kWaitPending,
                    "session " + std::to_string(s->id) +
                        " is already waiting for a lock; one request at a "
                        "time per session (cancel it, or use another "
                        "session)");
    }
    if (owner == LockOwner::kTransaction) return BindTransaction(s, ns, now);
    return Status::Ok();
  }

  // One lock request past its checks: granted at once, or as
  // WaitOrTimeOut says. Returns the decision, or nothing while it waits.
  std::optional<Decided> Lock(Time now, Session* s, const LockKey& key,
                              LockMode mode, LockOwner owner, bool may_wait,
                              std::optional<Time> deadline, WaitId& id) {
    Resource* r = table_.FindOrCreate(key);
    const Decision d = Decide(r, s, owner, mode);
    if (!d.grantable) {
      return WaitOrTimeOut(now, s, r, owner, mode, d, may_wait, deadline, id);
    }
    const Grant* g = GrantTo(r, s, owner, mode, now);
    Decided done;
    done.fence = g->fence;
    done.held = g->mode;
    done.count = g->count;
    return done;
  }

  // A request that `d` says cannot be granted now: refused at once with
  // kTimeout (it may not wait, or `deadline` has passed), or parked until
  // `deadline` (none: without limit) under wait id `id` (0: a new one,
  // stored in `id`). Returns the decision, or nothing while it waits.
  std::optional<Decided> WaitOrTimeOut(Time now, Session* s, Resource* r,
                                       LockOwner owner, LockMode mode,
                                       const Decision& d, bool may_wait,
                                       std::optional<Time> deadline,
                                       WaitId& id) {
    Decided done;
    if (!may_wait || (deadline && *deadline <= now)) {
      ++timeouts_;
      Event e = LockEvent(EventType::kLockTimeout, now, s, r, owner);
      e.mode = mode;
      Emit(e);
      table_.EraseIfIdle(r);
      done.result = AcquireResult::kTimeout;
      return done;
    }
    if (id == 0) id = ++last_wait_id_;
    std::optional<FinishedWait> inline_done =
        Park(now, s, r, owner, mode, d, deadline, id);
    if (!inline_done) return std::nullopt;
    return DecidedOf(std::move(*inline_done));
  }

  static Decided DecidedOf(FinishedWait&& w) {
    return Decided{w.result, w.fence, w.held, w.count, std::move(w.deadlock)};
  }

  std::optional<FinishedWait> Park(Time now, Session* s, Resource* r,
                                   LockOwner owner, LockMode mode,
                                   const Decision& d,
                                   std::optional<Time> deadline, WaitId id) {
    Waiter* w = table_.Enqueue(r, s, owner, mode, d.target, d.conversion, now,
                               deadline, id);
    waits_.emplace(id, w);
    if (deadline) deadlines_.Add({*deadline, DeadlineKind::kWaitTimeout, id});

    // Results for this request decided while we resolve deadlocks are
    // answered inline rather than through TakeFinishedWaits().
    inline_wait_ = id;
    inline_result_.reset();
    bool announced = false;
    while (s->waiting == w) {
      auto cycle = detector_.FindCycle(s);
      if (!cycle) break;
      Session* victim = ChooseVictim(*cycle, s);
      const DeadlockReport report = MakeReport(*cycle, victim);
      ++deadlocks_;
      if (victim != s && !announced) {
        Announce(w, now);
        announced = true;
      }
      AbortWait(victim->waiting, AcquireResult::kDeadlock, now, &report);
    }
    inline_wait_ = 0;
    if (inline_result_) return std::exchange(inline_result_, std::nullopt);
    if (!announced) Announce(w, now);
    return std::nullopt;
  }

  // --- Acquire-all
  // ------------------------------------------------------------

  // Takes the call's locks from the next one on until one waits (false) or
  // the call ends (true; run.result is then final).
  bool Continue(AllOrNothing& run, Time now, WaitId& id) {
    while (run.result.locks.size() < run.locks.size()) {
      Session* s = sessions_.Find(run.session);
      if (s == nullptr) {
        run.result.error = SessionNotFound(run.session);
        Undo(run, now);
        return true;
      }
      const auto& [resource, mode] = run.locks[run.result.locks.size()];
      const LockKey key{run.ns, run.principal, resource};
      if (Status st = MayRequest(s, key.ns, run.owner, now); !st.ok()) {
        run.result.error = st;
        Undo(run, now);
        return true;
      }
      std::optional<Decided> done =
          Lock(now, s, key, mode, run.owner, run.may_wait, run.deadline, id);
      if (!done) return false;
      if (!Took(run, *done, now)) return true;
    }
    run.result.result =
        run.waited ? AcquireResult::kGrantedAfterWait : AcquireResult::kGranted;
    return true;
  }

  // Records the decision on the call's next lock. A refusal undoes the call
  // and ends it: returns false.
  bool Took(AllOrNothing& run, Decided& done, Time now) {
    const std::string& resource = run.locks[run.result.locks.size()].first;
    if (done.result == AcquireResult::kGranted ||
        done.result == AcquireResult::kGrantedAfterWait) {
      run.waited =
          run.waited || done.result == AcquireResult::kGrantedAfterWait;
      run.result.locks.push_back({resource, done.held, done.fence, done.count});
      return true;
    }
    run.result.result = done.result;
    run.result.refused = resource;
    run.result.released = run.result.locks.size();
    run.result.deadlock = std::move(done.deadlock);
    Undo(run, now);
    return false;
  }

  // Drops, newest first, the reference the call took on each lock. One that
  // is gone already (the session or its transaction ended) stays gone.
  void Undo(AllOrNothing& run, Time now) {
    Session* s = sessions_.Find(run.session);
    for (auto it = run.result.locks.rbegin();
         s != nullptr && it != run.result.locks.rend(); ++it) {
      Resource* r = table_.Find({run.ns, run.principal, it->resource});
      Grant* g = r != nullptr ? table_.FindGrant(r, s, run.owner) : nullptr;
      if (g != nullptr) DropReference(g, now);
    }
    run.result.locks.clear();
  }

  // Carries on the calls whose waiting lock was decided (see Deliver).
  void SettleRuns(Time now) {
    while (!ready_runs_.empty()) {
      const WaitId id = ready_runs_.front();
      ready_runs_.pop_front();
      auto it = runs_.find(id);
      AllOrNothing& run = it->second;
      Decided step = DecidedOf(std::move(*run.step));
      run.step.reset();
      WaitId same = id;
      if (Took(run, step, now) && !Continue(run, now, same)) continue;
      FinishedWait done;
      done.wait = id;
      done.session = run.session;
      done.result = run.result.result;
      done.deadlock = run.result.deadlock;
      done.all = std::move(run.result);
      runs_.erase(it);
      finished_.push_back(std::move(done));
    }
  }

  // Ends a command: it may have decided the waiting lock of acquire-all
  // calls, which go on at the command's instant.
  class SettleOnReturn {
   public:
    explicit SettleOnReturn(Impl* impl) : impl_(impl) {}
    SettleOnReturn(const SettleOnReturn&) = delete;
    SettleOnReturn& operator=(const SettleOnReturn&) = delete;
    ~SettleOnReturn() { impl_->SettleRuns(impl_->last_now_); }

   private:
    Impl* impl_;
  };

  void Announce(const Waiter* w, Time now) {
    Event e = LockEvent(EventType::kLockWaiting, now, w->session, w->resource,
                        w->owner);
    e.mode = w->requested;
    e.until = w->deadline;
    Emit(e);
  }

  // Victim: the lowest deadlock priority; among equals, the session that
  // closed the cycle, else the one that started waiting last.
  static Session* ChooseVictim(const std::vector<CycleEdge>& cycle,
                               Session* closer) {
    Session* victim = closer;
    for (const CycleEdge& e : cycle) {
      Session* s = e.waiter;
      if (s->deadlock_priority < victim->deadlock_priority) {
        victim = s;
      } else if (s->deadlock_priority == victim->deadlock_priority &&
                 victim != closer && s->waiting->id > victim->waiting->id) {
        victim = s;
      }
    }
    return victim;
  }

  DeadlockReport MakeReport(const std::vector<CycleEdge>& cycle,
                            const Session* victim) const {
    DeadlockReport report;
    report.victim = victim->id;
    for (const CycleEdge& e : cycle) {
      const auto key = LockTable::DecodeKey(e.resource->key);
      report.cycle.push_back(WaitForEdge{
          e.waiter->id, e.waiter->name, e.holder->id, e.holder->name,
          std::string(key.ns), std::string(key.principal),
          std::string(key.resource), e.wanted});
    }
    return report;
  }

  // Ends a parked request without a grant, then lets others move up.
  void AbortWait(Waiter* w, AcquireResult result, Time now,
                 const DeadlockReport* report) {
    Session* s = w->session;
    Resource* r = w->resource;
    Event e = LockEvent(
        result == AcquireResult::kTimeout     ? EventType::kLockTimeout
        : result == AcquireResult::kCancelled ? EventType::kLockCancelled
                                              : EventType::kLockDeadlock,
        now, s, r, w->owner);
    e.mode = w->requested;
    e.deadlock = report;
    FinishedWait done;
    done.wait = w->id;
    done.session = s->id;
    done.result = result;
    if (report != nullptr) done.deadlock = *report;
    Forget(w);
    Emit(e);
    Deliver(std::move(done));
    GrantWaiters(r, now);
    table_.EraseIfIdle(r);
  }

  // Removes `w` from the queue and the indexes.
  void Forget(Waiter* w) {
    if (w->deadline) {
      deadlines_.Remove({*w->deadline, DeadlineKind::kWaitTimeout, w->id});
    }
    waits_.erase(w->id);
    table_.Dequeue(w);
  }

  // Hands a parked request's decision on: inline to the command that parked
  // it, to the acquire-all call it belongs to (which goes on once the
  // command that decided it is done: see SettleRuns), or to
  // TakeFinishedWaits.
  void Deliver(FinishedWait done) {
    if (done.wait == inline_wait_) {
      inline_result_ = std::move(done);
    } else if (auto run = runs_.find(done.wait); run != runs_.end()) {
      ready_runs_.push_back(done.wait);
      run->second.step = std::move(done);
    } else {
      finished_.push_back(std::move(done));
    }
  }

  // The grant pass: walks the queue in order and grants every request that
  // the relaxed-FIFO rule allows (see Decide).
  void GrantWaiters(Resource* r, Time now) {
    ModeMask waiting_ahead = 0;
    Waiter* w = r->queue_head;
    while (w != nullptr) {
      Waiter* next = w->next;
      const ModeMask granted = w->conversion
                                   ? table_.OthersGrantedMask(r, w->session)
                                   : r->GrantedMask();
      const bool ok =
          !ConflictsWithAny(w->target, granted) &&
          (w->conversion || !ConflictsWithAny(w->target, waiting_ahead));
      if (ok) {
        GrantWaiter(w, now);
      } else {
        waiting_ahead |= ModeBit(w->target);
        // Nothing behind a waiting Exclusive can pass it.
        if ((waiting_ahead & ModeBit(LockMode::kExclusive)) &&
            next != nullptr && !next->conversion) {
          break;
        }
      }
      w = next;
    }
  }

  void GrantWaiter(Waiter* w, Time now) {
    Session* s = w->session;
    Resource* r = w->resource;
    const LockOwner owner = w->owner;
    const LockMode requested = w->requested;
    FinishedWait done;
    done.wait = w->id;
    done.session = s->id;
    done.result = AcquireResult::kGrantedAfterWait;
    Forget(w);
    Grant* g = GrantTo(r, s, owner, requested, now);
    done.fence = g->fence;
    done.held = g->mode;
    done.count = g->count;
    Deliver(std::move(done));
  }

  // Drops one reference of `g`; at zero the grant goes and waiters move up.
  void DropReference(Grant* g, Time now) {
    Resource* r = g->resource;
    Event e = LockEvent(EventType::kLockReleased, now, g->session, r, g->owner);
    e.mode = g->mode;
    e.count = --g->count;
    e.fence = g->fence;
    Emit(e);
    if (g->count > 0) return;
    table_.RemoveGrant(g);
    GrantWaiters(r, now);
    table_.EraseIfIdle(r);
  }

  // Releases every lock `s` holds as `owner`, then lets waiters move up.
  void ReleaseAll(Session* s, LockOwner owner, Time now) {
    std::vector<Resource*> touched;
    touched.reserve(s->grant_count[OwnerIndex(owner)]);
    while (Grant* g = s->grants[OwnerIndex(owner)]) {
      Resource* r = g->resource;
      Event e = LockEvent(EventType::kLockReleased, now, s, r, owner);
      e.mode = g->mode;
      e.fence = g->fence;
      table_.RemoveGrant(g);
      Emit(e);
      touched.push_back(r);
    }
    for (Resource* r : touched) {
      GrantWaiters(r, now);
      table_.EraseIfIdle(r);
    }
  }

  // Commit's first pass: whether every staged write can still be applied,
  // each after the ones before it. Changes nothing.
  Status CheckStaged(const Session* s, Time now) {
    engine::RecordTable::CommitCheck records(records_);
    engine::OperationTable::CommitCheck operations(operations_);
    const auto& writes = s->staged.writes();
    for (std::size_t i = 0; i < writes.size(); ++i) {
      std::optional<std::string> why = std::visit(
          Overloaded{
              [&](const StagedRecordWrite& w) { return records.Check(now, w); },
              [&](const StagedOperation& w) { return operations.Check(w); },
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

  void FinishTransaction(Session* s, Time now, EventType how) {
    // A parked request that the transaction's end would leave meaningless
    // (Transaction-owned, or converting a lock the transaction holds) ends.
    if (Waiter* w = s->waiting) {
      if (w->owner == LockOwner::kTransaction ||
          table_.FindGrant(w->resource, s, LockOwner::kTransaction) !=
              nullptr) {
        AbortWait(w, AcquireResult::kCancelled, now, nullptr);
      }
    }
    s->staged.Clear();
    ReleaseAll(s, LockOwner::kTransaction, now);
    Event e = SessionEvent(how, now, s);
    e.transaction = s->transaction->id;
    const std::optional<Time> deadline = s->transaction->deadline;
    if (deadline) {
      deadlines_.Remove({*deadline, DeadlineKind::kTransactionLimit, s->id});
    }
    const std::string deadline_ns = std::exchange(s->deadline_ns, {});
    s->deadline_limit = {};
    if (how == EventType::kTransactionExpired) {
      e.ns = deadline_ns;
      e.until = deadline;
    }
    s->transaction.reset();
    --open_transactions_;
    Emit(e);
  }

  // Binds the open transaction of `s` to the longest open time of `ns`, if
  // it has one (the earliest deadline wins). A transaction already past it
  // is rolled back at once, and the call that used `ns` is refused with
  // kTransactionExpired.
  Status BindTransaction(Session* s, std::string_view ns, Time now) {
    auto limit = transaction_limits_.find(ns);
    if (limit == transaction_limits_.end()) return Status::Ok();
    TransactionInfo& t = *s->transaction;
    const Time deadline = t.started_at + limit->second;
    if (!t.deadline || deadline < *t.deadline) {
      if (t.deadline) {
        deadlines_.Remove(
            {*t.deadline, DeadlineKind::kTransactionLimit, s->id});
      }
      t.deadline = deadline;
      deadlines_.Add({deadline, DeadlineKind::kTransactionLimit, s->id});
      s->deadline_ns = std::string(ns);
      s->deadline_limit = limit->second;
    }
    if (*t.deadline > now) return Status::Ok();
    ExpireTransaction(s, now);
    return NoTransaction(s);
  }

  // Rolls back the transaction of `s` for staying open too long.
  void ExpireTransaction(Session* s, Time at) {
    ++transactions_expired_;
    s->expired_transaction = Session::ExpiredTransaction{
        s->transaction->id, at, s->deadline_ns, s->deadline_limit};
    FinishTransaction(s, at, EventType::kTransactionExpired);
  }

  void End(Session* s, Time now, EventType how) {
    if (s->waiting != nullptr) {
      AbortWait(s->waiting, AcquireResult::kCancelled, now, nullptr);
    }
    if (s->transaction) {
      FinishTransaction(s, now, EventType::kTransactionRolledBack);
    }
    ReleaseAll(s, LockOwner::kSession, now);
    Emit(SessionEvent(how, now, s));
    sessions_.Erase(s);
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
    info.transaction = s->transaction;
    if (info.transaction) {
      info.transaction->staged_writes = s->staged.size();
      info.transaction->staged_bytes = s->staged.bytes();
    }
    if (s->waiting != nullptr) info.waiting = s->waiting->id;
    return info;
  }

  static LockInfo Describe(const Resource* r, const engine::DecodedKey& key) {
    LockInfo info;
    info.ns = key.ns;
    info.principal = key.principal;
    info.resource = key.resource;
    for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
      info.granted.push_back(GrantedLockInfo{g->session->id, g->session->name,
                                             g->owner, g->mode, g->count,
                                             g->since, g->fence});
    }
    // Oldest grant first reads better than the list's push-front order.
    std::reverse(info.granted.begin(), info.granted.end());
    for (const Waiter* w = r->queue_head; w != nullptr; w = w->next) {
      info.waiting.push_back(WaitingLockInfo{
          w->id, w->session->id, w->session->name, w->owner, w->requested,
          w->target, w->conversion, w->since, w->deadline});
    }
    return info;
  }

  Event SessionEvent(EventType type, Time now, const Session* s) const {
    Event e;
    e.type = type;
    e.at = now;
    e.session = s->id;
    e.session_name = s->name;
    return e;
  }

  Event LockEvent(EventType type, Time now, const Session* s, const Resource* r,
                  LockOwner owner) const {
    Event e = SessionEvent(type, now, s);
    if (events_ == nullptr) return e;  // skip decoding when nobody listens
    const auto key = LockTable::DecodeKey(r->key);
    e.ns = key.ns;
    e.principal = key.principal;
    e.resource = key.resource;
    e.owner = owner;
    if (s->transaction) e.transaction = s->transaction->id;
    return e;
  }

  void Emit(const Event& e) {
    if (events_ != nullptr) events_->OnEvent(e);
  }

  EventSink* events_;
  JournalBatch journal_;
  // Before the tables that add to it, so that it outlives them.
  DeadlineQueue deadlines_;
  engine::FenceSource fences_;
  engine::RecordTable records_;
  engine::OperationTable operations_;
  engine::OutboxTable outbox_;
  bool started_ = false;  // a command has run: Restore is too late
  Time last_now_{};
  SessionTable sessions_;
  LockTable table_;
  DeadlockDetector detector_;
  std::unordered_map<WaitId, Waiter*> waits_;
  std::map<std::string, std::chrono::milliseconds, std::less<>>
      transaction_limits_;
  std::vector<FinishedWait> finished_;
  // Acquire-all calls with a waiting lock, by the call's wait id, and those
  // whose lock was decided, to carry on.
  std::unordered_map<WaitId, AllOrNothing> runs_;
  std::deque<WaitId> ready_runs_;
  WaitId last_wait_id_ = 0;
  WaitId inline_wait_ = 0;
  std::optional<FinishedWait> inline_result_;
  engine::StagingLimits staging_limits_;
  std::size_t open_transactions_ = 0;
  std::uint64_t deadlocks_ = 0;
  std::uint64_t timeouts_ = 0;
  std::uint64_t transactions_expired_ = 0;
};

Engine::Engine(EngineOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
Engine::~Engine() = default;

Result<SessionInfo> Engine::OpenSession(Time now, const SessionOptions& o) {
  return impl_->OpenSession(now, o);
}
Result<Time> Engine::KeepAlive(Time now, SessionId s) {
  return impl_->KeepAlive(now, s);
}
Status Engine::EndSession(Time now, SessionId s) {
  return impl_->EndSession(now, s);
}
Status Engine::SetDeadlockPriority(Time now, SessionId s, int priority) {
  return impl_->SetDeadlockPriority(now, s, priority);
}
Result<SessionInfo> Engine::GetSession(Time now, SessionId s) {
  return impl_->GetSession(now, s);
}
std::vector<SessionInfo> Engine::ListSessions(Time now) {
  return impl_->ListSessions(now);
}
Result<TransactionInfo> Engine::BeginTransaction(Time now, SessionId s) {
  return impl_->BeginTransaction(now, s);
}
Result<CommitOutcome> Engine::CommitTransaction(Time now, SessionId s) {
  return impl_->Commit(now, s);
}
Status Engine::Commit(Time now, SessionId s) {
  auto r = impl_->Commit(now, s);
  return r ? Status::Ok() : r.error();
}
Status Engine::Rollback(Time now, SessionId s) {
  return impl_->Rollback(now, s);
}
Result<AcquireOutcome> Engine::Acquire(Time now, const AcquireRequest& r) {
  return impl_->Acquire(now, r);
}
Result<AcquireAllOutcome> Engine::AcquireAll(Time now,
                                             const AcquireAllRequest& r) {
  return impl_->AcquireAll(now, r);
}
Status Engine::Release(Time now, const ReleaseRequest& r) {
  return impl_->Release(now, r);
}
Result<LockMode> Engine::Mode(Time now, SessionId s, const LockKey& key,
                              LockOwner owner) {
  return impl_->Mode(now, s, key, owner);
}
Result<bool> Engine::Test(Time now, SessionId s, const LockKey& key,
                          LockMode mode, LockOwner owner) {
  return impl_->Test(now, s, key, mode, owner);
}
Result<bool> Engine::Cancel(Time now, SessionId s) {
  return impl_->Cancel(now, s);
}
bool Engine::CancelWait(Time now, WaitId w) {
  return impl_->CancelWait(now, w);
}
std::vector<LockInfo> Engine::ListLocks(Time now, std::string_view ns) {
  return impl_->ListLocks(now, ns);
}
std::vector<NamespaceInfo> Engine::ListNamespaces(Time now) {
  return impl_->ListNamespaces(now);
}
void Engine::AdvanceTo(Time now) { impl_->AdvanceTo(now); }
std::optional<Time> Engine::NextDeadline() const {
  return impl_->NextDeadline();
}
std::vector<FinishedWait> Engine::TakeFinishedWaits() {
  return impl_->TakeFinishedWaits();
}
EngineStats Engine::Stats() const { return impl_->Stats(); }

}  // namespace leasehold

namespace leasehold {

// Records and checkouts: every command first applies what fell due.
void Engine::SetNamespaceOptions(std::string_view ns, NamespaceOptions o) {
  impl_->records().SetNamespaceOptions(ns, o);
  impl_->outbox().SetMaxAttempts(ns, o.outbox_max_attempts);
  impl_->SetTransactionLimit(ns, o.max_transaction);
}
Result<std::uint64_t> Engine::InsertRecord(Time now, RecordKey key,
                                           std::string_view body) {
  return impl_->records().Insert(impl_->AdvanceTo(now), key, body);
}
Result<RecordView> Engine::GetRecord(Time now, RecordKey key) {
  return impl_->records().Get(impl_->AdvanceTo(now), key);
}
Result<RecordPage> Engine::ListRecords(Time now, const ListRecordsQuery& q) {
  return impl_->records().List(impl_->AdvanceTo(now), q);
}
Result<CheckoutOutcome> Engine::Checkout(Time now, const CheckoutRequest& r) {
  return impl_->records().Checkout(impl_->AdvanceTo(now), r);
}
Result<WriteOutcome> Engine::Save(Time now, RecordKey key, LeaseProof proof,
                                  std::string_view body,
                                  std::optional<std::uint64_t> if_version) {
  return impl_->records().Save(impl_->AdvanceTo(now), key, proof, body,
                               if_version);
}
Result<WriteOutcome> Engine::Checkin(Time now, RecordKey key,
                                     LeaseProof proof) {
  return impl_->records().Checkin(impl_->AdvanceTo(now), key, proof);
}
Result<WriteOutcome> Engine::DeleteRecord(Time now, RecordKey key,
                                          LeaseProof proof) {
  return impl_->records().Delete(impl_->AdvanceTo(now), key, proof);
}
Result<std::size_t> Engine::PurgeExpired(Time now, std::string_view ns,
                                         std::chrono::milliseconds older) {
  return impl_->records().Purge(impl_->AdvanceTo(now), ns, older);
}
Result<bool> Engine::BreakCheckout(Time now, RecordKey key) {
  return impl_->records().Break(impl_->AdvanceTo(now), key);
}
Result<StageOutcome> Engine::StageInsert(Time now, SessionId s, RecordKey key,
                                         std::string_view body) {
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kInsert;
  w.ns = key.ns;
  w.key = key.key;
  w.body = body;
  return impl_->Stage(now, s, std::move(w));
}
Result<StageOutcome> Engine::StageSave(
    Time now, SessionId s, RecordKey key, LeaseProof proof,
    std::string_view body, std::optional<std::uint64_t> if_version) {
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kSave;
  w.ns = key.ns;
  w.key = key.key;
  w.body = body;
  w.owner = proof.owner;
  w.token = proof.token;
  w.if_version = if_version;
  return impl_->Stage(now, s, std::move(w));
}
Result<StageOutcome> Engine::StageDelete(Time now, SessionId s, RecordKey key,
                                         LeaseProof proof) {
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kDelete;
  w.ns = key.ns;
  w.key = key.key;
  w.owner = proof.owner;
  w.token = proof.token;
  return impl_->Stage(now, s, std::move(w));
}
Status Engine::RestoreKey(Time now, KeyRow&& row) {
  return impl_->RestoreKey(now, std::move(row));
}
Status Engine::RestoreOperation(OperationRow&& row) {
  return impl_->RestoreOperation(std::move(row));
}
Status Engine::RestoreMessage(MessageRow&& row) {
  return impl_->RestoreMessage(std::move(row));
}
Result<OperationStatus> Engine::BeginOperation(Time now, SessionId s,
                                               OperationKey key) {
  return impl_->BeginOperation(now, s, key);
}
Result<StageOutcome> Engine::CompleteOperation(Time now, SessionId s,
                                               OperationKey key,
                                               std::string_view outcome) {
  return impl_->CompleteOperation(now, s, key, outcome);
}
Result<EnqueueOutcome> Engine::Enqueue(Time now, const EnqueueRequest& r) {
  return impl_->Enqueue(now, r);
}
Result<std::vector<ClaimedMessage>> Engine::Claim(Time now,
                                                  const ClaimRequest& r) {
  return impl_->outbox().Claim(impl_->AdvanceTo(now), r);
}
Result<AckOutcome> Engine::Ack(Time now, std::string_view ns,
                               std::string_view topic, MessageId id,
                               std::string_view claim_token) {
  return impl_->outbox().Ack(impl_->AdvanceTo(now), ns, topic, id, claim_token);
}
Result<OutboxSummary> Engine::GetOutbox(Time now, std::string_view ns,
                                        std::string_view topic) {
  return impl_->outbox().Summary(impl_->AdvanceTo(now), ns, topic);
}
Status Engine::RestoreFences(Fence reserved) {
  return impl_->RestoreFences(reserved);
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
  return RestoreFences(state.fences_reserved);
}
JournalBatch Engine::TakeJournal() { return impl_->TakeJournal(); }
bool Engine::HasJournal() const { return impl_->HasJournal(); }

}  // namespace leasehold
