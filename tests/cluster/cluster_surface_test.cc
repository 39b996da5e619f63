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

}  // namespace
}  // namespace leasehold::testing
