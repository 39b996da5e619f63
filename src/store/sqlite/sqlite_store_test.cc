// SQLite-specific behaviour: what it refuses to open, and how it is set up.
// The behaviour every Store shares is in tests/store/.
#include "store/sqlite/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "store/sqlite/migrations.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs `sql` on a plain SQLite connection (not through the store).
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::int64_t RawQueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  std::int64_t v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

// A record of `bytes` bytes at key `key` of namespace "docs".
JournalEntry PutKey(const std::string& key, std::size_t bytes) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutKey;
  e.row.ns = "docs";
  e.row.key = key;
  e.row.has_record = true;
  e.row.body = std::string(bytes, 'x');
  e.row.version = 1;
  return e;
}

// Backup while another thread appends: the copy, opened as a store, holds
// every batch appended before the backup began and the database spans
// many backup steps (128 pages each), so appends land between them.
TEST(SqliteStore, ABackupHoldsEveryBatchAppendedBeforeItWhileAppendsGoOn) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("l.db"));
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  for (int i = 0; i < 400; ++i) {  // ~4 MiB: about 8 steps
    ASSERT_TRUE(
        (*store)->Append({PutKey("before-" + std::to_string(i), 10000)}).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> during{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      ASSERT_TRUE(
          (*store)->Append({PutKey("during-" + std::to_string(i), 3000)}).ok());
      during = i + 1;
    }
  });
  const Status backed_up = (*store)->Backup(dir.File("copy.db"), {});
  stop = true;
  writer.join();
  ASSERT_TRUE(backed_up.ok()) << backed_up.ToString();
  EXPECT_GT(during.load(), 0);
  EXPECT_EQ(RawQueryInt(dir.File("copy.db"),
                        "SELECT count(*) FROM keys WHERE key LIKE 'before-%'"),
            400);
  auto copy = OpenSqliteStore(dir.File("copy.db"));  // checks every page
  ASSERT_TRUE(copy.has_value()) << copy.error().ToString();
  auto state = (*copy)->LoadAll();
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  EXPECT_GE(state->rows.size(), 400u);
}

TEST(SqliteStore, ABackupStopsWhenAskedOrOnceTheStoreIsClosed) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("l.db"));
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  ASSERT_TRUE((*store)->Append({PutKey("k", 10)}).ok());
  std::stop_source stop;
  stop.request_stop();
  const Status stopped = (*store)->Backup(dir.File("a.db"), stop.get_token());
  EXPECT_EQ(stopped.code(), StatusCode::kUnavailable) << stopped.ToString();
  ASSERT_TRUE((*store)->Close().ok());
  const Status closed = (*store)->Backup(dir.File("b.db"), {});
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable) << closed.ToString();
  EXPECT_NE(closed.message().find("failed during the backup"),
            std::string::npos);
  const Status nowhere = OpenSqliteStore(dir.File("c.db"))
                             .value()
                             ->Backup(dir.File("no/such/dir/x.db"), {});
  EXPECT_EQ(nowhere.code(), StatusCode::kUnavailable) << nowhere.ToString();
}

TEST(SqliteStore, CreatesAVersionedWalDatabase) {
  TempDir dir;
  const std::string path = dir.File("l.db");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    EXPECT_EQ((*store)->Describe(), "sqlite:" + path);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
  EXPECT_EQ(RawQueryInt(path, "PRAGMA application_id"), 0x4C534844);
  std::ifstream header(path, std::ios::binary);
  char b[20] = {};
  header.read(b, 20);
  EXPECT_EQ(b[18], 2) << "file format 2 means WAL";
}

// A second store on a file that one has open is refused (it would be a
// second lock service for the same leases); once the first closes, it opens.
TEST(SqliteStore, OneStoreAtATimeOwnsTheFile) {
  TempDir dir;
  const std::string path = dir.File("l.db");
  auto first = OpenSqliteStore(path);
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  auto second = OpenSqliteStore(path);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.error().message().find("in use by another process"),
            std::string::npos)
      << second.error().message();
  // Nor can a plain SQLite connection read it meanwhile.
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), -1);
  first->reset();
  auto third = OpenSqliteStore(path);
  EXPECT_TRUE(third.has_value()) << third.error().ToString();
}

TEST(SqliteStore, RefusesANewerSchemaAndLeavesTheFileAlone) {
  TempDir dir;
  const std::string path = dir.File("l.db");
  ASSERT_TRUE(OpenSqliteStore(path).has_value());
  RawExec(path, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;");
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(path);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.error().message().find("newer"), std::string::npos)
      << store.error().message();
  EXPECT_NE(store.error().message().find("not modified"), std::string::npos);
  EXPECT_TRUE(ReadFile(path) == before) << "the file was modified";
}

TEST(SqliteStore, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const std::string path = dir.File("l.db");
  WriteFile(path, std::string(4096, 'x'));
  auto store = OpenSqliteStore(path);
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().message().find("not a SQLite database"),
            std::string::npos)
      << store.error().message();
  EXPECT_TRUE(ReadFile(path) == std::string(4096, 'x'));
}

TEST(SqliteStore, RefusesACorruptDatabaseAndLeavesItAlone) {
  TempDir dir;
  const std::string path = dir.File("l.db");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value());
    JournalBatch batch;
    for (int i = 0; i < 2000; ++i) {
      JournalEntry e;
      e.row = KeyRow{"ns", "key" + std::to_string(i),
                     true, std::string(200, 'b'),
                     1,    "",
                     "",   std::nullopt,
                     0};
      batch.push_back(e);
    }
    ASSERT_TRUE((*store)->Append(batch).ok());
  }
  RawExec(path, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  // Scribble over the pages after the first one: the header stays valid.
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 16384u);
  for (std::size_t i = 4096; i < bytes.size(); i += 7) bytes[i] = '\x5a';
  WriteFile(path, bytes);
  auto store = OpenSqliteStore(path);
  Status failure = store.has_value() ? Status::Ok() : store.error();
  if (store.has_value()) {
    auto loaded = (*store)->LoadAll();
    ASSERT_FALSE(loaded.has_value()) << "a scribbled database loaded";
    failure = loaded.error();
  }
  EXPECT_EQ(failure.code(), StatusCode::kUnavailable);
  EXPECT_NE(failure.message().find("corrupt"), std::string::npos)
      << failure.message();
  EXPECT_TRUE(ReadFile(path) == bytes) << "the corrupt file was modified";
}

TEST(SqliteStore, RefusesAnotherApplicationsDatabase) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  RawExec(path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY);");
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(path);
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().message().find("another application"),
            std::string::npos);
  EXPECT_TRUE(ReadFile(path) == before) << "the file was modified";
}

TEST(SqliteStore, OptionsAreChecked) {
  TempDir dir;
  EXPECT_EQ(
      OpenSqliteStore(dir.File("a.db"), {.synchronous = "OFF"}).error().code(),
      StatusCode::kBadRequest);
  EXPECT_FALSE(
      OpenSqliteStore(dir.File("missing.db"), {.create_if_missing = false})
          .has_value());
  EXPECT_FALSE(OpenSqliteStore(dir.File("no/such/dir/a.db")).has_value());
}

}  // namespace
}  // namespace leasehold

namespace leasehold {
namespace {

// A file written by schema version 1 (keys and meta only) opens, keeps its
// keys and gains the operations and outbox tables.
TEST(SqliteStore, MigratesAVersion1File) {
  testing::TempDir dir;
  const std::string path = dir.File("v1.db");
  RawExec(path, R"sql(
CREATE TABLE keys (
  ns TEXT NOT NULL, key TEXT NOT NULL, has_record INTEGER NOT NULL,
  body BLOB NOT NULL, version INTEGER NOT NULL, locked_by TEXT NOT NULL,
  token TEXT NOT NULL, lock_expires_us INTEGER, fence INTEGER NOT NULL,
  PRIMARY KEY (ns, key)) WITHOUT ROWID;
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (name, value) VALUES ('fences_reserved', 1048576);
INSERT INTO keys VALUES ('docs', 'note', 1, x'6869', 3, 'Asha', 't', NULL, 9);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 1;
)sql");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry op;
    op.kind = JournalEntry::Kind::kPutOperation;
    op.operation = OperationRow{"docs", "inv-1", "{}", Time(Duration(5))};
    ASSERT_TRUE((*store)->Append({op}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->rows.size(), 1u);
    EXPECT_EQ(state->rows[0].body, "hi");
    EXPECT_EQ(state->rows[0].version, 3u);
    EXPECT_EQ(state->fences_reserved, 1048576u);
    ASSERT_EQ(state->operations.size(), 1u);
    EXPECT_EQ(state->operations[0], op.operation);
  }
  // Read once the store has let go of the file (it holds it while open).
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

// A file as schema version 2 left it (migrations 1 and 2 only) opens, keeps
// its rows and reservation, and takes sessions, locks and id reservations.
TEST(SqliteStore, MigratesAVersion2File) {
  testing::TempDir dir;
  const std::string path = dir.File("v2.db");
  std::string sql;
  for (const sqlite::Migration& m : sqlite::Migrations()) {
    if (m.version <= 2) sql += m.sql;
  }
  RawExec(path, sql + R"sql(
UPDATE meta SET value = 2097152 WHERE name = 'fences_reserved';
INSERT INTO keys VALUES ('docs', 'note', 1, x'6869', 3, '', '', NULL, 0);
INSERT INTO operations VALUES ('docs', 'inv-1', x'7b7d', 5);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 2;
)sql");
  ASSERT_EQ(RawQueryInt(path,
                        "SELECT count(*) FROM sqlite_schema WHERE "
                        "name IN ('sessions', 'locks')"),
            0);
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry session;
    session.kind = JournalEntry::Kind::kPutSession;
    session.session.id = 1;
    session.session.name = "worker";
    session.session.ttl = std::chrono::milliseconds(30'000);
    session.session.opened_at = Time(Duration(7));
    JournalEntry lock;
    lock.kind = JournalEntry::Kind::kPutLock;
    lock.lock.session = 1;
    lock.lock.ns = "docs";
    lock.lock.resource = "invoice-7";
    lock.lock.mode = LockMode::kUpdate;
    lock.lock.count = 1;
    JournalEntry ids;
    ids.kind = JournalEntry::Kind::kReserveSessionIds;
    ids.session_ids_reserved = 1024;
    ASSERT_TRUE((*store)->Append({session, lock, ids}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->rows.size(), 1u);
    EXPECT_EQ(state->rows[0].body, "hi");
    ASSERT_EQ(state->operations.size(), 1u);
    EXPECT_EQ(state->operations[0].outcome, "{}");
    EXPECT_EQ(state->fences_reserved, 2097152u);
    EXPECT_EQ(state->sessions, std::vector<SessionRow>{session.session});
    EXPECT_EQ(state->locks, std::vector<LockRow>{lock.lock});
    EXPECT_EQ(state->session_ids_reserved, 1024u);
    EXPECT_EQ(state->transaction_ids_reserved, 0u);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

// A file as schema version 3 left it: its sessions load without memory
// locks, and a session row that has them keeps them.
TEST(SqliteStore, MigratesAVersion3File) {
  testing::TempDir dir;
  const std::string path = dir.File("v3.db");
  std::string sql;
  for (const sqlite::Migration& m : sqlite::Migrations()) {
    if (m.version <= 3) sql += m.sql;
  }
  RawExec(path, sql + R"sql(
INSERT INTO sessions VALUES (5, 'old', '', 30000, 0, 7, 0, NULL);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 3;
)sql");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry fresh;
    fresh.kind = JournalEntry::Kind::kPutSession;
    fresh.session.id = 6;
    fresh.session.ttl = std::chrono::milliseconds(1'000);
    fresh.session.memory_locks = true;
    ASSERT_TRUE((*store)->Append({fresh}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->sessions.size(), 2u);
    EXPECT_EQ(state->sessions[0].name, "old");
    EXPECT_FALSE(state->sessions[0].memory_locks);
    EXPECT_EQ(state->sessions[1], fresh.session);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

// Version 5 gave lock rows a semaphore limit: a version-4 file's lock rows
// come back as locks (limit 0), and semaphore rows can be written beside.
TEST(SqliteStore, MigratesAVersion4File) {
  testing::TempDir dir;
  const std::string path = dir.File("v4.db");
  std::string sql;
  for (const sqlite::Migration& m : sqlite::Migrations()) {
    if (m.version <= 4) sql += m.sql;
  }
  RawExec(path, sql + R"sql(
INSERT INTO sessions VALUES (5, 'old', '', 30000, 0, 7, 0, NULL, 0);
INSERT INTO locks VALUES (5, 1, 'app', 'public', 'job', 7, 2, 9, 7);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 4;
)sql");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry permits;
    permits.kind = JournalEntry::Kind::kPutLock;
    permits.lock.session = 5;
    permits.lock.owner = LockOwner::kSession;
    permits.lock.ns = "app";
    permits.lock.principal = "public";
    permits.lock.resource = "pay";
    permits.lock.count = 2;
    permits.lock.limit = 3;
    permits.lock.fence = 10;
    ASSERT_TRUE((*store)->Append({permits}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->locks.size(), 2u);
    EXPECT_EQ(state->locks[0].resource, "job");
    EXPECT_EQ(state->locks[0].mode, LockMode::kExclusive);
    EXPECT_EQ(state->locks[0].count, 2u);
    EXPECT_EQ(state->locks[0].limit, 0u);
    EXPECT_EQ(state->locks[1], permits.lock);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

// Version 7 gave keys a write fence: a version-6 file's keys come back
// with none (0), and tombstones can be written beside them.
TEST(SqliteStore, MigratesAVersion6File) {
  testing::TempDir dir;
  const std::string path = dir.File("v6.db");
  std::string sql;
  for (const sqlite::Migration& m : sqlite::Migrations()) {
    if (m.version <= 6) sql += m.sql;
  }
  RawExec(path, sql + R"sql(
INSERT INTO keys VALUES ('docs', 'note', 1, x'6869', 3, 'Asha', 't', NULL, 9);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 6;
)sql");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry tomb;
    tomb.kind = JournalEntry::Kind::kPutKey;
    tomb.row.ns = "docs";
    tomb.row.key = "gone";
    tomb.row.write_fence = 12;
    ASSERT_TRUE((*store)->Append({tomb}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->rows.size(), 2u);
    EXPECT_EQ(state->rows[0], tomb.row);
    EXPECT_EQ(state->rows[1].key, "note");
    EXPECT_EQ(state->rows[1].body, "hi");
    EXPECT_EQ(state->rows[1].fence, 9u);
    EXPECT_EQ(state->rows[1].write_fence, 0u);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

// Version 8 gave lock rows a hold limit and news of a loss: a version-7
// file's lock rows come back as grants without a limit, and a row with
// both can be written beside them.
TEST(SqliteStore, MigratesAVersion7File) {
  testing::TempDir dir;
  const std::string path = dir.File("v7.db");
  std::string sql;
  for (const sqlite::Migration& m : sqlite::Migrations()) {
    if (m.version <= 7) sql += m.sql;
  }
  RawExec(path, sql + R"sql(
INSERT INTO sessions VALUES (5, 'old', '', 30000, 0, 7, 0, NULL, 0);
INSERT INTO locks VALUES (5, 1, 'app', 'public', 'job', 7, 2, 9, 7, 0);
PRAGMA application_id = 1280526404;
PRAGMA user_version = 7;
)sql");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JournalEntry news;
    news.kind = JournalEntry::Kind::kPutLock;
    news.lock.session = 5;
    news.lock.owner = LockOwner::kSession;
    news.lock.ns = "app";
    news.lock.principal = "public";
    news.lock.resource = "gone";
    news.lock.since = Time(std::chrono::microseconds(11));
    news.lock.lost = LostReason::kBroken;
    JournalEntry limited = news;
    limited.lock.resource = "kept";
    limited.lock.mode = LockMode::kShared;
    limited.lock.count = 1;
    limited.lock.lost = LostReason::kNone;
    limited.lock.hold_until = Time(std::chrono::microseconds(99));
    ASSERT_TRUE((*store)->Append({news, limited}).ok());
    auto state = (*store)->LoadAll();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->locks.size(), 3u);
    EXPECT_EQ(state->locks[0], news.lock);
    EXPECT_EQ(state->locks[1].resource, "job");
    EXPECT_EQ(state->locks[1].hold_until, std::nullopt);
    EXPECT_EQ(state->locks[1].lost, LostReason::kNone);
    EXPECT_EQ(state->locks[2], limited.lock);
  }
  EXPECT_EQ(RawQueryInt(path, "PRAGMA user_version"), SqliteSchemaVersion());
}

}  // namespace
}  // namespace leasehold
