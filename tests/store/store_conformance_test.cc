// The behaviour every Store implementation must have. To add a backend,
// add a StoreBackend to kBackends; every test below then runs against it.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using testing::TempDir;
using Kind = JournalEntry::Kind;

struct StoreBackend {
  std::string name;
  // Opens the store kept in `dir`; opening again sees what was written.
  std::function<std::unique_ptr<Store>(const std::string& dir)> open;
};

const StoreBackend kBackends[] = {
    {"Sqlite",
     [](const std::string& dir) -> std::unique_ptr<Store> {
       auto s = OpenSqliteStore(dir + "/leasehold.db");
       EXPECT_TRUE(s.has_value()) << s.error().ToString();
       return s ? std::move(*s) : nullptr;
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
  void Reopen() {
    store_.reset();
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
  Append({Put(r)});
  const DurableState s = Load();
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0], r);
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

INSTANTIATE_TEST_SUITE_P(
    AllStores, StoreConformance, ::testing::ValuesIn(kBackends),
    [](const ::testing::TestParamInfo<StoreBackend>& param) {
      return param.param.name;
    });

}  // namespace
}  // namespace leasehold
