// PostgreSQL-specific behaviour of PostgresStore, on a fresh database of
// the throwaway cluster each: its schema, what it refuses to touch, URLs,
// and reconnecting after the connection is lost. What every Store does is
// in store_conformance_test.cc.
#include "store/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "store/postgres/batch_plan.h"
#include "store/postgres/statements.h"
#include "tests/testing/test_postgres.h"

namespace leasehold {
namespace {

using testing::PgExec;
using testing::PgValue;
using testing::TestDatabase;

std::unique_ptr<Store> Open(const std::string& url,
                            const PostgresStoreOptions& options = {}) {
  auto store = OpenPostgresStore(url, options);
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  return store ? std::move(*store) : nullptr;
}

JournalEntry PutKey(const std::string& key) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutKey;
  e.row.ns = "docs";
  e.row.key = key;
  e.row.has_record = true;
  e.row.body = "body of " + key;
  e.row.version = 1;
  return e;
}

std::vector<std::string> Keys(Store& store) {
  auto state = store.LoadAll();
  EXPECT_TRUE(state.has_value()) << state.error().ToString();
  std::vector<std::string> keys;
  if (state) {
    for (const KeyRow& r : state->rows) keys.push_back(r.key);
  }
  return keys;
}

// Ends the connections of `application_name` to `db` and waits until they
// are gone (pg_terminate_backend only signals them). Asks through the
// cluster's own database, which takes connections when `db` does not.
void KillConnections(const TestDatabase& db, const std::string& application) {
  const std::string admin = testing::TestClusterUrl();
  const std::string where = " FROM pg_stat_activity WHERE datname = '" +
                            db.name() + "' AND application_name = '" +
                            application + "'";
  ASSERT_EQ(PgValue(admin, "SELECT count(pg_terminate_backend(pid))" + where),
            "1");
  for (int i = 0; i < 500; ++i) {
    if (PgValue(admin, "SELECT count(*)" + where) == "0") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << "the connection of " << application << " outlived its end";
}

TEST(PostgresStore, CreatesAVersionedSchemaOfLoggedTables) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT value FROM leasehold.meta WHERE name = "
                    "'schema_version'"),
            std::to_string(PostgresSchemaVersion()));
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT string_agg(relname, ',' ORDER BY relname) FROM "
                    "pg_class WHERE relkind = 'r' AND relnamespace = "
                    "'leasehold'::regnamespace"),
            "keys,locks,meta,operations,outbox,sessions");
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT count(*) FROM pg_class WHERE relnamespace = "
                    "'leasehold'::regnamespace AND relpersistence <> 'p'"),
            "0")
      << "every table and index is logged (survives a crash and replicates)";
}

TEST(PostgresStore, DescribeSaysWhereButNotThePassword) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  // The test cluster trusts every connection: the password is ignored.
  std::string url = db.url();
  url.insert(url.find('@'), ":s3cret-pw");
  auto store = Open(url + "?application_name=described", {.schema = "ns_a"});
  ASSERT_NE(store, nullptr);
  const std::string describe = store->Describe();
  EXPECT_EQ(describe.find("s3cret-pw"), std::string::npos) << describe;
  EXPECT_TRUE(describe.starts_with("postgresql:host=127.0.0.1 port="))
      << describe;
  EXPECT_NE(describe.find("dbname=" + db.name()), std::string::npos)
      << describe;
  EXPECT_NE(describe.find("schema=ns_a"), std::string::npos) << describe;
}

TEST(PostgresStore, SchemasKeepStoresApart) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto a = Open(db.url(), {.schema = "Tenant A"});
  auto b = Open(db.url(), {.schema = "tenant_b"});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Append({PutKey("only-in-a")}).ok());
  EXPECT_EQ(Keys(*a), std::vector<std::string>{"only-in-a"});
  EXPECT_TRUE(Keys(*b).empty());
}

TEST(PostgresStore, OpensTwiceWithoutMigratingAgain) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  {
    auto store = Open(db.url());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Append({PutKey("kept")}).ok());
  }
  auto again = Open(db.url());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(Keys(*again), std::vector<std::string>{"kept"});
}

// Several servers starting at once on an empty database: each one opens.
TEST(PostgresStore, ConcurrentFirstOpensAllSucceed) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  std::vector<std::thread> openers;
  std::vector<Status> results(4);
  for (std::size_t i = 0; i < results.size(); ++i) {
    openers.emplace_back([&, i] {
      auto store = OpenPostgresStore(db.url());
      results[i] = store ? Status::Ok() : store.error();
    });
  }
  for (auto& t : openers) t.join();
  for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(PostgresStore, RefusesANewerSchemaAndLeavesItAlone) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  ASSERT_NE(Open(db.url()), nullptr);
  ASSERT_TRUE(PgExec(db.url(),
                     "UPDATE leasehold.meta SET value = 99 WHERE name = "
                     "'schema_version'"));
  auto store = OpenPostgresStore(db.url());
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.error().message().find("newer"), std::string::npos)
      << store.error().message();
  EXPECT_NE(store.error().message().find("Nothing was modified"),
            std::string::npos);
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT value FROM leasehold.meta WHERE name = "
                    "'schema_version'"),
            "99");
}

// Version 2 gave lock rows a semaphore limit, version 3 the lock-delay
// reservation, version 4 keys a write fence, version 5 lock rows a hold
// limit and news of a loss: a version-1 schema (made here
// by taking them away again) is migrated on open, its lock rows come back
// as locks and its keys with no write fence.
TEST(PostgresStore, MigratesAVersion1Schema) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  ASSERT_NE(Open(db.url()), nullptr);
  ASSERT_TRUE(PgExec(db.url(),
                     "ALTER TABLE leasehold.locks DROP COLUMN semaphore_limit; "
                     "ALTER TABLE leasehold.locks DROP COLUMN hold_until_us; "
                     "ALTER TABLE leasehold.locks DROP COLUMN lost; "
                     "ALTER TABLE leasehold.keys DROP COLUMN write_fence; "
                     "DELETE FROM leasehold.meta WHERE name = "
                     "'lock_delay_until_us'; "
                     "UPDATE leasehold.meta SET value = 1 WHERE name = "
                     "'schema_version'; INSERT INTO leasehold.sessions VALUES "
                     "(5, 'old', '', 30000, 0, 7, 0, NULL, false); INSERT INTO "
                     "leasehold.locks VALUES (5, 1, 'app', 'public', 'job', "
                     "7, 2, 9, 7); INSERT INTO leasehold.keys VALUES ('docs', "
                     "'note', true, 'hi', 3, '', '', NULL, 9)"));
  auto store = Open(db.url());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT value FROM leasehold.meta WHERE name = "
                    "'schema_version'"),
            std::to_string(PostgresSchemaVersion()));
  auto state = store->LoadAll();
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  ASSERT_EQ(state->locks.size(), 1u);
  EXPECT_EQ(state->locks[0].resource, "job");
  EXPECT_EQ(state->locks[0].mode, LockMode::kExclusive);
  EXPECT_EQ(state->locks[0].count, 2u);
  EXPECT_EQ(state->locks[0].limit, 0u);
  ASSERT_EQ(state->rows.size(), 1u);
  EXPECT_EQ(state->rows[0].body, "hi");
  EXPECT_EQ(state->rows[0].fence, 9u);
  EXPECT_EQ(state->rows[0].write_fence, 0u);
}

TEST(PostgresStore, RefusesASchemaOfAnotherApplication) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  ASSERT_TRUE(PgExec(db.url(),
                     "CREATE SCHEMA leasehold; CREATE TABLE "
                     "leasehold.invoices (id int PRIMARY KEY)"));
  auto store = OpenPostgresStore(db.url());
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.error().message().find("not leasehold's"), std::string::npos)
      << store.error().message();
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT string_agg(relname, ',') FROM pg_class WHERE "
                    "relkind = 'r' AND relnamespace = "
                    "'leasehold'::regnamespace"),
            "invoices");
}

TEST(PostgresStore, BadUrlsAndUnreachableServersAreRefused) {
  auto bad = OpenPostgresStore("postgresql://127.0.0.1:5432/db?nonsense=1");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kBadRequest);
  // Port 1: nothing listens there, the connection is refused at once.
  auto unreachable = OpenPostgresStore("postgresql://postgres@127.0.0.1:1/db");
  ASSERT_FALSE(unreachable.has_value());
  EXPECT_EQ(unreachable.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(unreachable.error().message().find("PostgreSQL connect"),
            std::string::npos)
      << unreachable.error().message();
  EXPECT_EQ(OpenPostgresStore("postgresql://127.0.0.1:1/db", {.schema = ""})
                .error()
                .code(),
            StatusCode::kUnavailable)
      << "the server is asked before the schema name is looked at";
}

// A multi-host URL: libpq tries the hosts in turn and keeps the one that
// takes writes, which is how a failover is followed.
TEST(PostgresStore, AMultiHostUrlFindsTheServerThatTakesWrites) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  const std::string hosts = db.url().substr(db.url().find('@') + 1);
  const std::string url = "postgresql://postgres@127.0.0.1:1," + hosts +
                          "?target_session_attrs=read-write";
  auto store = Open(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Append({PutKey("k")}).ok());
  EXPECT_EQ(Keys(*store), std::vector<std::string>{"k"});
  EXPECT_NE(store->Describe().find("target_session_attrs=read-write"),
            std::string::npos)
      << store->Describe();
}

TEST(PostgresStore, AppendAndLoadReconnectAfterTheConnectionIsKilled) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url() + "?application_name=victim");
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Append({PutKey("before")}).ok());
  KillConnections(db, "victim");
  // The dead connection is noticed and the batch goes through a new one.
  Status st = store->Append({PutKey("after")});
  EXPECT_TRUE(st.ok()) << st.ToString();
  KillConnections(db, "victim");
  EXPECT_EQ(Keys(*store), (std::vector<std::string>{"after", "before"}));
}

// While the server refuses connections, writes fail (kUnavailable, nothing
// applied); once it takes them again, the next call reconnects by itself.
TEST(PostgresStore, UnavailableWhileUnreachableThenRecovers) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url() + "?application_name=victim");
  ASSERT_NE(store, nullptr);
  const std::string admin = testing::TestClusterUrl();
  ASSERT_TRUE(PgExec(
      admin, "ALTER DATABASE " + db.name() + " WITH ALLOW_CONNECTIONS false"));
  KillConnections(db, "victim");
  const Status down = store->Append({PutKey("while-down")});
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  EXPECT_NE(down.message().find("PostgreSQL"), std::string::npos)
      << down.message();
  EXPECT_FALSE(store->LoadAll().has_value());
  ASSERT_TRUE(PgExec(
      admin, "ALTER DATABASE " + db.name() + " WITH ALLOW_CONNECTIONS true"));
  const Status up = store->Append({PutKey("once-up")});
  EXPECT_TRUE(up.ok()) << up.ToString();
  EXPECT_EQ(Keys(*store), std::vector<std::string>{"once-up"});
}

// A batch the server refuses leaves the connection usable, and the store's
// prepared statements too.
TEST(PostgresStore, ARefusedBatchKeepsTheConnection) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url() + "?application_name=kept");
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(PgExec(db.url(),
                     "ALTER TABLE leasehold.keys ADD CONSTRAINT short_keys "
                     "CHECK (length(key) < 10)"));
  const Status refused =
      store->Append({PutKey("fits"), PutKey("far-too-long-a-key")});
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.message().find("short_keys"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(store->Append({PutKey("next")}).ok());
  EXPECT_EQ(Keys(*store), std::vector<std::string>{"next"});
  EXPECT_EQ(PgValue(db.url(),
                    "SELECT count(*) FROM pg_stat_activity WHERE "
                    "application_name = 'kept'"),
            "1")
      << "the same connection throughout";
}

// A backend that stops answering (SIGSTOP: a frozen VM, a commit waiting
// for a synchronous standby that is gone) does not hold a batch forever:
// Append gives it up after the timeout, and Close() then refuses until the
// backend is gone, since a batch it was sent might still commit after a
// reload; once it is gone, what is stored no longer changes.
TEST(PostgresStore, AnUnansweredBatchIsGivenUpAndSettledBeforeAReload) {
  using std::chrono::milliseconds;
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url() + "?application_name=stalled",
                    {.timeout = milliseconds(300)});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Append({PutKey("before")}).ok());
  const std::string admin = testing::TestClusterUrl();
  testing::StoppedBackend backend(admin, "stalled");
  ASSERT_TRUE(backend.stopped());

  auto append = std::async(std::launch::async,
                           [&] { return store->Append({PutKey("during")}); });
  const bool answered =
      append.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  if (!answered) backend.Continue();  // else the future would wait for ever
  ASSERT_TRUE(answered) << "Append waited on a stopped backend";
  const Status given_up = append.get();
  EXPECT_EQ(given_up.code(), StatusCode::kUnavailable);
  EXPECT_NE(given_up.message().find("did not answer within 300 ms"),
            std::string::npos)
      << given_up.message();

  const Status waiting = store->Close();
  EXPECT_EQ(waiting.code(), StatusCode::kUnavailable);
  EXPECT_NE(waiting.message().find("backend " + backend.pid()),
            std::string::npos)
      << waiting.message();
  EXPECT_EQ(store->Close().code(), StatusCode::kUnavailable)
      << "the backend is stopped still";
  backend.Continue();
  Status closed = waiting;
  for (int i = 0; i < 300 && !closed.ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    closed = store->Close();
  }
  ASSERT_TRUE(closed.ok()) << closed.ToString();
  EXPECT_EQ(
      PgValue(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                         backend.pid()),
      "0");

  auto reopened = Open(db.url());
  ASSERT_NE(reopened, nullptr);
  const std::vector<std::string> loaded = Keys(*reopened);
  EXPECT_TRUE(loaded == std::vector<std::string>{"before"} ||
              loaded == (std::vector<std::string>{"before", "during"}))
      << "a batch applies whole or not at all";
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(Keys(*reopened), loaded) << "what was loaded changed afterwards";
}

JournalEntry LockEntry(JournalEntry::Kind kind, SessionId session, int n) {
  JournalEntry e;
  e.kind = kind;
  e.lock.session = session;
  e.lock.ns = "docs";
  e.lock.resource = "invoice:" + std::to_string(n);
  e.lock.mode = LockMode::kExclusive;
  e.lock.count = 1;
  return e;
}

// A group commit costs a statement per table and kind of change, however
// many entries it holds; a table's deletions and upserts of lock rows go
// together: 30 grants and 30 releases are one statement.
TEST(PostgresStatements, ABatchIsOneStatementPerTableAndKind) {
  using Kind = JournalEntry::Kind;
  JournalBatch batch;
  for (int i = 0; i < 30; ++i) {
    batch.push_back(LockEntry(Kind::kPutLock, 1 + i % 4, i));
    batch.push_back(LockEntry(Kind::kDeleteLock, 1 + i % 4, i + 1000));
  }
  auto names = [](const JournalBatch& b) {
    std::vector<std::string> out;
    for (const auto& s : postgres::BindPlan(postgres::PlanBatch(b))) {
      out.emplace_back(s.name);
    }
    return out;
  };
  EXPECT_EQ(names(batch), std::vector<std::string>{"leasehold_apply_locks"});
  // Only releases, or only grants: the statement of that kind.
  JournalBatch releases(batch.begin(), batch.begin() + 1);
  releases[0].kind = Kind::kDeleteLock;
  EXPECT_EQ(names(releases),
            std::vector<std::string>{"leasehold_delete_locks"});
  EXPECT_EQ(names({batch[0]}), std::vector<std::string>{"leasehold_put_locks"});
  // Past kRowsPerStatement rows of a kind, each kind on its own again.
  JournalBatch many;
  for (std::size_t i = 0; i <= postgres::kRowsPerStatement; ++i) {
    many.push_back(LockEntry(Kind::kPutLock, 1, static_cast<int>(i)));
  }
  many.push_back(LockEntry(Kind::kDeleteLock, 2, 0));
  EXPECT_EQ(names(many), (std::vector<std::string>{"leasehold_delete_locks",
                                                   "leasehold_put_locks",
                                                   "leasehold_put_locks"}));
  // A key put twice in one batch is one row.
  batch = {PutKey("k"), PutKey("k"), PutKey("other")};
  const postgres::BatchPlan keys = postgres::PlanBatch(batch);
  EXPECT_EQ(keys.put_keys.size(), 2u);
  EXPECT_TRUE(postgres::BindPlan(postgres::PlanBatch({})).empty());
}

// Past kRowsPerStatement rows a kind takes further statements, all in the
// batch's one transaction.
TEST(PostgresStore, ABatchOfManyRowsAppliesWhole) {
  TestDatabase db("pgstore");
  ASSERT_FALSE(db.url().empty());
  auto store = Open(db.url());
  ASSERT_NE(store, nullptr);
  JournalBatch batch;
  const std::size_t n = 2 * postgres::kRowsPerStatement + 5;
  for (std::size_t i = 0; i < n; ++i) {
    batch.push_back(PutKey("key-" + std::to_string(i)));
  }
  EXPECT_EQ(postgres::BindPlan(postgres::PlanBatch(batch)).size(), 3u);
  const Status st = store->Append(batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Keys(*store).size(), n);
}

}  // namespace
}  // namespace leasehold
