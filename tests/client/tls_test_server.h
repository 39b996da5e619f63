// TlsTestServer: a small HTTP/1.1 server over real TLS (Boost.Asio SSL on
// OpenSSL) on loopback, on a thread of its own, for the tests of the
// client's TLS: what it presents (which certificate, whether it asks for
// the client's) is the test's choice, and it records what it saw (each
// request, the server name the client sent, the client's certificate).
// It answers what the test's handler says: fixed answers, redirects, a
// stream written in parts. Also plaintext (a redirect's other end) and
// silent (accepts and says nothing: a handshake that never ends).
//
// And TestCertificates: scripts/test-certs run once into a temporary
// directory (CA, server and client certificates; see that script).
#ifndef LEASEHOLD_TESTS_CLIENT_TLS_TEST_SERVER_H_
#define LEASEHOLD_TESTS_CLIENT_TLS_TEST_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace leasehold::testing {

// The files of scripts/test-certs, made once per test program.
class TestCertificates {
 public:
  static const TestCertificates& Get();  // aborts if the script fails
  // DIR/NAME: "ca.pem", "server.pem", "client-billing.key", …
  std::string File(const std::string& name) const;

 private:
  std::string dir_;
};

struct TlsServerOptions {
  // PEM names in TestCertificates (e.g. "server"): NAME.pem and NAME.key.
  std::string certificate = "server";
  // When set, the client's certificate is asked for and verified against
  // this CA file (a name in TestCertificates, e.g. "ca.pem").
  std::string client_ca;
  bool require_client_certificate = false;
  std::string address = "127.0.0.1";  // to listen on
  bool plaintext = false;             // no TLS at all
  bool silent = false;                // accepts, never answers
  // Shakes hands, then closes the connection without a word (no
  // close_notify): as some servers refuse a client certificate.
  bool close_after_handshake = false;

  static TlsServerOptions Presenting(std::string certificate);
  static TlsServerOptions Plaintext();
  static TlsServerOptions Silent();
  static TlsServerOptions ListeningOn(std::string address);
  // Asks for a client certificate by ca.pem; refuses a client without one
  // when `required`.
  static TlsServerOptions AskingForAClientCertificate(bool required);
};

// One request as the server saw it.
struct SeenRequest {
  int connection = 0;  // 1 for the first connection accepted, …
  std::string method;
  std::string target;
  std::string host;           // the Host header
  std::string authorization;  // the Authorization header
  std::string body;
  std::string server_name;     // SNI, "" when none was sent
  std::string client_subject;  // the client certificate's CN, "" if none
};

// What to answer: `parts` written one after the other, `pause` apart;
// then, if `close_after` is set, the connection is closed that long
// after the last part (TLS: with a close_notify), else the next request
// is read.
struct Reply {
  std::vector<std::string> parts;
  std::chrono::milliseconds pause{0};
  std::optional<std::chrono::milliseconds> close_after;

  // A whole answer with Content-Length; `headers` are extra lines, each
  // ending in "\r\n".
  static Reply Json(unsigned status, std::string body,
                    std::string headers = "");
  // 307 to `location`.
  static Reply Redirect(const std::string& location);
  // One chunk of a chunked body ("" for the last).
  static std::string Chunk(const std::string& data);
};

class TlsTestServer {
 public:
  using Handler = std::function<Reply(const SeenRequest&)>;
  // Listening once constructed (throws if it cannot).
  TlsTestServer(TlsServerOptions options, Handler handler);
  ~TlsTestServer();
  TlsTestServer(const TlsTestServer&) = delete;
  TlsTestServer& operator=(const TlsTestServer&) = delete;

  std::uint16_t port() const;
  std::vector<SeenRequest> requests() const;
  int connections() const;  // accepted
  int handshakes() const;   // completed
  // Why handshakes failed, as the server saw it.
  std::vector<std::string> handshake_errors() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_CLIENT_TLS_TEST_SERVER_H_
