#include "engine/transaction_manager.h"

#include <gtest/gtest.h>

#include <chrono>

namespace leasehold::engine {
namespace {

using std::chrono_literals::operator""ms;

StagedRecordWrite Insert(std::string key, std::string body) {
  StagedRecordWrite w;
  w.kind = StagedWriteKind::kInsert;
  w.ns = "ns";
  w.key = std::move(key);
  w.body = std::move(body);
  return w;
}

class TransactionManagerTest : public ::testing::Test {
 protected:
  TransactionManagerTest() {
    a_.id = 1;
    b_.id = 2;
  }

  Time now_ = Time{} + std::chrono::hours(1);
  DeadlineQueue deadlines_;
  JournalBatch journal_;
  TransactionManager transactions_{
      {.max_writes = 2, .max_bytes = 100}, &journal_, &deadlines_};
  Session a_;
  Session b_;
};

TEST_F(TransactionManagerTest, OneOpenTransactionPerSessionWithNewIds) {
  auto first = transactions_.Begin(&a_, now_);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->started_at, now_);
  ASSERT_NE(a_.transaction, nullptr);
  EXPECT_EQ(a_.transaction->id, first->id);
  EXPECT_EQ(transactions_.Begin(&a_, now_).error().code(),
            StatusCode::kTransactionOpen);
  auto other = transactions_.Begin(&b_, now_ + 5ms);
  ASSERT_TRUE(other);
  EXPECT_GT(other->id, first->id);
  EXPECT_EQ(transactions_.open(), 2u);
  EXPECT_EQ(transactions_.oldest_start(), now_);

  transactions_.End(&a_);
  EXPECT_EQ(a_.transaction, nullptr);
  EXPECT_EQ(transactions_.open(), 1u);
  EXPECT_EQ(transactions_.oldest_start(), now_ + 5ms);
  EXPECT_EQ(transactions_.NoTransaction(&a_).code(),
            StatusCode::kNoTransaction);
}

TEST_F(TransactionManagerTest, StagesWithinTheLimitsAndForgetsAtTheEnd) {
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  auto one = transactions_.Stage(&a_, Insert("k1", "body"));
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->staged);
  EXPECT_EQ(one->staged_writes, 1u);
  // Past the byte limit: refused, nothing staged.
  auto big = transactions_.Stage(&a_, Insert("k2", std::string(200, 'x')));
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), StatusCode::kTransactionTooLarge);
  EXPECT_EQ(TransactionManager::Info(*a_.transaction).staged_writes, 1u);
  ASSERT_TRUE(transactions_.Stage(&a_, Insert("k2", "b")));
  // Past the count limit.
  EXPECT_EQ(transactions_.Admit(&a_, 1).code(),
            StatusCode::kTransactionTooLarge);
  const TransactionInfo info = TransactionManager::Info(*a_.transaction);
  EXPECT_EQ(info.staged_writes, 2u);
  EXPECT_EQ(info.staged_bytes, (2u + 2 + 4) + (2u + 2 + 1));

  // A rollback discards them: the next transaction starts empty.
  transactions_.End(&a_);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  EXPECT_TRUE(a_.transaction->staged.empty());
}

TEST_F(TransactionManagerTest, BindsToTheEarliestLimitAndReportsItsPassing) {
  transactions_.SetLimit("slow", 100ms);
  transactions_.SetLimit("fast", 10ms);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  EXPECT_TRUE(transactions_.Bind(&a_, "free", now_));  // no limit there
  EXPECT_EQ(deadlines_.Next(), std::nullopt);
  EXPECT_TRUE(transactions_.Bind(&a_, "slow", now_));
  EXPECT_EQ(deadlines_.Next(), now_ + 100ms);
  EXPECT_TRUE(transactions_.Bind(&a_, "fast", now_ + 5ms));
  EXPECT_EQ(a_.transaction->deadline, now_ + 10ms);
  EXPECT_EQ(a_.transaction->deadline_ns, "fast");
  // The later limit no longer holds a deadline in the queue.
  const std::optional<Deadline> due = deadlines_.PopDueBy(now_ + 1000ms);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->kind, DeadlineKind::kTransactionLimit);
  EXPECT_EQ(due->at, now_ + 10ms);
  EXPECT_EQ(due->id, a_.id);
  EXPECT_EQ(deadlines_.Next(), std::nullopt);
  // Past the deadline, using a bound namespace says so.
  EXPECT_FALSE(transactions_.Bind(&a_, "slow", now_ + 10ms));
}

TEST_F(TransactionManagerTest, EndRemovesTheDeadlineAndZeroRemovesALimit) {
  transactions_.SetLimit("ns", 10ms);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  ASSERT_TRUE(transactions_.Bind(&a_, "ns", now_));
  transactions_.End(&a_);
  EXPECT_EQ(deadlines_.Next(), std::nullopt);
  transactions_.SetLimit("ns", 0ms);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  EXPECT_TRUE(transactions_.Bind(&a_, "ns", now_ + 1000ms));
  EXPECT_EQ(a_.transaction->deadline, std::nullopt);
}

TEST_F(TransactionManagerTest, AnExpiredTransactionIsNamedUntilTheNextBegins) {
  transactions_.SetLimit("ns", 10ms);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  const TransactionId id = a_.transaction->id;
  ASSERT_FALSE(transactions_.Bind(&a_, "ns", now_ + 10ms));
  transactions_.NoteExpired(&a_, now_ + 10ms);
  transactions_.End(&a_);
  EXPECT_EQ(transactions_.expired(), 1u);
  const Status why = transactions_.NoTransaction(&a_);
  EXPECT_EQ(why.code(), StatusCode::kTransactionExpired);
  EXPECT_NE(why.message().find("transaction " + std::to_string(id)),
            std::string::npos);
  EXPECT_NE(why.message().find("\"ns\""), std::string::npos);
  EXPECT_EQ(transactions_.NoTransaction(&b_).code(),
            StatusCode::kNoTransaction);

  ASSERT_TRUE(transactions_.Begin(&a_, now_ + 20ms));
  transactions_.End(&a_);
  EXPECT_EQ(transactions_.NoTransaction(&a_).code(),
            StatusCode::kNoTransaction);
}

TEST_F(TransactionManagerTest, ASessionsEndForgetsItsExpiredTransaction) {
  transactions_.SetLimit("ns", 10ms);
  ASSERT_TRUE(transactions_.Begin(&a_, now_));
  ASSERT_FALSE(transactions_.Bind(&a_, "ns", now_ + 10ms));
  transactions_.NoteExpired(&a_, now_ + 10ms);
  transactions_.End(&a_);
  transactions_.ForgetSession(&a_);
  EXPECT_EQ(transactions_.NoTransaction(&a_).code(),
            StatusCode::kNoTransaction);
}

}  // namespace
}  // namespace leasehold::engine
