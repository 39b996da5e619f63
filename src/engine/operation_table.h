// OperationTable: completed idempotent operations per namespace, each with
// its stored outcome (docs/api.md, "Idempotent operations and the outbox";
// docs/outbox.md). Completions are only ever staged in a transaction and
// applied at commit. Internal to the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_OPERATION_TABLE_H_
#define LEASEHOLD_ENGINE_OPERATION_TABLE_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "engine/engine_types.h"
#include "engine/events.h"
#include "engine/journal.h"
#include "engine/outbox.h"
#include "engine/staged_writes.h"

namespace leasehold::engine {

class OperationTable {
 public:
  OperationTable(std::size_t max_outcome_bytes, JournalBatch* journal,
                 EventSink* events)
      : max_outcome_bytes_(max_outcome_bytes),
        journal_(journal),
        events_(events) {}

  // The committed state of the operation. Name errors.
  Result<OperationStatus> Get(OperationKey key) const;

  // Validates a completion against the committed state: names, size;
  // kExists when the operation is completed already. Changes nothing.
  Status CheckStage(const StagedOperation& w) const;

  // The commit-time check of one transaction's completions, in staging
  // order. Changes nothing; valid while the table does not change.
  class CommitCheck {
   public:
    explicit CommitCheck(const OperationTable& table) : table_(table) {}
    // Empty when `w` can be applied after the completions checked before
    // it; else why not, as "reason: explanation".
    std::optional<std::string> Check(const StagedOperation& w);

   private:
    const OperationTable& table_;
    std::set<std::pair<std::string, std::string>> completed_;
  };
  // Applies a completion that CommitCheck passed: journal entry and event.
  AppliedWrite ApplyStaged(Time now, const StagedOperation& w);

  Status Restore(OperationRow&& row);

  std::size_t size() const { return count_; }

 private:
  struct Operation {
    std::string outcome;
    Time completed_at;
  };
  using OperationMap = std::map<std::string, Operation, std::less<>>;

  const Operation* Find(OperationKey key) const;
  Status ValidateKey(OperationKey key) const;

  std::size_t max_outcome_bytes_;
  JournalBatch* journal_;
  EventSink* events_;
  std::map<std::string, OperationMap, std::less<>> namespaces_;
  std::size_t count_ = 0;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_OPERATION_TABLE_H_
