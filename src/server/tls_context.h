// The server's TLS material: a certificate chain and key, and optionally a
// CA whose client certificates it verifies, loaded and checked whole into
// one immutable OpenSSL context. A reload loads a new one beside the old
// (new handshakes take the new one; a connection keeps the one it began
// with), so a bad file never replaces a good one.
#ifndef LEASEHOLD_SERVER_TLS_CONTEXT_H_
#define LEASEHOLD_SERVER_TLS_CONTEXT_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

typedef struct ssl_st SSL;

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace leasehold::server {

// Where the PEM files are, as `serve --tls-*` or the config's "tls" say.
struct TlsFiles {
  std::string cert;       // the server's certificate, then its chain
  std::string key;        // its private key
  std::string client_ca;  // empty: client certificates are not asked for
  // Refuse a handshake without a client certificate the CA verifies
  // (needs client_ca). Without it a certificate is asked for but optional.
  bool require_client_certificate = false;

  bool operator==(const TlsFiles&) const = default;
};

class ServerTls {
 public:
  // Reads and checks the files: the chain and key parse and match, the
  // certificate is valid at `now` (not expired, not yet valid is refused
  // too), the client CA parses. kBadRequest naming the file and the reason
  // otherwise. TLS 1.2 and 1.3 only, forward-secret AEAD suites only, in
  // the server's order; no compression, no renegotiation.
  static Result<std::shared_ptr<const ServerTls>> Load(
      const TlsFiles& files, std::chrono::system_clock::time_point now =
                                 std::chrono::system_clock::now());
  ~ServerTls();

  // For the streams it makes; OpenSSL's contexts are safe to share among
  // threads once set up, and nothing sets this one up again.
  boost::asio::ssl::context& context() const { return *context_; }
  const TlsFiles& files() const { return files_; }
  // The server certificate's notAfter.
  std::chrono::system_clock::time_point expiry() const { return expiry_; }
  // "CN=…, expires 2027-01-06T11:11:54Z", for logs.
  const std::string& description() const { return description_; }

 private:
  ServerTls() = default;
  std::unique_ptr<boost::asio::ssl::context> context_;
  TlsFiles files_;
  std::chrono::system_clock::time_point expiry_;
  std::string description_;
};

// What a client's certificate stands for, once the handshake verified it:
// its DNS and URI subject alternative names, or, when it has none, its
// subject's common name (the names a token entry's "subject" may match).
struct PeerCertificate {
  std::vector<std::string> names;
};

// The verified client certificate of `ssl` after its handshake; null when
// the client sent none (or it was not verified).
std::shared_ptr<const PeerCertificate> VerifiedPeer(SSL* ssl);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_TLS_CONTEXT_H_
