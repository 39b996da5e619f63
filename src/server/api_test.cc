// Api::Handle without sockets: routing, status codes, error codes, and the
// seed walkthrough, over a real engine service and SQLite file.
#include "server/api.h"

#include <gtest/gtest.h>

#include "server/api_test_fixture.h"
#include "server/routes.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

TEST_F(ApiTest, HealthAndUnknownRoutes) {
  EXPECT_EQ(Call("GET", "/healthz").status, 200u);
  auto a = Call("GET", "/v1/nothing");
  EXPECT_EQ(a.status, 404u);
  EXPECT_EQ(a.code(), "not_found");
  EXPECT_EQ(Call("GET", "/v1/records/ns/%zz").code(), "bad_request");
}

TEST_F(ApiTest, BadBodiesGetTheDocumentedCodes) {
  EXPECT_EQ(Call("POST", "/v1/sessions", "{not json").code(), "bad_json");
  EXPECT_EQ(Call("POST", "/v1/sessions", "[1,2]").code(), "bad_json");
  EXPECT_EQ(Call("POST", "/v1/sessions", "{\"name\":\"\xff\"}").code(),
            "bad_request");
  EXPECT_EQ(Call("POST", "/v1/sessions", R"({"ttl_ms":"long"})").code(),
            "bad_request");
  EXPECT_EQ(Call("POST", "/v1/sessions", R"({"ttl_ms":0})").code(),
            "bad_request");
  // Numbers no integer holds are refused, not converted (1e4001 is inf).
  for (const char* n : {"1e4001", "-1e4001", "1e30", "2.5"}) {
    EXPECT_EQ(
        Call("POST", "/v1/sessions", std::string(R"({"ttl_ms":)") + n + "}")
            .code(),
        "bad_request")
        << n;
  }
  const std::string s = OpenSession("Asha");
  auto acquire = [&](const std::string& fields) {
    return Call("POST", "/v1/applocks/app/acquire",
                R"({"session":")" + s + "\"" + fields + "}");
  };
  EXPECT_EQ(
      acquire(R"(,"resource":"r","mode":"Huge","owner":"Session")").code(),
      "bad_mode");
  EXPECT_EQ(acquire(R"(,"resource":"r","owner":"Session")").code(), "bad_mode");
  EXPECT_EQ(acquire(R"(,"resource":"r","mode":"Shared","owner":"Boss")").code(),
            "bad_owner");
  EXPECT_EQ(
      acquire(
          R"(,"resource":"r","mode":"Shared","owner":"Session","timeout_ms":-5)")
          .code(),
      "bad_timeout");
  EXPECT_EQ(
      acquire(R"(,"resource":"","mode":"Shared","owner":"Session")").code(),
      "name_empty");
  EXPECT_EQ(acquire(R"(,"resource":")" + std::string(256, 'x') +
                    R"(","mode":"Shared","owner":"Session")")
                .code(),
            "name_too_long");
  EXPECT_EQ(acquire(R"(,"resource":"r","mode":"Shared")").code(),
            "no_transaction");
  EXPECT_EQ(
      Call(
          "POST", "/v1/applocks/app/acquire",
          R"({"session":"999","resource":"r","mode":"Shared","owner":"Session"})")
          .status,
      404u);
}

TEST_F(ApiTest, ApplockRoundTrip) {
  const std::string a = OpenSession("Asha"), b = OpenSession("Ravi");
  auto got = Call(
      "POST", "/v1/applocks/app/acquire",
      R"({"session":")" + a +
          R"(","resource":"invoice:481","mode":"exclusive ","owner":"Session","timeout_ms":0})");
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.body.at("result").as_int64(), 0);
  EXPECT_EQ(got.body.at("status").as_string(), "granted");
  EXPECT_GT(got.body.at("fence").to_number<std::int64_t>(), 0);
  auto refused = Call(
      "POST", "/v1/applocks/app/acquire",
      R"({"session":")" + b +
          R"(","resource":"invoice:481","mode":"Shared","owner":"Session","timeout_ms":0})");
  EXPECT_EQ(refused.status, 409u);
  EXPECT_EQ(refused.body.at("result").as_int64(), -1);
  auto mode = Call("GET", "/v1/applocks/app/mode?session=" + a +
                              "&resource=invoice%3A481&owner=Session");
  EXPECT_EQ(mode.body.at("mode").as_string(), "Exclusive");
  auto test =
      Call("GET", "/v1/applocks/app/test?session=" + b +
                      "&resource=invoice:481&mode=Shared&owner=Session");
  EXPECT_EQ(test.body.at("grantable").as_bool(), false);
  auto list = Call("GET", "/v1/applocks/app");
  ASSERT_EQ(list.body.at("locks").as_array().size(), 1u);
  EXPECT_EQ(list.body.at("locks")
                .at(0)
                .at("granted")
                .at(0)
                .at("session_name")
                .as_string(),
            "Asha");
  EXPECT_EQ(Call("POST", "/v1/applocks/app/release",
                 R"({"session":")" + b +
                     R"(","resource":"invoice:481","owner":"Session"})")
                .code(),
            "not_held");
  EXPECT_EQ(Call("POST", "/v1/applocks/app/release",
                 R"({"session":")" + a +
                     R"(","resource":"invoice:481","owner":"Session"})")
                .status,
            200u);
}

TEST_F(ApiTest, SessionsAndTransactions) {
  const std::string a = OpenSession("Asha");
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/transaction").status, 201u);
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/transaction").code(),
            "transaction_open");
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/transaction/commit").status,
            200u);
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/transaction/rollback").code(),
            "no_transaction");
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/keepalive").status, 200u);
  auto list = Call("GET", "/v1/sessions");
  EXPECT_EQ(list.body.at("sessions").as_array().size(), 1u);
  EXPECT_EQ(Call("DELETE", "/v1/sessions/" + a).status, 204u);
  EXPECT_EQ(Call("POST", "/v1/sessions/" + a + "/keepalive").code(),
            "session_not_found");
  EXPECT_EQ(Call("POST", "/v1/sessions/junk/keepalive").code(),
            "session_not_found");
}

TEST_F(ApiTest, RecordsAndCheckouts) {
  EXPECT_EQ(
      Call("PUT", "/v1/records/docs/17", R"({"body":"First draft"})").status,
      201u);
  EXPECT_EQ(Call("PUT", "/v1/records/docs/17", R"({"body":"again"})").code(),
            "exists");
  auto c = Call("POST", "/v1/records/docs/17/checkout",
                R"({"owner":"Asha","ttl_ms":60000})");
  EXPECT_EQ(c.status, 200u);
  EXPECT_EQ(c.body.at("token").as_string().size(), 32u);
  auto refused =
      Call("POST", "/v1/records/docs/17/checkout", R"({"owner":"Ravi"})");
  EXPECT_EQ(refused.status, 423u);
  EXPECT_EQ(refused.body.at("locked_by").as_string(), "Asha");
  EXPECT_EQ(
      Call("POST", "/v1/records/docs/17/save", R"({"owner":"Ravi","body":"x"})")
          .status,
      423u);
  EXPECT_EQ(Call("POST", "/v1/records/docs/17/save",
                 R"({"owner":"Asha","body":"x","if_version":9})")
                .status,
            412u);
  auto saved =
      Call("POST", "/v1/records/docs/17/save",
           R"({"token":")" + std::string(c.body.at("token").as_string()) +
               R"(","body":"Second draft"})");
  EXPECT_EQ(saved.body.at("version").to_number<std::int64_t>(), 2);
  auto get = Call("GET", "/v1/records/docs/17");
  EXPECT_EQ(get.body.at("body").as_string(), "Second draft");
  EXPECT_EQ(get.body.at("state").as_string(), "locked");
  auto list = Call("GET", "/v1/records/docs?state=locked&limit=10");
  EXPECT_EQ(list.body.at("records").as_array().size(), 1u);
  EXPECT_EQ(Call("GET", "/v1/records/docs?limit=0").code(), "bad_request");
  EXPECT_EQ(
      Call("POST", "/v1/records/docs/17/checkin", R"({"owner":"Asha"})").status,
      200u);
  EXPECT_EQ(Call("POST", "/v1/records/docs/purge", R"({"older_than_ms":0})")
                .body.at("purged")
                .as_int64(),
            0);
  EXPECT_EQ(
      Call("POST", "/v1/records/docs/17/break").body.at("broken").as_bool(),
      false);
  EXPECT_EQ(Call("GET", "/v1/records/docs/none").code(), "not_found");
}

// Every entry of the route table is reached through Handle: whatever its
// handler answers to these made-up arguments, it is not "no endpoint".
TEST_F(ApiTest, EveryRouteReachesItsHandler) {
  for (const Route& r : Routes()) {
    if (r.pattern.text() == "/metrics" || r.Has(kEventStream) ||
        r.pattern.text() == "/v1/testing/clock") {
      continue;  // no Metrics or manual clock here; the stream is HTTP's
    }
    std::string target;
    for (std::size_t i = 0; i < r.pattern.size(); ++i) {
      target += "/";
      target += r.pattern.IsParam(i) ? "x" : std::string(r.pattern.segment(i));
    }
    if (r.pattern.ParamIndex("id") >= 0) {
      target = target.replace(target.find("/x"), 2, "/1");
    }
    const bool writes = r.method != "GET";
    auto a = Call(std::string(r.method), target, writes ? "{}" : "");
    const auto* error =
        a.body.is_object() ? a.body.as_object().if_contains("error") : nullptr;
    const std::string message =
        error ? std::string(error->at("message").as_string()) : "";
    EXPECT_EQ(message.find("no endpoint"), std::string::npos)
        << r.method << " " << target << ": " << message;
  }
  // Those left out answer 404 here, as any unknown path does.
  EXPECT_EQ(Call("GET", "/metrics").code(), "not_found");
  EXPECT_EQ(Call("GET", "/v1/events").code(), "not_found");
  EXPECT_EQ(Call("GET", "/v1/testing/clock").code(), "not_found");
  EXPECT_EQ(Call("POST", "/v1/testing/clock", R"({"advance_ms":1})").code(),
            "not_found");
}

}  // namespace
}  // namespace leasehold::server
