// The `leasehold` client commands against a cluster: two real nodes on one
// PostgreSQL database (fixture pg_cluster) with a 1 s leader lease, given
// both URLs by --url or LEASEHOLD_URL. Every command reaches the leader
// whichever node is listed first, and `lock NAME -- COMMAND` keeps its lock
// while the leader is killed under it.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "client/api_codec.h"
#include "tests/cluster/cluster_processes.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kLease{1000};

std::string Url(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

class CliFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(db_.url().empty());
    cluster_.emplace(db_.url(), dir_.path(), 2, kLease);
    auto leader = cluster_->Leader(seconds(30));
    ASSERT_TRUE(leader.has_value()) << "no node leads";
    leader_ = *leader;
    standby_ = 1 - leader_;
  }

  // Both nodes' URLs, `first` first.
  std::string Urls(int first) const {
    return Url(cluster_->port(first)) + "," + Url(cluster_->port(1 - first));
  }

  // Runs `leasehold ARGS` with LEASEHOLD_URL=`urls`; stdout captured,
  // stderr to a file shown on failure.
  CommandRun Leasehold(const std::string& urls, const std::string& args) {
    return RunShell("LEASEHOLD_URL=" + urls + " " + LeaseholdBinary() + " " +
                    args + " 2>>" + dir_.File("stderr"));
  }

  std::string Stderr() const {
    std::ifstream in(dir_.File("stderr"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // GET `target` from node i, straight.
  json::value Read(int i, const std::string& target) {
    http::Address address;
    address.port = cluster_->port(i);
    http::Connection c(address);
    const http::Answer a = c.Request(
        "GET", target, "", std::chrono::steady_clock::now() + seconds(5));
    EXPECT_EQ(a.status, 200u) << target << ": " << a.body;
    boost::system::error_code ec;
    return json::parse(a.body, ec);
  }

  TestDatabase db_{"clifo"};
  TempDir dir_;
  std::optional<ClusterProcesses> cluster_;
  int leader_ = 0, standby_ = 1;
};

TEST_F(CliFailoverTest, EveryCommandTakesTheNodesInEitherOrder) {
  // --url, the standby first: its 307s are followed.
  auto put = RunShell(LeaseholdBinary() + " put k --ns docs --body v --url " +
                      Urls(standby_) + " 2>>" + dir_.File("stderr"));
  ASSERT_EQ(put.code, 0) << Stderr();
  auto got = Leasehold(Urls(leader_), "get k --ns docs --json");
  ASSERT_EQ(got.code, 0) << Stderr();
  EXPECT_EQ(got.json().at("body"), "v");
  auto locked = Leasehold(Urls(standby_), "lock job --ns app --ttl 60s --json");
  ASSERT_EQ(locked.code, 0) << Stderr();
  const std::string session(locked.json().at("session").as_string());
  auto locks = Leasehold(Urls(standby_), "locks --ns app --json");
  ASSERT_EQ(locks.code, 0) << Stderr();
  EXPECT_NE(locks.out.find(session), std::string::npos) << locks.out;
  EXPECT_EQ(
      Leasehold(Urls(standby_), "unlock job --ns app --session " + session)
          .code,
      0)
      << Stderr();
  EXPECT_EQ(
      Leasehold(Urls(standby_), "lock job --ns app -- sh -c 'exit 5'").code, 5)
      << Stderr();
}

TEST_F(CliFailoverTest, LockKeepsItsLockWhileTheLeaderIsKilled) {
  const std::string session_file = dir_.File("session");
  const std::string done_file = dir_.File("done");
  CommandRun run;
  // COMMAND runs until the test lets it end, then exits 7.
  std::thread locked([&] {
    run = Leasehold(Urls(leader_),
                    "lock job --ns app --ttl 2s -- sh -c 'echo "
                    "$LEASEHOLD_SESSION > " +
                        session_file + "; while [ ! -e " + done_file +
                        " ]; do sleep 0.05; done; exit 7'");
  });
  std::string session;
  for (int i = 0; i < 500 && session.empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    std::ifstream(session_file) >> session;
  }
  EXPECT_FALSE(session.empty()) << Stderr();  // not ASSERT: join first

  cluster_->Kill(leader_);
  const auto new_leader = cluster_->Leader(seconds(30));
  EXPECT_EQ(new_leader, std::optional<int>(standby_)) << "no takeover";
  // Past the session's ttl plus the new leader's grace (one lease): only
  // keepalives that reached the new leader keep it.
  std::this_thread::sleep_for(seconds(2) + kLease + milliseconds(1500));
  const json::value held = Read(standby_, api::ApplockPath("app"));
  std::ofstream(done_file) << "\n";
  locked.join();

  EXPECT_EQ(run.code, 7) << Stderr();
  EXPECT_EQ(Stderr().find("lost the lock"), std::string::npos) << Stderr();
  const std::string listed = json::serialize(held);
  EXPECT_NE(listed.find("\"resource\":\"job\""), std::string::npos) << listed;
  EXPECT_NE(listed.find("\"session\":\"" + session + "\""), std::string::npos)
      << listed;
  // The command's session ended with it: nothing is held any more.
  EXPECT_TRUE(
      Read(standby_, api::ApplockPath("app")).at("locks").as_array().empty());
}

}  // namespace
}  // namespace leasehold::testing
