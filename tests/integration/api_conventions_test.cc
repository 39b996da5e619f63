// docs/api.md "Conventions" over real HTTP: unknown routes, the error shape and
// codes for bad JSON and wrong types, names (1 to 255 Unicode characters,
// compared byte for byte, never truncated) and the body limits.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "client/api_codec.h"
#include "tests/integration/api_contract_fixture.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;

// Conventions that hold for every resource.
class ConventionsApiTest : public ApiContractTest {};

TEST_F(ConventionsApiTest, UnknownRoutesAndWrongMethodsAnswer404NotFound) {
  HttpClient c(port());
  // docs/api.md documents no 405; the server answers a path or method it does
  // not know with 404 not_found, naming the method and path.
  for (const auto& [method, target] :
       std::vector<std::pair<std::string, std::string>>{
           {"GET", "/nope"},
           {"GET", "/v1"},
           {"GET", "/v1/nothing/here"},
           {"GET", "/v2/sessions"},
           {"POST", "/healthz"},
           {"POST", "/metrics"},
           {"DELETE", "/v1/sessions"},
           {"PUT", "/v1/sessions"},
           {"PUT", "/v1/applocks/app/acquire"},
           {"GET", "/v1/applocks/app/job/release"},
           {"POST", "/v1/applocks/app/mode"},
           {"POST", "/v1/applocks/app"},
           {"PATCH", "/v1/records/docs/k"},
           {"GET", "/v1/records/docs/k/checkout"},
           {"POST", "/v1/records/docs/k/nonsense"},
           {"GET", "/v1/sessions/1/keepalive"},
       }) {
    const std::string body =
        method == "POST" || method == "PUT" || method == "PATCH" ? "{}" : "";
    auto a = c.Request(method, target, body);
    EXPECT_TRUE(IsError(a, 404, "not_found")) << method << " " << target;
    if (a.status == 404) {
      EXPECT_NE(Str(a.json.at("error"), "message").find(method),
                std::string::npos)
          << a.body;
    }
  }
  EXPECT_EQ(c.Request("GET", "/healthz").status, 200u) << "still serving";
}

TEST_F(ConventionsApiTest, BadJsonAndWrongTypesAreRefusedWithCodes) {
  HttpClient c(port());
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions", "{\"name\":"), 400,
                      "bad_json"));
  EXPECT_TRUE(
      IsError(c.Request("POST", "/v1/sessions", "[1,2]"), 400, "bad_json"));
  EXPECT_TRUE(
      IsError(c.Request("PUT", "/v1/records/docs/k", "null"), 400, "bad_json"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/k/checkout",
                                R"({"owner":"Asha"} trailing)"),
                      400, "bad_json"));
  // Invalid UTF-8 inside a body string.
  EXPECT_TRUE(
      IsError(c.Request("PUT", "/v1/records/docs/k", "{\"body\":\"caf\xe9\"}"),
              400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/k/checkout",
                                "{\"owner\":\"\xed\xa0\x80\"}"),  // surrogate
                      400, "bad_request"));
  // Wrong JSON types and missing required fields.
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions", R"({"name":5})"), 400,
                      "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/sessions", R"({"ttl_ms":"30s"})"),
                      400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/k/checkout",
                                R"({"owner":"Asha","ttl_ms":"long"})"),
                      400, "bad_request"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/k/checkout", R"({"ttl_ms":1000})"),
      400, "bad_request"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/k/checkout", R"({"owner":["Asha"]})"),
      400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/k/checkout",
                                R"({"owner":"Asha","token":12})"),
                      400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/k/save",
                                R"({"owner":"Asha","body":{"x":1}})"),
                      400, "bad_request"));
  EXPECT_TRUE(
      IsError(c.Request("POST", "/v1/records/docs/k/save",
                        R"({"owner":"Asha","body":"b","if_version":"1"})"),
              400, "bad_request"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/k/save", R"({"owner":"Asha"})"), 400,
      "bad_request"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/purge", R"({"older_than_ms":"1h"})"),
      400, "bad_request"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/applocks/app/acquire",
                R"({"resource":"r","mode":"Shared","owner":"Session"})"),
      400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/applocks/app/acquire",
                                R"({"session":true,"resource":"r",)"
                                R"("mode":"Shared","owner":"Session"})"),
                      400, "bad_request"));
  EXPECT_TRUE(
      IsError(c.Request("GET", "/v1/records/docs/%zz"), 400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/records/docs?prefix=%g1"), 400,
                      "bad_request"));
}

TEST_F(ConventionsApiTest, NamesAreOneTo255UnicodeCharactersNeverTruncated) {
  HttpClient c(port());
  const std::string body = R"({"body":"x"})";
  // Keys: counted in characters, not bytes.
  for (const std::string unit :
       {"k", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\x92"}) {  // k é € 🔒
    const std::string ok = Repeat(unit, 255), long_name = Repeat(unit, 256);
    auto put = c.Request("PUT", api::RecordPath("names", ok), body);
    EXPECT_EQ(put.status, 201u) << unit.size() << "-byte: " << put.body;
    auto got = c.Request("GET", api::RecordPath("names", ok));
    ASSERT_EQ(got.status, 200u) << got.body;
    EXPECT_EQ(Str(got.json, "key"), ok) << "the name comes back untouched";
    EXPECT_TRUE(
        IsError(c.Request("PUT", api::RecordPath("names", long_name), body),
                400, "name_too_long"))
        << unit.size() << "-byte characters";
    EXPECT_TRUE(IsError(c.Request("GET", api::RecordPath("names", long_name)),
                        400, "name_too_long"))
        << "never truncated to match the 255-character key";
  }
  // Byte-for-byte comparison: case and trailing blanks make other names.
  for (const std::string k : {"Doc", "doc", "doc "}) {
    EXPECT_EQ(c.Request("PUT", api::RecordPath("names", k), body).status, 201u)
        << "\"" << k << "\"";
  }
  // Invalid UTF-8 in a name.
  EXPECT_TRUE(IsError(c.Request("PUT", "/v1/records/names/%C3%28", body), 400,
                      "bad_request"));
  EXPECT_TRUE(
      IsError(c.Request("PUT", "/v1/records/%FF/k", body), 400, "bad_request"));
  // Namespaces, owners, resources, principals and session names too.
  EXPECT_TRUE(IsError(
      c.Request("PUT", "/v1/records/" + std::string(256, 'n') + "/k", body),
      400, "name_too_long"));
  EXPECT_EQ(
      c.Request("PUT", "/v1/records/" + std::string(255, 'n') + "/k", body)
          .status,
      201u);
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/names/k/checkout",
                                J({{"owner", std::string(256, 'o')}})),
                      400, "name_too_long"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/names/k/checkout", J({{"owner", ""}})),
      400, "name_empty"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/sessions", J({{"name", Repeat("\xc3\xa9", 256)}})),
      400, "name_too_long"));
  auto s = c.Request("POST", "/v1/sessions",
                     J({{"name", Repeat("\xe2\x82\xac", 255)}}));
  ASSERT_EQ(s.status, 201u) << s.body;
  EXPECT_EQ(Str(s.json, "name"), Repeat("\xe2\x82\xac", 255));
  const std::string sid = Str(s.json, "id");
  EXPECT_TRUE(IsError(Acquire(c, sid, "", "Shared"), 400, "name_empty"));
  EXPECT_TRUE(IsError(Acquire(c, sid, Repeat("\xc3\xbc", 256), "Shared"), 400,
                      "name_too_long"));
  auto wide = Acquire(c, sid, Repeat("\xc3\xbc", 255), "Shared");
  EXPECT_EQ(wide.status, 200u) << wide.body;
  EXPECT_EQ(ModeOf(c, sid, Repeat("\xc3\xbc", 255)), "Shared");
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/applocks/app/acquire",
                                J({{"session", sid},
                                   {"resource", "r"},
                                   {"mode", "Shared"},
                                   {"owner", "Session"},
                                   {"principal", std::string(256, 'p')}})),
                      400, "name_too_long"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/applocks/app/acquire",
                                J({{"session", sid},
                                   {"resource", "r"},
                                   {"mode", "Shared"},
                                   {"owner", "Session"},
                                   {"principal", ""}})),
                      400, "name_empty"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/applocks/" + std::string(256, 'n') + "/acquire",
                AcquireBody(sid, "r", "Shared")),
      400, "name_too_long"));
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/applocks/app/mode?session=" + sid +
                                           "&resource=%C3%28&owner=Session"),
                      400, "bad_request"));
}

TEST_F(ConventionsApiTest, BodiesAboveTheLimitsAre413BodyTooLarge) {
  HttpClient c(port());
  // The record body limit (max_body_bytes = 1024 in this test's config).
  EXPECT_EQ(c.Request("PUT", "/v1/records/docs/fits",
                      J({{"body", std::string(1024, 'b')}}))
                .status,
            201u);
  EXPECT_TRUE(IsError(c.Request("PUT", "/v1/records/docs/big",
                                J({{"body", std::string(1025, 'b')}})),
                      413, "body_too_large"));
  ASSERT_EQ(
      c.Request("POST", "/v1/records/docs/fits/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/fits/save",
                J({{"owner", "Asha"}, {"body", std::string(1025, 'b')}})),
      413, "body_too_large"));
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/fits").json, "body").size(),
            1024u)
      << "a refused save changes nothing";
  // The HTTP layer's limit (http_body_limit = 64 KiB): any request.
  HttpClient h(port());
  EXPECT_TRUE(IsError(h.Request("POST", "/v1/sessions",
                                J({{"name", std::string(70'000, 'n')}})),
                      413, "body_too_large"));
  EXPECT_EQ(h.Request("GET", "/healthz").status, 200u);
}

// Whatever bytes a request carries, its answer is JSON in valid UTF-8: a
// message that quotes them writes each byte that is not UTF-8 as \xNN
// (HttpClient parses every answer, and Boost.JSON refuses invalid UTF-8,
// so IsError fails on such an answer).
TEST_F(ConventionsApiTest, AnswersAreValidUtf8WhateverBytesTheRequestHad) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "Asha");
  auto owner = c.Request(
      "GET", "/v1/applocks/w/mode?session=" + s + "&resource=r&owner=%ff");
  EXPECT_TRUE(IsError(owner, 400, "bad_owner")) << owner.body;
  EXPECT_NE(owner.body.find("\\\\xff"), std::string::npos) << owner.body;
  auto mode = c.Request(
      "GET", "/v1/applocks/w/test?session=" + s + "&resource=r&mode=%ff");
  EXPECT_TRUE(IsError(mode, 400, "bad_mode")) << mode.body;
  HttpClient raw(port());
  const std::string answer =
      raw.Raw("GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::size_t body = answer.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << answer;
  boost::system::error_code ec;
  (void)boost::json::parse(answer.substr(body + 4), ec);  // refuses bad UTF-8
  EXPECT_FALSE(ec) << "not JSON in UTF-8: " << answer;
  EXPECT_NE(answer.find("404"), std::string::npos) << answer;
}

// ?ns= of the event stream names a namespace as a path does: the same
// refusals, not a stream.
TEST_F(ConventionsApiTest, TheEventStreamRefusesNamesAsEveryEndpointDoes) {
  HttpClient c(port());
  c.Send("GET", "/v1/events?ns=%ff");
  EXPECT_TRUE(IsError(c.Receive(), 400, "bad_request"));
  HttpClient d(port());
  d.Send("GET", "/v1/events?ns=" + std::string(256, 'n'));
  EXPECT_TRUE(IsError(d.Receive(), 400, "name_too_long"));
  HttpClient e(port());
  e.Send("GET", "/v1/events?ns=%zz");
  EXPECT_TRUE(IsError(e.Receive(), 400, "bad_request"));
}

// With tokens, a namespace that is no name is refused as such (400), before
// the token is judged against it.
TEST(ConventionsWithTokensTest, ABadNamespaceIsABadRequestNotForbidden) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"tokens": [
      {"token": "billing-token-0001", "principal": "billing",
       "namespaces": ["billing"], "role": "write"}]})";
  ServerProcess server(dir.File("data"), config);
  HttpClient c(server.port());
  c.SetBearerToken("billing-token-0001");
  auto bad = c.Request("GET", "/v1/records/%ff/k");
  EXPECT_TRUE(IsError(bad, 400, "bad_request")) << bad.body;
  auto other = c.Request("GET", "/v1/records/shipping/k");
  EXPECT_TRUE(IsError(other, 403, "forbidden")) << other.body;
}

}  // namespace
}  // namespace leasehold::testing
