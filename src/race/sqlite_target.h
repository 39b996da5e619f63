// SqliteTarget: the race and the walkthroughs as plain SQL on a SQLite file
// (WAL mode, one connection per session). SQLite has one writer at a time:
// every UPDATE waits for the database's write lock, so the atomic UPDATE
// sees the other session's committed claim.
#ifndef LEASEHOLD_RACE_SQLITE_TARGET_H_
#define LEASEHOLD_RACE_SQLITE_TARGET_H_

#include <memory>
#include <string>

#include "race/target.h"

namespace leasehold::race {

std::unique_ptr<Target> MakeSqliteTarget(std::string path);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_SQLITE_TARGET_H_
