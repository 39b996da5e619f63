// Engine::ListNamespaces: what each namespace holds, as the dashboard lists it.
#include <gtest/gtest.h>

#include "tests/testing/engine_harness.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;

class NamespaceListingTest : public EngineHarness {
 protected:
  const NamespaceInfo* Find(const std::vector<NamespaceInfo>& all,
                            std::string_view ns) {
    for (const auto& n : all) {
      if (n.ns == ns) return &n;
    }
    return nullptr;
  }
};

TEST_F(NamespaceListingTest, ListsKeysLeasesLocksAndTopicsSorted) {
  EXPECT_TRUE(engine_.ListNamespaces(Now()).empty());
  ASSERT_TRUE(engine_.InsertRecord(Now(), {"docs", "17"}, "x").has_value());
  ASSERT_TRUE(
      engine_
          .Checkout(Now(),
                    {{"docs", "18"}, "Asha", milliseconds(1000), "tok", false})
          .has_value());
  ASSERT_EQ(Code(Open("Ravi"), "invoice:481", LockMode::kShared), 0);
  ASSERT_TRUE(
      engine_.Enqueue(Now(), {"billing", "emails", "k1", "{}", std::nullopt})
          .has_value());
  ASSERT_TRUE(
      engine_.Enqueue(Now(), {"billing", "audit", "k1", "{}", std::nullopt})
          .has_value());

  const auto all = engine_.ListNamespaces(Now());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].ns, "app");
  EXPECT_EQ(all[1].ns, "billing");
  EXPECT_EQ(all[2].ns, "docs");
  EXPECT_EQ(all[0].lock_resources, 1u);
  EXPECT_EQ(all[1].topics, (std::vector<std::string>{"audit", "emails"}));
  EXPECT_EQ(all[2].keys, 2u);
  EXPECT_EQ(all[2].active_checkouts, 1u);
}

TEST_F(NamespaceListingTest, AnExpiredLeaseIsNoLongerActive) {
  ASSERT_TRUE(engine_.InsertRecord(Now(), {"docs", "17"}, "x").has_value());
  ASSERT_TRUE(
      engine_
          .Checkout(Now(),
                    {{"docs", "17"}, "Asha", milliseconds(1000), "tok", false})
          .has_value());
  EXPECT_EQ(Find(engine_.ListNamespaces(Now()), "docs")->active_checkouts, 1u);
  clock_.AdvanceMs(1000);
  const auto later = engine_.ListNamespaces(Now());
  ASSERT_NE(Find(later, "docs"), nullptr);
  EXPECT_EQ(Find(later, "docs")->active_checkouts, 0u);
  EXPECT_EQ(Find(later, "docs")->keys, 1u);
}

}  // namespace
}  // namespace leasehold::testing
