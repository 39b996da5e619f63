// GET /healthz and GET /metrics, for whoever operates the server;
// POST /v1/admin/reload; and GET /v1/events when there is no event hub to
// stream from.
#include "common/version.h"
#include "server/handlers.h"

namespace leasehold::server {

// 200 only where writes are served: a load balancer sends traffic to the
// leader, never to a standby or a node whose store is down.
void Health(Call& c) {
  Status failure = c.service.Writable();
  // Between loading its store and taking up the lead (and once it steps
  // down) a node answers the API 503 or 307 (Api::ToLeader): so here.
  if (failure.ok() && c.cluster != nullptr && !c.cluster->Leads()) {
    failure = Status(StatusCode::kUnavailable, "this node does not lead now");
  }
  if (failure.ok()) {
    const std::chrono::duration<double> in_flight(
        c.service.CommitStats().commit_in_flight_seconds);
    if (in_flight > c.options.store_stall) {
      failure =
          Status(StatusCode::kUnavailable,
                 "the store has had a commit in flight for " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             in_flight)
                             .count()) +
                     " ms (store_stall_ms is " +
                     std::to_string(c.options.store_stall.count()) +
                     "): a stalled disk or database; writes wait for it");
    }
  }
  failure.ok() ? c.Reply(200, boost::json::object{{wire::kStatus, "ok"},
                                                  {wire::kVersion, Version()}})
               : c.Fail(failure);
}

// Counts only, no names: any authenticated caller may read them.
void ServeMetrics(Call& c) {
  if (c.metrics == nullptr) return c.Fail(NoRoute(c.method, c.raw_path));
  c.service.ReadStats(
      [&service = c.service, metrics = c.metrics, cluster = c.cluster,
       respond = c.respond](EngineStats engine, std::size_t parked, Time now) {
        Metrics::StoreReport store{service.CommitStats(), service.Recoveries(),
                                   service.StoreFailure().ok(), std::nullopt};
        if (cluster != nullptr) store.cluster = cluster->Snapshot();
        respond(ApiResponse{200, metrics->Render(engine, parked, store, now),
                            "text/plain; version=0.0.4"});
      });
}

// The HTTP layer serves the stream itself (event_stream.h) when it has an
// event hub; without one the endpoint does not exist.
void EventsWithoutHub(Call& c) { c.Fail(NoRoute(c.method, c.raw_path)); }

// New tokens change every namespace's access: an administrator of only
// some namespaces may not. Runs on an I/O thread, as a SIGHUP's reload
// does on its own (the reload itself is serialized by `serve`).
void ReloadConfig(Call& c) {
  if (c.caller != nullptr && !c.caller->AllNamespaces()) {
    return c.Fail(Status(StatusCode::kForbidden,
                         "principal \"" + c.caller->principal +
                             "\" administers only some namespaces; a reload "
                             "needs an admin of \"*\""));
  }
  if (c.reload == nullptr) {
    return c.Fail(Status(StatusCode::kBadRequest,
                         "this server was started without --config: there "
                         "is no config file to reload"));
  }
  const Status st = (*c.reload)();
  if (!st.ok()) return c.Fail(st);
  c.Reply(200, boost::json::object{{wire::kReloaded, true}});
}

}  // namespace leasehold::server

namespace leasehold::server {

// A node of its own leads itself; a cluster's node says what it knows.
void ClusterInfo(Call& c) {
  namespace json = boost::json;
  if (c.cluster == nullptr) {
    return c.Reply(200, json::object{{wire::kRole, "leader"},
                                     {wire::kNode, nullptr},
                                     {wire::kLeader, nullptr},
                                     {wire::kEpoch, 0},
                                     {wire::kNodes, json::array()},
                                     {wire::kVersion, Version()}});
  }
  const cluster::ClusterStatus s = c.cluster->Snapshot();
  json::array nodes;
  for (const cluster::ClusterMember& m : s.nodes) {
    nodes.push_back(json::object{{wire::kNode, m.node},
                                 {wire::kUrl, m.advertise},
                                 {wire::kRole, m.role},
                                 {wire::kSeenMsAgo, m.seen_ago.count()}});
  }
  json::object out{{wire::kRole, s.role},
                   {wire::kNode, s.node},
                   {wire::kUrl, s.advertise},
                   {wire::kEpoch, s.epoch},
                   {wire::kNodes, std::move(nodes)},
                   {wire::kTookOver, s.took_over},
                   {wire::kSteppedDown, s.stepped_down},
                   {wire::kVersion, Version()}};
  out[wire::kLeader] =
      s.leader.empty() ? json::value(nullptr) : json::value(s.leader);
  out[wire::kLeaderNode] =
      s.leader_node.empty() ? json::value(nullptr) : json::value(s.leader_node);
  c.Reply(200, out);
}

}  // namespace leasehold::server
