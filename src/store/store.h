// Store: where the engine's durable state lives.
//
// The engine produces journal entries (leasehold/journal.h); a Store makes a
// batch of them durable at once and gives the whole state back at start-up.
// Implementations: SqliteStore (sqlite/), PostgreSQL later. Every
// implementation passes tests/store/store_conformance_test.cc.
#ifndef LEASEHOLD_STORE_STORE_H_
#define LEASEHOLD_STORE_STORE_H_

#include <functional>
#include <string>

#include "leasehold/journal.h"
#include "leasehold/status.h"

namespace leasehold {

class Store {
 public:
  virtual ~Store() = default;

  // Calls `key` for every stored key, in (ns, key) byte order, then
  // `operation` for every completed operation, then `message` for every
  // outbox message (in (ns, topic, id) order), then returns the fence
  // reservation. An empty visitor skips its rows. Stops at the first error
  // a visitor returns, and returns it. Fails (kUnavailable) when the data
  // cannot be read. Streaming keeps a restart's memory to the engine's own.
  using KeyVisitor = std::function<Status(KeyRow&& row)>;
  struct Visitors {
    KeyVisitor key = {};
    std::function<Status(OperationRow&& row)> operation = {};
    std::function<Status(MessageRow&& row)> message = {};
  };
  virtual Result<Fence> Load(const Visitors& visit) = 0;

  // Everything stored, collected (for tests and tools).
  Result<DurableState> LoadAll();

  // Applies `batch` atomically and durably: when this returns OK every entry
  // survives a crash of the process or the machine; on an error none of them
  // was applied. Entries apply in order. Not thread-safe: one writer.
  virtual Status Append(const JournalBatch& batch) = 0;

  // Where the data lives, for logs: "sqlite:/var/lib/leasehold/leasehold.db".
  virtual std::string Describe() const = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_STORE_H_
