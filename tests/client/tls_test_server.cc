#include "tests/client/tls_test_server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

namespace leasehold::testing {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

std::string Reason(unsigned status) {
  switch (status) {
    case 200:
      return "OK";
    case 307:
      return "Temporary Redirect";
    default:
      return "Status";
  }
}

// The CN of the client's certificate, "" when it sent none.
std::string ClientSubject(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return "";
  char cn[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn,
                                sizeof cn) < 0) {
    return "";
  }
  return cn;
}

}  // namespace

const TestCertificates& TestCertificates::Get() {
  static const TestCertificates* made = [] {
    auto* c = new TestCertificates;
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") +
                          "/leasehold-tls-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    c->dir_ = pattern;
    const std::string command = std::string(LEASEHOLD_SOURCE_DIR) +
                                "/scripts/test-certs " + c->dir_ +
                                " >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::cerr << "failed: " << command << "\n";
      std::abort();
    }
    // Removed at exit: the keys are throwaway, but need not stay around.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(Get().dir_, ec);
    });
    return c;
  }();
  return *made;
}

std::string TestCertificates::File(const std::string& name) const {
  return dir_ + "/" + name;
}

Reply Reply::Json(unsigned status, std::string body, std::string headers) {
  std::string text =
      "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) +
      "\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n" + headers + "\r\n" + body;
  return Reply{{std::move(text)}, {}, std::nullopt};
}

Reply Reply::Redirect(const std::string& location) {
  return Json(307, R"({"error":{"code":"not_leader","message":"elsewhere"}})",
              "Location: " + location + "\r\n");
}

TlsServerOptions TlsServerOptions::Presenting(std::string certificate) {
  TlsServerOptions o;
  o.certificate = std::move(certificate);
  return o;
}

TlsServerOptions TlsServerOptions::Plaintext() {
  TlsServerOptions o;
  o.plaintext = true;
  return o;
}

TlsServerOptions TlsServerOptions::Silent() {
  TlsServerOptions o;
  o.silent = true;
  return o;
}

TlsServerOptions TlsServerOptions::ListeningOn(std::string address) {
  TlsServerOptions o;
  o.address = std::move(address);
  return o;
}

TlsServerOptions TlsServerOptions::AskingForAClientCertificate(bool required) {
  TlsServerOptions o;
  o.client_ca = "ca.pem";
  o.require_client_certificate = required;
  return o;
}

std::string Reply::Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

class TlsTestServer::Impl {
  asio::io_context io_{1};  // first: destroyed last

 public:
  Impl(TlsServerOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        context_(ssl::context::tls_server),
        acceptor_(io_,
                  tcp::endpoint(asio::ip::make_address(options_.address), 0)) {
    if (!options_.plaintext && !options_.silent) {
      const TestCertificates& certs = TestCertificates::Get();
      context_.use_certificate_chain_file(
          certs.File(options_.certificate + ".pem"));
      context_.use_private_key_file(certs.File(options_.certificate + ".key"),
                                    ssl::context::pem);
      if (!options_.client_ca.empty()) {
        context_.load_verify_file(certs.File(options_.client_ca));
        context_.set_verify_mode(ssl::verify_peer |
                                 (options_.require_client_certificate
                                      ? ssl::verify_fail_if_no_peer_cert
                                      : 0));
      }
    }
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, Accept(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  // The connections' coroutines go with io_, the last member destroyed.
  ~Impl() {
    io_.stop();
    thread_.join();
  }

  std::uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::vector<SeenRequest> requests_;
  int connections_ = 0;
  int handshakes_ = 0;
  std::vector<std::string> handshake_errors_;

 private:
  asio::awaitable<void> Accept() {
    while (true) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec) co_return;
      int number = 0;
      {
        std::lock_guard lock(mu_);
        number = ++connections_;
      }
      asio::co_spawn(io_, Serve(std::move(socket), number), asio::detached);
    }
  }

  asio::awaitable<void> Serve(tcp::socket socket, int number) {
    if (options_.silent) {
      silent_.push_back(std::move(socket));  // kept open, never read
      co_return;
    }
    SeenRequest seen;
    seen.connection = number;
    if (options_.plaintext) {
      co_await Exchange(socket, seen);
      co_return;
    }
    ssl::stream<tcp::socket> tls(std::move(socket), context_);
    auto [ec] =
        co_await tls.async_handshake(ssl::stream_base::server, kNoThrow);
    if (ec) {
      std::lock_guard lock(mu_);
      handshake_errors_.push_back(ec.message());
      co_return;
    }
    {
      std::lock_guard lock(mu_);
      ++handshakes_;
    }
    const char* sni =
        SSL_get_servername(tls.native_handle(), TLSEXT_NAMETYPE_host_name);
    seen.server_name = sni != nullptr ? sni : "";
    seen.client_subject = ClientSubject(tls.native_handle());
    if (options_.close_after_handshake) {
      error_code ignored;
      tls.next_layer().close(ignored);
      co_return;
    }
    co_await Exchange(tls, seen);
  }

  // Reads requests and writes what the handler answers until the client
  // goes or an answer says to close.
  template <typename Stream>
  asio::awaitable<void> Exchange(Stream& stream, SeenRequest seen) {
    boost::beast::flat_buffer buffer;
    asio::steady_timer timer(io_);
    while (true) {
      bhttp::request<bhttp::string_body> request;
      auto [read_ec, n] =
          co_await bhttp::async_read(stream, buffer, request, kNoThrow);
      if (read_ec) co_return;  // the client went
      seen.method = std::string(request.method_string());
      seen.target = std::string(request.target());
      seen.host = std::string(request[bhttp::field::host]);
      seen.authorization = std::string(request[bhttp::field::authorization]);
      seen.body = request.body();
      {
        std::lock_guard lock(mu_);
        requests_.push_back(seen);
      }
      const Reply reply = handler_(seen);
      for (std::size_t i = 0; i < reply.parts.size(); ++i) {
        if (i > 0 && reply.pause.count() > 0) {
          timer.expires_after(reply.pause);
          co_await timer.async_wait(kNoThrow);
        }
        auto [write_ec, written] = co_await asio::async_write(
            stream, asio::buffer(reply.parts[i]), kNoThrow);
        if (write_ec) co_return;
      }
      if (reply.close_after) {
        timer.expires_after(*reply.close_after);
        co_await timer.async_wait(kNoThrow);
        co_await Close(stream);
        co_return;
      }
    }
  }

  asio::awaitable<void> Close(tcp::socket& socket) {
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    co_return;
  }
  // Sends close_notify; the wait for the client's (which an idle client
  // does not send) is cut short.
  asio::awaitable<void> Close(ssl::stream<tcp::socket>& tls) {
    asio::steady_timer cut(io_);
    cut.expires_after(std::chrono::milliseconds(200));
    cut.async_wait([&tls](error_code ec) {
      if (!ec) tls.next_layer().cancel();
    });
    co_await tls.async_shutdown(kNoThrow);
    cut.cancel();
    error_code ignored;
    tls.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
  }

  const TlsServerOptions options_;
  const Handler handler_;
  ssl::context context_;
  tcp::acceptor acceptor_;
  std::vector<tcp::socket> silent_;
  std::thread thread_;
};

TlsTestServer::TlsTestServer(TlsServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

TlsTestServer::~TlsTestServer() = default;

std::uint16_t TlsTestServer::port() const { return impl_->port_; }

std::vector<SeenRequest> TlsTestServer::requests() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->requests_;
}

int TlsTestServer::connections() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->connections_;
}

int TlsTestServer::handshakes() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->handshakes_;
}

std::vector<std::string> TlsTestServer::handshake_errors() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->handshake_errors_;
}

}  // namespace leasehold::testing
