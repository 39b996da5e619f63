// Connection: one HTTP/1.1 keep-alive client connection on Boost.Beast, the
// one transport of every client of the server (the C++ client, the CLI
// through it, the load generator and the tests). The same request and answer
// types are driven either blocking (with a deadline: on a private io_context
// and a timer; without: plain blocking socket calls, the `--target` bench's
// path) or as C++20 coroutines on the caller's executor (the benchmark's hot
// path). TCP_NODELAY is set on connect. TLS when the Address carries a
// TlsClientContext (https://): the handshake is part of connecting, within
// the same deadline, and every call below works the same over it; a
// plaintext connection costs nothing more for it (one branch per call).
// Not thread-safe: one caller (or one strand) at a time.
#ifndef LEASEHOLD_SRC_HTTP_CONNECTION_H_
#define LEASEHOLD_SRC_HTTP_CONNECTION_H_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace leasehold::http {

class TlsClientContext;  // tls_client.h

// Where the server is and what every request carries.
struct Address {
  std::string host = "127.0.0.1";  // a name or an IP literal (no brackets)
  std::uint16_t port = 7070;
  std::string token;        // sent as "Authorization: Bearer …" unless empty
  std::string host_header;  // the Host header; empty: "host:port"
  std::string user_agent;   // the User-Agent header; empty: none
  // TLS when set, else plaintext. The server's certificate must be valid
  // for `host` (a DNS name, sent as SNI, or an IP address, matched against
  // the certificate's IP addresses).
  std::shared_ptr<const TlsClientContext> tls = nullptr;
};

// The request methods the callers name; any other token works as well.
struct Method {
  static constexpr std::string_view kGet = "GET";
  static constexpr std::string_view kHead = "HEAD";
  static constexpr std::string_view kPost = "POST";
  static constexpr std::string_view kPut = "PUT";
  static constexpr std::string_view kDelete = "DELETE";
};

// No deadline when empty.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// Which step a failed call was in, for error messages. kHandshaking: TLS,
// before anything was sent; a certificate that failed verification is
// CertificateError(…) (tls_client.h), whose message names why.
enum class Stage {
  kNone,
  kResolving,
  kConnecting,
  kHandshaking,
  kSending,
  kReading
};

struct Answer {
  // Transport or protocol failure; when set, status and body are empty.
  boost::system::error_code error;
  Stage failed_in = Stage::kNone;
  unsigned status = 0;
  std::string body;
  // The Location header of a redirect (3xx), else empty.
  std::string location;
  // Whether the connection stays open for the next request.
  bool keep_alive = false;
};

class Connection {
 public:
  // A connection for the blocking calls.
  explicit Connection(Address address);
  // A connection for the awaitable calls, on `executor`.
  Connection(boost::asio::any_io_executor executor, Address address);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects if not connected (also after the server closed the
  // connection), sends `method target` with a JSON `body` (no Content-Type
  // when empty) and reads the whole answer, all before `deadline`. After any
  // failure the connection is closed; the next call connects again. A
  // timeout is boost::beast::error::timeout.
  Answer Request(std::string_view method, std::string_view target,
                 std::string_view body, Deadline deadline = std::nullopt);
  // As Request, on the executor given at construction (no deadline).
  boost::asio::awaitable<Answer> AsyncRequest(std::string_view method,
                                              std::string_view target,
                                              std::string_view body);

  // Request in two halves, for callers that pipeline or test half-done
  // exchanges: Send writes the request without reading; Receive reads one
  // answer (`head`: to a HEAD request, whose Content-Length has no body).
  Answer Send(std::string_view method, std::string_view target,
              std::string_view body, Deadline deadline = std::nullopt);
  Answer Receive(bool head = false, Deadline deadline = std::nullopt);

  // Streams (Server-Sent Events): sends the request and reads only the
  // answer's header (status set, body empty); ReadBody then gives up to
  // `size` bytes of the body at a time, 0 at its end.
  Answer StartStream(std::string_view method, std::string_view target,
                     Deadline deadline = std::nullopt);
  struct Read {
    boost::system::error_code error;
    std::size_t size = 0;
  };
  Read ReadBody(char* data, std::size_t size, Deadline deadline);

  // Raw bytes, for tests of malformed requests: WriteRaw sends `bytes` as
  // they are (connecting first); ReadRaw gives what arrives next, bytes
  // already buffered first. A ReadRaw that times out leaves the connection
  // open.
  boost::system::error_code WriteRaw(std::string_view bytes,
                                     Deadline deadline = std::nullopt);
  Read ReadRaw(char* data, std::size_t size, Deadline deadline);

  // Sends "Authorization: Bearer `token`" from the next request on (none
  // when empty).
  void SetToken(const std::string& token);

  // Connects now (the calls above connect when needed), with the TLS
  // handshake if the address asks for TLS; on failure, `failed_in` (if
  // not null) is set to the step that failed.
  boost::system::error_code Connect(Deadline deadline = std::nullopt,
                                    Stage* failed_in = nullptr);
  // Closes the connection abruptly (shutdown and close).
  void Close();

  // True once an answer was read on this connection (it is a reused
  // keep-alive connection from then on).
  bool used() const;
  // Whether the last failure happened while connecting or writing the
  // request: then the server cannot have received all of it, so resending
  // is always safe.
  bool failed_while_writing() const;
  // Whether the last failure happened after answer bytes had arrived.
  bool answer_started() const;
  // An idle connection the server has closed (or written to: over TLS,
  // most likely its close_notify) meanwhile; true when not connected.
  bool PeerClosed();

  const Address& address() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// "resolving", "connecting to", "handshaking with", "sending to", "reading
// the answer from".
std::string_view StageName(Stage stage);

// Whether `error` is a call's deadline passing.
bool IsTimeout(const boost::system::error_code& error);

}  // namespace leasehold::http

#endif  // LEASEHOLD_SRC_HTTP_CONNECTION_H_
