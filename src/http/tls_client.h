// TlsClientContext: what every https:// connection of one client shares
// (Address::tls): whom to trust (a CA file, or the system's store), the
// certificate the client presents (mutual TLS), TLS 1.2 at least, and the
// server's certificate always verified. Built once per client (an OpenSSL
// SSL_CTX: loading files and trust stores is not for every connection),
// immutable afterwards, shared by any number of connections and threads.
// Each connection adds its own server name (SNI) and the host name its
// certificate must carry (connection.cc).
#ifndef LEASEHOLD_SRC_HTTP_TLS_CLIENT_H_
#define LEASEHOLD_SRC_HTTP_TLS_CLIENT_H_

#include <boost/system/error_code.hpp>
#include <expected>
#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace leasehold::http {

// PEM files; empty strings are "none".
struct TlsFiles {
  // The CA certificates to trust; empty: the system's store (OpenSSL's
  // default paths, /etc/ssl/certs on Debian).
  std::string ca_file{};
  // The certificate chain to present (leaf first); empty: none.
  std::string cert_file{};
  // Its private key (unencrypted); empty: read from cert_file.
  std::string key_file{};
};

class TlsClientContext {
 public:
  // The context, or a message that names the file at fault: one that
  // cannot be read, holds no certificate or key, or a key that does not
  // match its certificate (or key_file without cert_file).
  static std::expected<std::shared_ptr<const TlsClientContext>, std::string>
  Create(const TlsFiles& files);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  // For making connections (OpenSSL's SSL_new only reads it, under its own
  // locks): nothing may change the context through this.
  boost::asio::ssl::context& native() const;

 private:
  explicit TlsClientContext(std::unique_ptr<boost::asio::ssl::context> c);
  const std::unique_ptr<boost::asio::ssl::context> context_;
};

// A server certificate that failed verification: `x509_result` is
// OpenSSL's verify result (X509_V_ERR_…); the message names it, e.g.
// "certificate verify failed: certificate has expired".
boost::system::error_code CertificateError(long x509_result);

// A new TLS connection that the server closed before any answer byte (no
// alert, or none that says more): what a server that refuses a client's
// certificate after the handshake (TLS 1.3) looks like when it does not
// send its alert. The message says so.
boost::system::error_code ClosedAfterHandshakeError();

}  // namespace leasehold::http

#endif  // LEASEHOLD_SRC_HTTP_TLS_CLIENT_H_
