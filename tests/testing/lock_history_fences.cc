// Check 2 of lock_history_check.h: per resource, fences are unique and rise
// with real time, whichever leader granted them.
#include <algorithm>
#include <map>
#include <optional>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_violations.h"

namespace leasehold::testing {
namespace {

void CheckResource(const History& history, const HistoryDescriber& words,
                   const std::string& resource,
                   const std::vector<std::size_t>& grants,
                   Violations& violations) {
  std::map<Fence, std::size_t> first_with_fence;
  for (std::size_t i : grants) {
    const Fence fence = history[i].fence;
    if (fence == 0) {
      violations.Add(resource + ": " + words.Op(i) + " carries no fence");
      continue;
    }
    const auto [it, fresh] = first_with_fence.emplace(fence, i);
    if (!fresh) {
      violations.Add(resource + ": fence " + std::to_string(fence) +
                     " granted twice, by " + words.Op(it->second) + " and " +
                     words.Op(i));
    }
  }
  // Sweep the grants by invoke, knowing the highest fence among those that
  // completed before: it must be below each one's fence.
  std::vector<std::size_t> by_complete = grants, by_invoke = grants;
  std::sort(by_complete.begin(), by_complete.end(),
            [&](std::size_t a, std::size_t b) {
              return history[a].complete < history[b].complete;
            });
  std::sort(by_invoke.begin(), by_invoke.end(),
            [&](std::size_t a, std::size_t b) {
              return history[a].invoke < history[b].invoke;
            });
  std::size_t done = 0;
  std::optional<std::size_t> highest;
  for (std::size_t later : by_invoke) {
    while (done < by_complete.size() &&
           history[by_complete[done]].complete < history[later].invoke) {
      const std::size_t earlier = by_complete[done++];
      if (!highest || history[earlier].fence > history[*highest].fence) {
        highest = earlier;
      }
    }
    if (highest && history[*highest].fence > history[later].fence) {
      violations.Add(resource + ": fence fell: " + words.Op(*highest) +
                     " completed before " + words.Op(later) +
                     " was invoked, yet its fence is the higher");
    }
  }
}

}  // namespace

std::vector<std::string> CheckFencesRise(const History& history) {
  Violations violations("fences rise");
  const HistoryDescriber words(history);
  std::map<std::string, std::vector<std::size_t>> grants_by_resource;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (op.kind != OperationKind::kAcquire || op.outcome != Outcome::kOk) {
      continue;
    }
    if (op.complete < op.invoke) {
      violations.Malformed(words.Op(i) + " completed before it was invoked");
    }
    grants_by_resource[op.name].push_back(i);
  }
  for (const auto& [resource, grants] : grants_by_resource) {
    CheckResource(history, words, resource, grants, violations);
  }
  return violations.Take();
}

}  // namespace leasehold::testing
