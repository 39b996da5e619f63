// The read-only endpoints that the dashboard needs beyond API.md (see
// docs/dashboard.md): GET /v1/whoami, /v1/namespaces, /v1/stats and
// /v1/deadlocks. Internal to the server.
#ifndef LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_
#define LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_

#include <string_view>

#include "server/handlers.h"

namespace leasehold::server {

class ActivityHistory;

// Whether `first`, the path's first segment after /v1, is one of these.
bool IsDashboardEndpoint(std::string_view first);

// Answers one of them; `history` may be null (then no history is shown).
void RouteDashboard(Call& c, const ActivityHistory* history);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HANDLERS_DASHBOARD_H_
