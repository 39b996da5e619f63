// The route table on its own: every pattern routes to its own entry, a path
// no route serves finds the nearest one (or none), and each route asks for
// the role the access rules give it.
#include "server/routes.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace leasehold::server {
namespace {

// The decoded segments of `pattern` with each parameter given a value.
std::vector<std::string> Instance(const RoutePattern& pattern) {
  std::vector<std::string> segments;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    segments.push_back(pattern.IsParam(i) ? "p" + std::to_string(i)
                                          : std::string(pattern.segment(i)));
  }
  return segments;
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    path.remove_prefix(1);
    const std::size_t slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? "" : path.substr(slash);
  }
  return out;
}

const Route& Find(std::string_view method, std::string_view pattern) {
  for (const Route& r : Routes()) {
    if (r.method == method && r.pattern.text() == pattern) return r;
  }
  ADD_FAILURE() << "no route " << method << " " << pattern;
  return Routes().front();
}

TEST(RoutesTest, PatternsAreSplitIntoSegments) {
  const RoutePattern p = "/v1/records/{ns}/{key}/checkout";
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p.segment(0), "v1");
  EXPECT_TRUE(p.IsParam(2));
  EXPECT_FALSE(p.IsParam(4));
  EXPECT_EQ(p.ParamIndex("ns"), 2);
  EXPECT_EQ(p.ParamIndex("key"), 3);
  EXPECT_EQ(p.ParamIndex("k"), -1);
  EXPECT_EQ(p.ParamIndex("checkout"), -1);  // a literal, not a parameter
  static_assert(RoutePattern("/v1/sessions/{id}/keepalive").id_index() == 2);
  static_assert(RoutePattern("/v1/sessions/{id}").ns_index() == -1);
  EXPECT_EQ(p.ns_index(), 2);
}

TEST(RoutesTest, EveryPatternRoutesToItsOwnEntry) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const Route& r : Routes()) {
    EXPECT_TRUE(seen.emplace(r.method, r.pattern.text()).second)
        << "twice: " << r.method << " " << r.pattern.text();
    EXPECT_EQ(r.pattern.text().front(), '/') << r.pattern.text();
    EXPECT_NE(r.handler, nullptr) << r.pattern.text();
    const auto segments = Instance(r.pattern);
    const RouteMatch m = MatchRoute(r.method, segments);
    EXPECT_EQ(m.route, &r) << r.method << " " << r.pattern.text();
    EXPECT_EQ(m.ns_index, r.pattern.ParamIndex("ns"));
    EXPECT_EQ(m.id_index, r.pattern.ParamIndex("id"));
  }
  EXPECT_GE(Routes().size(), 36u);
}

TEST(RoutesTest, DecodedSegmentsMatchAndLiteralsComeFirst) {
  const RouteMatch lock = MatchRoute(
      "POST", std::vector<std::string>{"v1", "applocks", "a/b", "acquire"});
  ASSERT_NE(lock.route, nullptr);
  EXPECT_EQ(lock.route->pattern.text(), "/v1/applocks/{ns}/acquire");
  EXPECT_EQ(lock.ns_index, 2);
  // POST .../purge is the administrator's purge; GET of it reads a record.
  EXPECT_EQ(MatchRoute("POST", Split("/v1/records/docs/purge")).route,
            &Find("POST", "/v1/records/{ns}/purge"));
  EXPECT_EQ(MatchRoute("GET", Split("/v1/records/docs/purge")).route,
            &Find("GET", "/v1/records/{ns}/{key}"));
  const RouteMatch end = MatchRoute("DELETE", Split("/v1/sessions/42"));
  ASSERT_NE(end.route, nullptr);
  EXPECT_EQ(end.id_index, 2);
  EXPECT_TRUE(end.route->Has(kAdminMayActForOthers));
}

TEST(RoutesTest, UnknownPathsFindTheNearestRouteOrNone) {
  for (const char* path : {"/", "/nope", "/v1", "/v1/nothing/here",
                           "/v2/sessions", "/v1/applocks", "/healthz/x"}) {
    const RouteMatch m = MatchRoute("GET", Split(path));
    EXPECT_EQ(m.route, nullptr) << path;
    EXPECT_EQ(m.nearest, nullptr) << path;
    EXPECT_EQ(m.ns_index, -1) << path;
  }
  EXPECT_EQ(MatchRoute("POST", Split("/healthz")).route, nullptr);
  EXPECT_EQ(MatchRoute("POST", Split("/healthz")).nearest, nullptr);

  // Under a resource and its {ns}: checked as the nearest route would be,
  // in its namespace, before the 404.
  const RouteMatch nonsense =
      MatchRoute("POST", Split("/v1/records/docs/k/nonsense"));
  EXPECT_EQ(nonsense.route, nullptr);
  ASSERT_NE(nonsense.nearest, nullptr);
  EXPECT_TRUE(nonsense.nearest->Has(kSessionScoped));
  EXPECT_EQ(nonsense.ns_index, 2);
  const RouteMatch keepalive =
      MatchRoute("GET", Split("/v1/sessions/7/keepalive"));
  EXPECT_EQ(keepalive.route, nullptr);
  ASSERT_NE(keepalive.nearest, nullptr);
  EXPECT_EQ(keepalive.id_index, 2);
  EXPECT_EQ(keepalive.ns_index, -1);
  EXPECT_EQ(MatchRoute("PUT", Split("/v1/sessions")).nearest,
            &Find("POST", "/v1/sessions"));

  const RouteMatch stats = MatchRoute("POST", Split("/v1/stats"));
  EXPECT_EQ(stats.route, nullptr);
  ASSERT_NE(stats.nearest, nullptr);
  EXPECT_FALSE(stats.nearest->Has(kSessionScoped));
  EXPECT_EQ(NoRoute("GET", "/nope").message(),
            "no endpoint GET /nope; see docs/api.md for the endpoints");
  EXPECT_EQ(NoRoute("GET", "/nope").code(), StatusCode::kNotFound);
}

TEST(RoutesTest, EachRouteAsksForItsRole) {
  // GET reads, other methods write; break, purge and everything under
  // /v1/admin (a backup, which holds every namespace) administer.
  for (const Route& r : Routes()) {
    const std::string_view last = r.pattern.segment(r.pattern.size() - 1);
    const bool admin = last == "break" || last == "purge" ||
                       r.pattern.text().starts_with("/v1/admin/");
    const Role expected = admin               ? Role::kAdmin
                          : r.method == "GET" ? Role::kRead
                                              : Role::kWrite;
    EXPECT_EQ(r.role, expected) << r.method << " " << r.pattern.text();
  }
  EXPECT_EQ(Find("POST", "/v1/records/{ns}/{key}/break").role, Role::kAdmin);
  EXPECT_EQ(Find("POST", "/v1/applocks/{ns}/acquire").role, Role::kWrite);
  EXPECT_EQ(Find("GET", "/v1/outbox/{ns}/{topic}").role, Role::kRead);
  EXPECT_EQ(Find("GET", "/v1/admin/backup").role, Role::kAdmin);
  // Only the health check and the API's description are answered without
  // a token, and only ending a session and cancelling its wait may be done
  // for another principal.
  for (const Route& r : Routes()) {
    EXPECT_EQ(r.Has(kPublic), r.pattern.text() == "/healthz" ||
                                  r.pattern.text() == "/v1/openapi.json")
        << r.pattern.text();
    EXPECT_EQ(r.Has(kAdminMayActForOthers),
              r.pattern.text() == "/v1/sessions/{id}" ||
                  r.pattern.text() == "/v1/sessions/{id}/cancel")
        << r.pattern.text();
  }
}

TEST(RoutesTest, ACommandsTraitsAreInTheTable) {
  for (const Route& r : Routes()) {
    // Read-only is HTTP's safe method, stated once per route.
    EXPECT_EQ(r.Has(kReadOnly), r.method == "GET") << r.pattern.text();
    // Only the acquires wait.
    const std::string_view path = r.pattern.text();
    EXPECT_EQ(r.Has(kMayPark),
              r.method == "POST" && (path.ends_with("/acquire") ||
                                     path.ends_with("/acquire-all")))
        << path;
    EXPECT_FALSE(r.Has(kMayPark) && r.Has(kReadOnly)) << r.pattern.text();
  }
}

TEST(RoutesTest, OnlyGetV1EventsIsAnEventStream) {
  EXPECT_TRUE(IsEventStreamTarget("GET", "/v1/events"));
  EXPECT_FALSE(IsEventStreamTarget("POST", "/v1/events"));
  EXPECT_FALSE(IsEventStreamTarget("GET", "/v1/events/"));
  EXPECT_FALSE(IsEventStreamTarget("GET", "/v1/stats"));
}

}  // namespace
}  // namespace leasehold::server
