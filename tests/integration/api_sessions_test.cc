// docs/api.md "Sessions" over real HTTP: open, keepalive, list, cancel, end and
// expiry, and 404 session_not_found wherever a session is named.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using SysTime = std::chrono::system_clock::time_point;

// /v1/sessions (handlers_sessions.cc).
class SessionsApiTest : public ApiContractTest {};

TEST_F(SessionsApiTest, SessionLifecycleAnswersEveryDocumentedField) {
  HttpClient c(port());
  const SysTime before = std::chrono::system_clock::now();
  auto created =
      c.Request("POST", "/v1/sessions", R"({"name":"Asha","ttl_ms":30000})");
  ASSERT_EQ(created.status, 201u) << created.body;
  EXPECT_TRUE(Has(created.json, "id", Kind::kString));
  EXPECT_EQ(Str(created.json, "name"), "Asha");
  EXPECT_TRUE(Has(created.json, "ttl_ms", Kind::kInt));
  EXPECT_EQ(Int(created.json, "ttl_ms"), 30000);
  ASSERT_TRUE(Has(created.json, "expires_at", Kind::kTime));
  const SysTime expires = TimeOf(created.json, "expires_at");
  EXPECT_GE(expires, before + milliseconds(29'000));
  EXPECT_LE(expires, before + milliseconds(40'000));
  const std::string id = Str(created.json, "id");

  std::this_thread::sleep_for(milliseconds(20));
  auto kept = c.Request("POST", "/v1/sessions/" + id + "/keepalive");
  ASSERT_EQ(kept.status, 200u) << kept.body;
  ASSERT_TRUE(Has(kept.json, "expires_at", Kind::kTime));
  EXPECT_GT(TimeOf(kept.json, "expires_at"), expires);

  auto find = [&](HttpClient& client) -> std::optional<json::value> {
    auto list = client.Request("GET", "/v1/sessions");
    EXPECT_EQ(list.status, 200u);
    for (const auto& s : list.json.at("sessions").as_array()) {
      if (Str(s, "id") == id) return s;
    }
    return std::nullopt;
  };
  auto listed = find(c);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(Str(*listed, "name"), "Asha");
  EXPECT_TRUE(Has(*listed, "expires_at", Kind::kTime));
  EXPECT_TRUE(Has(*listed, "locks", Kind::kInt));
  EXPECT_EQ(Int(*listed, "locks"), 0);
  EXPECT_TRUE(Has(*listed, "transaction", Kind::kNull));

  ASSERT_EQ(Acquire(c, id, "held", "Exclusive").status, 200u);
  ASSERT_EQ(c.Request("POST", "/v1/sessions/" + id + "/transaction").status,
            201u);
  ASSERT_EQ(Acquire(c, id, "staged", "Exclusive", "Transaction").status, 200u);
  listed = find(c);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(Int(*listed, "locks"), 2);
  ASSERT_TRUE(Has(*listed, "transaction", Kind::kObject));
  EXPECT_TRUE(Has(listed->at("transaction"), "transaction", Kind::kInt));
  EXPECT_TRUE(Has(listed->at("transaction"), "started_at", Kind::kTime));

  // DELETE: 204, its session locks released, its transaction rolled back.
  auto ended = c.Request("DELETE", "/v1/sessions/" + id);
  EXPECT_EQ(ended.status, 204u);
  EXPECT_TRUE(ended.body.empty());
  EXPECT_FALSE(find(c).has_value());
  const std::string other = OpenSession(c, "Ravi");
  EXPECT_EQ(Acquire(c, other, "held", "Exclusive", "Session", 0).status, 200u);
  EXPECT_EQ(Acquire(c, other, "staged", "Exclusive", "Session", 0).status,
            200u);
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions/" + id + "/keepalive"),
                      404, "session_not_found"));
}

TEST_F(SessionsApiTest, CancelEndsThePendingWaitWithMinus2) {
  HttpClient a(port()), b(port()), c(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  auto idle = c.Request("POST", "/v1/sessions/" + sb + "/cancel");
  EXPECT_EQ(idle.status, 200u) << "nothing to cancel is not an error";
  b.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sb, "doc", "Exclusive"));
  ASSERT_EQ(AwaitWaiting(c, 1), 1u);
  EXPECT_EQ(c.Request("POST", "/v1/sessions/" + sb + "/cancel").status, 200u);
  auto cancelled = b.Receive();
  EXPECT_EQ(cancelled.status, 409u);
  EXPECT_EQ(Int(cancelled.json, "result"), -2);
  EXPECT_EQ(Str(cancelled.json, "status"), "cancelled");
  EXPECT_FALSE(cancelled.json.as_object().contains("fence"));
  EXPECT_EQ(Waiting(c), 0u);
  EXPECT_EQ(ModeOf(c, sb, "doc"), "NoLock") << "a cancelled wait holds nothing";
}

TEST_F(SessionsApiTest, UnknownAndExpiredSessionsAre404SessionNotFound) {
  HttpClient c(port());
  for (const std::string id : {"12345", "0", "abc", "-1"}) {
    const std::string base = "/v1/sessions/" + id;
    EXPECT_TRUE(IsError(c.Request("POST", base + "/keepalive"), 404,
                        "session_not_found"))
        << id;
    EXPECT_TRUE(IsError(c.Request("DELETE", base), 404, "session_not_found"));
    EXPECT_TRUE(
        IsError(c.Request("POST", base + "/cancel"), 404, "session_not_found"));
    EXPECT_TRUE(IsError(c.Request("POST", base + "/transaction"), 404,
                        "session_not_found"));
    EXPECT_TRUE(IsError(c.Request("POST", base + "/transaction/commit"), 404,
                        "session_not_found"));
    EXPECT_TRUE(IsError(c.Request("POST", base + "/transaction/rollback"), 404,
                        "session_not_found"));
  }
  EXPECT_TRUE(
      IsError(Acquire(c, "98765", "r", "Shared"), 404, "session_not_found"));
  EXPECT_TRUE(IsError(Release(c, "98765", "r"), 404, "session_not_found"));
  EXPECT_TRUE(IsError(
      c.Request("GET", "/v1/applocks/app/mode?session=98765&resource=r"), 404,
      "session_not_found"));
  EXPECT_TRUE(IsError(c.Request("GET",
                                "/v1/applocks/app/test?session=98765&"
                                "resource=r&mode=Shared"),
                      404, "session_not_found"));

  // Expired: gone from the list, and every call with it is 404.
  const std::string id = OpenSession(c, "Brief", 150);
  ASSERT_EQ(Acquire(c, id, "short", "Exclusive").status, 200u);
  const auto deadline = Steady::now() + milliseconds(5000);
  bool listed = true;
  while (listed && Steady::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    listed =
        c.Request("GET", "/v1/sessions").body.find(id) != std::string::npos;
  }
  EXPECT_FALSE(listed) << "expired session still listed";
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions/" + id + "/keepalive"),
                      404, "session_not_found"));
  EXPECT_TRUE(
      IsError(Acquire(c, id, "other", "Shared"), 404, "session_not_found"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions/" + id + "/transaction"),
                      404, "session_not_found"));
  const std::string next = OpenSession(c, "Next");
  EXPECT_EQ(Acquire(c, next, "short", "Exclusive", "Session", 0).status, 200u)
      << "expiry released the lock as a DELETE would";

  // Bad ttl_ms.
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions", R"({"ttl_ms":0})"), 400,
                      "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions", R"({"ttl_ms":-5})"),
                      400, "bad_request"));
}

}  // namespace
}  // namespace leasehold::testing
