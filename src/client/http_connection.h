// HttpConnection: one keep-alive HTTP/1.1 connection to the server, driven
// synchronously with a deadline per call. Not thread-safe: the client's pool
// hands each connection to one caller at a time.
#ifndef LEASEHOLD_SRC_CLIENT_HTTP_CONNECTION_H_
#define LEASEHOLD_SRC_CLIENT_HTTP_CONNECTION_H_

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "client/url.h"
#include "leasehold/client.h"

namespace leasehold::client::detail {

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// The deadline `wait` from now; nullopt (no deadline) when `wait` < 0.
Deadline DeadlineAfter(Milliseconds wait);

struct HttpRequest {
  std::string method;
  std::string target;
  std::string body;  // sent with Content-Type: application/json if not empty
};

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
  bool keep_alive = false;
};

class HttpConnection {
 public:
  HttpConnection(Endpoint endpoint, std::string token);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Connects if needed, sends `request` and reads the whole answer, all
  // before `deadline`. Errors: "unreachable" or "timeout"; the connection is
  // closed after any error.
  Result<HttpAnswer> RoundTrip(const HttpRequest& request, Deadline deadline);

  // Sends `request` and reads only the answer's header, leaving the body to
  // ReadBody (for streams). Returns the status.
  Result<unsigned> StartStream(const HttpRequest& request, Deadline deadline);
  // Up to `size` bytes of a started stream's body; 0 at its end.
  Result<std::size_t> ReadBody(char* data, std::size_t size, Deadline deadline);

  // True once a round trip finished on this connection (it is a reused
  // keep-alive connection from then on).
  bool used() const { return used_; }
  // Whether the last failure happened while writing the request: then the
  // server cannot have received all of it, so resending is always safe.
  bool failed_while_writing() const { return failed_while_writing_; }
  // Whether the last failure happened after answer bytes had arrived.
  bool answer_started() const { return answer_started_; }
  // An idle connection the server has closed (or written to) meanwhile.
  bool PeerClosed();

 private:
  Result<void> Connect(Deadline deadline);
  Result<void> Write(const HttpRequest& request, Deadline deadline);
  void SetDeadline(Deadline deadline);
  Error Fail(const boost::beast::error_code& ec, const char* during);
  template <typename Start>
  boost::beast::error_code Run(Start start);

  Endpoint endpoint_;
  std::string token_;
  boost::asio::io_context io_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<
      boost::beast::http::response_parser<boost::beast::http::buffer_body>>
      stream_parser_;
  bool connected_ = false;
  bool used_ = false;
  bool failed_while_writing_ = false;
  bool answer_started_ = false;
};

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_HTTP_CONNECTION_H_
