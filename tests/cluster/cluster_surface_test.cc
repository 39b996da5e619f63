// What a cluster shows its clients, with real processes: two `leasehold
// serve` nodes on the tests' PostgreSQL (fixture pg_cluster). Each node says
// who leads (GET /v1/cluster, /metrics), only the leader is healthy, a
// standby sends every other request to the leader (307 and Location), and
// the leader's event stream names it (cluster.leader), before and after a
// takeover.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/cluster/cluster_processes.h"
#include "tests/testing/leader_client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
namespace json = boost::json;

constexpr milliseconds kLease{1000};

http::Answer Get(std::uint16_t port, const std::string& target,
                 const std::string& method = "GET",
                 const std::string& body = "") {
  http::Address address;
  address.port = port;
  http::Connection c(address);
  return c.Request(method, target, body);
}

json::object ClusterView(std::uint16_t port) {
  const http::Answer a = Get(port, "/v1/cluster");
  EXPECT_EQ(a.status, 200u) << a.body;
  boost::system::error_code ec;
  json::value v = json::parse(a.body, ec);
  if (ec || !v.is_object()) return {};
  return v.as_object();
}

// This node's view once it sees `nodes` nodes and a leader at `epoch` (0:
// any), waiting up to 20 s: a standby learns of the others from the
// database, a little after they start.
json::object SettledView(std::uint16_t port, std::size_t nodes,
                         std::uint64_t epoch = 0) {
  json::object view;
  const auto until = Clock::now() + seconds(20);
  do {
    view = ClusterView(port);
    const json::value* n = view.if_contains("nodes");
    const json::value* e = view.if_contains("epoch");
    const json::value* l = view.if_contains("leader");
    if (n != nullptr && n->is_array() && n->as_array().size() == nodes &&
        l != nullptr && l->is_string() && e != nullptr &&
        (epoch == 0 || json::value_to<std::uint64_t>(*e) == epoch)) {
      return view;
    }
    std::this_thread::sleep_for(milliseconds(50));
  } while (Clock::now() < until);
  ADD_FAILURE() << "node on port " << port
                << " did not settle: " << json::serialize(view);
  return view;
}

// A node's name without its incarnation ("n0#66384776b9958ff4" -> "n0").
std::string Named(const std::string& node) {
  return node.substr(0, node.find('#'));
}

std::uint64_t Epoch(const json::object& view) {
  const json::value* e = view.if_contains("epoch");
  return e == nullptr ? 0 : json::value_to<std::uint64_t>(*e);
}

// The value of an unlabelled metric in /metrics, or -1.
double Metric(std::uint16_t port, const std::string& name) {
  const http::Answer a = Get(port, "/metrics");
  const std::string line = "\n" + name + " ";
  const std::size_t at = a.body.find(line);
  if (at == std::string::npos) return -1;
  return std::stod(a.body.substr(at + line.size()));
}

// The first frames of the node's event stream, up to its first event.
std::string StreamStart(std::uint16_t port) {
  HttpClient stream(port);
  stream.Send("GET", "/v1/events");
  return stream.ReadStreamUntil("\"epoch\":", milliseconds(5000));
}

TEST(ClusterSurface, EveryNodeSaysWhoLeadsAndAStandbySendsClientsThere) {
  TestDatabase db("surface");
  ASSERT_FALSE(db.url().empty());
  TempDir dir;
  ClusterProcesses cluster(db.url(), dir.path(), 2, kLease);
  auto leader = cluster.Leader(seconds(30));
  ASSERT_TRUE(leader.has_value());
  const int lead = *leader, standby = 1 - lead;

  const json::object led = SettledView(cluster.port(lead), 2);
  const std::string url = JsonString(led, "url");
  ASSERT_FALSE(url.empty()) << json::serialize(led);
  const std::uint64_t epoch = Epoch(led);
  EXPECT_GE(epoch, 1u);
  EXPECT_EQ(JsonString(led, "role"), "leader");
  EXPECT_EQ(Named(JsonString(led, "node")), "n" + std::to_string(lead));
  EXPECT_EQ(JsonString(led, "leader"), url);
  EXPECT_EQ(Named(JsonString(led, "leader_node")), "n" + std::to_string(lead));
  std::set<std::string> names;
  for (const json::value& n : led.at("nodes").as_array()) {
    names.insert(Named(JsonString(n, "node")));
  }
  EXPECT_EQ(names, (std::set<std::string>{"n0", "n1"}));

  const json::object stood = SettledView(cluster.port(standby), 2, epoch);
  EXPECT_EQ(JsonString(stood, "role"), "standby");
  EXPECT_EQ(JsonString(stood, "leader"), url);
  EXPECT_NE(JsonString(stood, "url"), url);

  // Only the leader is healthy; the standby sends requests to it, the
  // path and query kept.
  EXPECT_EQ(Get(cluster.port(lead), "/healthz").status, 200u);
  EXPECT_EQ(Get(cluster.port(standby), "/healthz").status, 503u);
  const http::Answer open =
      Get(cluster.port(standby), "/v1/sessions", "POST", R"({"name":"Asha"})");
  EXPECT_EQ(open.status, 307u) << open.body;
  EXPECT_EQ(open.location, url + "/v1/sessions");
  EXPECT_EQ(JsonString(json::parse(open.body), "leader"), url);
  const http::Answer list = Get(cluster.port(standby), "/v1/applocks/app?x=1");
  EXPECT_EQ(list.status, 307u) << list.body;
  EXPECT_EQ(list.location, url + "/v1/applocks/app?x=1");

  EXPECT_EQ(Metric(cluster.port(lead), "leasehold_cluster_leader"), 1);
  EXPECT_EQ(Metric(cluster.port(standby), "leasehold_cluster_leader"), 0);
  EXPECT_EQ(Metric(cluster.port(lead), "leasehold_cluster_epoch"),
            static_cast<double>(epoch));
  EXPECT_EQ(Metric(cluster.port(lead), "leasehold_cluster_nodes"), 2);

  // The leader's stream begins by naming it.
  const std::string first = StreamStart(cluster.port(lead));
  EXPECT_NE(first.find("event: cluster.leader\ndata: {"), std::string::npos)
      << first;
  EXPECT_NE(first.find("\"leader\":\"" + url + "\""), std::string::npos)
      << first;
  EXPECT_NE(first.find("\"epoch\":" + std::to_string(epoch)), std::string::npos)
      << first;

  // After a takeover: the other node leads at a higher epoch, says so
  // everywhere, and its stream names it.
  cluster.Kill(lead);
  auto next = cluster.Leader(seconds(30));
  ASSERT_TRUE(next.has_value());
  ASSERT_EQ(*next, standby);
  const json::object took = ClusterView(cluster.port(standby));
  const std::uint64_t new_epoch = Epoch(took);
  EXPECT_GT(new_epoch, epoch);
  EXPECT_EQ(JsonString(took, "role"), "leader");
  const std::string new_url = JsonString(took, "url");
  EXPECT_EQ(JsonString(took, "leader"), new_url);
  EXPECT_EQ(Metric(cluster.port(standby), "leasehold_cluster_leader"), 1);
  EXPECT_EQ(Metric(cluster.port(standby), "leasehold_cluster_epoch"),
            static_cast<double>(new_epoch));
  EXPECT_GE(Metric(cluster.port(standby), "leasehold_cluster_took_over_total"),
            1);
  const std::string after = StreamStart(cluster.port(standby));
  EXPECT_NE(after.find("event: cluster.leader\ndata: {"), std::string::npos)
      << after;
  EXPECT_NE(after.find("\"leader\":\"" + new_url + "\""), std::string::npos)
      << after;
  EXPECT_NE(after.find("\"epoch\":" + std::to_string(new_epoch)),
            std::string::npos)
      << after;
}

// Another holder takes the leadership row behind the leader's back (as a
// standby would if the leader's clock ran slow, or an operator's hand): the
// leader still believes it leads, but the epoch check in its next write
// refuses it, and the node stops leading at once instead of going on
// until its lease runs out; it leads again only by taking the row anew.
TEST(ClusterSurface, ALeaderWhoseEpochWasTakenStopsAtItsNextWrite) {
  TestDatabase db("intruder");
  ASSERT_FALSE(db.url().empty());
  TempDir dir;
  // A lease long enough that its renewals (every third of it, the first
  // 6.7 s after the node took it, just before the steps below) cannot be
  // what stops the node within the 2 s allowed.
  ClusterProcesses cluster(db.url(), dir.path(), 1, milliseconds(20'000));
  ASSERT_TRUE(cluster.Leader(seconds(30)).has_value());
  const std::uint16_t port = cluster.port(0);
  const std::uint64_t epoch = Epoch(ClusterView(port));
  ASSERT_GE(epoch, 1u);

  http::Address address;
  address.port = port;
  http::Connection c(address);
  auto opened =
      c.Request("POST", "/v1/sessions", R"({"name":"Asha","ttl_ms":60000})");
  ASSERT_EQ(opened.status, 201u) << opened.body;
  const std::string session = JsonString(json::parse(opened.body), "id");
  auto acquire = [&](const std::string& resource) {
    return c.Request("POST", "/v1/applocks/app/acquire",
                     json::serialize(json::object{{"session", session},
                                                  {"resource", resource},
                                                  {"mode", "Exclusive"},
                                                  {"owner", "Session"},
                                                  {"timeout_ms", 0}}));
  };
  auto before = acquire("before");
  ASSERT_EQ(before.status, 200u) << before.body;
  const auto fence_before =
      JsonInt(json::parse(before.body), "fence").value_or(0);

  // The row changes hands for 3 s; the node's own deadline is still ahead.
  ASSERT_TRUE(PgExec(db.url(),
                     "UPDATE leasehold.leader SET epoch = epoch + 1, "
                     "node = 'intruder', expires_at = now() + interval "
                     "'3 seconds' WHERE id = 1"));
  const auto intruded = Clock::now();
  auto during = acquire("during");
  EXPECT_EQ(during.status, 503u) << during.body;
  // At once, not at its next renewal: it no longer leads.
  EXPECT_EQ(Get(port, "/healthz").status, 503u);
  std::string role;
  while (role != "standby" && Clock::now() - intruded < seconds(2)) {
    role = JsonString(ClusterView(port), "role");
  }
  EXPECT_EQ(role, "standby");
  auto refused = acquire("refused");
  EXPECT_NE(refused.status, 200u) << refused.body;

  // Once the intruder's row runs out the node takes it again, higher; what
  // it acknowledged is there, what it refused is not.
  ASSERT_TRUE(cluster.Leader(seconds(30)).has_value());
  EXPECT_GT(Epoch(ClusterView(port)), epoch + 1);
  LeaderClient client({port});
  auto locks = client.Retry("GET", "/v1/applocks/app", "", seconds(10));
  ASSERT_TRUE(locks.answered);
  const std::string listed = json::serialize(locks.json);
  EXPECT_NE(listed.find("\"before\""), std::string::npos) << listed;
  EXPECT_EQ(listed.find("\"during\""), std::string::npos) << listed;
  EXPECT_EQ(listed.find("\"refused\""), std::string::npos) << listed;
  auto after = acquire("after");
  ASSERT_EQ(after.status, 200u) << after.body;
  EXPECT_GT(JsonInt(json::parse(after.body), "fence").value_or(0),
            fence_before);
}

}  // namespace
}  // namespace leasehold::testing
