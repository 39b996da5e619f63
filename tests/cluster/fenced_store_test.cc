// A leader's PostgresStore fenced by its epoch (PostgresStoreOptions::fence
// with LeaderLease::EpochCheckSql): once another node has taken the lease,
// no batch of the old leader commits, not even one already open, and the
// old epoch cannot open the store. Real PostgreSQL (fixture pg_cluster).
#include <gtest/gtest.h>

#include <thread>

#include "cluster/leader_lease.h"
#include "store/postgres/postgres_store.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::cluster {
namespace {

using std::chrono::milliseconds;
using testing::TestDatabase;

JournalBatch PutKey(const std::string& key) {
  JournalEntry e;
  e.kind = JournalEntry::Kind::kPutKey;
  e.row.ns = "docs";
  e.row.key = key;
  e.row.has_record = true;
  e.row.body = "body of " + key;
  e.row.version = 1;
  JournalBatch batch;
  batch.push_back(std::move(e));
  return batch;
}

class FencedStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<LeaderLease> Node(const std::string& name) {
    auto l = LeaderLease::Open({.url = db_.url(),
                                .node = name,
                                .advertise = "http://" + name,
                                .lease = milliseconds(300),
                                .margin = milliseconds(100)});
    EXPECT_TRUE(l.has_value()) << l.error().ToString();
    return l ? std::move(*l) : nullptr;
  }

  Result<std::unique_ptr<Store>> Fenced(std::uint64_t epoch) {
    PostgresStoreOptions options;
    options.fence = PostgresStoreOptions::Fence{
        LeaderLease::EpochCheckSql("leasehold"), epoch};
    return OpenPostgresStore(db_.url(), options);
  }

  std::vector<std::string> Keys() {
    auto store = OpenPostgresStore(db_.url());
    EXPECT_TRUE(store.has_value());
    std::vector<std::string> keys;
    if (!store) return keys;
    auto state = (*store)->LoadAll();
    EXPECT_TRUE(state.has_value()) << state.error().ToString();
    if (state) {
      for (const KeyRow& r : state->rows) keys.push_back(r.key);
    }
    return keys;
  }

  // Waits out a's lease and has b take the row: b's epoch.
  std::uint64_t TakeOver(LeaderLease& b) {
    for (int i = 0; i < 300; ++i) {
      auto taken = b.TryTake();
      if (taken && *taken) return **taken;
      std::this_thread::sleep_for(milliseconds(10));
    }
    ADD_FAILURE() << "b never took the lease";
    return 0;
  }

  TestDatabase db_{"fenced"};
};

TEST_F(FencedStoreTest, AfterATakeoverTheOldLeadersBatchesCommitNothing) {
  auto a = Node("a"), b = Node("b");
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->TryTake().value(), std::optional<std::uint64_t>(1));
  auto store = Fenced(1);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  ASSERT_TRUE((*store)->Append(PutKey("before")).ok());

  ASSERT_EQ(TakeOver(*b), 2u);
  const Status late = (*store)->Append(PutKey("after"));
  EXPECT_EQ(late.code(), StatusCode::kUnavailable);
  EXPECT_NE(late.message().find("no longer leads"), std::string::npos)
      << late.message();
  EXPECT_EQ(Keys(), std::vector<std::string>{"before"});

  // The old epoch cannot even open the store; the new one can, and writes.
  auto stale = Fenced(1);
  ASSERT_FALSE(stale.has_value());
  EXPECT_NE(stale.error().message().find("no longer leads"), std::string::npos)
      << stale.error().message();
  auto current = Fenced(2);
  ASSERT_TRUE(current.has_value()) << current.error().ToString();
  EXPECT_TRUE((*current)->Append(PutKey("new leader")).ok());
  EXPECT_EQ(Keys(), (std::vector<std::string>{"before", "new leader"}));
}

TEST_F(FencedStoreTest, AFencedStoreNeedsAnEpoch) {
  auto zero = Fenced(0);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code(), StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold::cluster
