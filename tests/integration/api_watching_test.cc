// docs/api.md "Watching and operating" over real HTTP: /healthz, /metrics in
// Prometheus text format, and /v1/events as Server-Sent Events.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

// /healthz, /metrics and /v1/events.
class WatchingApiTest : public ApiContractTest {};

TEST_F(WatchingApiTest, HealthzAndMetricsAnswerInTheirFormats) {
  HttpClient c(port());
  auto health = c.Request("GET", "/healthz");
  EXPECT_EQ(health.status, 200u);
  EXPECT_EQ(Str(health.json, "status"), "ok");

  RawSocket raw(port());
  ASSERT_TRUE(raw.Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string answer = raw.ReadFor(milliseconds(5000), true).bytes;
  ASSERT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  const std::size_t head = answer.find("\r\n\r\n");
  EXPECT_NE(answer.substr(0, head).find("Content-Type: text/plain"),
            std::string::npos)
      << answer.substr(0, head);
  // Prometheus text format: comments, or `name{labels} value`.
  static const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")"
      R"((,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? [-+]?([0-9.eE+-]+|Inf|NaN)$)");
  std::size_t samples = 0;
  std::string line;
  std::istringstream body(answer.substr(head + 4));
  while (std::getline(body, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      EXPECT_TRUE(line.starts_with("# HELP ") || line.starts_with("# TYPE "))
          << line;
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    ++samples;
  }
  EXPECT_GT(samples, 5u);
}

TEST_F(WatchingApiTest, EventsStreamEachStateChangeWithJsonData) {
  HttpClient stream(port()), a(port()), b(port());
  stream.Send("GET", "/v1/events?ns=app");
  const std::string head = stream.ReadStreamUntil("retry:", milliseconds(5000));
  ASSERT_NE(head.find("text/event-stream"), std::string::npos) << head;
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  ASSERT_EQ(Acquire(b, sb, "doc", "Exclusive", "Session", 50).status, 409u);
  ASSERT_EQ(Release(a, sa, "doc").status, 200u);
  ASSERT_EQ(a.Request("PUT", "/v1/records/app/k", R"({"body":"v1"})").status,
            201u);
  ASSERT_EQ(
      a.Request("POST", "/v1/records/app/k/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  ASSERT_EQ(
      a.Request("POST", "/v1/records/app/k/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  ASSERT_EQ(a.Request("POST", "/v1/records/app/k/save",
                      R"({"owner":"Asha","body":"v2"})")
                .status,
            200u);
  ASSERT_EQ(
      a.Request("POST", "/v1/records/app/k/checkin", R"({"owner":"Asha"})")
          .status,
      200u);
  ASSERT_EQ(a.Request("DELETE", "/v1/sessions/" + sa).status, 204u);
  const std::string got = head + stream.ReadStreamUntil("event: session.closed",
                                                        milliseconds(5000));
  for (const char* type :
       {"session.opened", "applock.granted", "applock.waiting",
        "applock.timeout", "applock.released", "checkout.granted",
        "checkout.renewed", "record.saved", "checkout.released",
        "session.closed"}) {
    EXPECT_NE(got.find(std::string("event: ") + type + "\n"), std::string::npos)
        << type << " missing in:\n"
        << got;
  }
  // Every event has one JSON data line naming its type and time.
  static const std::regex frame("event: ([a-z_.]+)\ndata: ([^\n]*)\n\n");
  std::size_t frames = 0;
  for (auto it = std::sregex_iterator(got.begin(), got.end(), frame);
       it != std::sregex_iterator(); ++it) {
    ++frames;
    boost::system::error_code ec;
    const json::value data = json::parse((*it)[2].str(), ec);
    ASSERT_FALSE(ec) << (*it)[2];
    EXPECT_EQ(Str(data, "type"), (*it)[1].str());
    EXPECT_TRUE(Has(data, "at", Kind::kTime));
    if ((*it)[1].str().starts_with("applock.")) {
      EXPECT_EQ(Str(data, "resource"), "doc");
      EXPECT_TRUE(Has(data, "session_name", Kind::kString));
      EXPECT_TRUE(Has(data, "mode", Kind::kString));
    }
    if ((*it)[1].str() == "checkout.granted") {
      EXPECT_EQ(Str(data, "holder"), "Asha");
      EXPECT_TRUE(Has(data, "until", Kind::kTime));
      EXPECT_TRUE(Has(data, "fence", Kind::kInt));
    }
  }
  EXPECT_GE(frames, 10u);
}

}  // namespace
}  // namespace leasehold::testing
