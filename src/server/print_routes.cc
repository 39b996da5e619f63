// print_routes: what the server serves, as JSON — every route of the route
// table and every dashboard file, as [method, path template] pairs. The
// contract test (tests/contract) compares this list with docs/openapi.yaml,
// so an endpoint added to the table but not to the document fails it.
#include <boost/json.hpp>
#include <iostream>

#include "server/dashboard_assets.h"
#include "server/routes.h"

int main() {
  namespace json = boost::json;
  json::array out;
  for (const leasehold::server::Route& r : leasehold::server::Routes()) {
    out.push_back(
        json::array{json::string(r.method), json::string(r.pattern.text())});
  }
  for (const auto& asset : leasehold::server::DashboardAssets()) {
    out.push_back(json::array{"GET", json::string(asset.path)});
  }
  std::cout << json::serialize(out) << "\n";
  return 0;
}
