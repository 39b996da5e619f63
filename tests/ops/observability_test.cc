// deploy/grafana/leasehold.json and deploy/prometheus/leasehold-alerts.yml
// against real servers: both files parse, and every leasehold_ metric
// their queries name is in GET /metrics of a SQLite server (with some
// activity) or of a cluster's node on PostgreSQL (the cluster_ series). A
// PostgreSQL node also refuses a backup, naming PostgreSQL's own tools.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "http/spawned_server.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(LEASEHOLD_SOURCE_DIR) + "/" + relative,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << relative;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every string under a key named `key`, anywhere in `v`.
void Collect(const json::value& v, std::string_view key,
             std::vector<std::string>& out) {
  if (v.is_object()) {
    for (const auto& [k, child] : v.as_object()) {
      if (k == key && child.is_string()) out.emplace_back(child.as_string());
      Collect(child, key, out);
    }
  } else if (v.is_array()) {
    for (const auto& child : v.as_array()) Collect(child, key, out);
  }
}

// The leasehold_ identifiers of PromQL expressions (read loosely: any word
// that starts so).
std::set<std::string> MetricNames(const std::vector<std::string>& exprs) {
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  std::set<std::string> names;
  for (const std::string& e : exprs) {
    for (std::size_t at = e.find("leasehold_"); at != std::string::npos;
         at = e.find("leasehold_", at + 1)) {
      if (at > 0 && word(e[at - 1])) continue;  // inside another word
      std::size_t end = at;
      while (end < e.size() && word(e[end])) ++end;
      names.insert(e.substr(at, end - at));
      at = end - 1;
    }
  }
  return names;
}

// The names GET /metrics exposes: every series, and for a histogram its
// base name too.
void AddExposed(const std::string& text, std::set<std::string>& names) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      names.insert(name);
      if (type == "histogram" || type == "summary") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) {
          names.insert(name + suffix);
        }
      }
    } else if (!line.empty() && line[0] != '#') {
      names.insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
}

std::string Metrics(std::uint16_t port) {
  HttpClient http(port);
  HttpAnswer a = http.Request("GET", "/metrics");
  EXPECT_EQ(a.status, 200) << a.body;
  return a.body;
}

TEST(ObservabilityTest, DashboardAndAlertsNameOnlyMetricsTheServerExposes) {
  // Both files parse.
  json::value dashboard;
  ASSERT_NO_THROW(dashboard =
                      json::parse(ReadSource("deploy/grafana/leasehold.json")));
  TempDir dir;
  const CommandRun converted = RunShell(
      std::string(LEASEHOLD_YAML_TO_JSON) + " " + LEASEHOLD_SOURCE_DIR +
      "/deploy/prometheus/leasehold-alerts.yml " + dir.File("alerts.json") +
      " && cat " + dir.File("alerts.json"));
  ASSERT_EQ(converted.code, 0) << converted.out;
  json::value alerts;
  ASSERT_NO_THROW(alerts = json::parse(converted.out)) << converted.out;

  std::vector<std::string> dashboard_exprs, alert_exprs;
  Collect(dashboard, "expr", dashboard_exprs);
  Collect(dashboard.at("templating"), "query", dashboard_exprs);
  EXPECT_GE(dashboard_exprs.size(), 30u);
  std::size_t rules = 0;
  for (const auto& group : alerts.at("groups").as_array()) {
    for (const auto& rule : group.at("rules").as_array()) {
      ++rules;
      const auto& r = rule.as_object();
      ASSERT_TRUE(r.contains("alert") && r.contains("expr")) << rule;
      EXPECT_TRUE(r.at("labels").as_object().contains("severity")) << rule;
      EXPECT_TRUE(r.at("annotations").as_object().contains("summary")) << rule;
      alert_exprs.emplace_back(r.at("expr").as_string());
    }
  }
  EXPECT_GE(rules, 10u);

  // A server of its own, with activity: a session, a lock held, a lock
  // waited for, a checkout, an outbox message.
  std::set<std::string> exposed;
  {
    ServerProcess server(dir.File("data"));
    HttpClient http(server.port());
    HttpAnswer s = http.Request("POST", "/v1/sessions", R"({"name":"a"})");
    HttpAnswer t = http.Request("POST", "/v1/sessions", R"({"name":"b"})");
    ASSERT_EQ(s.status, 201);
    const std::string a(s.json.at("id").as_string());
    const std::string b(t.json.at("id").as_string());
    EXPECT_EQ(
        http.Request(
                "POST", "/v1/applocks/app/acquire",
                R"({"session":")" + a +
                    R"(","resource":"r","mode":"Exclusive","owner":"Session"})")
            .status,
        200);
    http.Request(
        "POST", "/v1/applocks/app/acquire",
        R"({"session":")" + b +
            R"(","resource":"r","mode":"Exclusive","owner":"Session","timeout_ms":20})");
    http.Request("PUT", "/v1/records/docs/1", R"({"body":"x"})");
    http.Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"a"})");
    http.Request("POST", "/v1/outbox/app/mail", R"({"key":"k","payload":1})");
    AddExposed(Metrics(server.port()), exposed);
  }
  // A server over TLS (certificates made for this run): the tls_ series,
  // read with curl, which trusts the run's CA.
  {
    const std::string certs = dir.File("certs");
    ASSERT_EQ(RunShell(std::string(LEASEHOLD_SOURCE_DIR) +
                       "/scripts/test-certs " + certs + " >/dev/null")
                  .code,
              0);
    http::SpawnOptions options;
    options.binary = LeaseholdBinary();
    options.data_dir = dir.File("tls");
    options.store = "memory";
    options.extra_args = {"--tls-cert", certs + "/server.pem", "--tls-key",
                          certs + "/server.key"};
    auto tls = http::SpawnedServer::Start(std::move(options));
    ASSERT_TRUE(tls.has_value()) << tls.error();
    const CommandRun metrics =
        RunShell("curl -sS --cacert " + certs + "/ca.pem https://localhost:" +
                 std::to_string((*tls)->port()) + "/metrics");
    ASSERT_EQ(metrics.code, 0);
    AddExposed(metrics.out, exposed);
    EXPECT_TRUE(
        exposed.contains("leasehold_tls_certificate_expiry_timestamp_seconds"));
  }
  // A cluster's node on PostgreSQL: the cluster_ series.
  TestDatabase db("ops_metrics");
  ASSERT_FALSE(db.url().empty());
  auto node = ServerProcess::WithStore(db.url(), dir.path());
  AddExposed(Metrics(node->port()), exposed);
  EXPECT_TRUE(exposed.contains("leasehold_cluster_leader"));

  for (const auto& [what, exprs] :
       {std::pair{"deploy/grafana/leasehold.json", dashboard_exprs},
        std::pair{"deploy/prometheus/leasehold-alerts.yml", alert_exprs}}) {
    const std::set<std::string> used = MetricNames(exprs);
    EXPECT_GE(used.size(), 8u) << what;
    for (const std::string& name : used) {
      EXPECT_TRUE(exposed.contains(name))
          << what << " uses " << name << ", which GET /metrics does not show";
    }
  }

  // Backups of PostgreSQL's data are PostgreSQL's (docs/ha.md).
  HttpClient http(node->port());
  HttpAnswer backup = http.Request("GET", "/v1/admin/backup");
  EXPECT_EQ(backup.status, 501) << backup.body;
  EXPECT_EQ(backup.error_code(), "not_supported");
  EXPECT_NE(backup.body.find("pg_basebackup"), std::string::npos)
      << backup.body;
}

}  // namespace
}  // namespace leasehold::testing
