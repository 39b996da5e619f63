// GET /v1/whoami, /v1/namespaces, /v1/stats, /v1/deadlocks: what a screen
// needs to draw the whole server at once. Each answer carries `now`, the
// server's time, so that a browser can count leases down against it.
#include "server/handlers_dashboard.h"

#include "server/activity_history.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

// Whether the caller may look at namespace `ns` (always, without tokens).
bool MaySee(const Call& c, std::string_view ns) {
  return c.caller == nullptr || c.caller->Allows(ns);
}

json::object NamespaceJson(const NamespaceInfo& n) {
  json::array topics;
  for (const std::string& t : n.topics) topics.push_back(json::value(t));
  return json::object{{wire::kNs, n.ns},
                      {wire::kKeys, n.keys},
                      {wire::kActiveCheckouts, n.active_checkouts},
                      {wire::kLockResources, n.lock_resources},
                      {wire::kSemaphores, n.semaphores},
                      {wire::kTopics, std::move(topics)}};
}

json::object RateJson(const ActivityHistory::Rates& r) {
  json::array applocks, checkouts;
  for (std::uint32_t n : r.applocks) applocks.push_back(n);
  for (std::uint32_t n : r.checkouts) checkouts.push_back(n);
  const Time first{std::chrono::seconds(r.first_second)};
  return json::object{{wire::kIntervalMs, 1000},
                      {wire::kFirstAt, TimeJson(first)},
                      {wire::kApplocks, std::move(applocks)},
                      {wire::kCheckouts, std::move(checkouts)}};
}

json::object DeadlockJson(const OwnedEvent& e) {
  json::object report = server::DeadlockJson(*e.deadlock);
  json::object o{{wire::kAt, TimeJson(e.at)},
                 {wire::kNs, e.ns},
                 {wire::kResource, e.resource},
                 {wire::kMode, LockModeName(e.mode)},
                 {wire::kVictim, std::move(report[wire::kVictim])},
                 {wire::kVictimName, e.session_name},
                 {wire::kCycle, std::move(report[wire::kCycle])}};
  // The victim asked for permits of a semaphore.
  if (e.type == EventType::kSemaphoreDeadlock) o[wire::kPermits] = e.count;
  return o;
}

}  // namespace

void WhoAmI(Call& c) {
  json::object o{{wire::kAuthentication, c.caller != nullptr}};
  if (c.caller == nullptr) {
    o[wire::kPrincipal] = nullptr;
    o[wire::kRole] = RoleName(Role::kAdmin);
    o[wire::kNamespaces] = json::array{"*"};
  } else {
    o[wire::kPrincipal] = c.caller->principal;
    o[wire::kRole] = RoleName(c.caller->role);
    json::array ns;
    for (const std::string& n : c.caller->namespaces)
      ns.push_back(json::value(n));
    o[wire::kNamespaces] = std::move(ns);
  }
  o[wire::kAllNamespaces] = c.caller == nullptr || c.caller->AllNamespaces();
  c.service.ReadStats([o = std::move(o), respond = c.respond](
                          EngineStats, std::size_t, Time now) mutable {
    o[wire::kNow] = TimeJson(now);
    respond(JsonResponse(200, o));
  });
}

void ListNamespaces(Call& c) {
  struct Listing {
    std::vector<NamespaceInfo> namespaces;
    Time now;
  };
  c.Run<Listing>(
      [](Engine& e, Time now) {
        return Listing{e.ListNamespaces(now), now};
      },
      [c](Listing& l) {
        json::array out;
        for (const NamespaceInfo& n : l.namespaces) {
          if (MaySee(c, n.ns)) out.push_back(NamespaceJson(n));
        }
        return JsonResponse(200, json::object{{wire::kNamespaces, out},
                                              {wire::kNow, TimeJson(l.now)}});
      });
}

void ServerStats(Call& c) {
  c.service.ReadStats([history = c.history, respond = c.respond](
                          EngineStats st, std::size_t, Time now) {
    json::object o{{wire::kNow, TimeJson(now)},
                   {wire::kSessions, st.sessions},
                   {wire::kOpenTransactions, st.open_transactions},
                   {wire::kLockResources, st.resources},
                   {wire::kGrantedLocks, st.granted_locks},
                   {wire::kWaiting, st.waiting},
                   {wire::kKeys, st.keys},
                   {wire::kActiveCheckouts, st.active_checkouts},
                   {wire::kDeadlocksSinceStart, st.deadlocks},
                   {wire::kTimeoutsSinceStart, st.timeouts}};
    if (history != nullptr) {
      o[wire::kDeadlocksLastHour] = history->DeadlocksInLastHour(now);
      o[wire::kTimeoutsLastHour] = history->TimeoutsInLastHour(now);
      o[wire::kRate] = RateJson(history->RatesUntil(now));
    }
    respond(JsonResponse(200, o));
  });
}

void RecentDeadlocks(Call& c) {
  c.service.ReadStats([c, history = c.history](EngineStats, std::size_t,
                                               Time now) {
    json::array out;
    if (history != nullptr) {
      for (const OwnedEvent& e : history->RecentDeadlocks(now)) {
        if (e.deadlock && MaySee(c, e.ns)) out.push_back(DeadlockJson(e));
      }
    }
    c.Reply(200,
            json::object{{wire::kDeadlocks, out}, {wire::kNow, TimeJson(now)}});
  });
}

}  // namespace leasehold::server
