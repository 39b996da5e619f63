#include "loadgen/store_counters.h"

#include <gtest/gtest.h>

namespace leasehold::loadgen {
namespace {

TEST(StoreCounters, ReadsTheThreeCounters) {
  const auto c = ParseStoreCounters(
      "# HELP leasehold_store_batches_total Store commits.\n"
      "# TYPE leasehold_store_batches_total counter\n"
      "leasehold_store_batches_total 615\n"
      "leasehold_store_entries_total 13530\n"
      "leasehold_store_entries_total_other 1\n"
      "leasehold_store_commit_seconds_total 3.0187\n");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->batches, 615);
  EXPECT_EQ(c->entries, 13530);
  EXPECT_DOUBLE_EQ(c->commit_seconds, 3.0187);
  const StoreCounters d = *c - StoreCounters{15, 530, 0.0187};
  EXPECT_EQ(d.batches, 600);
  EXPECT_EQ(d.entries, 13000);
}

TEST(StoreCounters, MissingCounterIsNothing) {
  EXPECT_FALSE(ParseStoreCounters("leasehold_store_batches_total 1\n"));
  EXPECT_FALSE(ParseStoreCounters(""));
}

}  // namespace
}  // namespace leasehold::loadgen
