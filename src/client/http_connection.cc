#include "client/http_connection.h"

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>
#include <utility>

namespace leasehold::client::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kBodyLimit = 64 << 20;

}  // namespace

Deadline DeadlineAfter(Milliseconds wait) {
  if (wait.count() < 0) return std::nullopt;
  return std::chrono::steady_clock::now() + wait;
}

HttpConnection::HttpConnection(Endpoint endpoint, std::string token)
    : endpoint_(std::move(endpoint)), token_(std::move(token)), stream_(io_) {}

// Starts one asynchronous operation and runs the private io_context until it
// completes; the stream's own timer ends it at the deadline.
template <typename Start>
beast::error_code HttpConnection::Run(Start start) {
  beast::error_code result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  io_.restart();
  io_.run();
  return result;
}

void HttpConnection::SetDeadline(Deadline deadline) {
  if (deadline) {
    stream_.expires_at(*deadline);
  } else {
    stream_.expires_never();
  }
}

Error HttpConnection::Fail(const beast::error_code& ec, const char* during) {
  beast::error_code ignored;
  stream_.socket().close(ignored);
  connected_ = false;
  stream_parser_.reset();
  buffer_.clear();
  const bool timeout = ec == beast::error::timeout;
  return Error{timeout ? "timeout" : "unreachable",
               std::string(timeout ? "no answer in time " : "") + during + " " +
                   endpoint_.host_header + ": " + ec.message(),
               0};
}

Result<void> HttpConnection::Connect(Deadline deadline) {
  if (connected_) return {};
  tcp::resolver resolver(io_);
  beast::error_code ec;
  const auto endpoints = resolver.resolve(endpoint_.host, endpoint_.port, ec);
  if (ec) return std::unexpected(Fail(ec, "resolving"));
  SetDeadline(deadline);
  ec = Run([&](auto handler) { stream_.async_connect(endpoints, handler); });
  if (ec) return std::unexpected(Fail(ec, "connecting to"));
  beast::error_code ignored;
  stream_.socket().set_option(tcp::no_delay(true), ignored);
  connected_ = true;
  return {};
}

Result<void> HttpConnection::Write(const HttpRequest& request,
                                   Deadline deadline) {
  failed_while_writing_ = false;
  answer_started_ = false;
  auto connected = Connect(deadline);
  if (!connected) {
    failed_while_writing_ = true;  // nothing was sent
    return connected;
  }
  http::request<http::string_body> req;
  req.version(11);
  req.method_string(request.method);  // any token, not only known verbs
  req.target(request.target);
  req.set(http::field::host, endpoint_.host_header);
  req.set(http::field::user_agent, "leasehold-client");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!request.body.empty()) {
    req.set(http::field::content_type, "application/json");
  }
  req.keep_alive(true);
  req.body() = request.body;
  req.prepare_payload();
  SetDeadline(deadline);
  const beast::error_code ec =
      Run([&](auto handler) { http::async_write(stream_, req, handler); });
  if (ec) {
    failed_while_writing_ = true;
    return std::unexpected(Fail(ec, "sending to"));
  }
  return {};
}

Result<HttpAnswer> HttpConnection::RoundTrip(const HttpRequest& request,
                                             Deadline deadline) {
  auto written = Write(request, deadline);
  if (!written) return std::unexpected(written.error());
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  parser.skip(request.method == "HEAD");  // its Content-Length has no body
  const std::size_t buffered = buffer_.size();
  const beast::error_code ec = Run([&](auto handler) {
    http::async_read(stream_, buffer_, parser, handler);
  });
  if (ec) {
    answer_started_ = parser.got_some() || buffer_.size() > buffered;
    return std::unexpected(Fail(ec, "reading the answer from"));
  }
  used_ = true;
  HttpAnswer answer;
  answer.status = parser.get().result_int();
  // After HEAD, a server that wrongly sent a body would leave it in the
  // stream: do not reuse the connection.
  answer.keep_alive = parser.get().keep_alive() && request.method != "HEAD";
  answer.body = std::move(parser.get().body());
  if (!answer.keep_alive) {
    beast::error_code ignored;
    stream_.socket().close(ignored);
    connected_ = false;
    buffer_.clear();
  }
  return answer;
}

Result<unsigned> HttpConnection::StartStream(const HttpRequest& request,
                                             Deadline deadline) {
  auto written = Write(request, deadline);
  if (!written) return std::unexpected(written.error());
  stream_parser_.emplace();
  stream_parser_->body_limit(boost::none);  // a stream has no length
  const beast::error_code ec = Run([&](auto handler) {
    http::async_read_header(stream_, buffer_, *stream_parser_, handler);
  });
  if (ec) return std::unexpected(Fail(ec, "reading the answer from"));
  return stream_parser_->get().result_int();
}

Result<std::size_t> HttpConnection::ReadBody(char* data, std::size_t size,
                                             Deadline deadline) {
  if (!stream_parser_) {
    return std::unexpected(Error{"unreachable", "no stream was started", 0});
  }
  if (stream_parser_->is_done()) return 0;
  SetDeadline(deadline);
  // A read may parse only framing (chunk headers); go on until body bytes.
  while (!stream_parser_->is_done()) {
    stream_parser_->get().body().data = data;
    stream_parser_->get().body().size = size;
    beast::error_code ec = Run([&](auto handler) {
      http::async_read_some(stream_, buffer_, *stream_parser_, handler);
    });
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t n = size - stream_parser_->get().body().size;
    if (n > 0) return n;
    if (ec == http::error::end_of_stream) return 0;
    if (ec) return std::unexpected(Fail(ec, "reading the stream from"));
  }
  return 0;
}

bool HttpConnection::PeerClosed() {
  if (!connected_) return true;
  char probe = 0;
  const ssize_t n = ::recv(stream_.socket().native_handle(), &probe, 1,
                           MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
  return true;  // closed (0), reset (<0), or unexpected bytes (>0)
}

}  // namespace leasehold::client::detail
