#include "store/sqlite/migrations.h"

namespace leasehold::sqlite {
namespace {

constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE keys (
  ns               TEXT    NOT NULL,
  key              TEXT    NOT NULL,
  has_record       INTEGER NOT NULL,
  body             BLOB    NOT NULL,
  version          INTEGER NOT NULL,
  locked_by        TEXT    NOT NULL,
  token            TEXT    NOT NULL,
  lock_expires_us  INTEGER,            -- microseconds since 1970, UTC
  fence            INTEGER NOT NULL,
  PRIMARY KEY (ns, key)
) WITHOUT ROWID;  -- one b-tree in key order: one write per put, ordered loads
CREATE TABLE meta (
  name   TEXT PRIMARY KEY,
  value  INTEGER NOT NULL
);
INSERT INTO meta (name, value) VALUES ('fences_reserved', 0);
)sql"},
};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace leasehold::sqlite
