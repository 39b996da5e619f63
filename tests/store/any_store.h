// OpenAnyStore: the store a test's one-argument "where" names, so that the
// restart and crash tests and their child processes run over every
// backend: a PostgreSQL URL opens a PostgresStore (schema "leasehold"),
// anything else the SQLite file at that path. OpenServiceAt: the server's
// write path on it.
#ifndef LEASEHOLD_TESTS_STORE_ANY_STORE_H_
#define LEASEHOLD_TESTS_STORE_ANY_STORE_H_

#include <memory>
#include <string>

#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/running_service.h"

namespace leasehold {

inline Result<std::unique_ptr<Store>> OpenAnyStore(const std::string& where) {
  if (IsPostgresUrl(where)) return OpenPostgresStore(where);
  return OpenSqliteStore(where);
}

inline Result<std::unique_ptr<testing::RunningService>> OpenServiceAt(
    const std::string& where, const Clock& clock, int io_threads = 1) {
  auto store = OpenAnyStore(where);
  if (!store) return std::unexpected(store.error());
  return testing::RunningService::Open(std::move(*store), clock, io_threads);
}

}  // namespace leasehold

#endif  // LEASEHOLD_TESTS_STORE_ANY_STORE_H_
