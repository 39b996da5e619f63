#include "engine/staged_writes.h"

namespace leasehold::engine {

std::string StagedRecordWrite::Describe() const {
  return std::string(StagedWriteKindName(kind)) + " of \"" + key + "\" in \"" +
         ns + "\"";
}

std::string StagedOperation::Describe() const {
  return "completion of operation \"" + op_id + "\" in \"" + ns + "\"";
}

std::string StagedEnqueue::Describe() const {
  return "enqueue of \"" + key + "\" to topic \"" + topic + "\" in \"" + ns +
         "\"";
}

Status StagedWrites::Admit(const StagingLimits& limits,
                           std::size_t bytes) const {
  if (writes_.size() >= limits.max_writes) {
    return Status(StatusCode::kTransactionTooLarge,
                  "the transaction already holds " +
                      std::to_string(writes_.size()) +
                      " staged writes, the limit; commit it and continue in "
                      "a new transaction");
  }
  if (bytes > limits.max_bytes || bytes_ > limits.max_bytes - bytes) {
    return Status(StatusCode::kTransactionTooLarge,
                  "staging " + std::to_string(bytes) +
                      " more bytes would take the transaction's staged "
                      "writes past the limit of " +
                      std::to_string(limits.max_bytes) +
                      " bytes; commit it and continue in a new transaction");
  }
  return Status::Ok();
}

}  // namespace leasehold::engine
