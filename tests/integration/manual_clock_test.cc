// `leasehold serve --store memory --clock manual` as a real process, over
// real HTTP: POST /v1/testing/clock moves time 10 minutes and every lease,
// session, lock wait and outbox claim due by then is over when it answers,
// with its events on /v1/events; and the refusals: bad bodies, the route
// outside the mode, and the configurations that may not have a manual
// clock. Real time is printed, never asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "common/clock.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
namespace json = boost::json;

// Generous: only a hang fails on time, never a slow machine.
constexpr milliseconds kPatience{30'000};

// Reads `stream` until each of `needles` has appeared, in any order;
// returns all it read.
std::string ReadUntilAll(HttpClient& stream,
                         std::initializer_list<std::string> needles) {
  std::string seen;
  for (const std::string& needle : needles) {
    if (seen.find(needle) == std::string::npos) {
      seen += stream.ReadStreamUntil(needle, kPatience);
    }
  }
  return seen;
}

std::string Str(const json::value& v, std::string_view key) {
  return std::string(v.at(key).as_string());
}

class ManualClockTest : public ::testing::Test {
 protected:
  // Transactions in "limited" are rolled back after a minute open; in
  // "delayed" the locks of an expired session are held back 2 minutes.
  void SetUp() override {
    const std::string config = dir_.File("config.json");
    std::ofstream(config)
        << R"({"namespaces":{"limited":{"max_transaction_ms":60000},)"
           R"("delayed":{"lock_delay_ms":120000}}})";
    server_ = ServerProcess::InMemoryWithManualClock(dir_.path(), config);
    http_.emplace(server_->port());
  }

  std::string OpenSession(const std::string& name, int ttl_ms) {
    auto a = http_->Request("POST", "/v1/sessions",
                            R"({"name":")" + name + R"(","ttl_ms":)" +
                                std::to_string(ttl_ms) + "}");
    EXPECT_EQ(a.status, 201u) << a.body;
    return Str(a.json, "id");
  }

  HttpAnswer Advance(const std::string& body) {
    return http_->Request("POST", "/v1/testing/clock", body);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::optional<HttpClient> http_;
};

TEST_F(ManualClockTest, TenMinutesLaterLeasesSessionsWaitsAndClaimsAreOver) {
  const auto began = std::chrono::steady_clock::now();
  HttpClient events(server_->port());
  events.Send("GET", "/v1/events");
  events.ReadStreamUntil("retry:", kPatience);

  const auto start = http_->Request("GET", "/v1/testing/clock");
  ASSERT_EQ(start.status, 200u) << start.body;
  const std::optional<Time> t0 = ParseTime(Str(start.json, "now"));
  ASSERT_TRUE(t0.has_value()) << start.body;

  // A session that sends no keep-alive, a 5-minute checkout, a 1-minute
  // outbox claim, a lock wait of 1 minute behind a holder, and a
  // transaction with a minute to live.
  const std::string idle = OpenSession("idle", 30'000);
  const std::string holder = OpenSession("holder", 3'600'000);
  const std::string waiter = OpenSession("waiter", 3'600'000);
  ASSERT_EQ(
      http_->Request("PUT", "/v1/records/docs/invoice-7", R"({"body":"draft"})")
          .status,
      201u);
  const auto checkout =
      http_->Request("POST", "/v1/records/docs/invoice-7/checkout",
                     R"({"owner":"Asha","ttl_ms":300000})");
  ASSERT_EQ(checkout.status, 200u) << checkout.body;
  ASSERT_EQ(http_
                ->Request("POST", "/v1/outbox/docs/mail",
                          R"({"key":"m1","payload":{"to":"Asha"}})")
                .status,
            201u);
  const auto claim =
      http_->Request("POST", "/v1/outbox/docs/mail/claim",
                     R"({"consumer":"worker-1","max":1,"lease_ms":60000})");
  ASSERT_EQ(claim.status, 200u) << claim.body;
  ASSERT_EQ(claim.json.at("messages").as_array().size(), 1u) << claim.body;
  const auto held = http_->Request(
      "POST", "/v1/applocks/app/acquire",
      R"({"session":")" + holder +
          R"(","resource":"r","mode":"Exclusive","owner":"Session"})");
  ASSERT_EQ(held.status, 200u) << held.body;
  HttpClient waiting(server_->port());
  waiting.Send("POST", "/v1/applocks/app/acquire",
               R"({"session":")" + waiter +
                   R"(","resource":"r","mode":"Exclusive","owner":"Session",)"
                   R"("timeout_ms":60000})");
  events.ReadStreamUntil("event: applock.waiting", kPatience);
  const std::string txn = OpenSession("txn", 3'600'000);
  ASSERT_EQ(
      http_->Request("POST", "/v1/sessions/" + txn + "/transaction").status,
      201u);
  const auto in_txn = http_->Request(
      "POST", "/v1/applocks/limited/acquire",
      R"({"session":")" + txn + R"(","resource":"t","mode":"Exclusive"})");
  ASSERT_EQ(in_txn.status, 200u) << in_txn.body;

  const auto moved = Advance(R"({"advance_ms":600000})");
  ASSERT_EQ(moved.status, 200u) << moved.body;
  const std::optional<Time> t1 = ParseTime(Str(moved.json, "now"));
  ASSERT_TRUE(t1.has_value()) << moved.body;
  EXPECT_EQ(*t1 - *t0, std::chrono::minutes(10));

  // The advance answered after the expiries were applied and published.
  const auto waited = waiting.Receive(kPatience);
  EXPECT_EQ(waited.json.at("result").as_int64(), -1) << waited.body;
  const std::string seen = ReadUntilAll(
      events, {"event: session.expired", "event: checkout.expired",
               "event: applock.timeout", "event: transaction.expired"});
  for (const char* type : {"session.expired", "checkout.expired",
                           "applock.timeout", "transaction.expired"}) {
    EXPECT_NE(seen.find(std::string("event: ") + type), std::string::npos)
        << type << " not in " << seen;
  }
  EXPECT_NE(seen.find(R"("session_name":"idle")"), std::string::npos) << seen;
  EXPECT_EQ(seen.find(R"("session_name":"holder")"), std::string::npos)
      << "a session with an hour to live expired: " << seen;
  const auto sessions = http_->Request("GET", "/v1/sessions");
  EXPECT_EQ(sessions.body.find(R"("id":")" + idle + "\""), std::string::npos)
      << sessions.body;
  const auto record = http_->Request("GET", "/v1/records/docs/invoice-7");
  EXPECT_EQ(Str(record.json, "state"), "free") << record.body;
  // The claim's lease is over: another consumer gets the message, on its
  // second attempt.
  const auto reclaim =
      http_->Request("POST", "/v1/outbox/docs/mail/claim",
                     R"({"consumer":"worker-2","max":1,"lease_ms":60000})");
  ASSERT_EQ(reclaim.status, 200u) << reclaim.body;
  ASSERT_EQ(reclaim.json.at("messages").as_array().size(), 1u) << reclaim.body;
  EXPECT_EQ(reclaim.json.at("messages").at(0).at("attempt").as_int64(), 2)
      << reclaim.body;
  std::cout << "10 minutes of server time took "
            << std::chrono::duration_cast<milliseconds>(
                   std::chrono::steady_clock::now() - began)
                   .count()
            << " ms of real time\n";
}

TEST_F(ManualClockTest, NothingExpiresUntilTheClockIsMoved) {
  const std::string s = OpenSession("short", 1'000);
  const auto before = http_->Request("GET", "/v1/testing/clock");
  // Real time passes (however long this takes); the server's does not.
  ASSERT_EQ(http_->Request("POST", "/v1/sessions/" + s + "/keepalive").status,
            200u);
  EXPECT_EQ(http_->Request("GET", "/v1/testing/clock").body, before.body);
  ASSERT_EQ(Advance(R"({"advance_ms":999})").status, 200u);
  EXPECT_EQ(http_->Request("POST", "/v1/sessions/" + s + "/keepalive").status,
            200u);
  ASSERT_EQ(Advance(R"({"advance_ms":1000})").status, 200u);
  EXPECT_EQ(
      http_->Request("POST", "/v1/sessions/" + s + "/keepalive").error_code(),
      "session_not_found");
}

TEST_F(ManualClockTest, ALockDelayEndsWhenTheClockPassesIt) {
  const std::string lost = OpenSession("lost", 30'000);
  const std::string next = OpenSession("next", 3'600'000);
  const auto acquire = [&](const std::string& session) {
    return http_->Request(
        "POST", "/v1/applocks/delayed/acquire",
        R"({"session":")" + session +
            R"(","resource":"d","mode":"Exclusive","owner":"Session",)"
            R"("timeout_ms":0})");
  };
  ASSERT_EQ(acquire(lost).status, 200u);
  // "lost" expires at +30 s; its lock is held back until +150 s.
  ASSERT_EQ(Advance(R"({"advance_ms":60000})").status, 200u);
  const auto held_back = acquire(next);
  EXPECT_EQ(held_back.status, 409u) << held_back.body;
  ASSERT_EQ(Advance(R"({"advance_ms":89999})").status, 200u);
  EXPECT_EQ(acquire(next).status, 409u);
  ASSERT_EQ(Advance(R"({"advance_ms":1})").status, 200u);
  const auto granted = acquire(next);
  EXPECT_EQ(granted.status, 200u) << granted.body;
}

TEST_F(ManualClockTest, BadBodiesAreRefusedAndMoveNothing) {
  const auto before = http_->Request("GET", "/v1/testing/clock");
  for (const char* body :
       {"{}", R"({"advance_ms":null})", R"({"advance_ms":-1})",
        R"({"advance_ms":1.5})", R"({"advance_ms":"10"})",
        R"({"advance_ms":true})", R"({"advance_ms":1e300})",
        R"({"advance_ms":99999999999999999999})",
        R"({"advance_ms":9223372036854775807})",
        R"({"advance_ms":3162240000001})", "[1]", "not json"}) {
    const auto a = Advance(body);
    EXPECT_EQ(a.status, 400u) << body << " -> " << a.body;
    EXPECT_TRUE(a.error_code() == "bad_request" || a.error_code() == "bad_json")
        << body << " -> " << a.body;
    EXPECT_FALSE(a.json.at("error").at("message").as_string().empty());
  }
  EXPECT_EQ(http_->Request("GET", "/v1/testing/clock").body, before.body);
  // Past the year 9999, in steps the body allows: refused, not wrapped.
  for (int i = 0; i < 80; ++i) {
    const auto a = Advance(R"({"advance_ms":3162240000000})");
    if (a.status == 400) {
      EXPECT_EQ(a.error_code(), "bad_request") << a.body;
      EXPECT_NE(a.body.find("9999"), std::string::npos) << a.body;
      return;
    }
    ASSERT_EQ(a.status, 200u) << a.body;
  }
  ADD_FAILURE() << "8000 years later, the clock was still moving";
}

// --- the route outside the mode, and the refused configurations ----------

TEST(ManualClockRefusals, WithoutTheManualClockTheRouteIsNotFound) {
  TempDir dir;
  ServerProcess server(dir.path() + "/data");
  HttpClient http(server.port());
  for (const auto& [method, body] :
       {std::pair<std::string, std::string>{"GET", ""},
        {"POST", R"({"advance_ms":1000})"}}) {
    const auto a = http.Request(method, "/v1/testing/clock", body);
    EXPECT_EQ(a.status, 404u) << a.body;
    EXPECT_EQ(a.error_code(), "not_found") << a.body;
  }
}

// What `serve` says and how it exits; `timeout` ends a server that started
// when it should not have, so that the test fails instead of hanging.
CommandRun Serve(const std::string& args) {
  return RunShell("timeout 20 " + LeaseholdBinary() +
                  " serve --port-file /dev/null " + args + " 2>&1");
}

TEST(ManualClockRefusals, RefusedWithoutMemoryWithTokensOrBeyondLoopback) {
  TempDir dir;
  const auto sqlite =
      Serve("--listen 127.0.0.1:0 --data " + dir.path() + " --clock manual");
  EXPECT_EQ(sqlite.code, 1) << sqlite.out;
  EXPECT_NE(sqlite.out.find("needs --store memory"), std::string::npos)
      << sqlite.out;
  for (const char* listen : {"0.0.0.0:0", "[::]:0"}) {
    const auto wide = Serve(std::string("--listen ") + listen +
                            " --store memory --clock manual");
    EXPECT_EQ(wide.code, 1) << wide.out;
    EXPECT_NE(wide.out.find("refusing --clock manual on"), std::string::npos)
        << wide.out;
  }
  const std::string config = dir.File("tokens.json");
  std::ofstream(config)
      << R"({"store":"memory","clock":"manual","tokens":[{"token":)"
         R"("0123456789abcdef0123","principal":"p","namespaces":["*"],)"
         R"("role":"admin"}]})";
  const auto tokens = Serve("--listen 127.0.0.1:0 --config " + config);
  EXPECT_EQ(tokens.code, 1) << tokens.out;
  EXPECT_NE(tokens.out.find("refusing --clock manual with tokens"),
            std::string::npos)
      << tokens.out;
  const auto typo = Serve("--listen 127.0.0.1:0 --store memroy --clock manual");
  EXPECT_NE(typo.code, 0) << typo.out;
  EXPECT_NE(typo.out.find("memory"), std::string::npos) << typo.out;
}

}  // namespace
}  // namespace leasehold::testing
