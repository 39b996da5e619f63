// PostgresTarget: the race and the walkthroughs as plain SQL on a
// PostgreSQL database through libpq (one connection per session, every
// statement in its own transaction). PostgreSQL locks the rows an UPDATE
// changes: a second UPDATE of the same row waits, and under READ COMMITTED
// re-checks its WHERE against the row the first one committed.
#ifndef LEASEHOLD_RACE_POSTGRES_TARGET_H_
#define LEASEHOLD_RACE_POSTGRES_TARGET_H_

#include <memory>
#include <string>

#include "race/target.h"

namespace leasehold::race {

// `url` is a libpq connection URI ("postgresql://user@host:port/db").
std::unique_ptr<Target> MakePostgresTarget(std::string url);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_POSTGRES_TARGET_H_
