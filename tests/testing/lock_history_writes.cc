// Check 3 of lock_history_check.h: every read shows a value some write may
// have left last, so no acknowledged write was lost.
#include <map>
#include <optional>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_violations.h"

namespace leasehold::testing {
namespace {

struct KeyCalls {
  std::vector<std::size_t> writes, reads;
};

bool MayStillTakeEffect(const Operation& write) {
  return write.outcome == Outcome::kUnknown;
}

void CheckRead(const History& history, const HistoryDescriber& words,
               const std::vector<std::size_t>& writes,
               const std::map<std::string, std::size_t>& write_of_value,
               std::size_t read_index, Violations& violations) {
  const Operation& read = history[read_index];
  // Of the acknowledged writes done before the read began, the one invoked
  // last: nothing it certainly followed can be what the read shows.
  std::optional<std::size_t> settled;
  for (std::size_t w : writes) {
    const Operation& write = history[w];
    if (write.outcome != Outcome::kOk || !(write.complete < read.invoke)) {
      continue;
    }
    if (!settled || history[*settled].invoke < write.invoke) settled = w;
  }
  if (!read.value) {
    if (settled) {
      violations.Add("lost acknowledged write: " + words.Op(read_index) +
                     ", though " + words.Op(*settled) + " completed before it");
    }
    return;
  }
  const auto shown = write_of_value.find(*read.value);
  if (shown == write_of_value.end()) {
    violations.Add("a value never written: " + words.Op(read_index));
    return;
  }
  const Operation& write = history[shown->second];
  if (write.outcome == Outcome::kRefused) {
    violations.Add("the value of a refused write: " + words.Op(read_index) +
                   " shows " + words.Op(shown->second));
    return;
  }
  if (!(write.invoke < read.complete)) {
    violations.Add("a value from the future: " + words.Op(read_index) +
                   " shows " + words.Op(shown->second) +
                   ", invoked after the read completed");
    return;
  }
  if (settled && !MayStillTakeEffect(write) &&
      write.complete < history[*settled].invoke) {
    violations.Add("lost acknowledged write: " + words.Op(read_index) +
                   " shows " + words.Op(shown->second) + ", which " +
                   words.Op(*settled) +
                   " certainly followed and completed before the read");
  }
}

}  // namespace

std::vector<std::string> CheckNoAcknowledgedWriteLost(const History& history) {
  Violations violations("no acknowledged write lost");
  const HistoryDescriber words(history);
  std::map<std::string, KeyCalls> by_key;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation& op = history[i];
    if (op.kind == OperationKind::kWrite) {
      by_key[op.name].writes.push_back(i);
    } else if (op.kind == OperationKind::kRead) {
      if (op.outcome == Outcome::kOk) by_key[op.name].reads.push_back(i);
    } else {
      continue;
    }
    if (op.complete < op.invoke) {
      violations.Malformed(words.Op(i) + " completed before it was invoked");
    }
  }
  for (const auto& [key, calls] : by_key) {
    std::map<std::string, std::size_t> write_of_value;
    for (std::size_t w : calls.writes) {
      const Operation& write = history[w];
      if (!write.value) {
        violations.Malformed(words.Op(w) + " writes no value");
        continue;
      }
      if (write.outcome != Outcome::kOk && write.outcome != Outcome::kRefused &&
          write.outcome != Outcome::kUnknown) {
        violations.Malformed(words.Op(w) +
                             ": a write is acknowledged, refused or unknown");
      }
      const auto [it, fresh] = write_of_value.emplace(*write.value, w);
      if (!fresh) {
        violations.Malformed(words.Op(it->second) + " and " + words.Op(w) +
                             " write the same value: values must be unique "
                             "per key");
      }
    }
    if (calls.reads.empty()) {
      violations.Malformed("key " + key +
                           " is written but never read: its writes go "
                           "unchecked");
    }
    for (std::size_t r : calls.reads) {
      CheckRead(history, words, calls.writes, write_of_value, r, violations);
    }
  }
  return violations.Take();
}

}  // namespace leasehold::testing
