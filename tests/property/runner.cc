#include "tests/property/runner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/property/invariants.h"

namespace leasehold::property {
namespace internal {

std::string Runner::Run() {
  try {
    for (int slot = 0; slot < scenario_.sessions; ++slot) {
      const auto i = static_cast<std::size_t>(slot);
      const int ttl = i < scenario_.ttl_ms.size() ? scenario_.ttl_ms[i] : 2000;
      Apply(Op{.kind = OpKind::kOpenSession, .slot = slot, .value = ttl},
            "setup");
      if (i < scenario_.start_in_txn.size() && scenario_.start_in_txn[i]) {
        Apply(Op{.kind = OpKind::kBegin, .slot = slot}, "setup");
      }
    }
    for (std::size_t i = 0; i < scenario_.ops.size(); ++i) {
      Apply(scenario_.ops[i], Str("op ", i));
    }
    if (now_ > applied_) {
      current_ = "final AdvanceTo(now)";
      RunAdvanceStep(now_);
    }
  } catch (const CheckFailure& failure) {
    return Str("after ", where_, " [", current_, "] at t+",
               MsSinceStart(step_time_), "ms: ", failure.message,
               "\nlock table after the previous step:\n",
               DescribeLocks(snapshot_));
  }
  return "";
}

void Runner::Apply(const Op& op, const std::string& where) {
  where_ = where;
  current_ = Str(op);
  ++stats_.steps;
  if (op.kind == OpKind::kAdvance) return Advance(op);
  // A late command carries an instant before one the engine has seen,
  // which it must treat as the latest one seen.
  const Time sent = op.late ? now_ - kLateBy : now_;
  const Time effective = std::max(sent, applied_);
  if (SomethingDue(effective) && TouchesPendingWait(op)) {
    // Whether the due events decide this session's own wait before the
    // command acts is not observable from outside, so settle them first.
    current_ = Str("AdvanceTo(now) before ", op);
    RunAdvanceStep(effective);
    current_ = Str(op);
  }
  Step step = NewStep(effective);
  step.sent = sent;
  Execute(op, step);
  FinishStep(step);
}

void Runner::Advance(const Op& op) {
  const Time target = now_ + milliseconds(op.value);
  switch (op.advance) {
    case AdvanceKind::kLazy:
      now_ = target;
      return;
    case AdvanceKind::kJump:
      now_ = target;
      RunAdvanceStep(now_);
      return;
    case AdvanceKind::kStep:
      for (int i = 0;; ++i) {
        const std::optional<Time> next = engine_.NextDeadline();
        if (!next || *next > target) break;
        if (i > 1000) Fail("NextDeadline() does not move forward");
        if (*next <= applied_) {
          Fail(Str("NextDeadline() is t+", MsSinceStart(*next),
                   "ms, already applied"));
        }
        RunAdvanceStep(*next);
      }
      now_ = target;
      RunAdvanceStep(now_);
      return;
  }
}

void Runner::RunAdvanceStep(Time t) {
  Step step = NewStep(t);
  engine_.AdvanceTo(t);
  FinishStep(step);
}

bool Runner::SomethingDue(Time t) const {
  const std::optional<Time> next = engine_.NextDeadline();
  return next && *next <= t;
}

bool Runner::TouchesPendingWait(const Op& op) const {
  const ModelSession& s = slot(op);
  switch (op.kind) {
    case OpKind::kOpenSession:
      return false;
    case OpKind::kCancelWait:
      return waits_.contains(CancelTarget(op));
    default:
      return s.wait.has_value();
  }
}

Step Runner::NewStep(Time t) {
  Step step;
  step.now = t;
  step.sent = t;
  step_time_ = t;
  step.pre_state_known = !SomethingDue(t);
  for (const ModelSession& s : slots_) {
    if (s.alive && s.expires_at <= t) {
      step.expired.insert(s.id);
      if (s.wait) step.must_finish.insert(*s.wait);
    }
  }
  for (const auto& [id, w] : waits_) {
    if (w.deadline && *w.deadline <= t) step.must_finish.insert(id);
  }
  return step;
}

void Runner::Execute(const Op& op, Step& step) {
  switch (op.kind) {
    case OpKind::kAcquire:
      return ExecAcquire(op, step);
    case OpKind::kRelease:
      return ExecRelease(op, step);
    case OpKind::kBegin:
      return ExecBegin(op, step);
    case OpKind::kCommit:
    case OpKind::kRollback:
      return ExecEndTransaction(op, step);
    case OpKind::kCancel:
      return ExecCancel(op, step);
    case OpKind::kCancelWait:
      return ExecCancelWait(op, step);
    case OpKind::kEndSession:
      return ExecEndSession(op, step);
    case OpKind::kOpenSession:
      return ExecOpenSession(op, step);
    case OpKind::kKeepAlive:
      return ExecKeepAlive(op, step);
    case OpKind::kSetPriority:
      return ExecSetPriority(op, step);
    case OpKind::kTest:
      return ExecTest(op, step);
    case OpKind::kMode:
      return ExecMode(op, step);
    case OpKind::kAdvance:
      return;
  }
}

// Checks an outcome against the errors the model says apply. Returns true
// when the command succeeded (and was expected to).
bool Runner::Expect(const Status& status, const std::set<StatusCode>& allowed,
                    const char* what) {
  if (status.ok()) {
    if (!allowed.empty()) {
      Fail(Str(what, " succeeded; expected ", CodesText(allowed)));
    }
    return true;
  }
  if (!allowed.contains(status.code())) {
    Fail(Str(what, " failed with ", status.ToString(), "; expected ",
             CodesText(allowed)));
  }
  ++stats_.errors;
  return false;
}

void Runner::ExecAcquire(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  const bool alive = AliveNow(s, step);
  std::set<StatusCode> allowed;
  if (!alive) allowed.insert(StatusCode::kSessionNotFound);
  if (!IsRequestable(op.mode)) allowed.insert(StatusCode::kBadMode);
  if (op.timeout_ms < -1) allowed.insert(StatusCode::kBadTimeout);
  if (alive && op.owner == LockOwner::kTransaction && !s.in_txn) {
    allowed.insert(StatusCode::kNoTransaction);
  }
  if (alive && s.wait) allowed.insert(StatusCode::kWaitPending);

  const Key key = KeyOf(op);
  const Result<AcquireOutcome> result = engine_.Acquire(
      step.sent, AcquireRequest{.session = s.id,
                                .key = LockKeyOf(op),
                                .mode = op.mode,
                                .owner = op.owner,
                                .timeout = milliseconds(op.timeout_ms)});
  if (!Expect(result, allowed, "Acquire")) return;

  const EntryId id{s.id, op.owner, key};
  const Entry* entry = FindEntry(id);
  const LockMode held = entry ? entry->mode : LockMode::kNoLock;
  const std::uint32_t count = entry ? entry->count : 0;
  const bool conversion = SessionHolds(s.id, key);
  const LockMode target = ExpectedCombine(held, op.mode);
  const bool grantable =
      GrantableAtOnce(SnapshotFind(key), s.id, target, conversion);
  const AcquireOutcome& out = *result;

  if (out.wait) {
    if (op.timeout_ms == 0) Fail("a request with timeout 0 was parked");
    if (step.pre_state_known && grantable) {
      Fail("a request grantable at once was parked");
    }
    const WaitId w = *out.wait;
    if (w == 0 || waits_.contains(w) || finished_.contains(w)) {
      Fail(Str("wait id ", w, " is 0 or was handed out before"));
    }
    PendingWait pending{
        .id = w,
        .session = s.id,
        .key = key,
        .owner = op.owner,
        .requested = op.mode,
        .deadline =
            op.timeout_ms > 0
                ? std::optional<Time>(step.now + milliseconds(op.timeout_ms))
                : std::nullopt,
        .since = step.now,
        .conversion = conversion,
        .seq = next_seq_++};
    waits_[w] = pending;
    s.wait = w;
    ++stats_.parked;
    if (conversion) ++stats_.conversions_parked;
    step.acquirer = s.id;
    BuildHypothetical(step, pending, target);
    return;
  }
  switch (out.result) {
    case AcquireResult::kGrantedAfterWait:
      if (!kChoices.grant_after_other_victim_is_inline) {
        Fail("immediate result granted_after_wait without a wait");
      }
      if (op.timeout_ms == 0 || (step.pre_state_known && grantable)) {
        Fail(
            "granted_after_wait at once for a request that could not "
            "have waited");
      }
      // Only legal when another session's request is the victim of the
      // cycle this one closed (checked when the FinishedWaits arrive).
      step.acquirer = s.id;
      step.inline_grant_after_victim = true;
      BuildHypothetical(step,
                        PendingWait{.id = 0,
                                    .session = s.id,
                                    .key = key,
                                    .owner = op.owner,
                                    .requested = op.mode,
                                    .since = step.now,
                                    .conversion = conversion},
                        target);
      [[fallthrough]];
    case AcquireResult::kGranted: {
      if (out.result == AcquireResult::kGranted && step.pre_state_known &&
          !grantable) {
        Fail(
            "granted at once although it conflicts with a holder or, "
            "not being a conversion, with a waiter");
      }
      if (out.held != target || out.count != count + 1) {
        Fail(Str("granted with ", ShortModeName(out.held), " x", out.count,
                 "; expected ", ShortModeName(target), " x", count + 1));
      }
      Entry& e = entries_[id];
      if (e.count == 0) e.since_lo = e.since_hi = step.now;
      e.mode = target;
      e.count = count + 1;
      e.fence = out.fence;
      step.immediate_fence = out.fence;
      ++stats_.grants_at_once;
      return;
    }
    case AcquireResult::kTimeout:
      if (op.timeout_ms != 0) {
        Fail("timed out at once although its timeout is not 0");
      }
      if (step.pre_state_known && grantable) {
        Fail("timed out at once although grantable at once");
      }
      ++stats_.timeouts;
      ++step.timeouts;
      return;
    case AcquireResult::kDeadlock: {
      if (op.timeout_ms == 0) Fail("deadlock victim with timeout 0");
      if (step.pre_state_known && grantable) {
        Fail("deadlock victim although grantable at once");
      }
      if (!out.deadlock || out.deadlock->victim != s.id) {
        Fail("result -3 without a report naming this session the victim");
      }
      step.acquirer = s.id;
      BuildHypothetical(step,
                        PendingWait{.id = 0,
                                    .session = s.id,
                                    .key = key,
                                    .owner = op.owner,
                                    .requested = op.mode,
                                    .since = step.now,
                                    .conversion = conversion},
                        target);
      CheckDeadlockReport(*out.deadlock, step);
      ++stats_.deadlocks;
      ++step.deadlocks;
      return;
    }
    default:
      Fail(Str("immediate result ", AcquireResultName(out.result)));
  }
}

void Runner::ExecRelease(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  EntryId id{s.id, op.owner, KeyOf(op)};
  if (op.value > 0) {
    std::vector<EntryId> held;
    for (const auto& [e, unused] : entries_) {
      if (e.session == s.id) held.push_back(e);
    }
    if (!held.empty()) {
      id = held[static_cast<std::size_t>(op.value - 1) % held.size()];
    }
  }
  const LockKey lock_key{.ns = std::get<0>(id.key),
                         .principal = std::get<1>(id.key),
                         .resource = std::get<2>(id.key)};
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) {
    allowed.insert(StatusCode::kSessionNotFound);
  } else if (!entries_.contains(id)) {
    if (kChoices.release_without_transaction_is_no_transaction &&
        id.owner == LockOwner::kTransaction && !s.in_txn) {
      allowed.insert(StatusCode::kNoTransaction);
    } else {
      allowed.insert(StatusCode::kNotHeld);
    }
  } else if (kChoices.release_of_awaited_resource_is_wait_pending && s.wait &&
             waits_.at(*s.wait).key == id.key) {
    allowed.insert(StatusCode::kWaitPending);
  }
  const Status status = engine_.Release(
      step.sent,
      ReleaseRequest{.session = s.id, .key = lock_key, .owner = id.owner});
  if (!Expect(status, allowed, "Release")) return;
  Entry& e = entries_[id];
  if (--e.count == 0) entries_.erase(id);
}

void Runner::ExecBegin(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) {
    allowed.insert(StatusCode::kSessionNotFound);
  } else if (s.in_txn) {
    allowed.insert(StatusCode::kTransactionOpen);
  }
  const Result<TransactionInfo> r = engine_.BeginTransaction(step.sent, s.id);
  if (!Expect(r, allowed, "BeginTransaction")) return;
  if (r->id == 0 || !txn_ids_.insert(r->id).second) {
    Fail(Str("transaction id ", r->id, " is 0 or reused"));
  }
  if (r->started_at != step.now) Fail("transaction started_at is not now");
  s.in_txn = true;
}

void Runner::ExecEndTransaction(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) {
    allowed.insert(StatusCode::kSessionNotFound);
  } else if (!s.in_txn) {
    allowed.insert(StatusCode::kNoTransaction);
  }
  const bool commit = op.kind == OpKind::kCommit;
  const Status status = commit ? engine_.Commit(step.sent, s.id)
                               : engine_.Rollback(step.sent, s.id);
  if (!Expect(status, allowed, commit ? "Commit" : "Rollback")) return;
  if (s.wait) {
    const PendingWait& w = waits_.at(*s.wait);
    if (w.owner == LockOwner::kTransaction ||
        (kChoices.end_of_transaction_cancels_session_conversion &&
         entries_.contains(EntryId{s.id, LockOwner::kTransaction, w.key}))) {
      step.may_cancel.insert(*s.wait);
      step.must_finish.insert(*s.wait);
    }
  }
  s.in_txn = false;
  std::erase_if(entries_, [&](const auto& item) {
    return item.first.session == s.id &&
           item.first.owner == LockOwner::kTransaction;
  });
}

void Runner::ExecCancel(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) allowed.insert(StatusCode::kSessionNotFound);
  const Result<bool> r = engine_.Cancel(step.sent, s.id);
  if (!Expect(r, allowed, "Cancel")) return;
  if (*r != s.wait.has_value()) {
    Fail(Str("Cancel returned ", *r, " but the session ",
             s.wait ? "waits" : "does not wait"));
  }
  if (s.wait) {
    step.may_cancel.insert(*s.wait);
    step.must_finish.insert(*s.wait);
  }
}

WaitId Runner::CancelTarget(const Op& op) const {
  const ModelSession& s = slot(op);
  if (op.value == 0) return s.wait.value_or(s.last_wait.value_or(kUnknownWait));
  if (op.value == 1) return s.last_wait.value_or(kUnknownWait);
  return kUnknownWait;
}

void Runner::ExecCancelWait(const Op& op, Step& step) {
  const WaitId w = CancelTarget(op);
  const bool pending = waits_.contains(w);
  const bool r = engine_.CancelWait(step.sent, w);
  if (r != pending) {
    Fail(Str("CancelWait(", w, ") returned ", r, " but the wait is ",
             pending ? "pending" : "not pending"));
  }
  if (pending) {
    step.may_cancel.insert(w);
    step.must_finish.insert(w);
  }
}

void Runner::ExecEndSession(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) allowed.insert(StatusCode::kSessionNotFound);
  if (!Expect(engine_.EndSession(step.sent, s.id), allowed, "EndSession")) {
    return;
  }
  std::erase_if(entries_,
                [&](const auto& item) { return item.first.session == s.id; });
  if (s.wait) {
    step.may_cancel.insert(*s.wait);
    step.must_finish.insert(*s.wait);
  }
  s.alive = false;
  s.in_txn = false;
}

void Runner::ExecOpenSession(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  if (AliveNow(s, step)) return;  // the slot is in use; nothing to do
  const milliseconds ttl(op.value);
  const std::string name = Str(
      "slot", op.slot, "-", ++generation_[static_cast<std::size_t>(op.slot)]);
  SessionOptions options;
  options.name = name;
  options.ttl = ttl;
  const Result<SessionInfo> r = engine_.OpenSession(step.sent, options);
  if (!Expect(r, {}, "OpenSession")) return;
  const SessionInfo& info = *r;
  if (info.id == 0 || slot_of_.contains(info.id)) {
    Fail(Str("session id ", info.id, " is 0 or reused"));
  }
  if (info.name != name || info.ttl != ttl || info.opened_at != step.now ||
      info.expires_at != step.now + ttl || info.deadlock_priority != 0 ||
      info.locks != 0 || info.transaction || info.waiting) {
    Fail("OpenSession's SessionInfo does not describe a new session");
  }
  slot_of_[info.id] = op.slot;
  s = ModelSession{.id = info.id,
                   .alive = true,
                   .name = name,
                   .ttl = ttl,
                   .opened_at = step.now,
                   .expires_at = step.now + ttl};
}

void Runner::ExecKeepAlive(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) allowed.insert(StatusCode::kSessionNotFound);
  const Result<KeepAliveOutcome> r = engine_.KeepAlive(step.sent, s.id);
  if (!Expect(r, allowed, "KeepAlive")) return;
  if (r->expires_at != step.now + s.ttl) {
    Fail("KeepAlive's expiry is not now + ttl");
  }
  if (r->locks_lost) Fail("KeepAlive says locks were lost without a restart");
  s.expires_at = r->expires_at;
}

void Runner::ExecSetPriority(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  std::set<StatusCode> allowed;
  if (!AliveNow(s, step)) allowed.insert(StatusCode::kSessionNotFound);
  if (op.value < -10 || op.value > 10) {
    allowed.insert(StatusCode::kBadRequest);
  }
  if (!Expect(engine_.SetDeadlockPriority(step.sent, s.id, op.value), allowed,
              "SetDeadlockPriority")) {
    return;
  }
  s.priority = op.value;
}

void Runner::ExecTest(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  const bool alive = AliveNow(s, step);
  std::set<StatusCode> required;  // errors that must be reported
  std::set<StatusCode> optional;  // errors the contract leaves open
  if (!alive) required.insert(StatusCode::kSessionNotFound);
  if (!IsRequestable(op.mode)) required.insert(StatusCode::kBadMode);
  if (alive && op.owner == LockOwner::kTransaction && !s.in_txn) {
    optional.insert(StatusCode::kNoTransaction);
  }
  if (alive && s.wait) optional.insert(StatusCode::kWaitPending);
  const Result<bool> r =
      engine_.Test(step.sent, s.id, LockKeyOf(op), op.mode, op.owner);
  if (!r) {
    std::set<StatusCode> allowed = required;
    allowed.insert(optional.begin(), optional.end());
    Expect(r, allowed, "Test");
    return;
  }
  if (!required.empty()) {
    Fail(Str("Test succeeded; expected ", CodesText(required)));
  }
  if (!optional.empty() || !step.pre_state_known) return;
  const Key key = KeyOf(op);
  const Entry* entry = FindEntry(EntryId{s.id, op.owner, key});
  const LockMode target =
      ExpectedCombine(entry ? entry->mode : LockMode::kNoLock, op.mode);
  const bool grantable =
      GrantableAtOnce(SnapshotFind(key), s.id, target, SessionHolds(s.id, key));
  if (*r != grantable) {
    Fail(Str("Test answered ", *r, "; the request is ", grantable ? "" : "not ",
             "grantable at once"));
  }
}

void Runner::ExecMode(const Op& op, Step& step) {
  ModelSession& s = slot(op);
  const bool alive = AliveNow(s, step);
  std::set<StatusCode> allowed;
  if (!alive) allowed.insert(StatusCode::kSessionNotFound);
  const Result<LockMode> r =
      engine_.Mode(step.sent, s.id, LockKeyOf(op), op.owner);
  if (!r && alive && op.owner == LockOwner::kTransaction && !s.in_txn &&
      r.error().code() == StatusCode::kNoTransaction) {
    return;  // the contract leaves this open
  }
  if (!Expect(r, allowed, "Mode")) return;
  const Entry* entry = FindEntry(EntryId{s.id, op.owner, KeyOf(op)});
  const LockMode expected = entry ? entry->mode : LockMode::kNoLock;
  if (*r != expected) {
    Fail(Str("Mode answered ", ShortModeName(*r), "; the owner holds ",
             ShortModeName(expected)));
  }
}

// The wait-for graph as it was when the acquirer's request was queued.
void Runner::BuildHypothetical(Step& step, const PendingWait& w,
                               LockMode target) {
  if (!step.pre_state_known) return;
  std::vector<LockInfo> locks = snapshot_;
  auto it = std::find_if(locks.begin(), locks.end(), [&](const LockInfo& i) {
    return std::tie(i.ns, i.principal, i.resource) == w.key;
  });
  if (it == locks.end()) {
    LockInfo fresh;
    std::tie(fresh.ns, fresh.principal, fresh.resource) = w.key;
    it = locks.insert(locks.end(), fresh);
  }
  WaitingLockInfo waiter;
  waiter.wait = w.id;
  waiter.session = w.session;
  waiter.owner = w.owner;
  waiter.requested = w.requested;
  waiter.target = target;
  waiter.conversion = w.conversion;
  *it = WithWaiter(*it, waiter);
  step.hypothetical = WaitForGraph(locks);
}

}  // namespace internal

std::string RunScenario(const Scenario& scenario, RunStats* stats,
                        const RunOptions& options) {
  internal::Runner runner(scenario, options);
  std::string error = runner.Run();
  if (stats != nullptr) *stats = runner.stats();
  return error;
}

}  // namespace leasehold::property
