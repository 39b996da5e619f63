// The dashboard's server side over real HTTP: its files served from the
// binary without a token, and the read-only endpoints it needs
// (GET /v1/whoami, /v1/namespaces, /v1/stats, /v1/deadlocks).
#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;

std::string Str(const json::value& v, const char* key) {
  return std::string(v.at(key).as_string());
}

std::uint64_t Sum(const json::value& array) {
  std::uint64_t sum = 0;
  for (const json::value& v : array.as_array())
    sum += v.to_number<std::uint64_t>();
  return sum;
}

// The entry for `ns` in GET /v1/namespaces, or null.
json::value Namespace(const HttpAnswer& a, const std::string& ns) {
  for (const json::value& n : a.json.at("namespaces").as_array()) {
    if (Str(n, "ns") == ns) return n;
  }
  return nullptr;
}

class DashboardTest : public ::testing::Test {
 protected:
  DashboardTest() : server_(dir_.File("data")), http_(server_.port()) {}

  std::string OpenSession(const std::string& name) {
    auto a = http_.Request("POST", api::SessionsPath(),
                           api::OpenSessionBody(name, milliseconds(60'000)));
    EXPECT_EQ(a.status, 201u) << a.body;
    return Str(a.json, "id");
  }

  HttpAnswer Acquire(HttpClient& c, const std::string& session,
                     const std::string& resource, int timeout_ms) {
    return c.Request("POST", api::ApplockPath("bank", "acquire"),
                     AcquireBody(session, resource, timeout_ms));
  }

  static std::string AcquireBody(const std::string& session,
                                 const std::string& resource, int timeout_ms) {
    return api::AcquireBody(session, resource,
                            {.mode = "Exclusive",
                             .owner = "Session",
                             .timeout = milliseconds(timeout_ms),
                             .principal = "public"});
  }

  // Asha and Ravi each hold one account and ask for the other's; the second
  // ask closes the cycle.
  void MakeDeadlock() {
    const std::string asha = OpenSession("Asha"), ravi = OpenSession("Ravi");
    ASSERT_EQ(Acquire(http_, asha, "account:A", 0).status, 200u);
    ASSERT_EQ(Acquire(http_, ravi, "account:B", 0).status, 200u);
    HttpClient waiter(server_.port());
    waiter.Send("POST", api::ApplockPath("bank", "acquire"),
                AcquireBody(asha, "account:B", -1));
    for (int i = 0; i < 200; ++i) {
      auto s = http_.Request("GET", "/v1/stats");
      if (s.json.at("waiting").to_number<int>() == 1) break;
    }
    auto closing = Acquire(http_, ravi, "account:A", -1);
    ASSERT_EQ(closing.status, 409u) << closing.body;
    ASSERT_EQ(closing.json.at("result").to_number<int>(), -3);
    ASSERT_EQ(http_.Request("DELETE", api::SessionPath(ravi)).status, 204u);
    EXPECT_EQ(waiter.Receive().json.at("result").to_number<int>(), 1);
  }

  TempDir dir_;
  ServerProcess server_;
  HttpClient http_;
};

TEST_F(DashboardTest, ServesThePageAndItsAssetsFromTheBinary) {
  auto page = http_.Request("GET", "/");
  ASSERT_EQ(page.status, 200u);
  EXPECT_NE(page.body.find("<main"), std::string::npos);
  EXPECT_NE(page.body.find("/assets/app.js"), std::string::npos);
  EXPECT_EQ(http_.Request("GET", "/assets/app.js").status, 200u);
  EXPECT_EQ(http_.Request("GET", "/assets/app.css").status, 200u);
  EXPECT_EQ(http_.Request("GET", "/assets/missing.js").status, 404u);

  HttpClient raw(server_.port());
  const std::string first = raw.Raw(
      "GET /assets/app.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(first.find("Content-Type: text/css; charset=utf-8"),
            std::string::npos);
  EXPECT_NE(first.find("Cache-Control: no-cache"), std::string::npos);
  const std::size_t at = first.find("ETag: ");
  ASSERT_NE(at, std::string::npos) << first;
  const std::string etag =
      first.substr(at + 6, first.find("\r\n", at) - at - 6);
  HttpClient again(server_.port());
  const std::string second = again.Raw(
      "GET /assets/app.css HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag +
      "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(second.rfind("HTTP/1.1 304", 0), 0u) << second;
}

TEST_F(DashboardTest, WhoAmIWithoutAuthenticationIsAnAdministrator) {
  auto me = http_.Request("GET", "/v1/whoami");
  ASSERT_EQ(me.status, 200u) << me.body;
  EXPECT_FALSE(me.json.at("authentication").as_bool());
  EXPECT_EQ(Str(me.json, "role"), "admin");
  EXPECT_TRUE(me.json.at("all_namespaces").as_bool());
  EXPECT_TRUE(me.json.at("now").is_string());
}

TEST_F(DashboardTest, NamespacesListsKeysCheckoutsLocksAndTopics) {
  EXPECT_EQ(Namespace(http_.Request("GET", "/v1/namespaces"), "docs"),
            json::value(nullptr));
  ASSERT_EQ(
      http_.Request("PUT", "/v1/records/docs/17", R"({"body":"x"})").status,
      201u);
  ASSERT_EQ(
      http_.Request("PUT", "/v1/records/docs/18", R"({"body":"y"})").status,
      201u);
  ASSERT_EQ(http_
                .Request("POST", "/v1/records/docs/17/checkout",
                         R"({"owner":"Asha","ttl_ms":60000})")
                .status,
            200u);
  ASSERT_EQ(Acquire(http_, OpenSession("Asha"), "invoice:481", 0).status, 200u);
  ASSERT_EQ(http_
                .Request("POST", "/v1/outbox/billing/emails",
                         R"({"key":"k1","payload":{}})")
                .status,
            201u);

  auto a = http_.Request("GET", "/v1/namespaces");
  ASSERT_EQ(a.status, 200u) << a.body;
  const json::value docs = Namespace(a, "docs");
  ASSERT_TRUE(docs.is_object()) << a.body;
  EXPECT_EQ(docs.at("keys").to_number<int>(), 2);
  EXPECT_EQ(docs.at("active_checkouts").to_number<int>(), 1);
  const json::value bank = Namespace(a, "bank");
  ASSERT_TRUE(bank.is_object()) << a.body;
  EXPECT_EQ(bank.at("lock_resources").to_number<int>(), 1);
  const json::value billing = Namespace(a, "billing");
  ASSERT_TRUE(billing.is_object()) << a.body;
  EXPECT_EQ(billing.at("topics"), json::parse(R"(["emails"])"));
}

TEST_F(DashboardTest, StatsCountAcquisitionsPerSecondAndTheLastHour) {
  const std::string asha = OpenSession("Asha"), ravi = OpenSession("Ravi");
  ASSERT_EQ(Acquire(http_, asha, "r1", 0).status, 200u);
  ASSERT_EQ(Acquire(http_, asha, "r2", 0).status, 200u);
  ASSERT_EQ(
      http_
          .Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  auto timeout = Acquire(http_, ravi, "r1", 0);
  ASSERT_EQ(timeout.json.at("result").to_number<int>(), -1) << timeout.body;

  auto s = http_.Request("GET", "/v1/stats");
  ASSERT_EQ(s.status, 200u) << s.body;
  EXPECT_EQ(s.json.at("sessions").to_number<int>(), 2);
  EXPECT_EQ(s.json.at("granted_locks").to_number<int>(), 2);
  EXPECT_EQ(s.json.at("active_checkouts").to_number<int>(), 1);
  EXPECT_EQ(s.json.at("timeouts_last_hour").to_number<int>(), 1);
  EXPECT_EQ(s.json.at("deadlocks_last_hour").to_number<int>(), 0);
  const json::value& rate = s.json.at("rate");
  EXPECT_EQ(rate.at("interval_ms").to_number<int>(), 1000);
  EXPECT_EQ(rate.at("applocks").as_array().size(), 600u);
  EXPECT_EQ(Sum(rate.at("applocks")), 2u);
  EXPECT_EQ(Sum(rate.at("checkouts")), 1u);
}

TEST_F(DashboardTest, DeadlocksAreKeptWithTheirCycle) {
  EXPECT_TRUE(http_.Request("GET", "/v1/deadlocks")
                  .json.at("deadlocks")
                  .as_array()
                  .empty());
  MakeDeadlock();
  auto a = http_.Request("GET", "/v1/deadlocks");
  ASSERT_EQ(a.status, 200u) << a.body;
  const auto& list = a.json.at("deadlocks").as_array();
  ASSERT_EQ(list.size(), 1u) << a.body;
  const json::value& d = list[0];
  EXPECT_EQ(Str(d, "ns"), "bank");
  EXPECT_EQ(Str(d, "victim_name"), "Ravi");
  EXPECT_EQ(Str(d, "resource"), "account:A");
  const auto& cycle = d.at("cycle").as_array();
  ASSERT_EQ(cycle.size(), 2u);
  for (const json::value& edge : cycle) {
    const std::string waiter = Str(edge, "waiter_name");
    const std::string holder = Str(edge, "holder_name");
    EXPECT_NE(waiter, holder);
    EXPECT_EQ(Str(edge, "resource"),
              waiter == "Asha" ? "account:B" : "account:A");
  }
  EXPECT_EQ(http_.Request("GET", "/v1/stats")
                .json.at("deadlocks_last_hour")
                .to_number<int>(),
            1);
}

TEST(DashboardAuthTest, PageIsPublicButEndpointsFollowTheToken) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"tokens": [
      {"token": "docs-reader-token-01", "principal": "docs",
       "namespaces": ["docs"], "role": "read"},
      {"token": "ops-admin-token-0004", "principal": "ops",
       "namespaces": ["*"], "role": "admin"}]})";
  ServerProcess server(dir.File("data"), config);
  HttpClient anonymous(server.port());
  EXPECT_EQ(anonymous.Request("GET", "/").status, 200u);
  EXPECT_EQ(anonymous.Request("GET", "/assets/app.js").status, 200u);
  for (const char* path :
       {"/v1/whoami", "/v1/namespaces", "/v1/stats", "/v1/deadlocks"}) {
    EXPECT_EQ(anonymous.Request("GET", path).status, 401u) << path;
  }

  HttpClient ops(server.port());
  ops.SetBearerToken("ops-admin-token-0004");
  ASSERT_EQ(ops.Request("PUT", "/v1/records/docs/1", R"({"body":"x"})").status,
            201u);
  ASSERT_EQ(
      ops.Request("PUT", "/v1/records/secret/1", R"({"body":"x"})").status,
      201u);

  HttpClient docs(server.port());
  docs.SetBearerToken("docs-reader-token-01");
  auto me = docs.Request("GET", "/v1/whoami");
  ASSERT_EQ(me.status, 200u) << me.body;
  EXPECT_EQ(Str(me.json, "principal"), "docs");
  EXPECT_EQ(Str(me.json, "role"), "read");
  EXPECT_FALSE(me.json.at("all_namespaces").as_bool());
  EXPECT_EQ(me.json.at("namespaces"), json::parse(R"(["docs"])"));
  auto listed = docs.Request("GET", "/v1/namespaces");
  EXPECT_TRUE(Namespace(listed, "docs").is_object()) << listed.body;
  EXPECT_TRUE(Namespace(listed, "secret").is_null()) << listed.body;
  EXPECT_TRUE(
      Namespace(ops.Request("GET", "/v1/namespaces"), "secret").is_object());
  EXPECT_EQ(docs.Request("POST", "/v1/stats").status, 404u);
}

}  // namespace
}  // namespace leasehold::testing
