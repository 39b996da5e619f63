// Store: where the engine's durable state lives.
//
// The engine produces journal entries (leasehold/journal.h); a Store makes a
// batch of them durable at once and gives the whole state back at start-up.
// Implementations: SqliteStore (sqlite/), PostgreSQL later. Every
// implementation passes tests/store/store_conformance_test.cc.
#ifndef LEASEHOLD_STORE_STORE_H_
#define LEASEHOLD_STORE_STORE_H_

#include <string>

#include "leasehold/journal.h"
#include "leasehold/status.h"

namespace leasehold {

class Store {
 public:
  virtual ~Store() = default;

  // Everything stored. Fails (kUnavailable) when the data cannot be read.
  virtual Result<DurableState> Load() = 0;

  // Applies `batch` atomically and durably: when this returns OK every entry
  // survives a crash of the process or the machine; on an error none of them
  // was applied. Entries apply in order. Not thread-safe: one writer.
  virtual Status Append(const JournalBatch& batch) = 0;

  // Where the data lives, for logs: "sqlite:/var/lib/leasehold/leasehold.db".
  virtual std::string Describe() const = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_STORE_H_
