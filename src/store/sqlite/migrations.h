// The SQLite schema, as numbered migrations. Version N's SQL turns a
// database at version N-1 into version N; PRAGMA user_version records N.
// Add a migration to change the schema; never edit a released one.
#ifndef LEASEHOLD_STORE_SQLITE_MIGRATIONS_H_
#define LEASEHOLD_STORE_SQLITE_MIGRATIONS_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace leasehold::sqlite {

// PRAGMA application_id of a leasehold database: "LSHD".
inline constexpr std::int64_t kApplicationId = 0x4C534844;

struct Migration {
  int version;
  std::string_view sql;
};

std::span<const Migration> Migrations();

}  // namespace leasehold::sqlite

#endif  // LEASEHOLD_STORE_SQLITE_MIGRATIONS_H_
