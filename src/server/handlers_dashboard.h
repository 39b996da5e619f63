// The read-only endpoints that the dashboard needs beyond docs/api.md (see
// docs/dashboard.md): GET /v1/whoami, /v1/namespaces, /v1/stats and
// /v1/deadlocks. The route table (routes.cc) names them. Internal to the
// server.
#ifndef LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_
#define LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_

#include "server/handlers.h"

namespace leasehold::server {

void WhoAmI(Call& c);
void ListNamespaces(Call& c);
// The counters and, with c.history, the recent rates.
void ServerStats(Call& c);
// With c.history, the deadlocks of the last hour the caller may see.
void RecentDeadlocks(Call& c);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_
