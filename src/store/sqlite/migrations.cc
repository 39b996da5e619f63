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
    {3, R"sql(
CREATE TABLE sessions (
  id                      INTEGER NOT NULL,
  name                    TEXT    NOT NULL,
  caller                  TEXT    NOT NULL,   -- "" without auth
  ttl_ms                  INTEGER NOT NULL,
  deadlock_priority       INTEGER NOT NULL,
  opened_us               INTEGER NOT NULL,   -- microseconds since 1970, UTC
  transaction_id          INTEGER NOT NULL,   -- 0: none open
  transaction_started_us  INTEGER,            -- NULL: none open
  PRIMARY KEY (id)
) WITHOUT ROWID;
CREATE TABLE locks (
  session    INTEGER NOT NULL,
  owner      INTEGER NOT NULL,   -- LockOwner: 0 transaction, 1 session
  ns         TEXT    NOT NULL,
  principal  TEXT    NOT NULL,
  resource   TEXT    NOT NULL,
  mode       INTEGER NOT NULL,   -- LockMode, the combined mode held
  count      INTEGER NOT NULL,
  fence      INTEGER NOT NULL,
  since_us   INTEGER NOT NULL,
  PRIMARY KEY (session, owner, ns, principal, resource)
) WITHOUT ROWID;  -- a session's locks are one range: one range delete
INSERT INTO meta (name, value) VALUES ('session_ids_reserved', 0),
                                      ('transaction_ids_reserved', 0);
)sql"},
    {4, R"sql(
-- 1: the session asked for a lock in a namespace that keeps its locks in
-- memory; after a restart it is told they are gone.
ALTER TABLE sessions ADD COLUMN memory_locks INTEGER NOT NULL DEFAULT 0;
)sql"},
    {5, R"sql(
-- 0: a lock row. Else the row holds permits of a semaphore of this limit:
-- mode is 0 (NoLock) and count is the permits held.
ALTER TABLE locks ADD COLUMN semaphore_limit INTEGER NOT NULL DEFAULT 0;
)sql"},
    {6, R"sql(
-- Microseconds since 1970 UTC until which a lock-delay runs (0: none).
INSERT INTO meta (name, value) VALUES ('lock_delay_until_us', 0);
)sql"},
    {7, R"sql(
-- The highest fence a write of the key carried (0: none); a row with
-- neither record nor lease but a write fence is a fenced delete's tombstone.
ALTER TABLE keys ADD COLUMN write_fence INTEGER NOT NULL DEFAULT 0;
)sql"},
    {8, R"sql(
-- When the server takes the grant back (its hold limit), microseconds since
-- 1970 UTC; NULL: never.
ALTER TABLE locks ADD COLUMN hold_until_us INTEGER;
-- 0: a grant. Else the row is the news that the session lost this lock (1:
-- its hold limit, 2: broken), kept until the session is told.
ALTER TABLE locks ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;
)sql"},
};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace leasehold::sqlite
