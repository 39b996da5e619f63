#include "store/group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace leasehold {
namespace {

// A Store that records appends, can be slow, and can be told to fail.
class FakeStore final : public Store {
 public:
  Result<Reservations> Load(const Visitors&) override { return {}; }
  Status Append(const JournalBatch& batch) override {
    std::this_thread::sleep_for(delay);
    if (fail) return Status(StatusCode::kUnavailable, "disk full");
    std::lock_guard lock(mu);
    appends.push_back(batch.size());
    for (const auto& e : batch) keys.push_back(e.row.key);
    return Status::Ok();
  }
  std::string Describe() const override { return "fake"; }

  std::chrono::milliseconds delay{0};
  std::atomic<bool> fail{false};
  std::mutex mu;
  std::vector<std::size_t> appends;
  std::vector<std::string> keys;
};

JournalBatch One(const std::string& key) {
  JournalEntry e;
  e.row.key = key;
  return JournalBatch{e};
}

TEST(GroupCommit, WaitReturnsOnceDurableInSubmitOrder) {
  FakeStore store;
  GroupCommitter committer(&store);
  const auto a = committer.Submit(One("a"));
  const auto b = committer.Submit(One("b"));
  EXPECT_LT(a, b);
  EXPECT_TRUE(committer.Wait(b).ok());
  EXPECT_TRUE(committer.Wait(a).ok());
  std::lock_guard lock(store.mu);
  EXPECT_EQ(store.keys, (std::vector<std::string>{"a", "b"}));
}

TEST(GroupCommit, ConcurrentWritersShareCommits) {
  FakeStore store;
  store.delay = std::chrono::milliseconds(5);
  GroupCommitter committer(&store);
  constexpr int kThreads = 16, kEach = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const auto seq =
            committer.Submit(One(std::to_string(t) + ":" + std::to_string(i)));
        ASSERT_TRUE(committer.Wait(seq).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto stats = committer.Stats();
  EXPECT_EQ(stats.entries, std::uint64_t{kThreads * kEach});
  // With a 5 ms commit, 16 waiting writers must have been grouped.
  EXPECT_LT(stats.batches, std::uint64_t{kThreads * kEach} / 2);
  // Each writer's own entries stay in its order.
  std::lock_guard lock(store.mu);
  for (int t = 0; t < kThreads; ++t) {
    int next = 0;
    for (const auto& k : store.keys) {
      if (k.starts_with(std::to_string(t) + ":")) {
        EXPECT_EQ(k, std::to_string(t) + ":" + std::to_string(next++));
      }
    }
    EXPECT_EQ(next, kEach);
  }
}

TEST(GroupCommit, FailureIsStickyAndReported) {
  FakeStore store;
  GroupCommitter committer(&store);
  ASSERT_TRUE(committer.Wait(committer.Submit(One("ok"))).ok());
  store.fail = true;
  const Status st = committer.Wait(committer.Submit(One("lost")));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  store.fail = false;  // even if the disk recovers, memory is ahead of it
  EXPECT_EQ(committer.Wait(committer.Submit(One("later"))).code(),
            StatusCode::kUnavailable);
}

TEST(GroupCommit, OnDurableCallsBackOnceDurable) {
  FakeStore store;
  store.delay = std::chrono::milliseconds(2);
  GroupCommitter committer(&store);
  std::atomic<int> ok{0};
  for (int i = 0; i < 10; ++i) {
    committer.OnDurable(committer.Submit(One("k")), [&](const Status& st) {
      if (st.ok()) ++ok;
    });
  }
  committer.Wait(committer.last_submitted()).ToString();
  for (int i = 0; i < 100 && ok < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ok.load(), 10);
  bool called = false;  // already durable: called at once
  committer.OnDurable(1, [&](const Status& st) { called = st.ok(); });
  EXPECT_TRUE(called);
}

TEST(GroupCommit, DestructorWritesWhatIsQueued) {
  FakeStore store;
  store.delay = std::chrono::milliseconds(2);
  {
    GroupCommitter committer(&store);
    for (int i = 0; i < 5; ++i) committer.Submit(One(std::to_string(i)));
  }
  std::lock_guard lock(store.mu);
  EXPECT_EQ(store.keys.size(), 5u);
}

}  // namespace
}  // namespace leasehold
