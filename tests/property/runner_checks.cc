#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/property/invariants.h"
#include "tests/property/runner.h"

namespace leasehold::property::internal {

// A victim is named with a real cycle through the session whose request
// closed it, and is the cycle's lowest priority, the closer on a tie.
void Runner::CheckDeadlockReport(const DeadlockReport& report,
                                 const Step& step) {
  if (!step.acquirer) {
    Fail(
        "a deadlock was decided in a step where no request started to "
        "wait");
  }
  const std::vector<WaitForEdge>& cycle = report.cycle;
  if (cycle.empty()) Fail("deadlock report with an empty cycle");
  bool has_victim = false;
  bool has_acquirer = false;
  int min_priority = 100;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const WaitForEdge& e = cycle[i];
    if (e.holder != cycle[(i + 1) % cycle.size()].waiter) {
      Fail(Str("deadlock report edges do not form a cycle at edge ", i));
    }
    has_victim = has_victim || e.waiter == report.victim;
    has_acquirer = has_acquirer || e.waiter == *step.acquirer;
    min_priority = std::min(min_priority, PriorityOf(e.waiter));
    if (step.hypothetical) {
      const bool real =
          std::any_of(step.hypothetical->begin(), step.hypothetical->end(),
                      [&](const WaitEdge& h) {
                        return h.waiter == e.waiter && h.holder == e.holder &&
                               h.ns == e.ns && h.principal == e.principal &&
                               h.resource == e.resource;
                      });
      if (!real) {
        Fail(Str("deadlock report edge ", e.waiter, " -> ", e.holder, " on '",
                 e.resource, "' is not a wait-for edge"));
      }
    }
  }
  if (!has_victim) Fail("the deadlock victim is not in the cycle");
  if (!has_acquirer) {
    Fail(
        "the deadlock cycle does not go through the request that closed "
        "it");
  }
  if (PriorityOf(report.victim) != min_priority) {
    Fail(Str("victim ", report.victim, " has priority ",
             PriorityOf(report.victim), "; the cycle's lowest is ",
             min_priority));
  }
  if (PriorityOf(*step.acquirer) == min_priority &&
      report.victim != *step.acquirer) {
    Fail(Str("victim ", report.victim,
             " chosen although the session that "
             "closed the cycle, ",
             *step.acquirer, ", has the same lowest priority"));
  }
}

int Runner::PriorityOf(SessionId id) const {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) Fail(Str("unknown session ", id));
  const ModelSession& s = slots_[static_cast<std::size_t>(it->second)];
  if (s.id != id || !s.alive) Fail(Str("session ", id, " is not alive"));
  return s.priority;
}

void Runner::FinishStep(Step& step) {
  std::vector<LockInfo> locks = engine_.ListLocks(step.now, "");
  const std::vector<SessionInfo> sessions = engine_.ListSessions(step.now);
  const std::vector<FinishedWait> finished = engine_.TakeFinishedWaits();
  std::vector<Fence> fences;
  for (const FinishedWait& fw : finished) ApplyFinished(fw, step, fences);
  if (step.inline_grant_after_victim &&
      std::none_of(finished.begin(), finished.end(),
                   [](const FinishedWait& fw) {
                     return fw.result == AcquireResult::kDeadlock;
                   })) {
    Fail(
        "granted_after_wait at once, but no other request was chosen as "
        "a deadlock victim");
  }
  for (SessionId id : step.expired) Expire(id);

  CheckNoQueueJumping(finished);
  for (WaitId w : step.must_finish) {
    if (waits_.contains(w)) Fail(Str("wait ", w, " should have ended"));
  }
  for (const auto& [id, w] : waits_) {
    if (w.deadline && *w.deadline <= step.now) {
      Fail(Str("wait ", id, " is past its deadline and still pending"));
    }
  }
  if (options_.tamper) options_.tamper(locks);

  for (const LockInfo& info : locks) {
    stats_.longest_queue =
        std::max(stats_.longest_queue, static_cast<int>(info.waiting.size()));
  }
  const std::string table_error = CheckLockTable(locks);
  if (!table_error.empty()) {
    Fail(Str(table_error, "\nlock table now:\n", DescribeLocks(locks)));
  }
  try {
    CompareEntries(locks);
    CompareWaits(locks);
    CheckFences(step, fences);
    CompareSessions(sessions);
    CheckNextDeadlineAndStats(locks);
    CheckNamespaceFilter(step, locks);
    CheckEvents(step, fences);
  } catch (CheckFailure& failure) {
    failure.message += "\nlock table now:\n" + DescribeLocks(locks);
    throw;
  }
  snapshot_ = std::move(locks);
  applied_ = step.now;
}

void Runner::ApplyFinished(const FinishedWait& fw, Step& step,
                           std::vector<Fence>& fences) {
  auto it = waits_.find(fw.wait);
  if (it == waits_.end()) {
    Fail(Str(
        "FinishedWait for wait ", fw.wait, " which ",
        finished_.contains(fw.wait) ? "already finished" : "was never parked"));
  }
  const PendingWait w = it->second;
  if (fw.session != w.session) Fail("FinishedWait names the wrong session");
  switch (fw.result) {
    case AcquireResult::kGrantedAfterWait: {
      const EntryId id{w.session, w.owner, w.key};
      Entry& e = entries_[id];
      const LockMode target = ExpectedCombine(e.mode, w.requested);
      if (fw.held != target || fw.count != e.count + 1) {
        Fail(Str("wait ", w.id, " granted with ", ShortModeName(fw.held), " x",
                 fw.count, "; expected ", ShortModeName(target), " x",
                 e.count + 1));
      }
      if (e.count == 0) {
        e.since_lo = applied_;
        e.since_hi = step.now;
      }
      e.mode = target;
      e.count = fw.count;
      e.fence = fw.fence;
      fences.push_back(fw.fence);
      ++stats_.grants_after_wait;
      break;
    }
    case AcquireResult::kTimeout:
      if (!w.deadline || *w.deadline > step.now) {
        Fail(Str("wait ", w.id, " timed out before its deadline"));
      }
      ++stats_.timeouts;
      ++step.timeouts;
      break;
    case AcquireResult::kCancelled:
      if (!step.may_cancel.contains(w.id) &&
          !step.expired.contains(w.session)) {
        Fail(Str("wait ", w.id, " cancelled without a cause"));
      }
      ++stats_.cancels;
      ++step.cancels;
      break;
    case AcquireResult::kDeadlock:
      if (!fw.deadlock || fw.deadlock->victim != w.session) {
        Fail(Str("wait ", w.id, " ended -3 without a report naming it"));
      }
      CheckDeadlockReport(*fw.deadlock, step);
      ++stats_.deadlocks;
      ++step.deadlocks;
      break;
    default:
      Fail(Str("FinishedWait with result ", AcquireResultName(fw.result)));
  }
  waits_.erase(it);
  finished_.insert(w.id);
  ModelSession& s = slots_[static_cast<std::size_t>(slot_of_.at(w.session))];
  if (s.id == w.session) {
    s.wait.reset();
    s.last_wait = w.id;
  }
}

void Runner::Expire(SessionId id) {
  std::erase_if(entries_,
                [&](const auto& item) { return item.first.session == id; });
  ModelSession& s = slots_[static_cast<std::size_t>(slot_of_.at(id))];
  if (s.id == id) {
    s.alive = false;
    s.in_txn = false;
  }
  ++stats_.expiries;
}

void Runner::CompareEntries(const std::vector<LockInfo>& locks) {
  std::map<EntryId, const GrantedLockInfo*> listed;
  for (const LockInfo& info : locks) {
    for (const GrantedLockInfo& g : info.granted) {
      listed[EntryId{g.session, g.owner,
                     Key{info.ns, info.principal, info.resource}}] = &g;
    }
  }
  for (auto& [id, e] : entries_) {
    auto it = listed.find(id);
    const std::string who = Str("session ", id.session, " ",
                                OwnerName(id.owner), " on ", KeyText(id.key));
    if (it == listed.end()) {
      Fail(Str("(d) model: ", who, " holds ", ShortModeName(e.mode), " x",
               e.count, "; the engine lists nothing"));
    }
    const GrantedLockInfo& g = *it->second;
    if (g.mode != e.mode || g.count != e.count) {
      Fail(Str("(d) ", who, " listed as ", ShortModeName(g.mode), " x", g.count,
               "; model: ", ShortModeName(e.mode), " x", e.count));
    }
    if (g.fence != e.fence) {
      Fail(Str(who, " listed with fence ", g.fence, "; its latest grant had ",
               e.fence));
    }
    if (g.since < e.since_lo || g.since > e.since_hi) {
      Fail(Str(who, " listed since t+", MsSinceStart(g.since),
               "ms; it was first granted between t+", MsSinceStart(e.since_lo),
               "ms and t+", MsSinceStart(e.since_hi), "ms"));
    }
    e.since_lo = e.since_hi = g.since;
    const ModelSession& s = SessionById(id.session);
    if (g.session_name != s.name) Fail(Str(who, " has the wrong name"));
  }
  for (const auto& [id, g] : listed) {
    if (!entries_.contains(id)) {
      Fail(Str("(d) the engine lists session ", id.session, " ",
               OwnerName(id.owner), " on ", KeyText(id.key), " as ",
               ShortModeName(g->mode), " x", g->count,
               "; the model has no such entry"));
    }
  }
}

void Runner::CompareWaits(const std::vector<LockInfo>& locks) {
  std::size_t listed = 0;
  for (const LockInfo& info : locks) {
    const Key key{info.ns, info.principal, info.resource};
    std::uint64_t last_conversion = 0;
    std::uint64_t last_plain = 0;
    for (const WaitingLockInfo& lw : info.waiting) {
      auto it = waits_.find(lw.wait);
      if (it == waits_.end()) {
        Fail(Str("the engine lists wait ", lw.wait, " on ", KeyText(key),
                 ", which ",
                 finished_.contains(lw.wait) ? "already finished"
                                             : "was never parked"));
      }
      const PendingWait& w = it->second;
      ++listed;
      const Entry* e = FindEntry(EntryId{w.session, w.owner, w.key});
      const LockMode target =
          ExpectedCombine(e ? e->mode : LockMode::kNoLock, w.requested);
      if (w.key != key || lw.session != w.session || lw.owner != w.owner ||
          lw.requested != w.requested || lw.deadline != w.deadline ||
          lw.since != w.since || lw.conversion != w.conversion) {
        Fail(Str("wait ", w.id,
                 " is listed with other details than it "
                 "was parked with"));
      }
      if (lw.target != target) {
        Fail(Str("wait ", w.id, " targets ", ShortModeName(lw.target),
                 "; its owner holds ",
                 ShortModeName(e ? e->mode : LockMode::kNoLock), " and asked ",
                 ShortModeName(w.requested), ", so a grant gives ",
                 ShortModeName(target)));
      }
      if (lw.session_name != SessionById(w.session).name) {
        Fail(Str("wait ", w.id, " has the wrong session name"));
      }
      std::uint64_t& last = w.conversion ? last_conversion : last_plain;
      if (w.seq < last) {
        Fail(Str("wait ", w.id,
                 " is queued ahead of an earlier request of "
                 "its kind"));
      }
      last = w.seq;
    }
  }
  if (listed != waits_.size()) {
    Fail(Str("the model has ", waits_.size(),
             " parked requests; the engine "
             "lists ",
             listed));
  }
}

// Relaxed FIFO: a request granted after a wait (not a conversion) must
// not have passed a conflicting request queued ahead of it that is still
// waiting, since that one was ahead the whole time.
void Runner::CheckNoQueueJumping(const std::vector<FinishedWait>& finished) {
  for (const FinishedWait& fw : finished) {
    if (fw.result != AcquireResult::kGrantedAfterWait) continue;
    for (const LockInfo& info : snapshot_) {
      for (std::size_t i = 0; i < info.waiting.size(); ++i) {
        const WaitingLockInfo& w = info.waiting[i];
        if (w.wait != fw.wait || w.conversion) continue;
        for (std::size_t j = 0; j < i; ++j) {
          const WaitingLockInfo& ahead = info.waiting[j];
          if (waits_.contains(ahead.wait) &&
              !ModesCompatible(ahead.target, w.target)) {
            Fail(Str("wait ", w.wait, " (", ShortModeName(w.target),
                     ") was granted past wait ", ahead.wait, " (",
                     ShortModeName(ahead.target),
                     ") queued ahead of it, which still waits"));
          }
        }
      }
    }
  }
}

// `wait_fences`: grants reported by FinishedWaits, in their order.
void Runner::CheckFences(const Step& step,
                         const std::vector<Fence>& wait_fences) {
  std::vector<Fence> all = wait_fences;
  if (step.immediate_fence) all.push_back(*step.immediate_fence);
  std::set<Fence> seen;
  for (Fence f : all) {
    if (f <= max_fence_ || f <= scenario_.fence_floor) {
      Fail(Str("(e) fence ", f, " does not exceed the last one seen, ",
               max_fence_, " (floor ", scenario_.fence_floor, ")"));
    }
    if (!seen.insert(f).second) Fail(Str("(e) fence ", f, " given twice"));
  }
  // An immediate grant may come after grants decided while applying what
  // was due, so only the FinishedWaits' own order is checked.
  for (std::size_t i = 1; i < wait_fences.size(); ++i) {
    if (wait_fences[i] <= wait_fences[i - 1]) {
      Fail(Str("(e) FinishedWait fences out of order: ", wait_fences[i],
               " after ", wait_fences[i - 1]));
    }
  }
  for (Fence f : all) max_fence_ = std::max(max_fence_, f);
  grants_seen_ += all.size();
}

// The events of the step report what the results did.
void Runner::CheckEvents(const Step& step,
                         const std::vector<Fence>& wait_fences) {
  std::multiset<Fence> expected(wait_fences.begin(), wait_fences.end());
  if (step.immediate_fence) expected.insert(*step.immediate_fence);
  const std::multiset<Fence> granted(sink_.granted_fences.begin(),
                                     sink_.granted_fences.end());
  if (granted != expected) {
    Fail(Str("events: ", granted.size(), " lock.granted events for ",
             expected.size(), " grants, or with other fences"));
  }
  const int expiries = static_cast<int>(step.expired.size());
  if (sink_.timeouts != step.timeouts || sink_.cancels != step.cancels ||
      sink_.deadlocks != step.deadlocks || sink_.expiries != expiries) {
    Fail(Str("events {timeout ", sink_.timeouts, ", cancelled ", sink_.cancels,
             ", deadlock ", sink_.deadlocks, ", expired ", sink_.expiries,
             "}; results {", step.timeouts, ", ", step.cancels, ", ",
             step.deadlocks, ", ", expiries, "}"));
  }
  if (sink_.deadlock_without_report) Fail("deadlock event without report");
  sink_.Clear();
}

void Runner::CompareSessions(const std::vector<SessionInfo>& sessions) {
  std::size_t alive = 0;
  for (const ModelSession& s : slots_) {
    if (!s.alive) continue;
    ++alive;
    auto it = std::find_if(sessions.begin(), sessions.end(),
                           [&](const SessionInfo& i) { return i.id == s.id; });
    if (it == sessions.end()) {
      Fail(Str("session ", s.id, " is alive but not listed"));
    }
    std::size_t locks = 0;
    for (const auto& [id, e] : entries_) locks += id.session == s.id;
    const std::optional<WaitId> waiting = s.wait;
    if (it->name != s.name || it->ttl != s.ttl ||
        it->opened_at != s.opened_at || it->expires_at != s.expires_at ||
        it->deadlock_priority != s.priority || it->locks != locks ||
        it->transaction.has_value() != s.in_txn || it->waiting != waiting) {
      Fail(Str("session ", s.id, " is listed as {locks ", it->locks,
               ", in transaction ", it->transaction.has_value(), ", waiting ",
               it->waiting.value_or(0), ", priority ", it->deadlock_priority,
               ", expires t+", MsSinceStart(it->expires_at),
               "ms}; model: {locks ", locks, ", in transaction ", s.in_txn,
               ", waiting ", waiting.value_or(0), ", priority ", s.priority,
               ", expires t+", MsSinceStart(s.expires_at), "ms}"));
    }
  }
  if (sessions.size() != alive) {
    Fail(Str("the engine lists ", sessions.size(),
             " sessions; the model "
             "has ",
             alive, " alive"));
  }
}

void Runner::CheckNextDeadlineAndStats(const std::vector<LockInfo>& locks) {
  std::optional<Time> expected;
  auto consider = [&](Time t) {
    if (!expected || t < *expected) expected = t;
  };
  std::size_t alive = 0;
  std::size_t txns = 0;
  for (const ModelSession& s : slots_) {
    if (!s.alive) continue;
    ++alive;
    txns += s.in_txn;
    consider(s.expires_at);
  }
  for (const auto& [id, w] : waits_) {
    if (w.deadline) consider(*w.deadline);
  }
  const std::optional<Time> next = engine_.NextDeadline();
  if (next != expected) {
    Fail(Str("NextDeadline() is ",
             next ? Str("t+", MsSinceStart(*next), "ms") : "none",
             "; the earliest expiry or wait deadline is ",
             expected ? Str("t+", MsSinceStart(*expected), "ms") : "none"));
  }
  const EngineStats st = engine_.Stats();
  if (st.sessions != alive || st.open_transactions != txns ||
      st.resources != locks.size() || st.granted_locks != entries_.size() ||
      st.waiting != waits_.size() ||
      (grants_seen_ > 0 && st.last_fence != max_fence_)) {
    Fail(Str("Stats() {sessions ", st.sessions, ", transactions ",
             st.open_transactions, ", resources ", st.resources, ", granted ",
             st.granted_locks, ", waiting ", st.waiting, ", last fence ",
             st.last_fence, "}; model {", alive, ", ", txns, ", ", locks.size(),
             ", ", entries_.size(), ", ", waits_.size(), ", ", max_fence_,
             "}"));
  }
}

void Runner::CheckNamespaceFilter(const Step& step,
                                  const std::vector<LockInfo>& locks) {
  if (options_.tamper) return;  // the tampered table is not the engine's
  std::vector<LockInfo> expected;
  for (const LockInfo& info : locks) {
    if (info.ns == kNamespaces[1]) expected.push_back(info);
  }
  const std::vector<LockInfo> filtered =
      engine_.ListLocks(step.now, kNamespaces[1]);
  if (DescribeLocks(filtered) != DescribeLocks(expected)) {
    Fail(Str("ListLocks(\"", kNamespaces[1],
             "\") is not the part of the "
             "full list in that namespace:\n",
             DescribeLocks(filtered)));
  }
}

}  // namespace leasehold::property::internal
