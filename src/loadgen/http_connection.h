// HttpConnection: one HTTP/1.1 keep-alive client connection on Boost.Beast,
// driven by C++20 coroutines (and a blocking twin below). One request at a time
// (closed loop: the next request goes out when the previous answer is in).
// TCP_NODELAY is set, so a small request is sent at once. Not thread-safe: use
// it from one strand.
#ifndef LEASEHOLD_LOADGEN_HTTP_CONNECTION_H_
#define LEASEHOLD_LOADGEN_HTTP_CONNECTION_H_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace leasehold::loadgen {

// Where the server is, and the bearer token to send (empty: none).
struct ServerAddress {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7070;
  std::string token;
};

enum class Method { kGet, kPost, kPut, kDelete };

// "GET", "POST", "PUT" or "DELETE".
std::string_view MethodName(Method m);

struct HttpAnswer {
  // Transport or protocol failure; when set, status and body are empty.
  boost::system::error_code error;
  unsigned status = 0;
  std::string body;
};

class HttpConnection {
 public:
  HttpConnection(boost::asio::any_io_executor executor, ServerAddress address);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `method target` with a JSON `body` (none when empty) and reads the
  // answer. Connects first when not connected (also after the server closed
  // the connection). On a transport error the connection is closed and the
  // error returned; the next call connects again.
  boost::asio::awaitable<HttpAnswer> Request(Method method,
                                             std::string_view target,
                                             std::string_view body);

  void Close();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// BlockingHttpConnection: the same client with blocking calls, for a thread
// that owns it (the `--target` driver runs one thread per client, for every
// target alike). Same request format, same keep-alive and reconnect rules.
// Not thread-safe: one thread at a time.
class BlockingHttpConnection {
 public:
  explicit BlockingHttpConnection(ServerAddress address);
  ~BlockingHttpConnection();
  BlockingHttpConnection(const BlockingHttpConnection&) = delete;
  BlockingHttpConnection& operator=(const BlockingHttpConnection&) = delete;

  // As HttpConnection::Request, blocking until the answer is in.
  HttpAnswer Request(Method method, std::string_view target,
                     std::string_view body);

  void Close();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_HTTP_CONNECTION_H_
