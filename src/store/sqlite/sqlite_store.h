// SqliteStore: the embedded default Store, one SQLite file in WAL mode.
#ifndef LEASEHOLD_STORE_SQLITE_SQLITE_STORE_H_
#define LEASEHOLD_STORE_SQLITE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "store/store.h"

namespace leasehold {

struct SqliteStoreOptions {
  // SQLite's synchronous setting: "FULL" (default: a commit survives power
  // loss), or "NORMAL" (survives a process crash; may lose the last
  // commits on power loss). Anything else is refused.
  std::string synchronous = "FULL";
  // Create the file when it does not exist.
  bool create_if_missing = true;
  // Check every page before the first write (PRAGMA quick_check), so that a
  // corrupt file is refused untouched. Costs one read of the file at start.
  bool verify_on_open = true;
};

// Opens (or creates) the database at `path`, checks that it is a leasehold
// database of a schema version this build understands, and migrates older
// schemas. A file that is not a SQLite database, is corrupt, belongs to
// another application, or has a newer schema fails with kUnavailable and a
// message saying so; such a file is never written to.
Result<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path, const SqliteStoreOptions& options = {});

// The schema version this build writes.
int SqliteSchemaVersion();

}  // namespace leasehold

#endif  // LEASEHOLD_STORE_SQLITE_SQLITE_STORE_H_
