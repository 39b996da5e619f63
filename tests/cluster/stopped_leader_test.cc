// A leader stopped with SIGSTOP past its lease, with real processes: two
// `leasehold serve` nodes on the tests' PostgreSQL (fixture pg_cluster).
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "tests/cluster/cluster_processes.h"
#include "tests/testing/leader_client.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
namespace json = boost::json;

constexpr milliseconds kLease{1000};

}  // namespace
}  // namespace leasehold::testing

namespace leasehold::testing {
namespace {

// The old leader, paused past its lease while a standby took over, must
// not acknowledge anything when it runs again, not even a request that
// reached its socket while it was stopped; then it stands by.
TEST(Failover, ALeaderStoppedPastItsLeaseAcknowledgesNothingAfter) {
  TestDatabase db("sigstop");
  ASSERT_FALSE(db.url().empty());
  TempDir dir;
  // In a namespace whose locks stay in memory a grant writes nothing, so
  // only the node's own lease deadline can refuse it, not the fenced store.
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"namespaces":{"mem":{"locks":"memory"}}})";
  ClusterProcesses cluster(db.url(), dir.path(), 2, kLease, config);
  auto leader = cluster.Leader(seconds(30));
  ASSERT_TRUE(leader.has_value());
  const int old = *leader, standby = 1 - old;

  http::Address to_old;
  to_old.port = cluster.port(old);
  http::Connection direct(to_old);
  auto opened = direct.Request(
      "POST", "/v1/sessions",
      json::serialize(json::object{{"name", "held"}, {"ttl_ms", 20'000}}));
  ASSERT_EQ(opened.status, 201u) << opened.body;
  const std::string session = JsonString(json::parse(opened.body), "id");
  auto acquire = [&](const std::string& resource) {
    return json::serialize(json::object{{"session", session},
                                        {"resource", resource},
                                        {"mode", "Exclusive"},
                                        {"owner", "Session"},
                                        {"timeout_ms", 0}});
  };

  ASSERT_EQ(
      direct.Request("POST", "/v1/applocks/app/acquire", acquire("x")).status,
      200u);
  // The session's first memory lock is journaled (that it has one); the
  // next ones are not.
  ASSERT_EQ(
      direct.Request("POST", "/v1/applocks/mem/acquire", acquire("m0")).status,
      200u);

  cluster.Signal(old, SIGSTOP);
  const auto stopped = Clock::now();
  while (!cluster.Healthy(standby, milliseconds(200))) {
    ASSERT_LT(Clock::now() - stopped, seconds(30)) << "no takeover";
  }
  // A request waiting in the stopped node's socket.
  http::Connection late(to_old);
  ASSERT_FALSE(late.Send("POST", "/v1/applocks/mem/acquire", acquire("z"),
                         Clock::now() + seconds(2))
                   .error);
  cluster.Signal(old, SIGCONT);
  auto answer = late.Receive(false, Clock::now() + seconds(10));
  ASSERT_FALSE(answer.error) << answer.error.message();
  EXPECT_TRUE(answer.status == 307 || answer.status == 503)
      << answer.status << " " << answer.body;
  for (int i = 0; i < 20; ++i) {
    auto again = direct.Request("POST", "/v1/applocks/mem/acquire",
                                acquire("z" + std::to_string(i)));
    EXPECT_TRUE(again.status == 307 || again.status == 503)
        << again.status << " " << again.body;
  }

  // The new leader has the session and its lock, and nothing of z.
  LeaderClient client({cluster.port(standby)});
  auto locks = client.Retry("GET", "/v1/applocks/app", "", seconds(10));
  ASSERT_TRUE(locks.answered);
  const std::string listed = json::serialize(locks.json);
  EXPECT_NE(listed.find("\"x\""), std::string::npos) << listed;
  EXPECT_EQ(listed.find("\"z"), std::string::npos) << listed;
  auto kept = client.Send("POST", "/v1/sessions/" + session + "/keepalive", "");
  EXPECT_EQ(kept.status, 200u);

  // The old leader stands by.
  std::string role;
  for (int i = 0; i < 100 && role != "standby"; ++i) {
    auto c = direct.Request("GET", "/v1/cluster", "");
    role = JsonString(json::parse(c.body), "role");
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(role, "standby");
}

}  // namespace
}  // namespace leasehold::testing
