// StagedWrites: what an open transaction has staged, to be applied in order
// at commit, in one engine command (so one journal batch and one atomic
// store append), or dropped at rollback. Internal to the engine;
// single-threaded. See docs/transactions.md.
//
// Each kind of staged write is one alternative of StagedWrite, owned by the
// table that applies it (records: RecordTable). A kind is checked twice: when
// staged, against the committed state; and at commit, against the state the
// transaction's earlier writes leave, before anything is applied. The
// engine's commit visits every alternative in both passes, so a new kind
// that lacks a check or an apply does not compile. Operation completions
// belong to OperationTable, outbox messages to OutboxTable.
#ifndef LEASEHOLD_ENGINE_STAGED_WRITES_H_
#define LEASEHOLD_ENGINE_STAGED_WRITES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "engine/lock_types.h"
#include "engine/records.h"

namespace leasehold::engine {

// A staged insert, save or delete of a record, owning its strings.
struct StagedRecordWrite {
  StagedWriteKind kind = StagedWriteKind::kInsert;
  std::string ns;
  std::string key;
  std::string body;   // insert, save
  std::string owner;  // save, delete: the proof of the lease
  std::string token;
  std::optional<std::uint64_t> if_version;  // save
  // Save, delete: the fence of the lease when staged (0: a fence-only
  // proof, no lease).
  Fence lease_fence = 0;
  Fence fence = 0;  // a fenced write's fence; 0: none

  LeaseProof proof() const { return {owner, token}; }
  bool fence_only() const { return owner.empty() && token.empty(); }
  // The bytes it holds, as counted against the staging limit.
  std::size_t bytes() const {
    return ns.size() + key.size() + body.size() + owner.size() + token.size();
  }
  // E.g. `save of "kept" in "tx"`, for messages.
  std::string Describe() const;
};

// The staged completion of an idempotent operation.
struct StagedOperation {
  std::string ns;
  std::string op_id;
  std::string outcome;  // JSON text

  std::size_t bytes() const {
    return ns.size() + op_id.size() + outcome.size();
  }
  std::string Describe() const;
};

// A staged outbox message; its id is reserved when staged.
struct StagedEnqueue {
  std::string ns;
  std::string topic;
  std::string key;
  std::string payload;  // JSON text
  std::uint64_t id = 0;

  std::size_t bytes() const {
    return ns.size() + topic.size() + key.size() + payload.size();
  }
  std::string Describe() const;
};

using StagedWrite =
    std::variant<StagedRecordWrite, StagedOperation, StagedEnqueue>;

struct StagingLimits {
  std::size_t max_writes = 0;
  std::size_t max_bytes = 0;
};

class StagedWrites {
 public:
  // OK when one more write of `bytes` fits the limits, else
  // kTransactionTooLarge (the transaction stays as it is).
  Status Admit(const StagingLimits& limits, std::size_t bytes) const;
  void Add(StagedWrite write, std::size_t bytes) {
    writes_.push_back(std::move(write));
    bytes_ += bytes;
  }
  void Clear() {
    writes_.clear();
    bytes_ = 0;
  }

  const std::vector<StagedWrite>& writes() const { return writes_; }
  std::size_t size() const { return writes_.size(); }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return writes_.empty(); }

 private:
  std::vector<StagedWrite> writes_;
  std::size_t bytes_ = 0;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_STAGED_WRITES_H_
