// Check 1 of lock_history_check.h: no two sessions ever held conflicting
// modes of one resource at once, as far as their clients can prove it.
#include <algorithm>
#include <map>
#include <utility>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_modes.h"
#include "tests/testing/lock_history_violations.h"

namespace leasehold::testing {
namespace {

constexpr Instant kNever = Instant::max();

Instant Plus(Instant at, std::chrono::nanoseconds span) {
  return kNever - at <= span ? kNever : at + span;
}

// Why a hold ended, for the report.
enum class EndCause {
  kReleased,     // `by` released its last reference
  kConverted,    // `by` was granted: the same hold goes on in a new mode
  kLocksLost,    // `by` told the session its locks were gone
  kSessionGone,  // `by` found the session gone, or ended it
  kExpired,      // the session's ttl may have run out
  kEndOfHistory,
};

// The first moment at which a session may no longer exist.
struct SessionEnd {
  Instant at = kNever;
  EndCause cause = EndCause::kEndOfHistory;
  std::size_t by = 0;
};

struct SessionFacts {
  SessionEnd end;
  std::vector<std::size_t> locks_lost;  // keep-alives, in invoke order
};

// One stretch of time in which a session held a resource in one mode.
struct Hold {
  const std::string* session = nullptr;
  LockMode mode = LockMode::kNoLock;
  Instant from, until;
  std::size_t granted_by = 0;  // the grant that began this mode
  EndCause cause = EndCause::kEndOfHistory;
  std::size_t ended_by = 0;
};

std::map<std::string, SessionFacts> FactsBySession(const History& history) {
  struct Lifetime {
    bool has_ttl = false;
    Instant renewed_until = Instant::min();
    Instant last_answered = Instant::min();
  };
  std::map<std::string, SessionFacts> facts;
  std::map<std::string, Lifetime> lifetimes;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (op.session.empty()) continue;
    SessionFacts& f = facts[op.session];
    Lifetime& life = lifetimes[op.session];
    if (op.outcome == Outcome::kSessionLost ||
        op.kind == OperationKind::kEndSession) {
      if (op.invoke < f.end.at) f.end = {op.invoke, EndCause::kSessionGone, i};
      continue;
    }
    if (op.outcome == Outcome::kUnknown) continue;
    // An answer about the session means it existed when the call arrived.
    life.last_answered = std::max(life.last_answered, op.invoke);
    const bool renewed =
        op.kind == OperationKind::kKeepAlive &&
        (op.outcome == Outcome::kOk || op.outcome == Outcome::kLocksLost);
    if (renewed && op.ttl > std::chrono::nanoseconds::zero()) {
      life.has_ttl = true;
      life.renewed_until =
          std::max(life.renewed_until, Plus(op.invoke, op.ttl));
    }
    if (op.outcome == Outcome::kLocksLost) f.locks_lost.push_back(i);
  }
  for (auto& [session, f] : facts) {
    const Lifetime& life = lifetimes[session];
    std::sort(f.locks_lost.begin(), f.locks_lost.end(),
              [&](std::size_t a, std::size_t b) {
                return history[a].invoke < history[b].invoke;
              });
    if (!life.has_ttl) continue;
    const Instant expiry = std::max(life.renewed_until, life.last_answered);
    if (expiry < f.end.at) f.end = {expiry, EndCause::kExpired, 0};
  }
  return facts;
}

// Walks one session's calls on one resource, in order, and appends its
// holds.
class HoldWalk {
 public:
  HoldWalk(const History& history, const SessionFacts& facts,
           std::vector<Hold>& holds, std::size_t& grants_not_counted)
      : history_(history),
        facts_(facts),
        holds_(holds),
        grants_not_counted_(grants_not_counted) {}

  void Walk(const std::vector<std::size_t>& calls) {
    for (std::size_t i : calls) {
      const Operation& op = history_[i];
      const bool acquire = op.kind == OperationKind::kAcquire;
      TellLocksLostBefore(acquire ? op.complete : op.invoke);
      if (acquire) {
        Granted(i);
      } else {
        Released(i);
      }
    }
    if (count_ == 0) return;
    if (next_lost_ < facts_.locks_lost.size()) {
      const std::size_t by = facts_.locks_lost[next_lost_];
      End(history_[by].invoke, EndCause::kLocksLost, by);
    } else {
      End(kNever, EndCause::kEndOfHistory, 0);
    }
  }

 private:
  void TellLocksLostBefore(Instant moment) {
    while (next_lost_ < facts_.locks_lost.size() &&
           history_[facts_.locks_lost[next_lost_]].invoke < moment) {
      const std::size_t by = facts_.locks_lost[next_lost_++];
      if (count_ > 0) End(history_[by].invoke, EndCause::kLocksLost, by);
    }
  }

  bool OverlapsLocksLost(const Operation& grant) const {
    for (std::size_t k : facts_.locks_lost) {
      const Operation& told = history_[k];
      if (told.invoke < grant.complete && grant.invoke < told.complete) {
        return true;
      }
    }
    return false;
  }

  void Granted(std::size_t i) {
    const Operation& op = history_[i];
    if (op.outcome != Outcome::kOk) return;
    if (after_unknown_release_ || op.complete >= facts_.end.at ||
        OverlapsLocksLost(op)) {
      ++grants_not_counted_;
      return;
    }
    if (count_++ == 0) {
      Begin(op.complete, op.mode, i);
      return;
    }
    const LockMode combined = CombinedMode(mode_, op.mode);
    if (combined == mode_) return;
    Emit(op.complete, EndCause::kConverted, i);
    Begin(op.complete, combined, i);
  }

  void Released(std::size_t i) {
    const Operation& op = history_[i];
    if (op.outcome == Outcome::kUnknown) after_unknown_release_ = true;
    if (count_ == 0) return;
    if (--count_ == 0) End(op.invoke, EndCause::kReleased, i);
  }

  void Begin(Instant from, LockMode mode, std::size_t granted_by) {
    from_ = from;
    mode_ = mode;
    granted_by_ = granted_by;
  }

  void End(Instant until, EndCause cause, std::size_t by) {
    Emit(until, cause, by);
    count_ = 0;
    mode_ = LockMode::kNoLock;
  }

  void Emit(Instant until, EndCause cause, std::size_t by) {
    if (facts_.end.at < until) {
      until = facts_.end.at;
      cause = facts_.end.cause;
      by = facts_.end.by;
    }
    if (until <= from_) return;
    holds_.push_back({&history_[granted_by_].session, mode_, from_, until,
                      granted_by_, cause, by});
  }

  const History& history_;
  const SessionFacts& facts_;
  std::vector<Hold>& holds_;
  std::size_t& grants_not_counted_;
  std::size_t next_lost_ = 0;
  bool after_unknown_release_ = false;
  unsigned count_ = 0;
  LockMode mode_ = LockMode::kNoLock;
  Instant from_;
  std::size_t granted_by_ = 0;
};

std::string Until(const HistoryDescriber& words, const Hold& hold) {
  const std::string at = words.At(hold.until);
  switch (hold.cause) {
    case EndCause::kReleased:
      return at + " (released by " + words.Op(hold.ended_by) + ")";
    case EndCause::kConverted:
      return at + " (then converted by " + words.Op(hold.ended_by) + ")";
    case EndCause::kLocksLost:
      return at + " (locks lost, told by " + words.Op(hold.ended_by) + ")";
    case EndCause::kSessionGone:
      return at + " (session gone: " + words.Op(hold.ended_by) + ")";
    case EndCause::kExpired:
      return at + " (its ttl may have run out)";
    case EndCause::kEndOfHistory:
      return at;
  }
  return at;
}

std::string Describe(const HistoryDescriber& words, const Hold& hold) {
  return "session " + *hold.session + " held " +
         std::string(ModeName(hold.mode)) + " from " + words.At(hold.from) +
         " (" + words.Op(hold.granted_by) + ") until " + Until(words, hold);
}

// Each pair of overlapping, conflicting holds of one resource by two
// sessions; `holds` sorted by `from`.
void ReportConflicts(const HistoryDescriber& words, const std::string& resource,
                     const std::vector<Hold>& holds, Violations& violations) {
  std::vector<const Hold*> open;
  for (const Hold& hold : holds) {
    std::erase_if(open, [&](const Hold* h) { return h->until <= hold.from; });
    for (const Hold* other : open) {
      if (*other->session == *hold.session ||
          !ModesConflict(other->mode, hold.mode)) {
        continue;
      }
      if (violations.Full()) {
        violations.CountAnother();
        continue;
      }
      const Instant overlap_end = std::min(other->until, hold.until);
      const std::string overlap =
          overlap_end == kNever
              ? "from " + words.At(hold.from) + " on"
              : "for " + HistoryDescriber::Span(overlap_end - hold.from) +
                    " from " + words.At(hold.from);
      violations.Add(resource + ": " + Describe(words, *other) + ", and " +
                     Describe(words, hold) + "; they overlap " + overlap);
    }
    open.push_back(&hold);
  }
}

}  // namespace

std::vector<std::string> CheckMutualExclusion(
    const History& history, MutualExclusionCoverage* coverage) {
  Violations violations("mutual exclusion");
  const HistoryDescriber words(history);
  // Each session's calls on each resource, in the order they were made.
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> calls;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (op.kind != OperationKind::kAcquire &&
        op.kind != OperationKind::kRelease) {
      continue;
    }
    if (op.complete < op.invoke) {
      violations.Malformed(words.Op(i) + " completed before it was invoked");
    }
    if (op.kind == OperationKind::kAcquire && !IsRequestable(op.mode)) {
      violations.Malformed(words.Op(i) + " asks for a mode no client may");
    }
    calls[{op.session, op.name}].push_back(i);
  }
  const std::map<std::string, SessionFacts> facts = FactsBySession(history);
  std::map<std::string, std::vector<Hold>> holds_by_resource;
  MutualExclusionCoverage counted;
  for (auto& [who, indices] : calls) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](std::size_t a, std::size_t b) {
                       return history[a].invoke < history[b].invoke;
                     });
    for (std::size_t k = 1; k < indices.size(); ++k) {
      if (history[indices[k]].invoke < history[indices[k - 1]].complete) {
        violations.Malformed(words.Op(indices[k - 1]) + " and " +
                             words.Op(indices[k]) +
                             " overlap: one session's calls on one lock must "
                             "be made one at a time");
      }
    }
    static const SessionFacts kNoFacts;
    const auto session = facts.find(who.first);
    HoldWalk(history, session != facts.end() ? session->second : kNoFacts,
             holds_by_resource[who.second], counted.grants_not_counted)
        .Walk(indices);
  }
  for (auto& [resource, holds] : holds_by_resource) {
    counted.holds += holds.size();
    std::sort(holds.begin(), holds.end(),
              [](const Hold& a, const Hold& b) { return a.from < b.from; });
    ReportConflicts(words, resource, holds, violations);
  }
  if (coverage != nullptr) *coverage = counted;
  return violations.Take();
}

}  // namespace leasehold::testing
