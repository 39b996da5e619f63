// Api: the HTTP/JSON contract of API.md as pure request -> response
// functions over an EngineService. No sockets here: the HTTP layer hands a
// parsed request in and writes the response out, and tests can call Handle
// directly.
#ifndef LEASEHOLD_SERVER_API_H_
#define LEASEHOLD_SERVER_API_H_

#include <functional>
#include <string>

#include "server/engine_service.h"
#include "server/metrics.h"

namespace leasehold::server {

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT", "DELETE"
  std::string target;  // path and query, as sent
  std::string body;
  // Called when a lock request is parked, with its wait id, so that the
  // connection can cancel it if the client goes away. May be empty.
  std::function<void(WaitId)> on_parked;
};

struct ApiResponse {
  unsigned status = 200;
  std::string body;  // JSON unless content_type says otherwise
  std::string content_type = "application/json";
};

struct ApiOptions {
  std::chrono::milliseconds default_session_ttl{30'000};
  std::chrono::milliseconds max_session_ttl{24 * 3'600'000};
  std::chrono::milliseconds max_checkout_ttl{7 * 24 * 3'600'000LL};
};

class Api {
 public:
  using Respond = std::function<void(ApiResponse)>;

  // `metrics` may be null (then /metrics answers 404).
  Api(EngineService& service, ApiOptions options, Metrics* metrics = nullptr)
      : service_(service), options_(options), metrics_(metrics) {}

  // Answers `request` through `respond`, exactly once, on any thread.
  void Handle(ApiRequest request, Respond respond);

  // The percent-decoded value of query parameter `name` in `target`, or "".
  static std::string QueryParam(std::string_view target, std::string_view name);

 private:
  void ServeMetrics(Respond respond);

  EngineService& service_;
  ApiOptions options_;
  Metrics* metrics_;
};

// The HTTP status of an error code (API.md's conventions).
unsigned HttpStatusFor(StatusCode code);
// {"error":{"code":...,"message":...}} with its HTTP status.
ApiResponse ErrorResponse(const Status& status);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_API_H_
