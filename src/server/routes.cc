#include "server/routes.h"

#include "server/handlers.h"
#include "server/handlers_dashboard.h"
#include "server/handlers_openapi.h"

namespace leasehold::server {
namespace {

constexpr std::uint8_t kInSession = kSessionScoped;
constexpr std::uint8_t kAnySession = kSessionScoped | kAdminMayActForOthers;

// Only the routes with that parameter call these: its position is known.
const std::string& Ns(const Call& c) {
  return c.path[static_cast<std::size_t>(c.route->pattern.ns_index())];
}
SessionId Id(const Call& c) {
  return ParseSessionId(
      c.path[static_cast<std::size_t>(c.route->pattern.id_index())]);
}

// GET reads, other methods write, and break and purge are the
// administrator's forced acts. Within a method, literal segments come
// before parameters at the same place (the first match wins).
constexpr Route kRoutes[] = {
    // Operating.
    {"GET", "/healthz", Role::kRead, Health, kPublic | kEveryNode | kReadOnly},
    {"GET", "/v1/openapi.json", Role::kRead, ServeOpenApi,
     kPublic | kEveryNode | kReadOnly},
    {"GET", "/metrics", Role::kRead, ServeMetrics, kEveryNode | kReadOnly},
    {"GET", "/v1/cluster", Role::kRead, ClusterInfo, kEveryNode | kReadOnly},
    {"GET", "/v1/events", Role::kRead, EventsWithoutHub,
     kEventStream | kReadOnly},
    // A node's own config file: a standby's too. kInSession for the role
    // check and the parsed body; it names no session.
    {"POST", "/v1/admin/reload", Role::kAdmin, ReloadConfig,
     kInSession | kEveryNode},
    // The dashboard's reads.
    {"GET", "/v1/whoami", Role::kRead, WhoAmI, kEveryNode | kReadOnly},
    {"GET", "/v1/namespaces", Role::kRead, ListNamespaces, kReadOnly},
    {"GET", "/v1/stats", Role::kRead, ServerStats, kReadOnly},
    {"GET", "/v1/deadlocks", Role::kRead, RecentDeadlocks, kReadOnly},
    // kInSession for its role check; it names no session.
    {"GET", "/v1/admin/backup", Role::kAdmin, ServeBackup,
     kInSession | kReadOnly},
    // The manual clock (serve --clock manual, which has no tokens).
    // kInSession for its parsed body; it names no session.
    {"GET", "/v1/testing/clock", Role::kRead, ReadTestingClock, kReadOnly},
    {"POST", "/v1/testing/clock", Role::kWrite, AdvanceTestingClock,
     kInSession},
    // Sessions and their transactions.
    {"POST", "/v1/sessions", Role::kWrite, CreateSession, kInSession},
    {"GET", "/v1/sessions", Role::kRead, ListSessions, kInSession | kReadOnly},
    {"DELETE", "/v1/sessions/{id}", Role::kWrite,
     [](Call& c) { EndSession(c, Id(c)); }, kAnySession},
    {"POST", "/v1/sessions/{id}/keepalive", Role::kWrite,
     [](Call& c) { KeepAlive(c, Id(c)); }, kInSession},
    {"POST", "/v1/sessions/{id}/cancel", Role::kWrite,
     [](Call& c) { CancelSessionWait(c, Id(c)); }, kAnySession},
    {"POST", "/v1/sessions/{id}/transaction", Role::kWrite,
     [](Call& c) { BeginTransaction(c, Id(c)); }, kInSession},
    {"POST", "/v1/sessions/{id}/transaction/commit", Role::kWrite,
     [](Call& c) { EndTransaction(c, Id(c), true); }, kInSession},
    {"POST", "/v1/sessions/{id}/transaction/rollback", Role::kWrite,
     [](Call& c) { EndTransaction(c, Id(c), false); }, kInSession},
    // Application locks.
    {"GET", "/v1/applocks/{ns}", Role::kRead,
     [](Call& c) { ListLocks(c, Ns(c)); }, kInSession | kReadOnly},
    {"POST", "/v1/applocks/{ns}/acquire", Role::kWrite,
     [](Call& c) { AcquireLock(c, Ns(c)); }, kInSession | kMayPark},
    {"POST", "/v1/applocks/{ns}/acquire-all", Role::kWrite,
     [](Call& c) { AcquireAllLocks(c, Ns(c)); }, kInSession | kMayPark},
    {"POST", "/v1/applocks/{ns}/release", Role::kWrite,
     [](Call& c) { ReleaseLock(c, Ns(c)); }, kInSession},
    {"GET", "/v1/applocks/{ns}/mode", Role::kRead,
     [](Call& c) { LockModeOf(c, Ns(c)); }, kInSession | kReadOnly},
    {"GET", "/v1/applocks/{ns}/test", Role::kRead,
     [](Call& c) { TestLock(c, Ns(c)); }, kInSession | kReadOnly},
    // After mode and test: a lock named so is read in the namespace's list.
    {"GET", "/v1/applocks/{ns}/{resource}", Role::kRead,
     [](Call& c) { GetLock(c, Ns(c), c.Param("resource")); },
     kInSession | kReadOnly},
    {"POST", "/v1/applocks/{ns}/break", Role::kAdmin,
     [](Call& c) { BreakLock(c, Ns(c)); }, kInSession},
    // Semaphores.
    {"GET", "/v1/semaphores/{ns}", Role::kRead,
     [](Call& c) { ListSemaphores(c, Ns(c)); }, kInSession | kReadOnly},
    {"GET", "/v1/semaphores/{ns}/{name}", Role::kRead,
     [](Call& c) { GetSemaphore(c, Ns(c), c.Param("name")); },
     kInSession | kReadOnly},
    {"POST", "/v1/semaphores/{ns}/{name}/acquire", Role::kWrite,
     [](Call& c) { AcquireSemaphore(c, Ns(c), c.Param("name")); },
     kInSession | kMayPark},
    {"POST", "/v1/semaphores/{ns}/{name}/release", Role::kWrite,
     [](Call& c) { ReleaseSemaphore(c, Ns(c), c.Param("name")); }, kInSession},
    {"POST", "/v1/semaphores/{ns}/{name}/break", Role::kAdmin,
     [](Call& c) { BreakSemaphore(c, Ns(c), c.Param("name")); }, kInSession},
    // Records and their checkouts.
    {"GET", "/v1/records/{ns}", Role::kRead,
     [](Call& c) { ListRecords(c, Ns(c)); }, kInSession | kReadOnly},
    {"POST", "/v1/records/{ns}/purge", Role::kAdmin,
     [](Call& c) { Purge(c, Ns(c)); }, kInSession},
    {"PUT", "/v1/records/{ns}/{key}", Role::kWrite,
     [](Call& c) { InsertRecord(c, Ns(c), c.Param("key")); }, kInSession},
    {"GET", "/v1/records/{ns}/{key}", Role::kRead,
     [](Call& c) { GetRecord(c, Ns(c), c.Param("key")); },
     kInSession | kReadOnly},
    {"DELETE", "/v1/records/{ns}/{key}", Role::kWrite,
     [](Call& c) { DeleteRecord(c, Ns(c), c.Param("key")); }, kInSession},
    {"POST", "/v1/records/{ns}/{key}/checkout", Role::kWrite,
     [](Call& c) { Checkout(c, Ns(c), c.Param("key")); }, kInSession},
    {"POST", "/v1/records/{ns}/{key}/save", Role::kWrite,
     [](Call& c) { SaveRecord(c, Ns(c), c.Param("key")); }, kInSession},
    {"POST", "/v1/records/{ns}/{key}/checkin", Role::kWrite,
     [](Call& c) { Checkin(c, Ns(c), c.Param("key")); }, kInSession},
    {"POST", "/v1/records/{ns}/{key}/break", Role::kAdmin,
     [](Call& c) { BreakCheckout(c, Ns(c), c.Param("key")); }, kInSession},
    // Operations and the outbox.
    {"POST", "/v1/operations/{ns}/{op_id}/begin", Role::kWrite,
     [](Call& c) { BeginOperation(c, Ns(c), c.Param("op_id")); }, kInSession},
    {"POST", "/v1/operations/{ns}/{op_id}/complete", Role::kWrite,
     [](Call& c) { CompleteOperation(c, Ns(c), c.Param("op_id")); },
     kInSession},
    {"POST", "/v1/outbox/{ns}/{topic}", Role::kWrite,
     [](Call& c) { Enqueue(c, Ns(c), c.Param("topic")); }, kInSession},
    {"GET", "/v1/outbox/{ns}/{topic}", Role::kRead,
     [](Call& c) { GetOutbox(c, Ns(c), c.Param("topic")); },
     kInSession | kReadOnly},
    {"POST", "/v1/outbox/{ns}/{topic}/claim", Role::kWrite,
     [](Call& c) { ClaimMessages(c, Ns(c), c.Param("topic")); }, kInSession},
    {"POST", "/v1/outbox/{ns}/{topic}/ack", Role::kWrite,
     [](Call& c) { AckMessage(c, Ns(c), c.Param("topic")); }, kInSession},
};

// The event-stream routes, found once: the HTTP layer asks of every
// request whether it is one.
constexpr std::size_t kEventStreams = [] {
  std::size_t n = 0;
  for (const Route& r : kRoutes) n += r.Has(kEventStream) ? 1 : 0;
  return n;
}();
constexpr std::array<std::size_t, kEventStreams> kEventStreamIndexes = [] {
  std::array<std::size_t, kEventStreams> out{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < std::size(kRoutes); ++i) {
    if (kRoutes[i].Has(kEventStream)) out[n++] = i;
  }
  return out;
}();

// How many leading segments of `segments` the route's path matches.
std::size_t SharedPrefix(const RoutePattern& p,
                         std::span<const std::string> segments) {
  std::size_t i = 0;
  while (i < p.size() && i < segments.size() &&
         (p.IsParam(i) || p.segment(i) == segments[i])) {
    ++i;
  }
  return i;
}

}  // namespace

std::span<const Route> Routes() { return kRoutes; }

RouteMatch MatchRoute(std::string_view method,
                      std::span<const std::string> segments) {
  RouteMatch m;
  // Comparing the resource's first byte first skips most routes without a
  // string comparison.
  const char resource =
      segments.size() > 1 && !segments[1].empty() ? segments[1].front() : '\0';
  for (const Route& r : kRoutes) {
    if (r.pattern.size() != segments.size()) continue;
    if (r.pattern.size() > 1 && !r.pattern.IsParam(1) &&
        r.pattern.segment(1).front() != resource) {
      continue;
    }
    if (r.method == method &&
        SharedPrefix(r.pattern, segments) == segments.size()) {
      m.route = &r;
      m.ns_index = r.pattern.ns_index();
      m.id_index = r.pattern.id_index();
      return m;
    }
  }
  // None: the nearest route, if the path reaches at least as far as its
  // resource and {ns}, decides how the request is checked before its 404
  // (so that a caller learns nothing of a namespace it may not use).
  std::size_t best = 0;
  for (const Route& r : kRoutes) {
    const std::size_t shared = SharedPrefix(r.pattern, segments);
    const int ns = r.pattern.ns_index();
    if (shared < 2 || shared <= best) continue;
    if (ns >= 0 && static_cast<std::size_t>(ns) >= shared) continue;
    best = shared;
    m.nearest = &r;
  }
  if (m.nearest != nullptr) {
    m.ns_index = m.nearest->pattern.ns_index();
    const int id = m.nearest->pattern.id_index();
    m.id_index = id >= 0 && static_cast<std::size_t>(id) < best ? id : -1;
  }
  return m;
}

bool IsEventStreamTarget(std::string_view method, std::string_view path) {
  for (std::size_t i : kEventStreamIndexes) {
    const Route& r = kRoutes[i];
    if (r.method == method && r.pattern.text() == path) return true;
  }
  return false;
}

Status NoRoute(std::string_view method, std::string_view path) {
  return Status(StatusCode::kNotFound,
                "no endpoint " + std::string(method) + " " + std::string(path) +
                    "; see docs/api.md for the endpoints");
}

}  // namespace leasehold::server
