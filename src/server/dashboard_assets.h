// The dashboard's files (web/), compiled into the binary so that the server
// needs no separate web server and no files beside it. The table itself is
// generated at build time by cmake/embed_assets.cmake.
#ifndef LEASEHOLD_SERVER_DASHBOARD_ASSETS_H_
#define LEASEHOLD_SERVER_DASHBOARD_ASSETS_H_

#include <span>
#include <string_view>

namespace leasehold::server {

struct DashboardAsset {
  std::string_view path;          // "/" or "/assets/app.js"
  std::string_view content_type;  // with charset for text
  std::string_view body;
  std::string_view etag;  // quoted, from a hash of the body
};

// Every asset, in a fixed order.
std::span<const DashboardAsset> DashboardAssets();

// The asset served at `path` (no query string), or null.
const DashboardAsset* FindDashboardAsset(std::string_view path);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_DASHBOARD_ASSETS_H_
