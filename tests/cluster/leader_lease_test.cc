// LeaderLease on the tests' real PostgreSQL cluster (a fresh database per
// test): one holder at a time, epochs that only rise, renewal by epoch, a
// leader that stops acting before anyone can take over, and a takeover that
// waits for the old leader's fenced transaction.
#include "cluster/leader_lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "tests/testing/test_postgres.h"

namespace leasehold::cluster {
namespace {

using std::chrono::milliseconds;
using Clock = LeaderLease::Clock;
using Renewal = LeaderLease::Renewal;

class LeaderLeaseTest : public ::testing::Test {
 protected:
  std::unique_ptr<LeaderLease> Node(const std::string& name,
                                    milliseconds lease = milliseconds(5000),
                                    milliseconds margin = milliseconds(1000)) {
    auto l = LeaderLease::Open({.url = db_.url(),
                                .node = name,
                                .advertise = "http://" + name,
                                .lease = lease,
                                .margin = margin});
    EXPECT_TRUE(l.has_value()) << l.error().ToString();
    return l ? std::move(*l) : nullptr;
  }

  // Tries to take the row every 10 ms for up to `within`; the epoch taken.
  static std::optional<std::uint64_t> TakeWithin(LeaderLease& node,
                                                 milliseconds within) {
    const auto until = Clock::now() + within;
    while (Clock::now() < until) {
      auto taken = node.TryTake();
      EXPECT_TRUE(taken.has_value()) << taken.error().ToString();
      if (taken && *taken) return **taken;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return std::nullopt;
  }

  testing::TestDatabase db_{"lease"};
};

TEST_F(LeaderLeaseTest, OneHolderAtATime) {
  auto a = Node("a"), b = Node("b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->Current().value(), std::nullopt);
  EXPECT_FALSE(a->valid(Clock::now()));
  auto taken = a->TryTake();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(*taken, std::optional<std::uint64_t>(1));
  EXPECT_TRUE(a->valid(Clock::now()));
  EXPECT_EQ(b->TryTake().value(), std::nullopt);
  EXPECT_FALSE(b->valid(Clock::now()));
  EXPECT_EQ(b->Renew().value(), Renewal::kLost) << "b never took it";

  auto row = b->Current().value();
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->epoch, 1u);
  EXPECT_EQ(row->node, a->holder());
  EXPECT_TRUE(row->node.starts_with("a#"));
  EXPECT_EQ(row->advertise, "http://a");
  EXPECT_GT(row->expires_in, milliseconds(3000));
  EXPECT_LE(row->expires_in, milliseconds(5000));
}

// The leader's own deadline passes before the row can be taken: whenever b
// takes over, a has already stopped acting.
TEST_F(LeaderLeaseTest, AnExpiredLeaseIsTakenOnlyAfterTheLeaderStopped) {
  const milliseconds lease(400), margin(100);
  auto a = Node("a", lease, margin), b = Node("b", lease, margin);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->TryTake().value(), std::optional<std::uint64_t>(1));
  // Renewed, it stays a's well past one lease.
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    ASSERT_EQ(a->Renew().value(), Renewal::kRenewed);
    EXPECT_EQ(b->TryTake().value(), std::nullopt);
  }
  // a stops renewing (as if paused): b takes over with a higher epoch.
  const Clock::time_point a_stops = a->valid_until();
  auto epoch = TakeWithin(*b, milliseconds(3000));
  const Clock::time_point b_took = Clock::now();
  ASSERT_EQ(epoch, std::optional<std::uint64_t>(2));
  EXPECT_GE(b_took, a_stops) << "b took the row while a could still act";
  EXPECT_GE(b_took - a_stops, margin / 2);
  EXPECT_FALSE(a->valid(Clock::now()));
  // a comes back: it is told, and stays stopped.
  EXPECT_EQ(a->Renew().value(), Renewal::kLost);
  EXPECT_FALSE(a->valid(Clock::now()));
  EXPECT_EQ(b->Renew().value(), Renewal::kRenewed);
  EXPECT_EQ(a->TryTake().value(), std::nullopt);
}

// A node restarted under the same name is a new holder: it neither renews
// nor takes the old one's row before it expired.
TEST_F(LeaderLeaseTest, TheRowIsRenewedByEpochNeverByName) {
  auto first = Node("same"), second = Node("same");
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->holder(), second->holder());
  ASSERT_EQ(first->TryTake().value(), std::optional<std::uint64_t>(1));
  EXPECT_EQ(second->TryTake().value(), std::nullopt);
  EXPECT_EQ(second->Renew().value(), Renewal::kLost);
  EXPECT_EQ(first->Renew().value(), Renewal::kRenewed);
  // Its own take, retried (an answer lost), moves to a new epoch.
  EXPECT_EQ(first->TryTake().value(), std::optional<std::uint64_t>(2));
}

TEST_F(LeaderLeaseTest, ResignLetsAStandbyTakeAtOnce) {
  auto a = Node("a"), b = Node("b");
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->TryTake().value(), std::optional<std::uint64_t>(1));
  ASSERT_TRUE(a->Resign().ok());
  EXPECT_FALSE(a->valid(Clock::now()));
  EXPECT_EQ(a->epoch(), 0u);
  EXPECT_EQ(b->TryTake().value(), std::optional<std::uint64_t>(2));
  EXPECT_EQ(a->Renew().value(), Renewal::kLost);
}

// The leader's write transaction share-locks the row: a takeover waits for
// it to end, and the next transaction under the old epoch finds no row.
TEST_F(LeaderLeaseTest, ATakeoverWaitsForTheLeadersFencedTransaction) {
  const milliseconds lease(300), margin(100);
  auto a = Node("a", lease, margin), b = Node("b", lease, margin);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->TryTake().value(), std::optional<std::uint64_t>(1));
  auto writer = pg::Connect(db_.url());
  ASSERT_TRUE(writer.has_value());
  const std::string check = LeaderLease::EpochCheckSql("leasehold");
  const pg::Statement fenced{"fenced", check.c_str(), 1};
  ASSERT_TRUE(pg::Prepare(writer->get(), std::span(&fenced, 1)).ok());
  const char* epoch_one[] = {"1"};

  ASSERT_TRUE(pg::Exec(writer->get(), "BEGIN").has_value());
  auto in_tx = pg::Run(writer->get(), fenced, epoch_one);
  ASSERT_TRUE(in_tx.has_value()) << in_tx.error().message();
  std::this_thread::sleep_for(lease);  // a's row has expired

  std::atomic<bool> committed{false};
  auto takeover = std::async(std::launch::async, [&] {
    auto taken = b->TryTake();
    return std::make_pair(taken ? taken->value_or(0) : 0, committed.load());
  });
  EXPECT_EQ(takeover.wait_for(milliseconds(300)), std::future_status::timeout)
      << "the takeover did not wait for the leader's transaction";
  committed = true;
  ASSERT_TRUE(pg::Exec(writer->get(), "COMMIT").has_value());
  auto [epoch, after_commit] = takeover.get();
  EXPECT_EQ(epoch, 2u);
  EXPECT_TRUE(after_commit);

  ASSERT_TRUE(pg::Exec(writer->get(), "BEGIN").has_value());
  auto stale = pg::Run(writer->get(), fenced, epoch_one);
  ASSERT_FALSE(stale.has_value()) << "the old epoch must fail";
  EXPECT_NE(stale.error().message().find("no longer leads"), std::string::npos)
      << stale.error().message();
  EXPECT_EQ(PQtransactionStatus(writer->get()), PQTRANS_INERROR);
  (void)pg::Exec(writer->get(), "ROLLBACK");
}

TEST_F(LeaderLeaseTest, RefusesOptionsThatCannotWork) {
  auto bad = [&](LeaderLeaseOptions o) {
    o.url = db_.url();
    auto l = LeaderLease::Open(o);
    return !l && l.error().code() == StatusCode::kBadRequest;
  };
  EXPECT_TRUE(bad({.node = ""}));
  EXPECT_TRUE(bad({.schema = "Bad-Schema", .node = "a"}));
  EXPECT_TRUE(bad({.node = "a",
                   .lease = milliseconds(1000),
                   .margin = milliseconds(1000)}));
  EXPECT_TRUE(bad({.node = "a", .margin = milliseconds(0)}));
}

// A database that stops answering (SIGSTOP of the lease's backend) does not
// hold the lease keeper: the statement is given up after a lease (at least
// kLeastStatementLimit), and the next call works on a new connection once
// the database answers again.
TEST_F(LeaderLeaseTest, AStatementLeftUnansweredIsGivenUpAfterALease) {
  auto l =
      LeaderLease::Open({.url = db_.url() + "?application_name=lease_stalled",
                         .node = "a",
                         .lease = milliseconds(400),
                         .margin = milliseconds(100)});
  ASSERT_TRUE(l.has_value()) << l.error().ToString();
  auto& a = **l;
  ASSERT_EQ(a.TryTake().value(), std::optional<std::uint64_t>(1));
  testing::StoppedBackend backend(testing::TestClusterUrl(), "lease_stalled");
  ASSERT_TRUE(backend.stopped());
  auto renewal = std::async(std::launch::async, [&] { return a.Renew(); });
  const bool answered =
      renewal.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  if (!answered) backend.Continue();  // else the future would wait for ever
  ASSERT_TRUE(answered) << "Renew waited on a stopped backend";
  const auto given_up = renewal.get();
  ASSERT_FALSE(given_up.has_value());
  EXPECT_EQ(given_up.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(given_up.error().message().find("did not answer within 2000 ms"),
            std::string::npos)
      << given_up.error().message();
  EXPECT_FALSE(a.valid(Clock::now())) << "its deadline passed meanwhile";
  backend.Continue();
  auto current = a.Current();
  EXPECT_TRUE(current.has_value()) << current.error().ToString();
}

TEST_F(LeaderLeaseTest, AnUnreachableDatabaseIsUnavailable) {
  auto l = LeaderLease::Open(
      {.url = "postgresql://postgres@127.0.0.1:1/x?connect_timeout=2",
       .node = "a"});
  ASSERT_FALSE(l.has_value());
  EXPECT_EQ(l.error().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace leasehold::cluster
