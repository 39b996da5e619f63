// Check 4 of lock_history_check.h: a probe that shows a session holding a
// resource is explained by a grant, so a refused waiter never got the lock
// after all.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_violations.h"

namespace leasehold::testing {
namespace {

bool IsLockCall(const Operation& op) {
  return op.kind == OperationKind::kAcquire ||
         op.kind == OperationKind::kRelease;
}

// Judges the probe at `probe_index` against the calls of its session on
// its resource (indexes, any order).
void CheckProbe(const History& history, const HistoryDescriber& words,
                const std::vector<std::size_t>& calls, std::size_t probe_index,
                Violations& violations) {
  const Operation& probe = history[probe_index];
  if (probe.outcome != Outcome::kOk || probe.mode == LockMode::kNoLock) return;
  std::vector<std::size_t> before;
  for (std::size_t i : calls) {
    const Operation& call = history[i];
    if (!(call.invoke < probe.invoke)) continue;
    // Unknown, or not answered before the probe: it may have granted.
    if (call.outcome == Outcome::kUnknown || !(call.complete < probe.invoke)) {
      return;
    }
    before.push_back(i);
  }
  std::sort(before.begin(), before.end(), [&](std::size_t a, std::size_t b) {
    return history[a].invoke < history[b].invoke;
  });
  int references = 0;
  std::optional<std::size_t> last_refused;
  for (std::size_t i : before) {
    const Operation& call = history[i];
    const bool ok = call.outcome == Outcome::kOk;
    if (call.kind == OperationKind::kAcquire && ok) ++references;
    if (call.kind == OperationKind::kRelease && ok && references > 0) {
      --references;
    }
    if (call.kind == OperationKind::kAcquire && !ok) last_refused = i;
  }
  if (references > 0) return;
  violations.Add("held without a grant: " + words.Op(probe_index) +
                 (last_refused
                      ? ", after " + words.Op(*last_refused)
                      : ", though every grant before it was released"));
}

}  // namespace

std::vector<std::string> CheckRefusalsStick(const History& history) {
  Violations violations("a refusal sticks");
  const HistoryDescriber words(history);
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> calls,
      probes;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (IsLockCall(op)) calls[{op.session, op.name}].push_back(i);
    if (op.kind == OperationKind::kProbe) {
      probes[{op.session, op.name}].push_back(i);
    }
  }
  for (const auto& [key, probe_indexes] : probes) {
    static const std::vector<std::size_t> kNone;
    const auto found = calls.find(key);
    const auto& of_key = found != calls.end() ? found->second : kNone;
    for (std::size_t p : probe_indexes) {
      CheckProbe(history, words, of_key, p, violations);
    }
  }
  return violations.Take();
}

}  // namespace leasehold::testing
