// The behaviour every Store implementation must have. To add a backend,
// add a StoreBackend to kBackends; every test below then runs against it.
// The PostgreSQL backend uses the throwaway cluster that CTest starts
// (fixture pg_cluster), a schema of its own per test.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "store/memory/memory_store.h"
#include "store/mirrored_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold {
namespace {

using testing::TempDir;
using Kind = JournalEntry::Kind;

// Putting a key of this name fails once a backend's refuse_key has run.
constexpr const char* kRefusedKey = "refused-by-the-test";

struct StoreBackend {
  std::string name;
  // Opens the store kept in `dir`; opening again sees what was written.
  std::function<std::unique_ptr<Store>(const std::string& dir)> open;
  // Makes every later append of a kPutKey for kRefusedKey fail inside the
  // store, so that a batch can fail after its other entries were applied.
  // Runs while the store in `dir` is closed.
  std::function<void(const std::string& dir)> refuse_key;
  // Writes session 1 and a lock row of it in mode 8, which no build
  // appends, as someone editing the data by hand would. Runs while the
  // store in `dir` is closed.
  std::function<void(const std::string& dir)> write_mode_8_lock;
  // Removes what the store in `dir` left outside `dir`, if anything.
  std::function<void(const std::string& dir)> remove = {};
};

void SqliteExec(const std::string& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/leasehold.db").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A PostgreSQL store's schema: the name of its test's temporary directory
// (unique, and quoted by the store as an identifier).
std::string SchemaOf(const std::string& dir) {
  return std::filesystem::path(dir).filename().string();
}

// `sql` with every "{s}" replaced by the quoted schema of `dir`.
void PostgresExec(const std::string& dir, std::string sql) {
  const std::string quoted = "\"" + SchemaOf(dir) + "\"";
  for (std::size_t at; (at = sql.find("{s}")) != std::string::npos;) {
    sql.replace(at, 3, quoted);
  }
  ASSERT_FALSE(testing::TestClusterUrl().empty());
  testing::PgExec(testing::TestClusterUrl(), sql);
}

// The memory stores' data, by directory: opening one again sees it.
std::shared_ptr<MemoryStoreData> MemoryDataOf(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<MemoryStoreData>> by_dir;
  std::lock_guard lock(mu);
  auto& data = by_dir[dir];
  if (data == nullptr) data = std::make_shared<MemoryStoreData>();
  return data;
}

// Test names and failure messages print the backend's name, not its bytes.
void PrintTo(const StoreBackend& backend, std::ostream* out) {
  *out << backend.name;
}

const StoreBackend kBackends[] = {
    {"Sqlite",
     [](const std::string& dir) -> std::unique_ptr<Store> {
       auto s = OpenSqliteStore(dir + "/leasehold.db");
       EXPECT_TRUE(s.has_value()) << s.error().ToString();
       return s ? std::move(*s) : nullptr;
     },
     [](const std::string& dir) {
       SqliteExec(dir, std::string("CREATE TRIGGER refuse BEFORE INSERT ON "
                                   "keys WHEN NEW.key = '") +
                           kRefusedKey +
                           "' BEGIN SELECT RAISE(ABORT, 'refused'); END;");
     },
     [](const std::string& dir) {
       SqliteExec(dir,
                  "INSERT INTO sessions VALUES (1, 'worker', '', 30000, 0, 7, "
                  "0, NULL, 0); INSERT INTO locks VALUES (1, 1, 'docs', '', "
                  "'invoice-7', 8, 1, 0, 7, 0, NULL, 0);");
     },
     {}},
    {"Postgres",
     [](const std::string& dir) -> std::unique_ptr<Store> {
       const std::string url = testing::TestClusterUrl();
       EXPECT_FALSE(url.empty())
           << "no PostgreSQL test cluster (LEASEHOLD_TEST_PG_URL_FILE); run "
              "the tests through CTest";
       // Three rows per FETCH: every load crosses fetch boundaries.
       auto s = OpenPostgresStore(
           url, {.schema = SchemaOf(dir), .load_fetch_rows = 3});
       EXPECT_TRUE(s.has_value()) << s.error().ToString();
       return s ? std::move(*s) : nullptr;
     },
     [](const std::string& dir) {
       PostgresExec(dir, std::string(R"sql(
CREATE FUNCTION {s}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.key = convert_to(')sql") +
                             kRefusedKey + R"sql(', 'UTF8') THEN
    RAISE EXCEPTION 'refused';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER refuse BEFORE INSERT ON {s}.keys
  FOR EACH ROW EXECUTE FUNCTION {s}.refuse();)sql");
     },
     [](const std::string& dir) {
       PostgresExec(dir,
                    "INSERT INTO {s}.sessions VALUES (1, 'worker', '', "
                    "30000, 0, 7, 0, NULL, false); INSERT INTO {s}.locks "
                    "VALUES (1, 1, 'docs', '', 'invoice-7', 8, 1, 0, 7, 0);");
     },
     [](const std::string& dir) {
       PostgresExec(dir, "DROP SCHEMA IF EXISTS {s} CASCADE");
     }},
    {"Memory",
     [](const std::string& dir) { return OpenMemoryStore(MemoryDataOf(dir)); },
     [](const std::string& dir) {
       MemoryDataOf(dir)->refuse = [](const JournalEntry& e) {
         return e.kind == Kind::kPutKey && e.row.key == kRefusedKey
                    ? Status(StatusCode::kUnavailable, "refused")
                    : Status::Ok();
       };
     },
     [](const std::string& dir) {
       MemoryStoreData& data = *MemoryDataOf(dir);
       SessionRow session;
       session.id = 1;
       session.name = "worker";
       session.ttl = std::chrono::milliseconds(30000);
       data.sessions[1] = session;
       LockRow lock;
       lock.session = 1;
       lock.owner = LockOwner::kSession;
       lock.ns = "docs";
       lock.resource = "invoice-7";
       lock.mode = static_cast<LockMode>(8);
       lock.count = 1;
       lock.since = Time(Duration(7));
       data.locks[{1, LockOwner::kSession, "docs", "", "invoice-7"}] = lock;
     },
     [](const std::string& dir) {
       MemoryDataOf(dir)->refuse = nullptr;  // the rows stay: few, and tiny
     }},
};

KeyRow Row(std::string key, std::string body = "body", std::uint64_t v = 1) {
  KeyRow r;
  r.ns = "docs";
  r.key = std::move(key);
  r.has_record = true;
  r.body = std::move(body);
  r.version = v;
  return r;
}

JournalEntry Put(KeyRow row) { return JournalEntry{Kind::kPutKey, row, 0}; }
JournalEntry Lease(KeyRow row) {
  row.body.clear();
  return JournalEntry{Kind::kPutLease, row, 0};
}
JournalEntry Delete(std::string key) {
  KeyRow r;
  r.ns = "docs";
  r.key = std::move(key);
  return JournalEntry{Kind::kDeleteKey, r, 0};
}
JournalEntry Reserve(Fence f) {
  return JournalEntry{Kind::kReserveFences, {}, f};
}

class StoreConformance : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    store_ = GetParam().open(dir_.path());
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    if (GetParam().remove) GetParam().remove(dir_.path());
  }
  void Reopen(
      const std::function<void(const std::string&)>& while_closed = {}) {
    store_.reset();
    if (while_closed) while_closed(dir_.path());
    store_ = GetParam().open(dir_.path());
    ASSERT_NE(store_, nullptr);
  }
  DurableState Load() {
    auto s = store_->LoadAll();
    EXPECT_TRUE(s.has_value()) << s.error().ToString();
    if (!s) return {};
    return *s;
  }
  void Append(const JournalBatch& batch) {
    Status st = store_->Append(batch);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformance, StartsEmpty) {
  const DurableState s = Load();
  EXPECT_TRUE(s.rows.empty());
  EXPECT_EQ(s.fences_reserved, 0u);
  EXPECT_FALSE(store_->Describe().empty());
}

TEST_P(StoreConformance, PutKeyRoundTripsEveryField) {
  KeyRow r = Row("Garden note 17", std::string("bin\0ary\xff", 8), 7);
  r.locked_by = "Asha";
  r.token = "0123456789abcdef";
  r.lock_expires_at = Time(Duration(1'767'225'600'123'456));
  r.fence = 42;
  r.write_fence = 4'503'599'627'370'497;  // past 2^52: no double on the way
  Append({Put(r)});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0], r);
}

// A fenced delete leaves a row with only its write fence (a tombstone); a
// lease written over it keeps that fence, as over a record.
TEST_P(StoreConformance, TombstonesKeepTheirWriteFenceUnderALease) {
  KeyRow tomb = Row("gone", "", 0);
  tomb.has_record = false;
  tomb.write_fence = 77;
  Append({Put(tomb)});
  EXPECT_EQ(Load().rows.at(0), tomb);
  KeyRow lease = Row("gone");
  lease.locked_by = "Asha";
  lease.token = "t";
  lease.lock_expires_at = Time(Duration(9));
  lease.fence = 80;
  Append({Lease(lease)});
  Reopen();
  const KeyRow got = Load().rows.at(0);
  EXPECT_FALSE(got.has_record);
  EXPECT_EQ(got.write_fence, 77u);
  EXPECT_EQ(got.locked_by, "Asha");
  EXPECT_EQ(got.fence, 80u);
}

TEST_P(StoreConformance, UnicodeNamesAndLargeBodies) {
  KeyRow r = Row("\xE2\x82\xAC-\xF0\x9F\x94\x92", std::string(1 << 20, 'x'));
  r.ns = "espa\xC3\xB1ol";
  Append({Put(r)});
  EXPECT_EQ(Load().rows.at(0), r);
}

TEST_P(StoreConformance, PutKeyReplaces) {
  Append({Put(Row("k", "one", 1))});
  Append({Put(Row("k", "two", 2))});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].body, "two");
  EXPECT_EQ(s.rows[0].version, 2u);
}

TEST_P(StoreConformance, PutLeaseCreatesALeaseOnlyKey) {
  KeyRow r = Row("room");
  r.locked_by = "Ravi";
  r.token = "t";
  r.lock_expires_at = Time(Duration(5));
  r.fence = 3;
  Append({Lease(r)});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_FALSE(s.rows[0].has_record);
  EXPECT_EQ(s.rows[0].body, "");
  EXPECT_EQ(s.rows[0].version, 0u);
  EXPECT_EQ(s.rows[0].locked_by, "Ravi");
  EXPECT_EQ(s.rows[0].fence, 3u);
}

TEST_P(StoreConformance, PutLeaseKeepsTheRecord) {
  Append({Put(Row("k", "kept", 4))});
  KeyRow lease = Row("k");
  lease.locked_by = "Asha";
  lease.token = "t";
  lease.lock_expires_at = Time(Duration(9));
  lease.fence = 8;
  Append({Lease(lease)});
  lease.lock_expires_at.reset();
  lease.locked_by.clear();
  lease.token.clear();
  Append({Lease(lease)});  // a check-in
  const KeyRow got = Load().rows.at(0);
  EXPECT_EQ(got.body, "kept");
  EXPECT_EQ(got.version, 4u);
  EXPECT_TRUE(got.has_record);
  EXPECT_EQ(got.locked_by, "");
  EXPECT_FALSE(got.lock_expires_at.has_value());
  EXPECT_EQ(got.fence, 8u);
}

TEST_P(StoreConformance, DeleteRemovesAndToleratesMissing) {
  Append({Put(Row("a")), Put(Row("b"))});
  Append({Delete("a"), Delete("never-there")});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].key, "b");
}

TEST_P(StoreConformance, EntriesApplyInOrderWithinABatch) {
  Append({Put(Row("k", "1")), Delete("k"), Put(Row("k", "3")), Put(Row("gone")),
          Delete("gone")});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].body, "3");
}

TEST_P(StoreConformance, FenceReservationOnlyGrows) {
  Append({Reserve(100)});
  Append({Reserve(50)});
  EXPECT_EQ(Load().fences_reserved, 100u);
  Append({Reserve(200)});
  EXPECT_EQ(Load().fences_reserved, 200u);
}

TEST_P(StoreConformance, EmptyBatchIsFine) {
  Append({});
  EXPECT_TRUE(Load().rows.empty());
}

TEST_P(StoreConformance, NamespacesKeepKeysApart) {
  KeyRow a = Row("same");
  KeyRow b = Row("same", "other");
  b.ns = "other";
  Append({Put(a), Put(b)});
  EXPECT_EQ(Load().rows.size(), 2u);
  Append({Delete("same")});  // namespace "docs" only
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].ns, "other");
}

TEST_P(StoreConformance, LoadsInNamespaceAndKeyByteOrder) {
  JournalBatch batch;
  for (const char* ns : {"b", "a"}) {
    for (const char* key :
         {"note:10", "note:2", "Note", "\xC3\xA9", "note:1"}) {
      KeyRow r = Row(key);
      r.ns = ns;
      batch.push_back(Put(r));
    }
  }
  Append(batch);
  std::vector<std::pair<std::string, std::string>> order;
  for (const KeyRow& r : Load().rows) order.emplace_back(r.ns, r.key);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(order, sorted);
  EXPECT_EQ(order.size(), 10u);
}

TEST_P(StoreConformance, LoadStopsAtTheVisitorsError) {
  Append({Put(Row("a")), Put(Row("b")), Put(Row("c"))});
  int seen = 0;
  auto result = store_->Load({.key = [&](KeyRow&&) {
    return ++seen == 2 ? Status(StatusCode::kBadRequest, "stop") : Status::Ok();
  }});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message(), "stop");
  EXPECT_EQ(seen, 2);
}

JournalEntry PutOperation(const OperationRow& o) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutOperation;
  e.operation = o;
  return e;
}

JournalEntry PutMessage(const MessageRow& m) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutMessage;
  e.message = m;
  return e;
}

MessageRow Message(std::string topic, std::uint64_t id, std::string key) {
  MessageRow m;
  m.ns = "docs";
  m.topic = std::move(topic);
  m.id = id;
  m.key = std::move(key);
  m.payload = R"({"to":"a@example.com"})";
  m.enqueued_at = Time(Duration(1'767'225'600'000'001));
  return m;
}

TEST_P(StoreConformance, OperationsRoundTripAndReplace) {
  const OperationRow a{"docs", "inv-1", R"({"total":42})",
                       Time(Duration(1'767'225'600'123'456))};
  OperationRow b{"other", "inv-1", std::string("bin\0ary", 7),
                 Time(Duration(7))};
  Append({PutOperation(a), PutOperation(b)});
  b.outcome = "replaced";
  Append({PutOperation(b)});
  const DurableState s = Load();
  ASSERT_EQ(s.operations.size(), 2u);
  EXPECT_EQ(s.operations[0], a);
  EXPECT_EQ(s.operations[1], b);
}

TEST_P(StoreConformance, MessagesRoundTripEveryFieldInIdOrder) {
  MessageRow claimed = Message("mail", 2, "receipt-2");
  claimed.attempts = 3;
  claimed.consumer = "worker-1";
  claimed.claim_token = "0123456789abcdef";
  claimed.lease_expires_at = Time(Duration(1'767'225'600'999'999));
  MessageRow acked = Message("mail", 1, "receipt-1");
  acked.payload.clear();
  acked.acked = true;
  acked.attempts = 1;
  const MessageRow other_topic = Message("sms", 3, "receipt-1");
  Append({PutMessage(claimed), PutMessage(Message("mail", 1, "receipt-1")),
          PutMessage(other_topic)});
  Append({PutMessage(acked)});  // replaces id 1
  Reopen();
  const DurableState s = Load();
  ASSERT_EQ(s.messages.size(), 3u);
  EXPECT_EQ(s.messages[0], acked);
  EXPECT_EQ(s.messages[1], claimed);
  EXPECT_EQ(s.messages[2], other_topic);
}

TEST_P(StoreConformance, EverythingSurvivesReopening) {
  JournalBatch batch;
  for (int i = 0; i < 1000; ++i) {
    batch.push_back(Put(Row("key" + std::to_string(i), "b", 2)));
  }
  batch.push_back(Reserve(1 << 20));
  Append(batch);
  const DurableState before = Load();
  Reopen();
  const DurableState after = Load();
  EXPECT_EQ(after.rows.size(), 1000u);
  EXPECT_TRUE(after.rows == before.rows);
  EXPECT_EQ(after.fences_reserved, 1u << 20);
}

// --- sessions, application locks and id reservations ---------------------

SessionRow Session(SessionId id, std::string name = "worker") {
  SessionRow r;
  r.id = id;
  r.name = std::move(name);
  r.caller = "svc-billing";
  r.ttl = std::chrono::milliseconds(30'000);
  r.deadlock_priority = -3;
  r.opened_at = Time(Duration(1'767'225'600'123'456));
  return r;
}

LockRow Lock(SessionId session, std::string resource,
             LockOwner owner = LockOwner::kSession,
             LockMode mode = LockMode::kExclusive) {
  LockRow r;
  r.session = session;
  r.owner = owner;
  r.ns = "docs";
  r.principal = "svc-billing";
  r.resource = std::move(resource);
  r.mode = mode;
  r.count = 1;
  r.fence = 17;
  r.since = Time(Duration(1'767'225'600'654'321));
  return r;
}

JournalEntry PutSession(const SessionRow& r) {
  JournalEntry e;
  e.kind = Kind::kPutSession;
  e.session = r;
  return e;
}
JournalEntry DeleteSession(SessionId id) {
  JournalEntry e;
  e.kind = Kind::kDeleteSession;
  e.session.id = id;
  return e;
}
JournalEntry PutLock(const LockRow& r) {
  JournalEntry e;
  e.kind = Kind::kPutLock;
  e.lock = r;
  return e;
}
// Only the key of `r` matters.
JournalEntry DeleteLock(LockRow r) {
  r.mode = LockMode::kNoLock;
  r.count = 0;
  r.fence = 0;
  r.since = {};
  JournalEntry e;
  e.kind = Kind::kDeleteLock;
  e.lock = std::move(r);
  return e;
}
JournalEntry ReserveSessionIds(SessionId n) {
  JournalEntry e;
  e.kind = Kind::kReserveSessionIds;
  e.session_ids_reserved = n;
  return e;
}
JournalEntry ReserveTransactionIds(TransactionId n) {
  JournalEntry e;
  e.kind = Kind::kReserveTransactionIds;
  e.transaction_ids_reserved = n;
  return e;
}

TEST_P(StoreConformance, SessionsRoundTripEveryFieldAndReplace) {
  SessionRow plain = Session(2, "\xE2\x82\xAC-session");
  plain.caller = "";
  SessionRow in_transaction = Session(1);
  in_transaction.transaction = 41;
  in_transaction.transaction_started_at = Time(Duration(1'767'225'601'000'007));
  in_transaction.deadlock_priority = 10;
  in_transaction.ttl = std::chrono::milliseconds(1);
  Append({PutSession(plain), PutSession(Session(1, "before"))});
  Append({PutSession(in_transaction)});  // replaces session 1
  Reopen();
  DurableState s = Load();
  ASSERT_EQ(s.sessions.size(), 2u);
  EXPECT_EQ(s.sessions[0], in_transaction);
  EXPECT_EQ(s.sessions[1], plain);
  in_transaction.transaction = 0;  // committed
  in_transaction.transaction_started_at.reset();
  Append({PutSession(in_transaction)});
  s = Load();
  ASSERT_EQ(s.sessions.size(), 2u);
  EXPECT_EQ(s.sessions[0], in_transaction);
}

TEST_P(StoreConformance, DeletingASessionDeletesItsLocksOnly) {
  Append({PutSession(Session(1)), PutSession(Session(2)), PutLock(Lock(1, "a")),
          PutLock(Lock(1, "b", LockOwner::kTransaction)),
          PutLock(Lock(2, "a"))});
  Append({DeleteSession(1), DeleteSession(99)});  // 99: never there
  const DurableState s = Load();
  ASSERT_EQ(s.sessions.size(), 1u);
  EXPECT_EQ(s.sessions[0].id, 2u);
  ASSERT_EQ(s.locks.size(), 1u);
  EXPECT_EQ(s.locks[0], Lock(2, "a"));
}

TEST_P(StoreConformance, LocksRoundTripEveryOwnerAndMode) {
  Append({PutSession(Session(5))});
  std::vector<LockRow> expected;
  JournalBatch batch;
  for (LockOwner owner : {LockOwner::kTransaction, LockOwner::kSession}) {
    for (int m = 0; m < kLockModeCount; ++m) {
      LockRow r = Lock(5, "resource-" + std::to_string(m), owner,
                       static_cast<LockMode>(m));
      r.count = 4'000'000'000u + static_cast<std::uint32_t>(m);
      r.fence = (1ull << 40) + static_cast<Fence>(m);
      expected.push_back(r);
      batch.push_back(PutLock(r));
    }
  }
  Append(batch);
  Reopen();
  const DurableState s = Load();
  EXPECT_EQ(s.locks, expected);  // transaction-owned sort first
}

TEST_P(StoreConformance, PutLockReplacesAndDeleteLockRemovesByTheWholeKey) {
  Append({PutSession(Session(1))});
  LockRow held = Lock(1, "invoice-7", LockOwner::kSession, LockMode::kShared);
  LockRow other_owner = Lock(1, "invoice-7", LockOwner::kTransaction);
  LockRow other_ns = Lock(1, "invoice-7");
  other_ns.ns = "other";
  LockRow other_principal = Lock(1, "invoice-7");
  other_principal.principal = "svc-audit";
  Append({PutLock(held), PutLock(other_owner), PutLock(other_ns),
          PutLock(other_principal)});
  held.mode = LockMode::kSharedIntentExclusive;  // S then IX
  held.count = 2;
  Append({PutLock(held)});
  DurableState s = Load();
  ASSERT_EQ(s.locks.size(), 4u);
  // By owner (transaction first), then ns, principal, resource.
  EXPECT_EQ(s.locks[2], held) << "replaced in place";
  Append({DeleteLock(held), DeleteLock(Lock(1, "never-held"))});
  s = Load();
  ASSERT_EQ(s.locks.size(), 3u);
  EXPECT_EQ(s.locks[0], other_owner);
  EXPECT_EQ(s.locks[1], other_principal);
  EXPECT_EQ(s.locks[2], other_ns);
}

TEST_P(StoreConformance, SessionAndLockEntriesApplyInOrderWithinABatch) {
  Append({PutSession(Session(1)), PutLock(Lock(1, "a")), DeleteSession(1),
          PutSession(Session(1, "again")), PutLock(Lock(1, "b")),
          PutLock(Lock(1, "gone")), DeleteLock(Lock(1, "gone"))});
  const DurableState s = Load();
  ASSERT_EQ(s.sessions.size(), 1u);
  EXPECT_EQ(s.sessions[0].name, "again");
  ASSERT_EQ(s.locks.size(), 1u);
  EXPECT_EQ(s.locks[0].resource, "b");
}

TEST_P(StoreConformance, IdReservationsOnlyGrow) {
  Append({ReserveSessionIds(100), ReserveTransactionIds(300)});
  Append({ReserveSessionIds(50), ReserveTransactionIds(7)});
  DurableState s = Load();
  EXPECT_EQ(s.session_ids_reserved, 100u);
  EXPECT_EQ(s.transaction_ids_reserved, 300u);
  EXPECT_EQ(s.fences_reserved, 0u) << "each reservation is its own";
  Append({ReserveSessionIds(200), ReserveTransactionIds(1ull << 40)});
  Reopen();
  s = Load();
  EXPECT_EQ(s.session_ids_reserved, 200u);
  EXPECT_EQ(s.transaction_ids_reserved, 1ull << 40);
}

// The end of the latest lock-delay is kept like a reservation: the highest
// appended, whatever the order, across a reopen.
TEST_P(StoreConformance, TheLockDelaysEndOnlyGrows) {
  const auto delay = [](std::uint64_t until_us) {
    JournalEntry e;
    e.kind = Kind::kReserveLockDelay;
    e.lock_delay_until_us = until_us;
    return e;
  };
  EXPECT_EQ(Load().lock_delay_until_us, 0u);
  const std::uint64_t later = 1'767'225'615'000'000;  // 2026, in µs
  Append({delay(later - 5'000'000), delay(later)});
  Append({delay(later - 1)});
  Reopen();
  const DurableState s = Load();
  EXPECT_EQ(s.lock_delay_until_us, later);
  EXPECT_EQ(s.fences_reserved, 0u) << "each reservation is its own";
}

// Sessions by id, then locks by (session, owner, ns, principal, resource),
// every session before the first lock: a restore attaches locks to sessions.
TEST_P(StoreConformance, LoadsSessionsThenLocksInKeyOrder) {
  JournalBatch batch;
  for (SessionId id : {30, 2, 10}) batch.push_back(PutSession(Session(id)));
  for (SessionId id : {10, 2, 30}) {
    for (LockOwner owner : {LockOwner::kSession, LockOwner::kTransaction}) {
      for (const char* ns : {"b", "a"}) {
        for (const char* principal : {"zed", "Amy"}) {
          for (const char* resource : {"r:10", "r:2", "R", "\xC3\xA9"}) {
            LockRow r = Lock(id, resource, owner);
            r.ns = ns;
            r.principal = principal;
            batch.push_back(PutLock(r));
          }
        }
      }
    }
  }
  batch.push_back(PutMessage(Message("mail", 1, "k")));
  Append(batch);
  std::vector<std::string> visits;
  std::vector<SessionId> sessions;
  using LockKey =
      std::tuple<SessionId, LockOwner, std::string, std::string, std::string>;
  std::vector<LockKey> locks;
  auto loaded = store_->Load({
      .message =
          [&](MessageRow&&) {
            visits.push_back("message");
            return Status::Ok();
          },
      .session =
          [&](SessionRow&& r) {
            visits.push_back("session");
            sessions.push_back(r.id);
            return Status::Ok();
          },
      .lock =
          [&](LockRow&& r) {
            visits.push_back("lock");
            locks.emplace_back(r.session, r.owner, r.ns, r.principal,
                               r.resource);
            return Status::Ok();
          },
  });
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(sessions, (std::vector<SessionId>{2, 10, 30}));
  ASSERT_EQ(locks.size(), 3u * 2 * 2 * 2 * 4);
  auto sorted = locks;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(locks, sorted);
  ASSERT_EQ(visits.size(), 1 + 3 + locks.size());
  EXPECT_EQ(visits[0], "message");
  EXPECT_TRUE(std::all_of(visits.begin() + 1, visits.begin() + 4,
                          [](const std::string& v) { return v == "session"; }));
}

TEST_P(StoreConformance, LoadingOnlyLocksStillChecksTheirSessions) {
  Append({PutSession(Session(1)), PutLock(Lock(1, "a"))});
  int locks = 0;
  auto loaded = store_->Load({.lock = [&](LockRow&&) {
    ++locks;
    return Status::Ok();
  }});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(locks, 1);
}

// The lock row of a session that has no row could never be restored: Load
// refuses the store, naming the row, instead of dropping the lock.
TEST_P(StoreConformance, ALockWithoutItsSessionIsRefusedOnLoad) {
  Append({PutSession(Session(1)), PutLock(Lock(1, "kept"))});
  Append({PutLock(Lock(7, "orphan-resource"))});
  auto loaded = store_->LoadAll();
  ASSERT_FALSE(loaded.has_value()) << "an orphan lock row loaded";
  EXPECT_EQ(loaded.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(loaded.error().message().find("session 7"), std::string::npos)
      << loaded.error().message();
  EXPECT_NE(loaded.error().message().find("orphan-resource"), std::string::npos)
      << loaded.error().message();
}

// A semaphore's rows keep their permits (count) and limit; a lock and a
// semaphore row never share a key (the engine keeps the kinds apart).
TEST_P(StoreConformance, SemaphoreRowsKeepTheirPermitsAndLimit) {
  Append({PutSession(Session(1)), PutSession(Session(2))});
  LockRow first = Lock(1, "payments", LockOwner::kSession, LockMode::kNoLock);
  first.count = 3;
  first.limit = 5;
  LockRow second = first;
  second.session = 2;
  second.owner = LockOwner::kTransaction;
  second.count = 2;
  second.fence = 18;
  const LockRow job = Lock(1, "job");
  Append({PutLock(first), PutLock(second), PutLock(job)});
  LockRow fewer = first;
  fewer.count = 1;
  Append({PutLock(fewer)});
  Reopen();
  auto loaded = store_->LoadAll();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(loaded->locks, (std::vector<LockRow>{job, fewer, second}));
}

// A grant's hold limit comes back to the microsecond, and a row that is the
// news of a loss comes back as such; replacing the news with a grant (the
// session took the lock again) clears it.
TEST_P(StoreConformance, LockRowsKeepTheirHoldLimitAndTheNewsOfALoss) {
  Append({PutSession(Session(1))});
  LockRow limited = Lock(1, "job");
  limited.hold_until = Time(Duration(1'767'225'660'123'457));
  LockRow news = Lock(1, "gone", LockOwner::kTransaction, LockMode::kNoLock);
  news.count = 0;
  news.fence = 0;
  news.lost = LostReason::kHoldLimit;
  LockRow broken = news;
  broken.resource = "permits";
  broken.limit = 4;
  broken.lost = LostReason::kBroken;
  Append({PutLock(limited), PutLock(news), PutLock(broken)});
  Reopen();
  auto loaded = store_->LoadAll();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(loaded->locks, (std::vector<LockRow>{news, broken, limited}));
  LockRow again = Lock(1, "gone", LockOwner::kTransaction);
  Append({PutLock(again)});
  Reopen();
  loaded = store_->LoadAll();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(loaded->locks, (std::vector<LockRow>{again, broken, limited}));
}

// A lock row in a mode no build writes is refused on load, naming the row,
// instead of being cast into a mode.
TEST_P(StoreConformance, ALockRowOutOfRangeIsRefusedOnLoad) {
  Reopen(GetParam().write_mode_8_lock);
  auto loaded = store_->LoadAll();
  ASSERT_FALSE(loaded.has_value()) << "mode 8 loaded";
  EXPECT_EQ(loaded.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(loaded.error().message().find("invoice-7"), std::string::npos)
      << loaded.error().message();
}

TEST_P(StoreConformance, LoadStopsAtASessionOrLockVisitorsError) {
  Append(
      {PutSession(Session(1)), PutSession(Session(2)), PutLock(Lock(1, "a"))});
  int locks = 0;
  auto stopped = store_->Load({
      .session =
          [](SessionRow&& r) {
            return r.id == 1 ? Status(StatusCode::kBadRequest, "no sessions")
                             : Status::Ok();
          },
      .lock =
          [&](LockRow&&) {
            ++locks;
            return Status::Ok();
          },
  });
  ASSERT_FALSE(stopped.has_value());
  EXPECT_EQ(stopped.error().message(), "no sessions");
  EXPECT_EQ(locks, 0);
  auto refused = store_->Load({.lock = [](LockRow&&) {
    return Status(StatusCode::kBadRequest, "no locks");
  }});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(), "no locks");
}

// A batch whose last entry fails leaves nothing of its session and lock
// entries behind, and the store takes the next batch.
TEST_P(StoreConformance, AFailedBatchAppliesNoneOfItsSessionAndLockEntries) {
  SessionRow kept = Session(1);
  const LockRow held = Lock(1, "held");
  Append({PutSession(kept), PutLock(held), ReserveSessionIds(10),
          ReserveTransactionIds(10)});
  Reopen(GetParam().refuse_key);
  const DurableState before = Load();
  SessionRow changed = kept;
  changed.transaction = 5;
  changed.transaction_started_at = Time(Duration(5));
  const Status failed = store_->Append(
      {PutSession(changed), PutSession(Session(2)), PutLock(Lock(2, "new")),
       DeleteLock(held), PutLock(Lock(1, "added")), DeleteSession(1),
       ReserveSessionIds(1000), ReserveTransactionIds(1000),
       Put(Row(kRefusedKey))});
  ASSERT_FALSE(failed.ok()) << "the refused key was accepted";
  Reopen();
  const DurableState after = Load();
  EXPECT_EQ(after.sessions, before.sessions);
  EXPECT_EQ(after.locks, before.locks);
  EXPECT_EQ(after.session_ids_reserved, 10u);
  EXPECT_EQ(after.transaction_ids_reserved, 10u);
  Append({DeleteSession(1)});
  EXPECT_TRUE(Load().sessions.empty());
}

// Every kind in one batch, reopened: LoadAll gives back exactly what went in.
TEST_P(StoreConformance, LoadAllRoundTripsEveryKind) {
  SessionRow s1 = Session(1);
  s1.transaction = 9;
  s1.transaction_started_at = Time(Duration(12));
  const SessionRow s2 = Session(2, "other");
  const LockRow l1 = Lock(1, "a", LockOwner::kTransaction, LockMode::kUpdate);
  const LockRow l2 = Lock(2, "a", LockOwner::kSession, LockMode::kShared);
  const OperationRow op{"docs", "inv-1", "{}", Time(Duration(3))};
  const MessageRow msg = Message("mail", 1, "k");
  Append({Put(Row("key")), PutOperation(op), PutMessage(msg), PutSession(s2),
          PutSession(s1), PutLock(l2), PutLock(l1), Reserve(1 << 20),
          ReserveSessionIds(1 << 10), ReserveTransactionIds(1 << 12)});
  Reopen();
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0], Row("key"));
  EXPECT_EQ(s.operations, std::vector<OperationRow>{op});
  EXPECT_EQ(s.messages, std::vector<MessageRow>{msg});
  EXPECT_EQ(s.sessions, (std::vector<SessionRow>{s1, s2}));
  EXPECT_EQ(s.locks, (std::vector<LockRow>{l1, l2}));
  EXPECT_EQ(s.fences_reserved, 1u << 20);
  EXPECT_EQ(s.session_ids_reserved, 1u << 10);
  EXPECT_EQ(s.transaction_ids_reserved, 1u << 12);
}

TEST_P(StoreConformance, ReopeningAnEmptyStoreKeepsItEmpty) {
  Reopen();
  Reopen();
  const DurableState s = Load();
  EXPECT_TRUE(s.rows.empty());
  EXPECT_TRUE(s.sessions.empty());
  EXPECT_EQ(s.fences_reserved, 0u);
}

// Entries are states, not deltas: a batch appended twice leaves what it
// leaves once. A store may rely on it to resend a batch whose commit it
// could not confirm (PostgresStore after a lost connection).
TEST_P(StoreConformance, AppendingABatchTwiceLeavesWhatOnceLeaves) {
  KeyRow leased = Row("leased", "kept", 3);
  Append({Put(leased), PutSession(Session(1)), PutLock(Lock(1, "a")),
          PutLock(Lock(1, "b"))});
  leased.locked_by = "Asha";
  leased.token = "t";
  leased.lock_expires_at = Time(Duration(9));
  leased.fence = 12;
  const JournalBatch batch = {Lease(leased),
                              Put(Row("k", "1")),
                              Delete("k"),
                              Put(Row("k", "2", 2)),
                              DeleteLock(Lock(1, "a")),
                              DeleteSession(1),
                              PutSession(Session(1, "again")),
                              PutLock(Lock(1, "c")),
                              Reserve(500),
                              ReserveSessionIds(40),
                              PutMessage(Message("mail", 1, "m"))};
  Append(batch);
  const DurableState once = Load();
  Append(batch);
  const DurableState twice = Load();
  EXPECT_EQ(twice.rows, once.rows);
  EXPECT_EQ(twice.sessions, once.sessions);
  EXPECT_EQ(twice.locks, once.locks);
  EXPECT_EQ(twice.messages, once.messages);
  EXPECT_EQ(twice.fences_reserved, once.fences_reserved);
  EXPECT_EQ(twice.session_ids_reserved, once.session_ids_reserved);
  ASSERT_EQ(once.locks.size(), 1u);
  EXPECT_EQ(once.locks[0].resource, "c");
  EXPECT_EQ(once.rows.at(1).body, "kept") << "a lease keeps the record";
}

// --- many entries of every kind in random batches -------------------------

// What appending entries one by one leaves, as journal.h defines each kind:
// the oracle for a store that applies a batch otherwise (PostgresStore
// reduces it to one statement per table and kind).
class SequentialModel {
 public:
  void Apply(const JournalEntry& e) {
    switch (e.kind) {
      case Kind::kPutKey:
        keys_[{e.row.ns, e.row.key}] = e.row;
        return;
      case Kind::kPutLease: {
        auto [it, added] = keys_.try_emplace({e.row.ns, e.row.key});
        KeyRow& row = it->second;
        if (added) {
          row.ns = e.row.ns;
          row.key = e.row.key;
        }
        row.locked_by = e.row.locked_by;
        row.token = e.row.token;
        row.lock_expires_at = e.row.lock_expires_at;
        row.fence = e.row.fence;
        return;
      }
      case Kind::kDeleteKey:
        keys_.erase({e.row.ns, e.row.key});
        return;
      case Kind::kReserveFences:
        state_.fences_reserved =
            std::max(state_.fences_reserved, e.fences_reserved);
        return;
      case Kind::kReserveSessionIds:
        state_.session_ids_reserved =
            std::max(state_.session_ids_reserved, e.session_ids_reserved);
        return;
      case Kind::kReserveTransactionIds:
        state_.transaction_ids_reserved = std::max(
            state_.transaction_ids_reserved, e.transaction_ids_reserved);
        return;
      case Kind::kReserveLockDelay:
        state_.lock_delay_until_us =
            std::max(state_.lock_delay_until_us, e.lock_delay_until_us);
        return;
      case Kind::kPutOperation:
        operations_[{e.operation.ns, e.operation.op_id}] = e.operation;
        return;
      case Kind::kPutMessage:
        messages_[{e.message.ns, e.message.topic, e.message.id}] = e.message;
        return;
      case Kind::kPutSession:
        sessions_[e.session.id] = e.session;
        return;
      case Kind::kDeleteSession:
        sessions_.erase(e.session.id);
        std::erase_if(locks_, [&](const auto& l) {
          return l.second.session == e.session.id;
        });
        return;
      case Kind::kPutLock:
        locks_[LockKey(e.lock)] = e.lock;
        return;
      case Kind::kDeleteLock:
        locks_.erase(LockKey(e.lock));
        return;
    }
  }

  bool HasSession(SessionId id) const { return sessions_.contains(id); }

  // Every list sorted by its key, as Sorted() sorts a store's.
  DurableState State() const {
    DurableState s = state_;
    for (const auto& [k, v] : keys_) s.rows.push_back(v);
    for (const auto& [k, v] : operations_) s.operations.push_back(v);
    for (const auto& [k, v] : messages_) s.messages.push_back(v);
    for (const auto& [k, v] : sessions_) s.sessions.push_back(v);
    for (const auto& [k, v] : locks_) s.locks.push_back(v);
    return s;
  }

  using LockKeyOf =
      std::tuple<SessionId, LockOwner, std::string, std::string, std::string>;
  static LockKeyOf LockKey(const LockRow& r) {
    return {r.session, r.owner, r.ns, r.principal, r.resource};
  }

 private:
  DurableState state_;
  std::map<std::pair<std::string, std::string>, KeyRow> keys_;
  std::map<std::pair<std::string, std::string>, OperationRow> operations_;
  std::map<std::tuple<std::string, std::string, std::uint64_t>, MessageRow>
      messages_;
  std::map<SessionId, SessionRow> sessions_;
  std::map<LockKeyOf, LockRow> locks_;
};

DurableState Sorted(DurableState s) {
  std::sort(s.rows.begin(), s.rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.key) < std::tie(b.ns, b.key);
  });
  std::sort(s.operations.begin(), s.operations.end(),
            [](const auto& a, const auto& b) {
              return std::tie(a.ns, a.op_id) < std::tie(b.ns, b.op_id);
            });
  std::sort(
      s.messages.begin(), s.messages.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.topic, a.id) < std::tie(b.ns, b.topic, b.id);
      });
  std::sort(s.sessions.begin(), s.sessions.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(s.locks.begin(), s.locks.end(), [](const auto& a, const auto& b) {
    return SequentialModel::LockKey(a) < SequentialModel::LockKey(b);
  });
  return s;
}

// A random entry over a few names, so that rows are touched again and
// again within a batch; locks only of sessions that exist by then (a lock
// row without its session is refused on load).
JournalEntry RandomEntry(std::mt19937& random, const SequentialModel& model) {
  auto pick = [&](int n) { return static_cast<int>(random() % n); };
  const std::string key = "k" + std::to_string(pick(4));
  const std::string ns = pick(2) == 0 ? "docs" : "other";
  const auto at = Time(Duration(1'767'225'600'000'000 + pick(1000)));
  const SessionId session = 1 + static_cast<SessionId>(pick(3));
  switch (pick(12)) {
    case 0:
    case 1: {
      KeyRow r = Row(key, "body-" + std::to_string(random()), 1 + pick(9));
      r.ns = ns;
      if (pick(2) == 0) {
        r.locked_by = "Asha";
        r.token = "t" + std::to_string(pick(100));
        r.lock_expires_at = at;
        r.fence = 1 + pick(50);
      }
      if (pick(3) == 0) r.write_fence = 1 + pick(50);
      if (pick(5) == 0) {  // a fenced delete's tombstone
        r.has_record = false;
        r.body.clear();
        r.version = 0;
      }
      return Put(r);
    }
    case 2:
    case 3: {
      KeyRow r = Row(key);
      r.ns = ns;
      r.locked_by = pick(3) == 0 ? "" : "Ravi";
      r.token = "t" + std::to_string(pick(100));
      if (pick(3) != 0) r.lock_expires_at = at;
      r.fence = 1 + pick(50);
      return Lease(r);
    }
    case 4: {
      JournalEntry e = Delete(key);
      e.row.ns = ns;
      return e;
    }
    case 5:
      return pick(3) == 0   ? Reserve(pick(1000))
             : pick(2) == 0 ? ReserveSessionIds(pick(1000))
                            : ReserveTransactionIds(pick(1000));
    case 6:
      return PutOperation(
          {ns, "op-" + std::to_string(pick(3)), std::to_string(random()), at});
    case 7: {
      // A deduplication key belongs to one message id, as the engine keeps.
      const std::uint64_t id = 1 + static_cast<std::uint64_t>(pick(3));
      MessageRow m = Message("mail", id, "m" + std::to_string(id));
      m.attempts = pick(5);
      m.acked = pick(2) == 0;
      if (pick(2) == 0) m.lease_expires_at = at;
      return PutMessage(m);
    }
    case 8: {
      SessionRow r = Session(session, "s-" + std::to_string(random()));
      if (pick(2) == 0) {
        r.transaction = 1 + pick(9);
        r.transaction_started_at = at;
      }
      return PutSession(r);
    }
    case 9:
      return DeleteSession(session);
    default: {
      if (!model.HasSession(session)) return DeleteSession(session);
      LockRow r =
          Lock(session, "r" + std::to_string(pick(3)),
               pick(2) == 0 ? LockOwner::kSession : LockOwner::kTransaction,
               static_cast<LockMode>(1 + pick(kLockModeCount - 1)));
      r.count = 1 + pick(3);
      r.fence = 1 + pick(100);
      if (pick(3) == 0) return DeleteLock(r);
      return PutLock(r);
    }
  }
}

// 1 to `most` random entries, applied to `model` as they are drawn.
JournalBatch RandomBatch(std::mt19937& random, SequentialModel& model,
                         int most = 25) {
  JournalBatch batch;
  const int n = 1 + static_cast<int>(random() % most);
  for (int i = 0; i < n; ++i) {
    batch.push_back(RandomEntry(random, model));
    model.Apply(batch.back());
  }
  return batch;
}

// Whether `got` (sorted) holds what `want` does, every kind of row and
// reservation; says what differs, `when`.
::testing::AssertionResult SameState(const DurableState& got,
                                     const DurableState& want,
                                     const std::string& when) {
  const char* differs =
      got.rows != want.rows                         ? "keys"
      : got.operations != want.operations           ? "operations"
      : got.messages != want.messages               ? "messages"
      : got.sessions != want.sessions               ? "sessions"
      : got.locks != want.locks                     ? "locks"
      : got.fences_reserved != want.fences_reserved ? "fences reserved"
      : got.session_ids_reserved != want.session_ids_reserved
          ? "session ids reserved"
      : got.transaction_ids_reserved != want.transaction_ids_reserved
          ? "transaction ids reserved"
      : got.lock_delay_until_us != want.lock_delay_until_us ? "lock-delay"
                                                            : nullptr;
  if (differs == nullptr) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differs << " differ " << when;
}

TEST_P(StoreConformance, RandomBatchesLeaveWhatTheirEntriesOneByOneLeave) {
  std::mt19937 random(20261204);
  SequentialModel model;
  for (int b = 0; b < 40; ++b) {
    Append(RandomBatch(random, model));
    ASSERT_TRUE(SameState(Sorted(Load()), model.State(),
                          "after batch " + std::to_string(b)));
  }
}

// MirroredStore over each store: its copy holds exactly what the store
// acknowledged (the rows it loaded, then every batch appended), never a
// batch the store refused, so that reads during an outage show only
// acknowledged state (EngineService).
TEST_P(StoreConformance, AMirrorHoldsExactlyWhatTheStoreAcknowledged) {
  std::mt19937 random(20261206);
  SequentialModel model;
  auto append_random = [&](int batches) {
    for (int b = 0; b < batches; ++b) Append(RandomBatch(random, model));
  };
  append_random(10);  // before the mirror: it gets these from the load
  Reopen(GetParam().refuse_key);
  auto owned = std::make_unique<MirroredStore>(std::move(store_));
  const std::shared_ptr<MemoryStoreData> mirror = owned->mirror();
  store_ = std::move(owned);
  auto mirrored = [&] {
    auto state = OpenMemoryStore(mirror)->LoadAll();
    EXPECT_TRUE(state.has_value()) << state.error().ToString();
    return state ? Sorted(std::move(*state)) : DurableState{};
  };
  auto expect_same = [&](const DurableState& got, const std::string& when) {
    EXPECT_TRUE(SameState(got, model.State(), when));
  };
  EXPECT_TRUE(mirrored().rows.empty()) << "filled before a load";
  expect_same(Sorted(Load()), "the store, loaded through the mirror");
  expect_same(mirrored(), "the mirror after the load");
  for (int round = 0; round < 3; ++round) {
    append_random(10);
    // A batch the store refuses (its last entry) leaves nothing in the
    // mirror either.
    SequentialModel refused = model;
    JournalBatch batch = RandomBatch(random, refused, 5);
    batch.push_back(Put(Row(kRefusedKey)));
    ASSERT_FALSE(store_->Append(batch).ok()) << "the refused key was taken";
    expect_same(mirrored(), "the mirror, round " + std::to_string(round));
  }
  expect_same(Sorted(Load()), "the store at the end");
}

INSTANTIATE_TEST_SUITE_P(
    AllStores, StoreConformance, ::testing::ValuesIn(kBackends),
    [](const ::testing::TestParamInfo<StoreBackend>& param) {
      return param.param.name;
    });

}  // namespace
}  // namespace leasehold
