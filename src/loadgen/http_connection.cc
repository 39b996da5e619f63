// The only loadgen translation unit that includes Beast.
#include "loadgen/http_connection.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t kBodyLimit = 64 << 20;

// The request is written by hand into a reused buffer: one string, one
// write, no serializer (Beast's costs more CPU than the request itself).
// `out` = the request line, headers and body.
void FormatRequest(std::string& out, std::string_view host_header,
                   std::string_view authorization, Method method,
                   std::string_view target, std::string_view body) {
  out.clear();
  out.append(MethodName(method)).append(" ").append(target);
  out.append(" HTTP/1.1\r\nHost: ").append(host_header);
  if (!authorization.empty()) {
    out.append("\r\nAuthorization: ").append(authorization);
  }
  if (!body.empty()) out.append("\r\nContent-Type: application/json");
  out.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  out.append("\r\n\r\n").append(body);
}

std::string HostHeader(const ServerAddress& a) {
  return a.host + ":" + std::to_string(a.port);
}

std::string Authorization(const ServerAddress& a) {
  return a.token.empty() ? std::string() : "Bearer " + a.token;
}

}  // namespace

class HttpConnection::Impl {
 public:
  Impl(asio::any_io_executor executor, ServerAddress address)
      : address_(std::move(address)),
        host_header_(HostHeader(address_)),
        authorization_(Authorization(address_)),
        socket_(executor) {}

  asio::awaitable<boost::system::error_code> Connect() {
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(address_.host, ec);
    if (ec) co_return ec;
    auto [connect_ec] = co_await socket_.async_connect(
        tcp::endpoint(ip, address_.port), kNoThrow);
    if (connect_ec) {
      Close();
      co_return connect_ec;
    }
    socket_.set_option(tcp::no_delay(true), ec);
    buffer_.clear();
    co_return ec;
  }

  asio::awaitable<HttpAnswer> Request(Method method, std::string_view target,
                                      std::string_view body) {
    HttpAnswer answer;
    if (!socket_.is_open()) {
      answer.error = co_await Connect();
      if (answer.error) co_return answer;
    }
    FormatRequest(request_, host_header_, authorization_, method, target, body);
    auto [write_ec, written] =
        co_await asio::async_write(socket_, asio::buffer(request_), kNoThrow);
    if (write_ec) co_return Fail(answer, write_ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(kBodyLimit);
    auto [read_ec, read] =
        co_await http::async_read(socket_, buffer_, parser, kNoThrow);
    if (read_ec) co_return Fail(answer, read_ec);
    auto& res = parser.get();
    answer.status = res.result_int();
    answer.body = std::move(res.body());
    if (!res.keep_alive()) Close();
    co_return answer;
  }

  void Close() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    buffer_.clear();
  }

 private:
  HttpAnswer& Fail(HttpAnswer& answer, boost::system::error_code ec) {
    Close();
    answer.error = ec;
    return answer;
  }

  const ServerAddress address_;
  const std::string host_header_;
  const std::string authorization_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::string request_;
};

HttpConnection::HttpConnection(asio::any_io_executor executor,
                               ServerAddress address)
    : impl_(std::make_unique<Impl>(std::move(executor), std::move(address))) {}

HttpConnection::~HttpConnection() = default;

asio::awaitable<HttpAnswer> HttpConnection::Request(Method method,
                                                    std::string_view target,
                                                    std::string_view body) {
  co_return co_await impl_->Request(method, target, body);
}

void HttpConnection::Close() { impl_->Close(); }

class BlockingHttpConnection::Impl {
 public:
  explicit Impl(ServerAddress address)
      : address_(std::move(address)),
        host_header_(HostHeader(address_)),
        authorization_(Authorization(address_)),
        socket_(io_) {}

  HttpAnswer Request(Method method, std::string_view target,
                     std::string_view body) {
    HttpAnswer answer;
    if (!socket_.is_open()) {
      answer.error = Connect();
      if (answer.error) return answer;
    }
    FormatRequest(request_, host_header_, authorization_, method, target, body);
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(request_), ec);
    if (ec) return Fail(answer, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(kBodyLimit);
    http::read(socket_, buffer_, parser, ec);
    if (ec) return Fail(answer, ec);
    auto& res = parser.get();
    answer.status = res.result_int();
    answer.body = std::move(res.body());
    if (!res.keep_alive()) Close();
    return answer;
  }

  void Close() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    buffer_.clear();
  }

 private:
  boost::system::error_code Connect() {
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(address_.host, ec);
    if (ec) return ec;
    socket_.connect(tcp::endpoint(ip, address_.port), ec);
    if (ec) {
      Close();
      return ec;
    }
    socket_.set_option(tcp::no_delay(true), ec);
    buffer_.clear();
    return ec;
  }

  HttpAnswer& Fail(HttpAnswer& answer, boost::system::error_code ec) {
    Close();
    answer.error = ec;
    return answer;
  }

  const ServerAddress address_;
  const std::string host_header_;
  const std::string authorization_;
  asio::io_context io_;  // never run: every call on the socket blocks
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::string request_;
};

BlockingHttpConnection::BlockingHttpConnection(ServerAddress address)
    : impl_(std::make_unique<Impl>(std::move(address))) {}

BlockingHttpConnection::~BlockingHttpConnection() = default;

HttpAnswer BlockingHttpConnection::Request(Method method,
                                           std::string_view target,
                                           std::string_view body) {
  return impl_->Request(method, target, body);
}

void BlockingHttpConnection::Close() { impl_->Close(); }

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kGet:
      return "GET";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kDelete:
      return "DELETE";
  }
  return "GET";
}

}  // namespace leasehold::loadgen
