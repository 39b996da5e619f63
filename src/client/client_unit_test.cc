// The client's pure parts, without sockets: URLs, targets and SSE parsing.
#include <gtest/gtest.h>

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
       {"", "https://127.0.0.1:7070", "127.0.0.1:7070", "http://",
        "http://:7070", "http://h:0", "http://h:65536", "http://h:70x",
        "http://h:7070/v1", "http://u@h:7070", "http://[::1"}) {
    auto e = ParseUrl(url);
    ASSERT_FALSE(e) << url;
    EXPECT_EQ(e.error().code, "bad_url") << url;
  }
}

TEST(Targets, SegmentsAndQueriesAreEncoded) {
  EXPECT_EQ(api::JoinPath({"v1", "records", "ns", "a/b c"}),
            "/v1/records/ns/a%2Fb%20c");
  std::string t = "/x";
  api::AddQuery(t, "resource", "invoice:481&x");
  api::AddQuery(t, "owner", "Session");
  EXPECT_EQ(t, "/x?resource=invoice:481%26x&owner=Session");
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
