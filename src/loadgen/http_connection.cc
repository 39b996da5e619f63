// The only loadgen translation unit that includes Beast.
#include "loadgen/http_connection.h"

#include <boost/asio/as_tuple.hpp>
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

}  // namespace

class HttpConnection::Impl {
 public:
  Impl(asio::any_io_executor executor, ServerAddress address)
      : address_(std::move(address)), socket_(executor) {
    host_header_ = address_.host + ":" + std::to_string(address_.port);
    if (!address_.token.empty()) authorization_ = "Bearer " + address_.token;
  }

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
    // The request is written by hand into a reused buffer: one string, one
    // write, no serializer (Beast's costs more CPU than the request itself).
    FormatRequest(method, target, body);
    auto [write_ec, written] =
        co_await asio::async_write(socket_, asio::buffer(request_), kNoThrow);
    if (write_ec) co_return Fail(answer, write_ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    auto [read_ec, read] =
        co_await http::async_read(socket_, buffer_, parser, kNoThrow);
    if (read_ec) co_return Fail(answer, read_ec);
    auto& res = parser.get();
    answer.status = res.result_int();
    answer.body = std::move(res.body());
    if (!res.keep_alive()) Close();
    co_return answer;
  }

  // request_ = the request line, headers and body.
  void FormatRequest(Method method, std::string_view target,
                     std::string_view body) {
    request_.clear();
    request_.append(MethodName(method)).append(" ").append(target);
    request_.append(" HTTP/1.1\r\nHost: ").append(host_header_);
    if (!authorization_.empty()) {
      request_.append("\r\nAuthorization: ").append(authorization_);
    }
    if (!body.empty()) {
      request_.append("\r\nContent-Type: application/json");
    }
    request_.append("\r\nContent-Length: ").append(std::to_string(body.size()));
    request_.append("\r\n\r\n").append(body);
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
  std::string host_header_;
  std::string authorization_;
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
