#include "engine/lock_table.h"

#include <gtest/gtest.h>

namespace leasehold::engine {
namespace {

TEST(LockTable, KeysRoundTripAndKeepPartsApart) {
  LockTable table;
  Resource* a = table.FindOrCreate({"ns", "public", "x"});
  Resource* b = table.FindOrCreate({"ns", "bob", "x"});
  Resource* c = table.FindOrCreate({"n", "spublic", "x"});
  Resource* d = table.FindOrCreate({"ns", "public", "x "});
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_EQ(a, table.Find({"ns", "public", "x"}));
  const DecodedKey k = LockTable::DecodeKey(b->key);
  EXPECT_EQ(k.ns, "ns");
  EXPECT_EQ(k.principal, "bob");
  EXPECT_EQ(k.resource, "x");
  EXPECT_EQ(LockTable::DecodeKey(a->key).principal, "public");
  for (Resource* r : {a, b, c, d}) table.EraseIfIdle(r);
  EXPECT_EQ(table.resource_count(), 0u);
}

TEST(LockTable, LongNamesNeedTwoByteLengths) {
  LockTable table;
  const std::string ns(200, 'n');
  Resource* r = table.FindOrCreate({ns, "public", "x"});
  EXPECT_EQ(LockTable::DecodeKey(r->key).ns, ns);
  EXPECT_EQ(LockTable::DecodeKey(r->key).resource, "x");
  table.EraseIfIdle(r);
}

TEST(LockTable, GrantsAreFoundFromEitherSide) {
  LockTable table;
  Session s1, s2;
  s1.id = 1;
  s2.id = 2;
  Resource* r = table.FindOrCreate({"ns", "public", "x"});
  Grant* g1 =
      table.AddGrant(r, &s1, LockOwner::kSession, LockMode::kShared, 1, {});
  Grant* g2 =
      table.AddGrant(r, &s2, LockOwner::kTransaction, LockMode::kShared, 2, {});
  EXPECT_EQ(table.FindGrant(r, &s1, LockOwner::kSession), g1);
  EXPECT_EQ(table.FindGrant(r, &s1, LockOwner::kTransaction), nullptr);
  EXPECT_EQ(table.FindGrant(r, &s2, LockOwner::kTransaction), g2);
  EXPECT_EQ(table.OthersGrantedMask(r, &s1), ModeBit(LockMode::kShared));
  table.SetGrantMode(g2, LockMode::kExclusive);
  EXPECT_EQ(table.OthersGrantedMask(r, &s1), ModeBit(LockMode::kExclusive));
  EXPECT_EQ(table.OthersGrantedMask(r, &s2), ModeBit(LockMode::kShared));
  table.RemoveGrant(g1);
  table.RemoveGrant(g2);
  EXPECT_EQ(s1.total_grants(), 0u);
  EXPECT_TRUE(r->idle());
  table.EraseIfIdle(r);
}

TEST(LockTable, ConversionsQueueBeforeOthers) {
  LockTable table;
  Session s[4];
  for (int i = 0; i < 4; ++i) s[i].id = static_cast<SessionId>(i + 1);
  Resource* r = table.FindOrCreate({"ns", "public", "x"});
  table.Enqueue(r, &s[0], LockOwner::kSession, LockMode::kShared,
                LockMode::kShared, false, {}, {}, 1);
  table.Enqueue(r, &s[1], LockOwner::kSession, LockMode::kExclusive,
                LockMode::kExclusive, true, {}, {}, 2);
  table.Enqueue(r, &s[2], LockOwner::kSession, LockMode::kShared,
                LockMode::kShared, false, {}, {}, 3);
  table.Enqueue(r, &s[3], LockOwner::kSession, LockMode::kExclusive,
                LockMode::kExclusive, true, {}, {}, 4);
  std::vector<WaitId> order;
  for (Waiter* w = r->queue_head; w != nullptr; w = w->next)
    order.push_back(w->id);
  EXPECT_EQ(order, (std::vector<WaitId>{2, 4, 1, 3}));
  table.Dequeue(s[3].waiting);
  EXPECT_EQ(r->last_conversion->id, 2u);
  table.Dequeue(s[1].waiting);
  EXPECT_EQ(r->last_conversion, nullptr);
  table.Dequeue(s[0].waiting);
  table.Dequeue(s[2].waiting);
  EXPECT_TRUE(r->idle());
  table.EraseIfIdle(r);
}

}  // namespace
}  // namespace leasehold::engine
