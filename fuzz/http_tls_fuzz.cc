// Fuzz target http_tls: the bytes one client sends, through the real HTTP
// server (src/server/http_server.cc) over real TLS on loopback: the
// connection's TLS path (detecting TLS, the handshake, reading requests
// out of the TLS stream, answering into it, the event stream, closing),
// which the http target (parser and Api only) never reaches. The first
// byte chooses: odd, the rest goes to the TLS port raw, as a client that
// never shakes hands (plaintext, a broken ClientHello); even, it goes as
// application data after a real handshake, then the client closes. The
// server runs in this process, under the sanitizers, for every input.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "common/real_clock.h"
#include "server/frontend.h"
#include "server/tls_context.h"
#include "service/engine_service.h"
#include "store/memory/memory_store.h"

namespace {

using namespace leasehold;

// A self-signed EC certificate for localhost in `dir`, as PEM files.
void MakeCertificate(const std::string& dir) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 30);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  FILE* f = std::fopen((dir + "/cert.pem").c_str(), "w");
  PEM_write_X509(f, cert);
  std::fclose(f);
  f = std::fopen((dir + "/key.pem").c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(cert);
  EVP_PKEY_free(key);
}

// The server, started once for the whole run (on loopback, a free port).
class TlsServer {
 public:
  TlsServer() {
    char dir[] = "/tmp/leasehold-fuzz-tls-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    MakeCertificate(dir);
    auto tls = server::ServerTls::Load({.cert = std::string(dir) + "/cert.pem",
                                        .key = std::string(dir) + "/key.pem",
                                        .client_ca = {},
                                        .require_client_certificate = false});
    if (!tls) std::abort();
    auto opened = EngineService::Open(io_, OpenMemoryStore(), {}, clock_);
    if (!opened) std::abort();
    service_ = std::move(*opened);
    server::HttpOptions http;
    http.address = "127.0.0.1";
    http.port = 0;
    http.request_timeout = std::chrono::milliseconds(2000);
    http.tls = *tls;
    frontend_.emplace(io_, *service_, server::ApiOptions{}, http);
    thread_ = std::thread([this] { io_.run(); });
    auto port = frontend_->http().Start();
    if (!port) std::abort();
    port_ = *port;
    client_ = SSL_CTX_new(TLS_client_method());
  }

  std::uint16_t port() const { return port_; }
  SSL_CTX* client() const { return client_; }

 private:
  RealClock clock_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work_{boost::asio::make_work_guard(io_)};
  std::unique_ptr<EngineService> service_;
  std::optional<server::Frontend> frontend_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  SSL_CTX* client_ = nullptr;
};

int Connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  // Bounded: a request that waits is cancelled when the client closes,
  // and a stalled handshake is dropped by the request timeout (2 s).
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::abort();  // the server stopped listening
  }
  return fd;
}

void Raw(const TlsServer& server, const std::uint8_t* data, std::size_t size) {
  const int fd = Connect(server.port());
  if (size > 0) (void)::send(fd, data, size, MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  char sink[4096];
  while (::recv(fd, sink, sizeof(sink), 0) > 0) {
  }
  ::close(fd);
}

void OverTls(const TlsServer& server, const std::uint8_t* data,
             std::size_t size) {
  const int fd = Connect(server.port());
  SSL* ssl = SSL_new(server.client());
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) == 1) {
    if (size > 0) (void)SSL_write(ssl, data, static_cast<int>(size));
    SSL_shutdown(ssl);  // close_notify: the server ends what waits
    char sink[4096];
    while (SSL_read(ssl, sink, sizeof(sink)) > 0) {
    }
  }
  SSL_free(ssl);
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  // Never destroyed (its thread runs to the process's end).
  static TlsServer& server = *new TlsServer();
  if (size == 0) return 0;
  if ((data[0] & 1) != 0) {
    Raw(server, data + 1, size - 1);
  } else {
    OverTls(server, data + 1, size - 1);
  }
  return 0;
}
