#include "tests/tls/tls_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>

namespace leasehold::testing {
namespace {

constexpr int kTimeoutSeconds = 10;

std::string OpenSslErrors(const std::string& fallback) {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof(line));
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? fallback : text;
}

int ConnectTcp(std::uint16_t port, int timeout_seconds) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{.tv_sec = timeout_seconds, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::unique_ptr<X509, decltype(&X509_free)> ReadPem(const std::string& file) {
  FILE* f = std::fopen(file.c_str(), "r");
  X509* cert =
      f != nullptr ? PEM_read_X509(f, nullptr, nullptr, nullptr) : nullptr;
  if (f != nullptr) std::fclose(f);
  return {cert, X509_free};
}

std::string SerialHex(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  char* hex = BN_bn2hex(bn);
  std::string text = hex;
  OPENSSL_free(hex);
  BN_free(bn);
  return text;
}

}  // namespace

TlsProbe::TlsProbe(std::uint16_t port, TlsProbeOptions options)
    : port_(port), options_(std::move(options)) {
  // OpenSSL writes to the socket itself: a server that closed must fail
  // the write, not kill the test.
  std::signal(SIGPIPE, SIG_IGN);
}

TlsProbe::~TlsProbe() { Close(); }

std::string TlsProbe::Connect() {
  Close();
  ERR_clear_error();
  ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_security_level(ctx_, options_.security_level);
  if (options_.min_version != 0) {
    SSL_CTX_set_min_proto_version(ctx_, options_.min_version);
  }
  if (options_.max_version != 0) {
    SSL_CTX_set_max_proto_version(ctx_, options_.max_version);
  }
  if (!options_.tls12_ciphers.empty() &&
      SSL_CTX_set_cipher_list(ctx_, options_.tls12_ciphers.c_str()) != 1) {
    return "cipher list: " + OpenSslErrors("refused");
  }
  if (!options_.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx_, options_.ca_file.c_str(),
                                      nullptr) != 1) {
      return "CA file: " + OpenSslErrors("unreadable");
    }
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  }
  if (!options_.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx_, options_.cert_file.c_str()) !=
            1 ||
        SSL_CTX_use_PrivateKey_file(ctx_, options_.key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1) {
      return "client certificate: " + OpenSslErrors("unreadable");
    }
  }
  fd_ = ConnectTcp(port_, kTimeoutSeconds);
  if (fd_ < 0) return "cannot connect";
  ssl_ = SSL_new(ctx_);
  SSL_set_fd(ssl_, fd_);
  SSL_set_tlsext_host_name(ssl_, options_.host.c_str());
  if (!options_.ca_file.empty()) SSL_set1_host(ssl_, options_.host.c_str());
  if (SSL_connect(ssl_) != 1) {
    std::string why = OpenSslErrors("handshake failed");
    const long verify = SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK) {
      why += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
    }
    SSL_free(ssl_);
    ssl_ = nullptr;
    ::close(fd_);
    fd_ = -1;
    return why;
  }
  return "";
}

std::string TlsProbe::version() const {
  return ssl_ != nullptr ? SSL_get_version(ssl_) : "";
}

std::string TlsProbe::cipher() const {
  return ssl_ != nullptr ? SSL_get_cipher_name(ssl_) : "";
}

std::string TlsProbe::peer_serial() const {
  if (ssl_ == nullptr) return "";
  X509* cert = SSL_get0_peer_certificate(ssl_);
  return cert != nullptr ? SerialHex(cert) : "";
}

bool TlsProbe::ReadSome(std::string& into) {
  char chunk[16384];
  const int n = SSL_read(ssl_, chunk, sizeof(chunk));
  if (n <= 0) return false;
  into.append(chunk, static_cast<std::size_t>(n));
  return true;
}

std::string TlsProbe::ReadHead(ProbeAnswer& answer) {
  std::size_t end;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (!ReadSome(pending_)) {
      return "connection ended before the answer's head: " +
             OpenSslErrors("closed");
    }
  }
  answer.head = pending_.substr(0, end + 2);
  pending_.erase(0, end + 4);
  if (answer.head.size() > 12) {
    answer.status = static_cast<unsigned>(std::atoi(answer.head.c_str() + 9));
  }
  return "";
}

ProbeAnswer TlsProbe::Request(const std::string& method,
                              const std::string& target,
                              const std::string& body,
                              const std::string& authorization) {
  ProbeAnswer answer;
  if (ssl_ == nullptr) {
    answer.error = "not connected";
    return answer;
  }
  std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: " + options_.host + "\r\n";
  if (!authorization.empty()) {
    request += "Authorization: Bearer " + authorization + "\r\n";
  }
  if (!body.empty()) request += "Content-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  request += body;
  if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) {
    answer.error = "write failed: " + OpenSslErrors("closed");
    return answer;
  }
  if (answer.error = ReadHead(answer); !answer.error.empty()) return answer;
  std::size_t length = 0;
  if (auto at = answer.head.find("Content-Length: "); at != std::string::npos) {
    length = std::stoul(answer.head.substr(at + 16));
  }
  while (pending_.size() < length) {
    if (!ReadSome(pending_)) {
      answer.error = "connection ended inside the body";
      return answer;
    }
  }
  answer.body = pending_.substr(0, length);
  pending_.erase(0, length);
  return answer;
}

ProbeAnswer TlsProbe::Stream(const std::string& target, std::size_t want,
                             const std::string& authorization) {
  ProbeAnswer answer;
  std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: " + options_.host + "\r\n";
  if (!authorization.empty()) {
    request += "Authorization: Bearer " + authorization + "\r\n";
  }
  request += "\r\n";
  if (ssl_ == nullptr ||
      SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) {
    answer.error = "write failed";
    return answer;
  }
  if (answer.error = ReadHead(answer); !answer.error.empty()) return answer;
  while (pending_.size() < want && ReadSome(pending_)) {
  }
  answer.body = pending_;
  pending_.clear();
  return answer;
}

void TlsProbe::Close() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (fd_ >= 0) ::close(fd_);
  ssl_ = nullptr;
  ctx_ = nullptr;
  fd_ = -1;
  pending_.clear();
}

std::string RawExchange(std::uint16_t port, const std::string& bytes,
                        int timeout_seconds) {
  const int fd = ConnectTcp(port, timeout_seconds);
  if (fd < 0) return "<cannot connect>";
  if (!bytes.empty()) {
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  std::string got;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      got.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      got += "<timeout>";
    }
    break;
  }
  ::close(fd);
  return got;
}

std::string SerialOf(const std::string& pem_file) {
  auto cert = ReadPem(pem_file);
  return cert ? SerialHex(cert.get()) : "";
}

std::int64_t ExpiryOf(const std::string& pem_file) {
  auto cert = ReadPem(pem_file);
  if (!cert) return 0;
  std::tm tm{};
  ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm);
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace leasehold::testing
