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
    {2, R"sql(
CREATE TABLE operations (
  ns            TEXT    NOT NULL,
  op_id         TEXT    NOT NULL,
  outcome       BLOB    NOT NULL,   -- JSON text
  completed_us  INTEGER NOT NULL,   -- microseconds since 1970, UTC
  PRIMARY KEY (ns, op_id)
) WITHOUT ROWID;
CREATE TABLE outbox (
  ns                TEXT    NOT NULL,
  topic             TEXT    NOT NULL,
  id                INTEGER NOT NULL,
  key               TEXT    NOT NULL,
  payload           BLOB    NOT NULL,   -- JSON text; empty once acked
  enqueued_us       INTEGER NOT NULL,
  attempts          INTEGER NOT NULL,
  acked             INTEGER NOT NULL,
  consumer          TEXT    NOT NULL,
  claim_token       TEXT    NOT NULL,
  lease_expires_us  INTEGER,            -- NULL: never claimed
  PRIMARY KEY (ns, topic, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX outbox_key ON outbox (ns, topic, key);
)sql"},
};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace leasehold::sqlite
