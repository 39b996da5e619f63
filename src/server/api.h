// Api: the HTTP/JSON contract of docs/api.md as pure request -> response
// functions over an EngineService, routed by the table in routes.h. No
// sockets here: the HTTP layer hands a parsed request in and writes the
// response out, and tests can call Handle directly.
#ifndef LEASEHOLD_SERVER_API_H_
#define LEASEHOLD_SERVER_API_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cluster/cluster_view.h"
#include "server/auth.h"
#include "server/file_body.h"
#include "server/metrics.h"
#include "service/engine_service.h"

namespace leasehold::server {

struct Call;
struct Route;
class ActivityHistory;

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT", "DELETE"
  std::string target;  // path and query, as sent
  std::string body;
  std::string authorization;  // the Authorization header, if any
  // Called when a lock request is parked, with its wait id, so that the
  // connection can cancel it if the client goes away. May be empty.
  std::function<void(WaitId)> on_parked;
  // The client's verified certificate (mutual TLS), if any: it stands for
  // a token when no Authorization header is sent.
  std::shared_ptr<const PeerCertificate> peer = nullptr;
};

struct ApiResponse {
  unsigned status = 200;
  std::string body;  // JSON unless content_type says otherwise
  // A string literal: a std::string would allocate for every answer
  // ("application/json" is one byte too long to be kept inline).
  std::string_view content_type = "application/json";
  std::string location = {};  // a Location header when not empty (307)
  // When set, the body is this file (and `body` is empty), sent in chunks.
  std::shared_ptr<const FileBody> file = {};
};

struct ApiOptions {
  std::chrono::milliseconds default_session_ttl{30'000};
  std::chrono::milliseconds max_session_ttl{24 * 3'600'000};
  std::chrono::milliseconds max_checkout_ttl{7 * 24 * 3'600'000LL};
  // GET /healthz answers 503 while a store commit has been in flight longer
  // than this (a stalled disk or database): nothing has failed yet, but
  // every write waits, and a load balancer should look elsewhere.
  std::chrono::milliseconds store_stall{10'000};
  // No tokens: every caller may do everything. The Api's first tokens:
  // moved into the Api, which answers by them until SetAuthenticator.
  Authenticator auth;
  // Where GET /v1/admin/backup writes its snapshot before sending it (it
  // is removed at once, and gone when the answer ends): the data
  // directory, whose disk has room for a copy of the database. Empty: the
  // system's temporary directory.
  std::string backup_dir;
};

// Which events a GET /v1/events stream may carry.
struct EventAccess {
  std::string ns;  // empty: every namespace
  // Events that belong to no namespace (sessions, transactions): only for
  // callers that may see every namespace.
  bool unscoped = true;
};

class Api {
 public:
  using Respond = std::function<void(ApiResponse)>;

  // Rereads the server's configuration and applies what may change live
  // (POST /v1/admin/reload); the error says why nothing changed.
  using Reload = std::function<Status()>;

  // `metrics` may be null (then /metrics answers 404).
  Api(EngineService& service, ApiOptions options, Metrics* metrics = nullptr)
      : service_(service),
        options_(options),
        metrics_(metrics),
        auth_(std::make_shared<const Authenticator>(std::move(options_.auth))) {
  }

  // Who may do what from the next request on (a reload's new tokens).
  // Thread-safe: a request in flight keeps the table it was checked by.
  void SetAuthenticator(Authenticator auth) {
    auth_.store(std::make_shared<const Authenticator>(std::move(auth)));
  }
  bool AuthEnabled() const { return auth_.load()->enabled(); }

  // What POST /v1/admin/reload runs; unset, it answers that the server has
  // no config file to reread. Set before serving; must outlive the Api.
  void SetReload(Reload reload) { reload_ = std::move(reload); }

  // The recent history that GET /v1/stats and /v1/deadlocks show; may stay
  // null. Set before serving; must outlive the Api.
  void SetHistory(const ActivityHistory* history) { history_ = history; }

  // The cluster this node belongs to (may stay null: a node of its own).
  // Until it is set a cluster's node serves nothing (its service has no
  // store), so it may be set once serving; must outlive the Api.
  void SetCluster(const cluster::ClusterView* cluster) { cluster_ = cluster; }

  // On a node that does not lead, the answer to a request for `target`
  // that only the leader serves: 307 to the leader's URL with the same
  // target (a client resends the same method and body there), or 503
  // unavailable while no node leads. nullopt on the leader.
  std::optional<ApiResponse> ToLeader(std::string_view target) const;

  // Answers `request` through `respond`, exactly once, on any thread.
  void Handle(ApiRequest request, Respond respond);
  // Ends a request that Handle() parked (the wait id it gave on_parked):
  // its answer is then -2, as a cancelled wait's. For a client that hung up.
  void CancelWait(WaitId wait) { service_.CancelWait(wait); }

  // Who may watch which events: the `ns` query parameter of `target`, as
  // far as the caller's token allows. 400 for a malformed query or an `ns`
  // that is no name; 401/403 as for any other request.
  Result<EventAccess> AuthorizeEvents(
      std::string_view authorization, std::string_view target,
      const PeerCertificate* peer = nullptr) const;

 private:
  // Runs the checked call's route, or answers 404 when none serves it.
  static void Dispatch(Call& c);

  EngineService& service_;
  ApiOptions options_;
  Metrics* metrics_;
  const ActivityHistory* history_ = nullptr;
  std::atomic<const cluster::ClusterView*> cluster_{nullptr};
  // Swapped whole by SetAuthenticator; options_.auth is moved into it.
  std::atomic<std::shared_ptr<const Authenticator>> auth_;
  Reload reload_;
};

// The HTTP status of an error code (docs/api.md's conventions).
unsigned HttpStatusFor(StatusCode code);
// {"error":{"code":...,"message":...}} with its HTTP status.
ApiResponse ErrorResponse(const Status& status);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_API_H_
