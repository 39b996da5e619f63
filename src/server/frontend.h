// Frontend: everything that serves one EngineService over HTTP, wired as
// every server is: the service's events go to the metrics, the activity
// history and the event hub (GET /v1/events), and the Api answers through
// the HTTP server. `leasehold serve` (src/cli/serve.cc) and the in-process
// test server (src/testing) both build one.
#ifndef LEASEHOLD_SERVER_FRONTEND_H_
#define LEASEHOLD_SERVER_FRONTEND_H_

#include <boost/asio/io_context.hpp>

#include "server/activity_history.h"
#include "server/api.h"
#include "server/event_hub.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "service/engine_service.h"

namespace leasehold::server {

class Frontend {
 public:
  // Sets `service`'s event listener; call before serving. `io` and
  // `service` must outlive the Frontend. Nothing listens until
  // http().Start().
  Frontend(boost::asio::io_context& io, EngineService& service,
           ApiOptions api_options, HttpOptions http_options);

  Api& api() { return api_; }
  EventHub& hub() { return hub_; }
  HttpServer& http() { return http_; }
  // A renewed certificate (HttpServer::SetTls), and its expiry in the
  // metrics. Only on a server started with TLS.
  void SetTls(std::shared_ptr<const ServerTls> tls);

 private:
  Metrics metrics_;
  EventHub hub_;
  ActivityHistory history_;
  Api api_;
  HttpServer http_;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_FRONTEND_H_
