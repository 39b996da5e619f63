// Fenced record writes (docs/api.md, "Fenced writes"): a record remembers
// the highest fence that wrote it and refuses a lower one, so a holder whose
// lock was taken over cannot overwrite its successor's work.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tests/testing/engine_harness.h"
#include "tests/testing/journal_fold.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = JournalEntry::Kind;

class FencedWritesTest : public EngineHarness {
 protected:
  static RecordKey Doc(std::string_view key) { return {"docs", key}; }

  // The fence of a fresh Exclusive grant of "job" to a new session, which
  // then lets it go: each call's fence is higher than the one before.
  Fence NextHolderFence() {
    const SessionId s = Open("holder" + std::to_string(++holders_));
    auto g = Acquire(s, "job", LockMode::kExclusive);
    EXPECT_TRUE(g.has_value() && g->result == AcquireResult::kGranted);
    EXPECT_TRUE(Release(s, "job").ok());
    return g ? g->fence : 0;
  }

  Result<WriteOutcome> FencedSave(std::string_view key, Fence fence,
                                  std::string_view body) {
    return engine_.Save(Now(), Doc(key), {}, body, std::nullopt, fence);
  }

  RecordView Get(std::string_view key) {
    auto r = engine_.GetRecord(Now(), Doc(key));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : RecordView{};
  }

  // Whether the journal holds a change to a key (not just sessions and
  // locks, which NextHolderFence writes).
  bool JournaledKeys() {
    return std::ranges::any_of(engine_.TakeJournal(), [](const auto& e) {
      return e.kind == Kind::kPutKey || e.kind == Kind::kPutLease ||
             e.kind == Kind::kDeleteKey;
    });
  }

  int holders_ = 0;
};

TEST_F(FencedWritesTest, ALowerFenceIsRefusedNamingBoth) {
  const Fence old_holder = NextHolderFence();
  const Fence new_holder = NextHolderFence();
  ASSERT_LT(old_holder, new_holder);
  ASSERT_TRUE(
      engine_.InsertRecord(Now(), Doc("17"), "draft", old_holder).has_value());
  EXPECT_EQ(Get("17").write_fence, old_holder);

  auto saved = FencedSave("17", new_holder, "successor's work");
  ASSERT_TRUE(saved.has_value()) << saved.error().ToString();
  EXPECT_TRUE(saved->done);
  EXPECT_EQ(Get("17").write_fence, new_holder);
  engine_.TakeJournal();

  // The old holder, not knowing it lost the lock, tries to write.
  auto stale = FencedSave("17", old_holder, "stale overwrite");
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), StatusCode::kStaleFence);
  EXPECT_NE(stale.error().message().find(std::to_string(old_holder)),
            std::string::npos);
  EXPECT_NE(stale.error().message().find(std::to_string(new_holder)),
            std::string::npos);
  auto stale_delete =
      engine_.DeleteRecord(Now(), Doc("17"), LeaseProof{}, old_holder);
  ASSERT_FALSE(stale_delete.has_value());
  EXPECT_EQ(stale_delete.error().code(), StatusCode::kStaleFence);
  // Nothing changed, nothing journaled.
  const RecordView after = Get("17");
  EXPECT_EQ(after.body, "successor's work");
  EXPECT_EQ(after.version, 2u);
  EXPECT_EQ(after.write_fence, new_holder);
  EXPECT_FALSE(JournaledKeys());
}

TEST_F(FencedWritesTest, TheSameFenceWritesAgainAndUnfencedWritesLeaveIt) {
  const Fence f = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", f).has_value());
  EXPECT_TRUE(FencedSave("a", f, "v2")->done);
  EXPECT_TRUE(FencedSave("a", f, "v3")->done);
  // A write without a fence is not judged by fences, and changes none.
  auto c = engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(60), "t", true});
  ASSERT_TRUE(c.has_value() && c->granted);
  auto plain =
      engine_.Save(Now(), Doc("a"), {"", "t"}, "v4", std::nullopt, /*fence=*/0);
  EXPECT_TRUE(plain->done);
  EXPECT_EQ(Get("a").write_fence, f);
  EXPECT_EQ(Get("a").version, 4u);
  // The checkout's own fence is another number: the write fence stays.
  EXPECT_NE(Get("a").fence, Get("a").write_fence);
}

TEST_F(FencedWritesTest, IfVersionIsJudgedAfterTheFence) {
  const Fence old_holder = NextHolderFence();
  const Fence new_holder = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", new_holder));
  auto both_wrong = engine_.Save(Now(), Doc("a"), {}, "x", 7u, old_holder);
  ASSERT_FALSE(both_wrong.has_value());
  EXPECT_EQ(both_wrong.error().code(), StatusCode::kStaleFence);
  auto version_wrong = engine_.Save(Now(), Doc("a"), {}, "x", 7u, new_holder);
  ASSERT_TRUE(version_wrong.has_value());
  EXPECT_EQ(version_wrong->reason, RefusalReason::kVersionMismatch);
}

TEST_F(FencedWritesTest, RefusalsAndValidation) {
  const Fence f = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", f));
  // A fence never handed out would lock every real holder out.
  auto future = FencedSave("a", f + 1'000'000'000, "x");
  ASSERT_FALSE(future.has_value());
  EXPECT_EQ(future.error().code(), StatusCode::kBadRequest);
  EXPECT_NE(future.error().message().find("never handed out"),
            std::string::npos);
  auto future_insert =
      engine_.InsertRecord(Now(), Doc("b"), "x", f + 1'000'000'000);
  EXPECT_EQ(future_insert.error().code(), StatusCode::kBadRequest);
  EXPECT_FALSE(engine_.GetRecord(Now(), Doc("b")).has_value());
  // No owner, no token, no fence: nothing proves anything.
  auto nothing = engine_.Save(Now(), Doc("a"), {}, "x", std::nullopt, 0);
  EXPECT_EQ(nothing.error().code(), StatusCode::kBadRequest);
  // A fence is no proof for a check-in.
  EXPECT_EQ(engine_.Checkin(Now(), Doc("a"), {}).error().code(),
            StatusCode::kBadRequest);
  // A fence-only write may not pass someone's checkout...
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(5), "t", true})
          ->granted);
  auto checked_out = FencedSave("a", f, "x");
  ASSERT_TRUE(checked_out.has_value());
  EXPECT_FALSE(checked_out->done);
  EXPECT_EQ(checked_out->reason, RefusalReason::kNotOwner);
  // ...but with the lease's token both are checked, and both pass.
  EXPECT_TRUE(
      engine_.Save(Now(), Doc("a"), {"", "t"}, "y", std::nullopt, f)->done);
  // Once the checkout has expired, the fence alone proves enough again.
  Advance(6'000);
  EXPECT_TRUE(FencedSave("a", f, "z")->done);
  // A namespace that requires tokens refuses a fence-only proof.
  engine_.SetNamespaceOptions("docs", {.require_token = true});
  auto no_token = FencedSave("a", f, "w");
  EXPECT_EQ(no_token->reason, RefusalReason::kTokenRequired);
  EXPECT_EQ(Get("a").body, "z");
}

TEST_F(FencedWritesTest, AFencedDeleteLeavesATombstoneThatRefusesOlderFences) {
  const Fence old_holder = NextHolderFence();
  const Fence deleter = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", old_holder));
  auto deleted = engine_.DeleteRecord(Now(), Doc("a"), {}, deleter);
  ASSERT_TRUE(deleted.has_value() && deleted->done);
  const RecordView tomb = Get("a");
  EXPECT_FALSE(tomb.has_record);
  EXPECT_EQ(tomb.version, 0u);
  EXPECT_EQ(tomb.write_fence, deleter);
  EXPECT_EQ(tomb.state, LeaseState::kFree);
  // The old holder cannot bring the record back...
  auto again = engine_.InsertRecord(Now(), Doc("a"), "stale", old_holder);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), StatusCode::kStaleFence);
  // ...nor save or delete what is not there.
  EXPECT_EQ(FencedSave("a", deleter, "x").error().code(),
            StatusCode::kNotFound);
  // A checkout and check-in of the tombstone keep it.
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(5), "t", true})
          ->granted);
  ASSERT_TRUE(engine_.Checkin(Now(), Doc("a"), {"", "t"})->done);
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Ravi", seconds(1), "u", true})
          ->granted);
  Advance(2'000);
  EXPECT_EQ(*engine_.PurgeExpired(Now(), "docs", milliseconds(0)), 1u);
  EXPECT_EQ(Get("a").write_fence, deleter);
  // A newer holder inserts anew, at version 1.
  const Fence newer = NextHolderFence();
  auto inserted = engine_.InsertRecord(Now(), Doc("a"), "v1 again", newer);
  ASSERT_TRUE(inserted.has_value()) << inserted.error().ToString();
  EXPECT_EQ(*inserted, 1u);
  EXPECT_EQ(Get("a").write_fence, newer);
  // An unfenced delete of a fenced record keeps the fence too.
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(5), "v", true})
          ->granted);
  ASSERT_TRUE(engine_.DeleteRecord(Now(), Doc("a"), {"", "v"})->done);
  EXPECT_EQ(Get("a").write_fence, newer);
  EXPECT_EQ(engine_.InsertRecord(Now(), Doc("a"), "x", deleter).error().code(),
            StatusCode::kStaleFence);
}

TEST_F(FencedWritesTest, AnUnfencedKeyIsForgottenOnDeleteAsBefore) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1"));
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(5), "t", true})
          ->granted);
  ASSERT_TRUE(engine_.DeleteRecord(Now(), Doc("a"), {"", "t"})->done);
  EXPECT_EQ(engine_.GetRecord(Now(), Doc("a")).error().code(),
            StatusCode::kNotFound);
}

TEST_F(FencedWritesTest, StagedWritesAreCheckedWhenStagedAndAtCommit) {
  const Fence old_holder = NextHolderFence();
  const Fence new_holder = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", new_holder));
  const SessionId tx = Open("tx");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  // Refused when staged: the fence is already stale.
  auto stale =
      engine_.StageSave(Now(), tx, Doc("a"), {}, "x", std::nullopt, old_holder);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), StatusCode::kStaleFence);
  // Staged with the current fence; a newer holder writes before the commit.
  ASSERT_TRUE(
      engine_
          .StageSave(Now(), tx, Doc("a"), {}, "mine", std::nullopt, new_holder)
          ->staged);
  const Fence newest = NextHolderFence();
  ASSERT_TRUE(FencedSave("a", newest, "theirs")->done);
  auto commit = engine_.Commit(Now(), tx);
  EXPECT_EQ(commit.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(commit.message().find("stale_fence"), std::string::npos);
  EXPECT_EQ(Get("a").body, "theirs");
}

TEST_F(FencedWritesTest, ACommitJudgesEachWriteAfterTheOnesBeforeIt) {
  const Fence old_holder = NextHolderFence();
  const Fence new_holder = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", old_holder));
  const SessionId tx = Open("tx");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  // Both pass when staged; the second is stale after the first.
  ASSERT_TRUE(
      engine_
          .StageSave(Now(), tx, Doc("a"), {}, "new", std::nullopt, new_holder)
          ->staged);
  ASSERT_TRUE(
      engine_
          .StageSave(Now(), tx, Doc("a"), {}, "old", std::nullopt, old_holder)
          ->staged);
  auto commit = engine_.Commit(Now(), tx);
  EXPECT_EQ(commit.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(commit.message().find("stale_fence"), std::string::npos);
  EXPECT_EQ(Get("a").body, "v1");  // none of it applied

  // A staged fenced save, then a staged delete by an older fence.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  ASSERT_TRUE(
      engine_
          .StageSave(Now(), tx, Doc("a"), {}, "new", std::nullopt, new_holder)
          ->staged);
  ASSERT_TRUE(engine_.StageDelete(Now(), tx, Doc("a"), {}, old_holder)->staged);
  commit = engine_.Commit(Now(), tx);
  EXPECT_EQ(commit.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(commit.message().find("stale_fence"), std::string::npos);
  EXPECT_TRUE(Get("a").has_record);

  // In rising order it commits, and the delete leaves the latest fence.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  ASSERT_TRUE(
      engine_
          .StageSave(Now(), tx, Doc("a"), {}, "old", std::nullopt, old_holder)
          ->staged);
  ASSERT_TRUE(engine_.StageDelete(Now(), tx, Doc("a"), {}, new_holder)->staged);
  ASSERT_TRUE(engine_.Commit(Now(), tx).ok());
  EXPECT_FALSE(Get("a").has_record);
  EXPECT_EQ(Get("a").write_fence, new_holder);
  // A staged insert is judged against the tombstone when staged.
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  EXPECT_EQ(
      engine_.StageInsert(Now(), tx, Doc("a"), "x", old_holder).error().code(),
      StatusCode::kStaleFence);
  ASSERT_TRUE(
      engine_.StageInsert(Now(), tx, Doc("a"), "y", new_holder)->staged);
  ASSERT_TRUE(engine_.Commit(Now(), tx).ok());
  EXPECT_EQ(Get("a").body, "y");
  EXPECT_EQ(Get("a").version, 1u);
}

TEST_F(FencedWritesTest, AFenceOnlyStagedWriteFailsIfTheKeyIsCheckedOut) {
  const Fence f = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("a"), "v1", f));
  const SessionId tx = Open("tx");
  ASSERT_TRUE(engine_.BeginTransaction(Now(), tx).has_value());
  ASSERT_TRUE(engine_.StageDelete(Now(), tx, Doc("a"), {}, f)->staged);
  ASSERT_TRUE(
      engine_.Checkout(Now(), {Doc("a"), "Asha", seconds(5), "t", true})
          ->granted);
  auto commit = engine_.Commit(Now(), tx);
  EXPECT_EQ(commit.code(), StatusCode::kTransactionAborted);
  EXPECT_NE(commit.message().find("not_owner"), std::string::npos);
  EXPECT_TRUE(Get("a").has_record);
}

TEST_F(FencedWritesTest, WriteFencesAndTombstonesSurviveARestart) {
  const Fence old_holder = NextHolderFence();
  const Fence new_holder = NextHolderFence();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("kept"), "v1", new_holder));
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("gone"), "v1", old_holder));
  ASSERT_TRUE(engine_.DeleteRecord(Now(), Doc("gone"), {}, new_holder)->done);
  JournalFold fold;
  auto restarted = fold.Restart(engine_, Now());
  auto kept = restarted->GetRecord(Now(), Doc("kept"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->write_fence, new_holder);
  auto gone = restarted->GetRecord(Now(), Doc("gone"));
  ASSERT_TRUE(gone.has_value());
  EXPECT_FALSE(gone->has_record);
  EXPECT_EQ(gone->write_fence, new_holder);
  EXPECT_EQ(
      restarted->Save(Now(), Doc("kept"), {}, "x", std::nullopt, old_holder)
          .error()
          .code(),
      StatusCode::kStaleFence);
  EXPECT_EQ(restarted->InsertRecord(Now(), Doc("gone"), "x", old_holder)
                .error()
                .code(),
            StatusCode::kStaleFence);
  // Fences handed out before the restart are still valid write fences.
  EXPECT_TRUE(
      restarted->Save(Now(), Doc("kept"), {}, "y", std::nullopt, new_holder)
          ->done);
}

// Random holders, each writing (save, delete, insert) with the fence of
// the lock it held at some point, many of them stale: a key's accepted
// fences never go down, and a write is refused as stale exactly when a
// higher fence has written the key.
TEST_F(FencedWritesTest, AcceptedFencesNeverGoDownUnderRandomHolders) {
  std::mt19937 random(20261205);
  std::vector<Fence> handed_out;
  std::map<std::string, Fence> model;  // the write fence of each key
  std::map<std::string, bool> has_record;
  for (int step = 0; step < 2000; ++step) {
    if (handed_out.empty() || random() % 4 == 0) {
      handed_out.push_back(NextHolderFence());
    }
    const Fence fence = handed_out[random() % handed_out.size()];
    const std::string key = "k" + std::to_string(random() % 5);
    const Fence before = model[key];
    Status st;
    bool wrote = false;
    if (!has_record[key]) {
      auto r = engine_.InsertRecord(Now(), Doc(key), "v", fence);
      st = r ? Status::Ok() : r.error();
      wrote = r.has_value();
    } else if (random() % 5 == 0) {
      auto r = engine_.DeleteRecord(Now(), Doc(key), {}, fence);
      st = r ? Status::Ok() : r.error();
      wrote = r && r->done;
    } else {
      auto r = FencedSave(key, fence, "v" + std::to_string(step));
      st = r ? Status::Ok() : r.error();
      wrote = r && r->done;
    }
    if (fence < before) {
      ASSERT_EQ(st.code(), StatusCode::kStaleFence) << step;
      continue;
    }
    ASSERT_TRUE(wrote) << step << " " << st.ToString();
    model[key] = fence;
    auto view = engine_.GetRecord(Now(), Doc(key));
    ASSERT_TRUE(view.has_value());
    has_record[key] = view->has_record;
    ASSERT_EQ(view->write_fence, fence) << step;
    ASSERT_GE(fence, before) << step;
  }
}

}  // namespace
}  // namespace leasehold::testing
