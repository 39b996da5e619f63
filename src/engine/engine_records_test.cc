// Records and checkouts, including the reference articles' walkthroughs.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = JournalEntry::Kind;

class RecordsTest : public EngineHarness {
 protected:
  static RecordKey Doc(std::string_view key) { return {"docs", key}; }

  CheckoutOutcome CheckOut(std::string_view key, std::string_view owner,
                           milliseconds ttl, std::string_view token = "",
                           bool client_token = false) {
    // The server makes a token when the client gives none.
    const std::string made =
        "tok-" + std::string(owner) + "-" + std::to_string(++tokens_made_);
    auto r = engine_.Checkout(
        Now(), {Doc(key), owner, ttl, token.empty() ? made : token,
                client_token || !token.empty()});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : CheckoutOutcome{};
  }

  WriteOutcome SaveAs(std::string_view key, LeaseProof proof,
                      std::string_view body,
                      std::optional<std::uint64_t> if_version = std::nullopt) {
    auto r = engine_.Save(Now(), Doc(key), proof, body, if_version);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : WriteOutcome{};
  }

  RecordView Get(std::string_view key) {
    auto r = engine_.GetRecord(Now(), Doc(key));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r ? *r : RecordView{};
  }

  int tokens_made_ = 0;
};

// Seed 000: a 2-second checkout that expires, a late save refused, and a
// check-in refused to the wrong person.
TEST_F(RecordsTest, SeedWalkthroughExpiryAndCheckin) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("1"), "First draft").has_value());
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("2"), "First draft").has_value());

  const auto asha = CheckOut("1", "Asha", seconds(2));
  EXPECT_TRUE(asha.granted);
  const auto ravi_early = CheckOut("1", "Ravi", seconds(300));
  EXPECT_FALSE(ravi_early.granted);
  EXPECT_EQ(ravi_early.locked_by, "Asha");
  EXPECT_EQ(ravi_early.lock_expires_at, Now() + seconds(2));

  Advance(3000);
  const RecordView row = Get("1");
  EXPECT_EQ(row.locked_by, "Asha");         // nothing cleared the name...
  EXPECT_EQ(row.state, LeaseState::kFree);  // ...but the lock is free

  const auto ravi = CheckOut("1", "Ravi", seconds(300));
  EXPECT_TRUE(ravi.granted);
  EXPECT_GT(ravi.fence, asha.fence);
  const auto late = SaveAs("1", {"Asha", ""}, "Asha edit");
  EXPECT_FALSE(late.done);
  EXPECT_EQ(late.reason, RefusalReason::kNotOwner);
  const auto saved = SaveAs("1", {"Ravi", ""}, "Ravi edit");
  EXPECT_TRUE(saved.done);
  EXPECT_EQ(saved.version, 2u);
  EXPECT_EQ(Get("1").body, "Ravi edit");

  ASSERT_TRUE(CheckOut("2", "Asha", seconds(300)).granted);
  auto wrong = engine_.Checkin(Now(), Doc("2"), {"Ravi", ""});
  EXPECT_FALSE(wrong->done);
  EXPECT_EQ(wrong->reason, RefusalReason::kNotOwner);
  EXPECT_EQ(Get("2").locked_by, "Asha");
  auto right = engine_.Checkin(Now(), Doc("2"), {"Asha", ""});
  EXPECT_TRUE(right->done);
  const RecordView after = Get("2");
  EXPECT_EQ(after.locked_by, "");
  EXPECT_FALSE(after.lock_expires_at.has_value());
  EXPECT_EQ(after.state, LeaseState::kFree);
}

TEST_F(RecordsTest, LateSaveIsRefusedEvenIfNobodyTookTheKey) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("1"), "v1").has_value());
  const auto asha = CheckOut("1", "Asha", seconds(2));
  Advance(2000);  // expiry is exclusive: at the instant it is free
  const auto late = SaveAs("1", {"Asha", asha.token}, "late");
  EXPECT_FALSE(late.done);
  EXPECT_EQ(late.reason, RefusalReason::kExpired);
  EXPECT_EQ(Get("1").version, 1u);
}

// Seed 004: token acquire, update and delete needing the token, IsLocked,
// and PurgeExpired.
TEST_F(RecordsTest, SeedWalkthroughTokensAndPurge) {
  engine_.SetNamespaceOptions("docs", {.require_token = true});
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("7"), "a").has_value());
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("8"), "b").has_value());
  EXPECT_EQ(Get("7").state, LeaseState::kFree);

  const auto lock = CheckOut("7", "app", seconds(60), "11111111-aaaa", true);
  ASSERT_TRUE(lock.granted);
  EXPECT_EQ(lock.token, "11111111-aaaa");
  EXPECT_EQ(Get("7").state, LeaseState::kLocked);

  EXPECT_EQ(SaveAs("7", {"app", ""}, "x").reason,
            RefusalReason::kTokenRequired);
  EXPECT_EQ(SaveAs("7", {"", "wrong"}, "x").reason, RefusalReason::kNotOwner);
  EXPECT_TRUE(SaveAs("7", {"", "11111111-aaaa"}, "x").done);
  EXPECT_EQ(engine_.DeleteRecord(Now(), Doc("7"), {"", "wrong"})->reason,
            RefusalReason::kNotOwner);

  const auto other = CheckOut("8", "app", seconds(10), "2222", true);
  ASSERT_TRUE(other.granted);
  Advance(20'000);
  // Purge leases expired at least 30 s ago: none yet; then all of them.
  EXPECT_EQ(*engine_.PurgeExpired(Now(), "docs", seconds(30)), 0u);
  Advance(20'000);
  EXPECT_EQ(*engine_.PurgeExpired(Now(), "docs", seconds(30)), 1u);
  EXPECT_EQ(Get("8").locked_by, "");
  EXPECT_EQ(Get("7").state, LeaseState::kLocked);  // not expired: kept
  EXPECT_TRUE(
      engine_.DeleteRecord(Now(), Doc("7"), {"", "11111111-aaaa"})->done);
  EXPECT_EQ(engine_.GetRecord(Now(), Doc("7")).error().code(),
            StatusCode::kNotFound);
}

TEST_F(RecordsTest, RenewalKeepsTokenAndFence) {
  const auto first = CheckOut("k", "Asha", seconds(10));
  Advance(5000);
  const auto by_name = CheckOut("k", "Asha", seconds(10));
  EXPECT_TRUE(by_name.granted);
  EXPECT_TRUE(by_name.renewed);
  EXPECT_EQ(by_name.token, first.token);
  EXPECT_EQ(by_name.fence, first.fence);
  EXPECT_EQ(by_name.lock_expires_at, Now() + seconds(10));
  const auto by_token = CheckOut("k", "Asha", seconds(20), first.token, true);
  EXPECT_TRUE(by_token.renewed);
  EXPECT_EQ(by_token.fence, first.fence);
  // A client token that does not match is not the holder, whatever the name.
  EXPECT_FALSE(CheckOut("k", "Asha", seconds(20), "other", true).granted);
}

TEST_F(RecordsTest, RetriedCheckoutWithClientTokenIsIdempotent) {
  const auto a = CheckOut("k", "Asha", seconds(10), "retry-me", true);
  const auto b = CheckOut("k", "Asha", seconds(10), "retry-me", true);
  EXPECT_TRUE(a.granted);
  EXPECT_TRUE(b.granted);
  EXPECT_EQ(a.fence, b.fence);
  EXPECT_FALSE(CheckOut("k", "Ravi", seconds(10), "mine", true).granted);
}

TEST_F(RecordsTest, NameRenewalIsRefusedWhereTokensAreRequired) {
  engine_.SetNamespaceOptions("docs", {.require_token = true});
  ASSERT_TRUE(CheckOut("k", "Asha", seconds(10)).granted);
  EXPECT_FALSE(CheckOut("k", "Asha", seconds(10)).granted);
}

TEST_F(RecordsTest, InsertRefusesExistingAndLargeBodies) {
  Engine small(EngineOptions{.max_body_bytes = 10});
  EXPECT_TRUE(small.InsertRecord(Now(), Doc("a"), "0123456789").has_value());
  auto big = small.InsertRecord(Now(), Doc("b"), "0123456789x");
  EXPECT_EQ(big.error().code(), StatusCode::kBodyTooLarge);
  EXPECT_EQ(small.InsertRecord(Now(), Doc("a"), "x").error().code(),
            StatusCode::kExists);
  EXPECT_EQ(small.GetRecord(Now(), Doc("b")).error().code(),
            StatusCode::kNotFound);
}

TEST_F(RecordsTest, SaveRules) {
  EXPECT_EQ(
      engine_.Save(Now(), Doc("none"), {"Asha", ""}, "x", {}).error().code(),
      StatusCode::kNotFound);
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("1"), "v1").has_value());
  EXPECT_EQ(SaveAs("1", {"Asha", ""}, "x").reason, RefusalReason::kNotOwner);
  ASSERT_TRUE(CheckOut("1", "Asha", seconds(10)).granted);
  EXPECT_EQ(SaveAs("1", {"Asha", ""}, "x", 7).reason,
            RefusalReason::kVersionMismatch);
  EXPECT_EQ(SaveAs("1", {"Asha", ""}, "v2", 1).version, 2u);
  EXPECT_EQ(engine_.Save(Now(), Doc("1"), {"", ""}, "x", {}).error().code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(
      engine_.Save(Now(), Doc("1"), {"Asha", ""}, std::string(2 << 20, 'x'), {})
          .error()
          .code(),
      StatusCode::kBodyTooLarge);
  EXPECT_EQ(Get("1").body, "v2");
}

TEST_F(RecordsTest, CheckoutValidates) {
  auto bad = [&](CheckoutRequest r) {
    return engine_.Checkout(Now(), r).error().code();
  };
  EXPECT_EQ(bad({Doc("k"), "Asha", milliseconds(0), "t", false}),
            StatusCode::kBadRequest);
  EXPECT_EQ(bad({Doc("k"), "Asha", kLongestTtl + milliseconds(1), "t", false}),
            StatusCode::kBadRequest);
  EXPECT_EQ(bad({Doc("k"), "", seconds(1), "t", false}),
            StatusCode::kNameEmpty);
  EXPECT_EQ(bad({Doc("k"), "Asha", seconds(1), "", false}),
            StatusCode::kNameEmpty);
  EXPECT_EQ(bad({Doc(std::string(256, 'k')), "Asha", seconds(1), "t", false}),
            StatusCode::kNameTooLong);
  EXPECT_EQ(bad({{"", "k"}, "Asha", seconds(1), "t", false}),
            StatusCode::kNameEmpty);
  EXPECT_EQ(engine_.Stats().keys, 0u);
}

TEST_F(RecordsTest, PlainVisibleLockWithoutRecord) {
  const auto c = CheckOut("room:4", "Asha", seconds(10));
  ASSERT_TRUE(c.granted);
  const RecordView v = Get("room:4");
  EXPECT_FALSE(v.has_record);
  EXPECT_EQ(v.state, LeaseState::kLocked);
  EXPECT_EQ(
      engine_.Save(Now(), Doc("room:4"), {"Asha", ""}, "x", {}).error().code(),
      StatusCode::kNotFound);
  EXPECT_TRUE(engine_.Checkin(Now(), Doc("room:4"), {"Asha", ""})->done);
  EXPECT_EQ(engine_.GetRecord(Now(), Doc("room:4")).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(engine_.Stats().keys, 0u);
}

TEST_F(RecordsTest, BreakReleasesAnyLease) {
  ASSERT_TRUE(CheckOut("k", "Asha", seconds(10)).granted);
  EXPECT_TRUE(*engine_.BreakCheckout(Now(), Doc("k")));
  EXPECT_EQ(engine_.BreakCheckout(Now(), Doc("k")).error().code(),
            StatusCode::kNotFound);  // a lease-only key is gone
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("r"), "x").has_value());
  EXPECT_FALSE(*engine_.BreakCheckout(Now(), Doc("r")));
  EXPECT_TRUE(CheckOut("r", "Ravi", seconds(10)).granted);
}

TEST_F(RecordsTest, ListPagesByStateAndPrefix) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        engine_.InsertRecord(Now(), Doc("note:" + std::to_string(i)), "body")
            .has_value());
  }
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("other"), "body").has_value());
  ASSERT_TRUE(CheckOut("note:3", "Asha", seconds(10)).granted);
  ASSERT_TRUE(CheckOut("note:5", "Ravi", seconds(10)).granted);

  ListRecordsQuery q{.ns = "docs", .prefix = "note:", .limit = 4};
  auto page = engine_.ListRecords(Now(), q);
  ASSERT_EQ(page->records.size(), 4u);
  EXPECT_EQ(page->records[0].key, "note:0");
  EXPECT_TRUE(page->records[0].body.empty());
  ASSERT_TRUE(page->next.has_value());
  q.after = *page->next;
  std::vector<std::string> keys;
  while (true) {
    auto p = engine_.ListRecords(Now(), q);
    for (const auto& r : p->records) keys.push_back(r.key);
    if (!p->next) break;
    q.after = *p->next;
  }
  EXPECT_EQ(keys.size(), 6u);
  EXPECT_EQ(keys.back(), "note:9");

  ListRecordsQuery locked{.ns = "docs", .state = LeaseState::kLocked};
  auto l = engine_.ListRecords(Now(), locked);
  ASSERT_EQ(l->records.size(), 2u);
  EXPECT_EQ(l->records[1].locked_by, "Ravi");
  EXPECT_FALSE(l->next.has_value());
  Advance(10'000);
  EXPECT_TRUE(engine_.ListRecords(Now(), locked)->records.empty());
  EXPECT_EQ(
      engine_.ListRecords(Now(), {.ns = "docs", .limit = 0}).error().code(),
      StatusCode::kBadRequest);
}

TEST_F(RecordsTest, EventsAndDeadlineForLeases) {
  recorder_.events.clear();
  ASSERT_TRUE(CheckOut("k", "Asha", seconds(5)).granted);
  EXPECT_EQ(engine_.NextDeadline(), Now() + seconds(5));
  EXPECT_EQ(engine_.Stats().active_checkouts, 1u);
  Advance(5000);
  EXPECT_EQ(engine_.Stats().active_checkouts, 0u);
  using E = EventType;
  EXPECT_EQ(recorder_.Types(),
            (std::vector<E>{E::kCheckoutGranted, E::kCheckoutExpired}));
  EXPECT_FALSE(engine_.NextDeadline().has_value());
}

TEST_F(RecordsTest, JournalDescribesEveryDurableChange) {
  (void)engine_.TakeJournal();
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("1"), "v1").has_value());
  const auto c = CheckOut("1", "Asha", seconds(10));
  ASSERT_TRUE(SaveAs("1", {"Asha", ""}, "v2").done);
  ASSERT_TRUE(engine_.Checkin(Now(), Doc("1"), {"Asha", ""})->done);
  ASSERT_TRUE(CheckOut("lease-only", "Ravi", seconds(10)).granted);
  ASSERT_TRUE(engine_.Checkin(Now(), Doc("lease-only"), {"Ravi", ""})->done);
  EXPECT_TRUE(CheckOut("1", "Asha", seconds(10)).granted);
  const JournalBatch j = engine_.TakeJournal();
  std::vector<Kind> kinds;
  for (const auto& e : j) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kPutKey, Kind::kReserveFences,
                                      Kind::kPutLease, Kind::kPutKey,
                                      Kind::kPutLease, Kind::kPutLease,
                                      Kind::kDeleteKey, Kind::kPutLease}));
  EXPECT_EQ(j[2].row.locked_by, "Asha");
  EXPECT_EQ(j[2].row.token, c.token);
  EXPECT_EQ(j[3].row.body, "v2");
  EXPECT_EQ(j[3].row.version, 2u);
  EXPECT_EQ(j[4].row.locked_by, "");
  EXPECT_GE(j[1].fences_reserved, c.fence);
  EXPECT_FALSE(engine_.HasJournal());
  // A refusal journals nothing.
  EXPECT_FALSE(CheckOut("1", "Ravi", seconds(10)).granted);
  EXPECT_FALSE(engine_.HasJournal());
}

TEST_F(RecordsTest, RestoreGivesTheSameStateAndFencesNeverRepeat) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), Doc("1"), "v1").has_value());
  const auto c = CheckOut("1", "Asha", seconds(60));
  ASSERT_TRUE(CheckOut("2", "Ravi", seconds(60)).granted);
  DurableState state;
  for (const auto& e : engine_.TakeJournal()) {
    if (e.kind == Kind::kReserveFences) {
      state.fences_reserved = e.fences_reserved;
      continue;
    }
    auto it = std::find_if(state.rows.begin(), state.rows.end(),
                           [&](const KeyRow& r) { return r.key == e.row.key; });
    KeyRow row = e.row;
    if (e.kind == Kind::kPutLease && it != state.rows.end()) {
      row.body = it->body;
      row.has_record = it->has_record;
      row.version = it->version;
    }
    if (it == state.rows.end()) {
      state.rows.push_back(row);
    } else {
      *it = row;
    }
  }
  Engine restored;
  ASSERT_TRUE(restored.Restore(Now(), state).ok());
  auto v = restored.GetRecord(Now(), Doc("1"));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->body, "v1");
  EXPECT_EQ(v->locked_by, "Asha");
  EXPECT_EQ(v->state, LeaseState::kLocked);
  EXPECT_EQ(restored.Stats().active_checkouts, 2u);
  auto s = restored.OpenSession(Now(), {"x", seconds(10), 0, ""});
  auto g = restored.Acquire(Now(), {s->id,
                                    {"a", "public", "r"},
                                    LockMode::kExclusive,
                                    LockOwner::kSession,
                                    milliseconds(0)});
  EXPECT_GT(g->fence, state.fences_reserved);
  EXPECT_GT(g->fence, c.fence);
  // Restore comes first or not at all.
  EXPECT_EQ(restored.Restore(Now(), state).code(), StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold::testing
