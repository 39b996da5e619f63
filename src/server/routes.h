// The route table: every endpoint the server answers, as data. Routing,
// authorization, the 404 answers and what the HTTP layer needs to know of
// an endpoint (is it the event stream?) are all read from it, so that an
// endpoint is added in one place. Internal to the server.
#ifndef LEASEHOLD_SERVER_ROUTES_H_
#define LEASEHOLD_SERVER_ROUTES_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "server/auth.h"

namespace leasehold::server {

struct Call;

// A path template in OpenAPI's form ("/v1/applocks/{ns}/acquire"), split
// into its segments once, at compile time.
class RoutePattern {
 public:
  static constexpr std::size_t kMaxSegments = 6;

  consteval RoutePattern(const char* text) : text_(text) {  // NOLINT
    std::string_view rest = text_;
    while (!rest.empty()) {
      rest.remove_prefix(1);  // the '/'
      const std::size_t slash = rest.find('/');
      segments_[size_++] = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? "" : rest.substr(slash);
    }
    ns_index_ = ParamIndex("ns");
    id_index_ = ParamIndex("id");
  }

  constexpr std::string_view text() const { return text_; }
  constexpr std::size_t size() const { return size_; }
  constexpr std::string_view segment(std::size_t i) const {
    return segments_[i];
  }
  // Whether segment `i` is a parameter ("{ns}") rather than a literal.
  constexpr bool IsParam(std::size_t i) const {
    return segments_[i].size() > 2 && segments_[i].front() == '{';
  }
  // The position of parameter {`name`}, or -1 when there is none.
  constexpr int ParamIndex(std::string_view name) const {
    for (std::size_t i = 0; i < size_; ++i) {
      const std::string_view s = segments_[i];
      if (s.size() == name.size() + 2 && s.front() == '{' &&
          s.substr(1, name.size()) == name) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  // ParamIndex("ns") and ParamIndex("id"), found once: every request asks.
  constexpr int ns_index() const { return ns_index_; }
  constexpr int id_index() const { return id_index_; }

 private:
  std::string_view text_;
  std::array<std::string_view, kMaxSegments> segments_{};
  std::size_t size_ = 0;
  int ns_index_ = -1;
  int id_index_ = -1;
};

// What a route asks of a request besides its role (bit flags).
enum RouteTrait : std::uint8_t {
  // Answered before authentication (GET /healthz, GET /v1/openapi.json).
  kPublic = 1 << 0,
  // The JSON body is parsed before the handler runs, and a session the
  // request names (the path's {id}, the body's or the query's "session")
  // must have been opened by the caller.
  kSessionScoped = 1 << 1,
  // With kSessionScoped: an administrator of every namespace may also act
  // on another principal's session (end it, cancel its wait).
  kAdminMayActForOthers = 1 << 2,
  // Served by the HTTP layer as an EventStream when it has an EventHub;
  // its handler answers only when it has none.
  kEventStream = 1 << 3,
  // Answered by every node of a cluster, a standby too (health, metrics,
  // the cluster's state); the rest is the leader's (Api::ToLeader).
  kEveryNode = 1 << 4,
  // Changes nothing: its engine commands (Call::Run) only read, and during
  // a store outage are answered from the last acknowledged state. Every
  // GET, and only GET (HTTP's safe method), has it.
  kReadOnly = 1 << 5,
  // Its command may park until the engine decides it (Call::RunParkable):
  // an acquire that waits for locks or permits.
  kMayPark = 1 << 6,
};

// One endpoint.
struct Route {
  std::string_view method;  // "GET", "POST", "PUT", "DELETE"
  RoutePattern pattern;
  // What the caller's token must allow, in the path's {ns} when it has one
  // (without tokens, every caller may do everything).
  Role role;
  void (*handler)(Call& c);
  std::uint8_t traits = 0;  // RouteTrait flags

  constexpr bool Has(RouteTrait t) const { return (traits & t) != 0; }
};

// Every endpoint, in a fixed order. Read-only.
std::span<const Route> Routes();

// A request's place in the table.
struct RouteMatch {
  // The route for this method and path; null when none serves it.
  const Route* route = nullptr;
  // When `route` is null: the route whose path shares the longest prefix
  // with this one (at least the resource: "/v1/records/{ns}"), which decides
  // how the request is checked before its 404; null when none does.
  const Route* nearest = nullptr;
  // The position of the {ns} segment that decides authorization, if the
  // matched (or nearest) route has one within the path; else -1.
  int ns_index = -1;
  // The position of the session {id} segment, likewise.
  int id_index = -1;
};

// Matches decoded path segments ("/v1/applocks/a%2Fb" is {"v1",
// "applocks", "a/b"}). Allocates nothing.
RouteMatch MatchRoute(std::string_view method,
                      std::span<const std::string> segments);

// Whether a request for `path` (as sent, before any query) is an event
// stream. The HTTP layer asks this before parsing any further.
bool IsEventStreamTarget(std::string_view method, std::string_view path);

// 404 not_found: "no endpoint METHOD PATH; see docs/api.md for the
// endpoints".
Status NoRoute(std::string_view method, std::string_view path);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_ROUTES_H_
