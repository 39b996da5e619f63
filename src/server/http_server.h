// HttpServer: HTTP/1.1 (Boost.Beast's parser) in front of Api. Connections
// live on their own strands; limits (body, header, idle time, connection count)
// are enforced here, so a slow or hostile client cannot hold the server.
// While a lock request is parked, the connection watches its socket: a
// client that hangs up cancels its wait (-2). GET /v1/events turns the
// connection into a Server-Sent Events stream fed by the EventHub. With TLS
// material (HttpOptions::tls) every connection is TLS: the handshake comes
// first, under the same request timeout and connection cap; a plaintext
// request is answered 400 in cleartext and closed.
#ifndef LEASEHOLD_SERVER_HTTP_SERVER_H_
#define LEASEHOLD_SERVER_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "server/api.h"
#include "server/event_hub.h"
#include "server/tls_context.h"

namespace leasehold::server {

struct HttpOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 7070;         // 0: any free port (see Start)
  std::size_t body_limit = 1 << 20;  // bytes; larger: 413 body_too_large
  // Bytes of the request line and headers together; larger: 400.
  std::size_t header_limit = 16 << 10;
  // A request must arrive whole within this after the connection opens or
  // after the previous answer; otherwise the connection is closed.
  std::chrono::milliseconds request_timeout{30'000};
  std::size_t max_connections = 1024;  // more are closed at once
  // Null: plaintext HTTP. Else HTTPS only, with this material until
  // SetTls replaces it.
  std::shared_ptr<const ServerTls> tls;
};

template <class Stream>
class BasicConnection;

class HttpServer {
 public:
  // `events` (may be null) serves GET /v1/events as Server-Sent Events.
  HttpServer(boost::asio::io_context& io, Api& api, HttpOptions options,
             EventHub* events = nullptr);
  ~HttpServer();

  // Binds and starts accepting. Returns the port bound (useful with port 0).
  Result<std::uint16_t> Start();
  // Stops accepting and closes connections that are not mid-request.
  // Thread-safe.
  void Stop();

  std::size_t open_connections() const;

  // New handshakes use `tls` from now on; connections already open keep
  // theirs. Only on a server started with TLS (and `tls` not null).
  // Thread-safe.
  void SetTls(std::shared_ptr<const ServerTls> tls);
  // The TLS material new handshakes use; null on a plaintext server.
  std::shared_ptr<const ServerTls> tls() const;

 private:
  template <class Stream>
  friend class BasicConnection;
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_HTTP_SERVER_H_
