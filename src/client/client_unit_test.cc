// The client's pure parts, without sockets: URLs (lists of nodes, and
// redirects), the API codec (targets, bodies, answers) and SSE parsing.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <vector>

#include "client/api_codec.h"
#include "client/sse_parser.h"
#include "client/url.h"

namespace leasehold::client::detail {
namespace {

TEST(ParseUrl, HostAndPort) {
  auto e = ParseUrl("http://127.0.0.1:7070");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, "7070");
  EXPECT_EQ(e->host_header, "127.0.0.1:7070");
  EXPECT_FALSE(e->tls);
  EXPECT_EQ(e->Origin(), "http://127.0.0.1:7070");
}

TEST(ParseUrl, HttpsWithItsDefaultPort) {
  auto a = ParseUrl("https://leasehold.example");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "leasehold.example");
  EXPECT_EQ(a->port, "443");
  EXPECT_EQ(a->host_header, "leasehold.example");
  EXPECT_EQ(a->Origin(), "https://leasehold.example");
  auto b = ParseUrl("https://[::1]:7443/");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_TRUE(b->tls);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, "7443");
  EXPECT_EQ(b->Origin(), "https://[::1]:7443");
}

TEST(ParseUrl, TrailingSlashDefaultPortAndIpv6) {
  auto a = ParseUrl("http://localhost/");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, "80");
  auto b = ParseUrl("http://[::1]:9000");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, "9000");
}

TEST(ParseUrl, RefusesWhatItCannotUse) {
  for (const char* url :
       {"", "ftp://127.0.0.1:7070", "127.0.0.1:7070", "http://", "https://",
        "HTTPS://h:7443", "http://:7070", "http://h:0", "http://h:65536",
        "https://h:65536", "http://h:70x", "http://h:7070/v1", "https://h/v1",
        "http://u@h:7070", "https://u@h", "http://[::1"}) {
    auto e = ParseUrl(url);
    ASSERT_FALSE(e) << url;
    EXPECT_EQ(e.error().code, "bad_url") << url;
  }
}

TEST(ParseUrls, SeveralNodesSeparatedByCommas) {
  auto one = ParseUrls("http://127.0.0.1:7070");
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  auto nodes = ParseUrls(
      "http://10.0.0.1:7070, http://10.0.0.2:7071 ,http://10.0.0.1:7070");
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u) << "a node named twice counts once";
  EXPECT_EQ((*nodes)[0].host_header, "10.0.0.1:7070");
  EXPECT_EQ((*nodes)[1].host, "10.0.0.2");
  EXPECT_EQ((*nodes)[1].port, "7071");
  auto mixed = ParseUrls("https://a:7443,http://b:7070,http://a:7443");
  ASSERT_TRUE(mixed) << mixed.error().message;
  ASSERT_EQ(mixed->size(), 3u) << "http:// and https:// are two nodes";
  EXPECT_TRUE((*mixed)[0].tls);
  EXPECT_FALSE((*mixed)[1].tls);
  EXPECT_FALSE((*mixed)[2].tls);
  for (const char* list : {"", ",", "http://a:1,", ",http://a:1",
                           "http://a:1,,http://b:2", "http://a:1,b:2"}) {
    auto r = ParseUrls(list);
    ASSERT_FALSE(r) << list;
    EXPECT_EQ(r.error().code, "bad_url") << list;
  }
}

TEST(ParseLocation, TheOriginOfARedirect) {
  auto l = ParseLocation("http://10.0.0.2:7071/v1/applocks/app/acquire?x=1",
                         /*from_tls=*/false);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->host, "10.0.0.2");
  EXPECT_EQ(l->port, "7071");
  EXPECT_FALSE(l->tls);
  auto bare = ParseLocation("http://[::1]:9000?x", false);
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->host, "::1");
  for (const char* location :
       {"", "/v1/sessions", "ftp://10.0.0.2:7071/v1/sessions",
        "http://u@h:1/v1", "http:///v1", "https:///v1"}) {
    EXPECT_FALSE(ParseLocation(location, false)) << location;
    EXPECT_FALSE(ParseLocation(location, true)) << location;
  }
}

TEST(ParseLocation, HttpsAlwaysHttpOnlyFromHttp) {
  for (const bool from_tls : {false, true}) {
    auto up = ParseLocation("https://b.example/v1/sessions", from_tls);
    ASSERT_TRUE(up) << up.error().message;
    EXPECT_TRUE(up->tls);
    EXPECT_EQ(up->port, "443");
  }
  auto down = ParseLocation("http://b.example:7070/v1/sessions", true);
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().code, "bad_url");
  EXPECT_NE(down.error().message.find("from https:// down to cleartext"),
            std::string::npos)
      << down.error().message;
}

TEST(Targets, SegmentsAndQueriesAreEncoded) {
  EXPECT_EQ(api::JoinPath({"v1", "records", "ns", "a/b c"}),
            "/v1/records/ns/a%2Fb%20c");
  std::string t = "/x";
  api::AddQuery(t, "resource", "invoice:481&x");
  api::AddQuery(t, "owner", "Session");
  EXPECT_EQ(t, "/x?resource=invoice:481%26x&owner=Session");
}

TEST(Targets, LockQueriesRecordListsAndTransactions) {
  AcquireOptions test;
  test.mode = "Shared";
  EXPECT_EQ(api::ModePath("app", "s1", "a b", "Session", "public"),
            "/v1/applocks/app/mode?session=s1&resource=a%20b&owner=Session"
            "&principal=public");
  EXPECT_EQ(api::TestPath("app", "s1", "r", test),
            "/v1/applocks/app/test?session=s1&resource=r&owner=Session"
            "&principal=public&mode=Shared");
  EXPECT_EQ(api::ListRecordsPath("docs", {}), "/v1/records/docs");
  EXPECT_EQ(
      api::ListRecordsPath(
          "docs", {.state = "free", .prefix = "n/", .after = "", .limit = 5}),
      "/v1/records/docs?state=free&prefix=n%2F&limit=5");
  EXPECT_EQ(api::TransactionPath("s1"), "/v1/sessions/s1/transaction");
  EXPECT_EQ(api::TransactionPath("s1", "commit"),
            "/v1/sessions/s1/transaction/commit");
}

// `text` parsed: every body the codec builds is one JSON object.
boost::json::value Json(const std::string& text) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  EXPECT_FALSE(ec) << text;
  return v;
}

TEST(Bodies, CarryTheDocumentedFields) {
  EXPECT_EQ(Json(api::AcquireAllBody(
                "s1", {{"b", "Shared"}, {"a", "Exclusive"}}, {})),
            Json(R"({"session":"s1","locks":[{"resource":"b","mode":"Shared"},
                 {"resource":"a","mode":"Exclusive"}],"owner":"Session",
                 "timeout_ms":-1,"principal":"public"})"));
  EXPECT_EQ(Json(api::AcquireAllBody("s1", {}, {})).at("locks"),
            boost::json::array());
  EXPECT_EQ(Json(api::PutBody("line\n\"quoted\"", 0)),
            Json(R"({"body":"line\n\"quoted\""})"));
  EXPECT_EQ(Json(api::PutBody("b", 18'446'744'073'709'551'615u)),
            Json(R"({"body":"b","fence":18446744073709551615})"));
  // A fence alone is the proof; never an empty owner beside it.
  EXPECT_EQ(Json(api::ProofBody({.fence = 7})), Json(R"({"fence":7})"));
  EXPECT_EQ(Json(api::ProofBody({.token = "t", .fence = 7})),
            Json(R"({"token":"t","fence":7})"));
  EXPECT_EQ(Json(api::SaveBody({.owner = "Asha", .fence = 7}, "x", 3)),
            Json(R"({"owner":"Asha","body":"x","fence":7,"if_version":3})"));
  EXPECT_EQ(Json(api::PurgeBody(Milliseconds(250))),
            Json(R"({"older_than_ms":250})"));
  EXPECT_EQ(Json(api::BeginOperationBody("s1")), Json(R"({"session":"s1"})"));
  EXPECT_EQ(Json(api::CompleteOperationBody("s1", Json(R"({"paid":[1,2]})"))),
            Json(R"({"session":"s1","outcome":{"paid":[1,2]}})"));
  EXPECT_EQ(Json(api::EnqueueBody("k", Json(R"({"to":"a"})"), "")),
            Json(R"({"key":"k","payload":{"to":"a"}})"));
  EXPECT_EQ(Json(api::EnqueueBody("k", nullptr, "s1")),
            Json(R"({"key":"k","payload":null,"session":"s1"})"));
  EXPECT_EQ(Json(api::ClaimBody("c1", 10, Milliseconds(30'000))),
            Json(R"({"consumer":"c1","max":10,"lease_ms":30000})"));
  EXPECT_EQ(Json(api::AckBody(7, "t")), Json(R"({"id":7,"claim_token":"t"})"));
}

TEST(Answers, ListsAreReadWhole) {
  auto locks = api::ParseLocks(Json(R"({"locks":[{"resource":"r",
      "principal":"public","granted":[{"session":"1","session_name":"a",
      "owner":"Session","mode":"Exclusive","count":2,"since":null,
      "fence":9}],"waiting":[{"session":"2","session_name":"b",
      "owner":"Session","mode":"Shared","conversion":false,
      "since":"2026-01-01T00:00:00.000Z","deadline":null}]}]})"));
  ASSERT_TRUE(locks) << locks.error().message;
  ASSERT_EQ(locks->size(), 1u);
  EXPECT_EQ(locks->at(0).granted.at(0).count, 2);
  EXPECT_EQ(locks->at(0).granted.at(0).fence, 9u);
  EXPECT_EQ(locks->at(0).waiting.at(0).mode, "Shared");

  // One malformed holder makes the whole answer a bad_response.
  auto bad = api::ParseLocks(Json(R"({"locks":[{"resource":"r",
      "principal":"public","granted":[{"session":"1"}],"waiting":[]}]})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "bad_response");
  EXPECT_FALSE(api::ParseSessions(Json(R"({"sessions":{}})")));

  auto page = api::ParseRecordPage(Json(R"({"records":[{"key":"k",
      "version":3,"locked_by":null,"lock_expires_at":null,"state":"free",
      "fence":0}],"next":"k"})"));
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->records.at(0).version, 3);
  EXPECT_FALSE(page->records.at(0).locked_by);
  EXPECT_EQ(page->next, "k");
}

TEST(Answers, RefusalsAreOutcomes) {
  auto mismatch = api::ParseSaveAnswer(
      Json(R"({"saved":false,"reason":"version_mismatch"})"));
  ASSERT_TRUE(mismatch);
  EXPECT_FALSE(mismatch->done);
  EXPECT_EQ(mismatch->reason, "version_mismatch");
  auto saved = api::ParseSaveAnswer(Json(R"({"saved":true,"version":4})"));
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->version, 4);
  EXPECT_FALSE(api::ParseCheckinAnswer(Json(R"({"saved":true})")))
      << "checkin answers with \"released\"";
  auto ack = api::ParseAckAnswer(Json(R"({"acked":false,"reason":"expired"})"));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->reason, "expired");
  auto all = api::ParseAcquireAllAnswer(
      Json(R"({"result":-1,"status":"timeout","resource":"b"})"));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->failed_resource, "b");
  EXPECT_FALSE(api::ParseAcquireAllAnswer(
      Json(R"({"result":0,"status":"granted","locks":[{"resource":"a"}]})")));
}

std::vector<Event> ParseAll(const std::vector<std::string>& pieces) {
  std::vector<Event> events;
  SseParser parser([&](const Event& e) {
    events.push_back(e);
    return true;
  });
  for (const auto& p : pieces) parser.Feed(p);
  return events;
}

TEST(SseParser, EventsSplitAnywhere) {
  const std::string stream =
      "retry: 2000\n\n"
      ": ping\n\n"
      "event: checkout.granted\ndata: {\"key\":\"doc\",\"n\":1}\n\n"
      "event: checkout.released\r\ndata: {\"key\":\"doc\"}\r\n\r\n";
  // Every split point gives the same two events.
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    auto events = ParseAll({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(events[0].type, "checkout.granted");
    EXPECT_EQ(events[0].data.at("n").as_int64(), 1);
    EXPECT_EQ(events[1].type, "checkout.released");
    EXPECT_EQ(events[1].data.at("key").as_string(), "doc");
  }
}

TEST(SseParser, IncompleteEventIsNotDelivered) {
  auto events = ParseAll({"event: a\ndata: {}\n"});
  EXPECT_TRUE(events.empty());
}

TEST(SseParser, StopsWhenAsked) {
  int seen = 0;
  SseParser parser([&](const Event&) { return ++seen < 2; });
  EXPECT_TRUE(parser.Feed("data: 1\n\n"));
  EXPECT_FALSE(parser.Feed("data: 2\n\ndata: 3\n\n"));
  EXPECT_EQ(seen, 2);
}

TEST(SseParser, MultiLineDataAndPlainText) {
  auto events = ParseAll({"data: hello\ndata: world\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "message");
  ASSERT_TRUE(events[0].data.is_string());
  EXPECT_EQ(events[0].data.as_string(), "hello\nworld");
}

}  // namespace
}  // namespace leasehold::client::detail
