// TlsProbe: a TLS client of the tests' own, on OpenSSL's API and a plain
// blocking socket with a receive timeout, for what the leasehold client
// never does on purpose: offer TLS 1.0, a weak suite, a stalled or
// plaintext handshake. It speaks just enough HTTP/1.1 (Content-Length
// answers, and the head of an event stream) to check what a TLS
// connection serves.
#ifndef LEASEHOLD_TESTS_TLS_TLS_PROBE_H_
#define LEASEHOLD_TESTS_TLS_TLS_PROBE_H_

#include <cstdint>
#include <string>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace leasehold::testing {

struct TlsProbeOptions {
  std::string ca_file;  // verifies the server; empty: no verification
  std::string host = "localhost";  // SNI, and the name verified
  std::string cert_file;           // a client certificate, if not empty
  std::string key_file;
  int min_version = 0;        // TLS1_2_VERSION …; 0: OpenSSL's least allowed
  int max_version = 0;        // 0: the highest
  std::string tls12_ciphers;  // empty: OpenSSL's default list
  // OpenSSL's security level; 0 lets the client offer TLS 1.0 and 1.1.
  int security_level = 1;
};

struct ProbeAnswer {
  std::string error;  // the transport failure, else empty
  unsigned status = 0;
  std::string head;  // status line and headers
  std::string body;
};

class TlsProbe {
 public:
  TlsProbe(std::uint16_t port, TlsProbeOptions options);
  ~TlsProbe();
  TlsProbe(const TlsProbe&) = delete;
  TlsProbe& operator=(const TlsProbe&) = delete;

  // Connects and shakes hands: empty, or why it failed (OpenSSL's words).
  std::string Connect();
  bool connected() const { return ssl_ != nullptr; }
  std::string version() const;  // "TLSv1.3"
  std::string cipher() const;
  // The serial number of the server's certificate, in hex.
  std::string peer_serial() const;

  // One request on the connection (kept alive); `authorization` is sent
  // as "Authorization: Bearer …" unless empty.
  ProbeAnswer Request(const std::string& method, const std::string& target,
                      const std::string& body = "",
                      const std::string& authorization = "");
  // Sends a GET and reads only the answer's head, and then up to `want`
  // bytes of the body.
  ProbeAnswer Stream(const std::string& target, std::size_t want,
                     const std::string& authorization = "");

  void Close();

 private:
  std::string ReadHead(ProbeAnswer& answer);
  bool ReadSome(std::string& into);

  std::uint16_t port_;
  TlsProbeOptions options_;
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string pending_;  // bytes read past the last answer
};

// Plain TCP to 127.0.0.1:port: sends `bytes` (may be empty) and returns
// all that arrives until the server closes, or "<timeout>" appended when
// nothing more came for `timeout_seconds`.
std::string RawExchange(std::uint16_t port, const std::string& bytes,
                        int timeout_seconds);

// The serial number of the certificate in a PEM file, in hex.
std::string SerialOf(const std::string& pem_file);
// Its notAfter as Unix seconds.
std::int64_t ExpiryOf(const std::string& pem_file);

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TLS_TLS_PROBE_H_
