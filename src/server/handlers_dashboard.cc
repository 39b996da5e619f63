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
  return json::object{{"ns", n.ns},
                      {"keys", n.keys},
                      {"active_checkouts", n.active_checkouts},
                      {"lock_resources", n.lock_resources},
                      {"semaphores", n.semaphores},
                      {"topics", std::move(topics)}};
}

json::object RateJson(const ActivityHistory::Rates& r) {
  json::array applocks, checkouts;
  for (std::uint32_t n : r.applocks) applocks.push_back(n);
  for (std::uint32_t n : r.checkouts) checkouts.push_back(n);
  const Time first{std::chrono::seconds(r.first_second)};
  return json::object{{"interval_ms", 1000},
                      {"first_at", TimeJson(first)},
                      {"applocks", std::move(applocks)},
                      {"checkouts", std::move(checkouts)}};
}

json::object DeadlockJson(const OwnedEvent& e) {
  json::object report = server::DeadlockJson(*e.deadlock);
  json::object o{{"at", TimeJson(e.at)},
                 {"ns", e.ns},
                 {"resource", e.resource},
                 {"mode", LockModeName(e.mode)},
                 {"victim", std::move(report["victim"])},
                 {"victim_name", e.session_name},
                 {"cycle", std::move(report["cycle"])}};
  // The victim asked for permits of a semaphore.
  if (e.type == EventType::kSemaphoreDeadlock) o["permits"] = e.count;
  return o;
}

}  // namespace

void WhoAmI(Call& c) {
  json::object o{{"authentication", c.caller != nullptr}};
  if (c.caller == nullptr) {
    o["principal"] = nullptr;
    o["role"] = RoleName(Role::kAdmin);
    o["namespaces"] = json::array{"*"};
  } else {
    o["principal"] = c.caller->principal;
    o["role"] = RoleName(c.caller->role);
    json::array ns;
    for (const std::string& n : c.caller->namespaces)
      ns.push_back(json::value(n));
    o["namespaces"] = std::move(ns);
  }
  o["all_namespaces"] = c.caller == nullptr || c.caller->AllNamespaces();
  c.service.ReadStats([o = std::move(o), respond = c.respond](
                          EngineStats, std::size_t, Time now) mutable {
    o["now"] = TimeJson(now);
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
        return JsonResponse(
            200, json::object{{"namespaces", out}, {"now", TimeJson(l.now)}});
      });
}

void ServerStats(Call& c) {
  c.service.ReadStats([history = c.history, respond = c.respond](
                          EngineStats st, std::size_t, Time now) {
    json::object o{{"now", TimeJson(now)},
                   {"sessions", st.sessions},
                   {"open_transactions", st.open_transactions},
                   {"lock_resources", st.resources},
                   {"granted_locks", st.granted_locks},
                   {"waiting", st.waiting},
                   {"keys", st.keys},
                   {"active_checkouts", st.active_checkouts},
                   {"deadlocks_since_start", st.deadlocks},
                   {"timeouts_since_start", st.timeouts}};
    if (history != nullptr) {
      o["deadlocks_last_hour"] = history->DeadlocksInLastHour(now);
      o["timeouts_last_hour"] = history->TimeoutsInLastHour(now);
      o["rate"] = RateJson(history->RatesUntil(now));
    }
    respond(JsonResponse(200, o));
  });
}

void RecentDeadlocks(Call& c) {
  c.service.ReadStats(
      [c, history = c.history](EngineStats, std::size_t, Time now) {
        json::array out;
        if (history != nullptr) {
          for (const OwnedEvent& e : history->RecentDeadlocks(now)) {
            if (e.deadlock && MaySee(c, e.ns)) out.push_back(DeadlockJson(e));
          }
        }
        c.Reply(200, json::object{{"deadlocks", out}, {"now", TimeJson(now)}});
      });
}

}  // namespace leasehold::server
