// Loading a PostgresStore: every table read through a cursor, `fetch_rows`
// rows at a time, inside one REPEATABLE READ READ ONLY transaction, so the
// visitors see one consistent snapshot and at most `fetch_rows` rows sit in
// memory at once, however many the store holds.
#ifndef LEASEHOLD_STORE_POSTGRES_LOADER_H_
#define LEASEHOLD_STORE_POSTGRES_LOADER_H_

#include <libpq-fe.h>

#include <string>

#include "pg/watchdog.h"
#include "store/store.h"

namespace leasehold::postgres {

// Store::Load over `conn` (idle) for the schema `quoted` (`name` in
// messages). Ends its transaction whatever happens, unless the connection
// is lost. `watch` (on `conn`) is restarted after each round trip, so its
// limit bounds each FETCH, not the whole load.
Result<Store::Reservations> LoadStore(PGconn* conn, const std::string& name,
                                      const std::string& quoted, int fetch_rows,
                                      const Store::Visitors& visit,
                                      pg::Watchdog::Watch& watch);

}  // namespace leasehold::postgres

#endif  // LEASEHOLD_STORE_POSTGRES_LOADER_H_
