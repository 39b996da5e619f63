// The only translation unit of a client of the server that includes Beast
// (and, with tls_client.cc, OpenSSL).
#include "http/connection.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <utility>

#include "http/tls_client.h"

namespace leasehold::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t kBodyLimit = 64 << 20;

using StringParser = bhttp::response_parser<bhttp::string_body>;
using StreamParser = bhttp::response_parser<bhttp::buffer_body>;
// TLS over the connection's own socket, which outlives it: a TLS session
// is not reused after a close, the socket is.
using TlsStream = asio::ssl::stream<tcp::socket&>;

}  // namespace

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kNone:
      return "";
    case Stage::kResolving:
      return "resolving";
    case Stage::kConnecting:
      return "connecting to";
    case Stage::kHandshaking:
      return "handshaking with";
    case Stage::kSending:
      return "sending to";
    case Stage::kReading:
      return "reading the answer from";
  }
  return "";
}

bool IsTimeout(const error_code& error) {
  return error == beast::error::timeout;
}

class Connection::Impl {
 public:
  Impl(std::optional<asio::any_io_executor> executor, Address address)
      : address_(std::move(address)),
        host_header_(address_.host_header.empty()
                         ? address_.host + ":" + std::to_string(address_.port)
                         : address_.host_header),
        authorization_(address_.token.empty() ? std::string()
                                              : "Bearer " + address_.token),
        own_io_(executor ? std::nullopt
                         : std::make_optional<asio::io_context>(1)),
        socket_(executor ? *executor : own_io_->get_executor()),
        timer_(socket_.get_executor()) {}

  // --- blocking calls -----------------------------------------------------

  error_code Connect(Deadline deadline, Stage& failed_in) {
    if (socket_.is_open()) return {};
    assert(own_io_);
    error_code ec;
    const auto ip = asio::ip::make_address(address_.host, ec);
    if (!ec) {
      ec = Run(deadline, [&](auto handler) {
        socket_.async_connect(tcp::endpoint(ip, address_.port), handler);
      });
    } else {
      tcp::resolver resolver(*own_io_);
      const auto endpoints =
          resolver.resolve(address_.host, std::to_string(address_.port), ec);
      if (ec) {
        failed_in = Stage::kResolving;
        return ec;
      }
      ec = Run(deadline, [&](auto handler) {
        asio::async_connect(socket_, endpoints, handler);
      });
    }
    if (ec) {
      failed_in = Stage::kConnecting;
      Close();
      return ec;
    }
    Connected();
    if (address_.tls) {
      ec = StartTls();
      if (!ec) {
        ec = Run(deadline, [&](auto handler) {
          tls_->async_handshake(TlsStream::client, handler);
        });
      }
      if (ec) {
        failed_in = Stage::kHandshaking;
        return HandshakeFailed(ec);
      }
    }
    return {};
  }

  Answer Send(std::string_view method, std::string_view target,
              std::string_view body, Deadline deadline) {
    Answer answer;
    failed_while_writing_ = false;
    answer_started_ = false;
    if (const error_code ec = Connect(deadline, answer.failed_in)) {
      failed_while_writing_ = true;  // nothing was sent
      answer.error = ec;
      return answer;
    }
    Format(method, target, body);
    error_code ec;
    if (deadline) {
      ec = Run(deadline, [&](auto handler) {
        OnStream([&](auto& stream) {
          asio::async_write(stream, asio::buffer(request_), handler);
        });
      });
    } else {
      OnStream([&](auto& stream) {  // no loop to run
        asio::write(stream, asio::buffer(request_), ec);
      });
    }
    if (ec) {
      failed_while_writing_ = true;
      return Fail(answer, ec, Stage::kSending);
    }
    return answer;
  }

  Answer Receive(bool head, Deadline deadline) {
    Answer answer;
    StringParser parser;
    Prepare(parser, head);
    const std::size_t buffered = buffer_.size();
    error_code ec;
    if (deadline) {
      ec = Run(deadline, [&](auto handler) {
        OnStream([&](auto& stream) {
          bhttp::async_read(stream, buffer_, parser, handler);
        });
      });
    } else {
      OnStream([&](auto& stream) {  // no loop to run
        bhttp::read(stream, buffer_, parser, ec);
      });
    }
    if (ec) {
      answer_started_ = parser.got_some() || buffer_.size() > buffered;
      return Fail(answer, Explained(ec), Stage::kReading);
    }
    return Finish(answer, parser, head);
  }

  Answer StartStream(std::string_view method, std::string_view target,
                     Deadline deadline) {
    Answer answer = Send(method, target, "", deadline);
    if (answer.error) return answer;
    stream_parser_.emplace();
    stream_parser_->body_limit(boost::none);  // a stream has no length
    const error_code ec = Run(deadline, [&](auto handler) {
      OnStream([&](auto& stream) {
        bhttp::async_read_header(stream, buffer_, *stream_parser_, handler);
      });
    });
    if (ec) {
      answer_started_ = stream_parser_->got_some();
      return Fail(answer, Explained(ec), Stage::kReading);
    }
    answer.status = stream_parser_->get().result_int();
    answer.location = LocationOf(stream_parser_->get());
    return answer;
  }

  Read ReadBody(char* data, std::size_t size, Deadline deadline) {
    if (!stream_parser_) return {asio::error::not_connected, 0};
    // A read may parse only framing (chunk headers); go on until body bytes.
    while (!stream_parser_->is_done()) {
      stream_parser_->get().body().data = data;
      stream_parser_->get().body().size = size;
      error_code ec = Run(deadline, [&](auto handler) {
        OnStream([&](auto& stream) {
          bhttp::async_read_some(stream, buffer_, *stream_parser_, handler);
        });
      });
      if (ec == bhttp::error::need_buffer) ec = {};
      const std::size_t n = size - stream_parser_->get().body().size;
      if (n > 0) return {{}, n};
      if (ec == bhttp::error::end_of_stream) return {};
      if (ec) {
        Close();
        return {ec, 0};
      }
    }
    return {};
  }

  error_code WriteRaw(std::string_view bytes, Deadline deadline) {
    Stage ignored = Stage::kNone;
    if (const error_code ec = Connect(deadline, ignored)) return ec;
    return Run(deadline, [&](auto handler) {
      OnStream([&](auto& stream) {
        asio::async_write(stream, asio::buffer(bytes.data(), bytes.size()),
                          handler);
      });
    });
  }

  Read ReadRaw(char* data, std::size_t size, Deadline deadline) {
    if (buffer_.size() > 0) {
      const std::size_t n =
          asio::buffer_copy(asio::buffer(data, size), buffer_.data());
      buffer_.consume(n);
      return {{}, n};
    }
    if (!socket_.is_open()) return {asio::error::not_connected, 0};
    std::size_t n = 0;
    const error_code ec = Run(deadline, [&](auto handler) {
      OnStream([&](auto& stream) {
        stream.async_read_some(asio::buffer(data, size),
                               [&n, handler](error_code e, std::size_t got) {
                                 n = got;
                                 handler(e);
                               });
      });
    });
    return {ec, n};
  }

  // --- awaitable calls ----------------------------------------------------

  asio::awaitable<Answer> AsyncRequest(std::string_view method,
                                       std::string_view target,
                                       std::string_view body) {
    Answer answer;
    failed_while_writing_ = false;
    answer_started_ = false;
    if (!socket_.is_open()) {
      answer.error = co_await AsyncConnect(answer.failed_in);
      if (answer.error) {
        failed_while_writing_ = true;
        co_return answer;
      }
    }
    Format(method, target, body);
    // Each call names its stream itself: a helper coroutine would cost the
    // plaintext path a frame per call.
    error_code write_ec;
    if (tls_) {
      std::tie(write_ec, std::ignore) =
          co_await asio::async_write(*tls_, asio::buffer(request_), kNoThrow);
    } else {
      std::tie(write_ec, std::ignore) =
          co_await asio::async_write(socket_, asio::buffer(request_), kNoThrow);
    }
    if (write_ec) {
      failed_while_writing_ = true;
      co_return Fail(answer, write_ec, Stage::kSending);
    }
    StringParser parser;
    Prepare(parser, false);
    const std::size_t buffered = buffer_.size();
    error_code read_ec;
    if (tls_) {
      std::tie(read_ec, std::ignore) =
          co_await bhttp::async_read(*tls_, buffer_, parser, kNoThrow);
    } else {
      std::tie(read_ec, std::ignore) =
          co_await bhttp::async_read(socket_, buffer_, parser, kNoThrow);
    }
    if (read_ec) {
      answer_started_ = parser.got_some() || buffer_.size() > buffered;
      co_return Fail(answer, Explained(read_ec), Stage::kReading);
    }
    co_return Finish(answer, parser, false);
  }

  // --- state --------------------------------------------------------------

  void Close() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    tls_.reset();
    buffer_.clear();
    stream_parser_.reset();
  }

  bool PeerClosed() {
    if (!socket_.is_open()) return true;
    // TLS bytes that arrived with the last answer and wait in OpenSSL's
    // buffers (most likely the server's close_notify).
    if (tls_ && (SSL_has_pending(tls_->native_handle()) == 1 ||
                 BIO_ctrl_pending(SSL_get_rbio(tls_->native_handle())) > 0)) {
      return true;
    }
    char probe = 0;
    const ssize_t n =
        ::recv(socket_.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    return true;  // closed (0), reset (<0), or unexpected bytes (>0)
  }

  void SetToken(const std::string& token) {
    address_.token = token;
    authorization_ = token.empty() ? std::string() : "Bearer " + token;
  }

  Address address_;
  bool used_ = false;
  bool failed_while_writing_ = false;
  bool answer_started_ = false;

 private:
  // Starts one asynchronous operation and runs the private io_context until
  // it completes; the timer cancels it at the deadline.
  template <typename Start>
  error_code Run(Deadline deadline, Start start) {
    assert(own_io_);
    error_code result;
    bool timed_out = false;
    if (deadline) {
      timer_.expires_at(*deadline);
      timer_.async_wait([this, &timed_out](error_code ec) {
        if (ec) return;
        timed_out = true;
        error_code ignored;
        socket_.cancel(ignored);
      });
    }
    start([this, &result, &deadline](error_code ec, auto&&...) {
      result = ec;
      if (deadline) timer_.cancel();
    });
    own_io_->restart();
    own_io_->run();
    if (timed_out && result) return beast::error::timeout;
    return result;
  }

  asio::awaitable<error_code> AsyncConnect(Stage& failed_in) {
    error_code ec;
    const auto ip = asio::ip::make_address(address_.host, ec);
    if (!ec) {
      auto [connect_ec] = co_await socket_.async_connect(
          tcp::endpoint(ip, address_.port), kNoThrow);
      ec = connect_ec;
    } else {
      tcp::resolver resolver(socket_.get_executor());
      auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
          address_.host, std::to_string(address_.port), kNoThrow);
      if (resolve_ec) {
        failed_in = Stage::kResolving;
        co_return resolve_ec;
      }
      auto [connect_ec, endpoint] =
          co_await asio::async_connect(socket_, endpoints, kNoThrow);
      ec = connect_ec;
    }
    if (ec) {
      failed_in = Stage::kConnecting;
      Close();
      co_return ec;
    }
    Connected();
    if (address_.tls) {
      ec = StartTls();
      if (!ec) {
        auto [handshake_ec] =
            co_await tls_->async_handshake(TlsStream::client, kNoThrow);
        ec = handshake_ec;
      }
      if (ec) {
        failed_in = Stage::kHandshaking;
        co_return HandshakeFailed(ec);
      }
    }
    co_return error_code{};
  }

  // Calls `use` with the stream the connection speaks: TLS over the
  // socket, or the socket itself.
  template <typename Use>
  void OnStream(Use&& use) {
    if (tls_) {
      use(*tls_);
    } else {
      use(socket_);
    }
  }

  // A TLS session over the connected socket, not yet shaken hands: it
  // names the server (SNI, for a DNS name; never an IP address) and
  // requires its certificate to be valid for Address::host. OpenSSL's own
  // host check (rather than a verify callback) makes a mismatch a verify
  // result with a name of its own ("hostname mismatch").
  error_code StartTls() {
    tls_.emplace(socket_, address_.tls->native());
    SSL* ssl = tls_->native_handle();
    const std::string& host = address_.host;
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param,
                                    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    error_code not_ip;
    asio::ip::make_address(host, not_ip);
    const bool named =
        not_ip ? SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 &&
                     X509_VERIFY_PARAM_set1_host(param, host.c_str(),
                                                 host.size()) == 1
               : X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1;
    if (!named) return asio::error::invalid_argument;
    return {};
  }

  // Closes the connection after a failed handshake; a certificate that
  // failed verification is reported as such (asio's own error says only
  // "certificate verify failed").
  error_code HandshakeFailed(error_code ec) {
    if (tls_ && !IsTimeout(ec)) {
      const long verified = SSL_get_verify_result(tls_->native_handle());
      if (verified != X509_V_OK) ec = CertificateError(verified);
    }
    Close();
    return ec;
  }

  // A read that failed because the server ended a new TLS connection
  // before answering its first request: a server that refused this
  // client's certificate after the handshake (TLS 1.3) and sent no alert
  // (one that did is named by `ec` already).
  error_code Explained(error_code ec) const {
    const bool ended = ec == asio::ssl::error::stream_truncated ||
                       ec == asio::error::eof ||
                       ec == asio::error::connection_reset;
    if (tls_ && ended && !used_ && !answer_started_) {
      return ClosedAfterHandshakeError();
    }
    return ec;
  }

  void Connected() {
    error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    buffer_.clear();
  }

  // The request is written by hand into a reused buffer: one string, one
  // write, no serializer (Beast's costs more CPU than the request itself).
  void Format(std::string_view method, std::string_view target,
              std::string_view body) {
    request_.clear();
    request_.append(method).append(" ").append(target);
    request_.append(" HTTP/1.1\r\nHost: ").append(host_header_);
    if (!address_.user_agent.empty()) {
      request_.append("\r\nUser-Agent: ").append(address_.user_agent);
    }
    if (!authorization_.empty()) {
      request_.append("\r\nAuthorization: ").append(authorization_);
    }
    if (!body.empty()) request_.append("\r\nContent-Type: application/json");
    request_.append("\r\nContent-Length: ").append(std::to_string(body.size()));
    request_.append("\r\n\r\n").append(body);
  }

  static void Prepare(StringParser& parser, bool head) {
    parser.body_limit(kBodyLimit);
    parser.skip(head);  // a HEAD answer's Content-Length has no body
  }

  Answer& Finish(Answer& answer, StringParser& parser, bool head) {
    used_ = true;
    auto& res = parser.get();
    answer.status = res.result_int();
    answer.location = LocationOf(res);
    // After HEAD, a server that wrongly sent a body would leave it in the
    // stream: do not reuse the connection.
    answer.keep_alive = res.keep_alive() && !head;
    answer.body = std::move(res.body());
    if (!answer.keep_alive) Close();
    return answer;
  }

  template <typename Message>
  static std::string LocationOf(const Message& res) {
    if (res.result_int() / 100 != 3) return "";
    return std::string(res[bhttp::field::location]);
  }

  Answer& Fail(Answer& answer, error_code ec, Stage stage) {
    Close();
    answer.error = ec;
    answer.failed_in = stage;
    return answer;
  }

  const std::string host_header_;
  std::string authorization_;
  std::optional<asio::io_context> own_io_;  // the blocking calls' loop
  tcp::socket socket_;
  std::optional<TlsStream> tls_;  // while connected, for https://
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::string request_;
  std::optional<StreamParser> stream_parser_;
};

Connection::Connection(Address address)
    : impl_(std::make_unique<Impl>(std::nullopt, std::move(address))) {}

Connection::Connection(asio::any_io_executor executor, Address address)
    : impl_(std::make_unique<Impl>(std::move(executor), std::move(address))) {}

Connection::~Connection() = default;

Answer Connection::Request(std::string_view method, std::string_view target,
                           std::string_view body, Deadline deadline) {
  Answer sent = impl_->Send(method, target, body, deadline);
  if (sent.error) return sent;
  return impl_->Receive(method == Method::kHead, deadline);
}

asio::awaitable<Answer> Connection::AsyncRequest(std::string_view method,
                                                 std::string_view target,
                                                 std::string_view body) {
  return impl_->AsyncRequest(method, target, body);
}

Answer Connection::Send(std::string_view method, std::string_view target,
                        std::string_view body, Deadline deadline) {
  return impl_->Send(method, target, body, deadline);
}

Answer Connection::Receive(bool head, Deadline deadline) {
  return impl_->Receive(head, deadline);
}

Answer Connection::StartStream(std::string_view method, std::string_view target,
                               Deadline deadline) {
  return impl_->StartStream(method, target, deadline);
}

Connection::Read Connection::ReadBody(char* data, std::size_t size,
                                      Deadline deadline) {
  return impl_->ReadBody(data, size, deadline);
}

error_code Connection::WriteRaw(std::string_view bytes, Deadline deadline) {
  return impl_->WriteRaw(bytes, deadline);
}

Connection::Read Connection::ReadRaw(char* data, std::size_t size,
                                     Deadline deadline) {
  return impl_->ReadRaw(data, size, deadline);
}

error_code Connection::Connect(Deadline deadline, Stage* failed_in) {
  Stage stage = Stage::kNone;
  const error_code ec = impl_->Connect(deadline, stage);
  if (failed_in != nullptr) *failed_in = stage;
  return ec;
}

void Connection::SetToken(const std::string& token) { impl_->SetToken(token); }
void Connection::Close() { impl_->Close(); }
bool Connection::used() const { return impl_->used_; }
bool Connection::failed_while_writing() const {
  return impl_->failed_while_writing_;
}
bool Connection::answer_started() const { return impl_->answer_started_; }
bool Connection::PeerClosed() { return impl_->PeerClosed(); }
const Address& Connection::address() const { return impl_->address_; }

}  // namespace leasehold::http
