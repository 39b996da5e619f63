// Client::Impl: the options, the server's address and a pool of idle
// keep-alive connections shared by every copy of a Client.
#ifndef LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_
#define LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_

#include <memory>
#include <mutex>
#include <vector>

#include "client/url.h"
#include "http/connection.h"
#include "leasehold/client.h"

namespace leasehold::client {

// Whether a request may be sent again after the connection broke once the
// request had been written: only when a second arrival changes nothing.
enum class Retry { kNever, kIdempotent };

// The deadline `wait` from now; none when `wait` < 0.
http::Deadline DeadlineAfter(Milliseconds wait);

// The client's Error for a failed transport call: "timeout" or
// "unreachable", with the step and the server in the message.
Error TransportError(const http::Connection& connection,
                     const http::Answer& failed);

// `parse` applied to a call's answer, which is first copied to `keep` when
// `keep` is not null; a failed call's Error as it is.
template <typename Parse>
auto Parsed(const Result<boost::json::value>& answer, boost::json::value* keep,
            Parse parse) -> decltype(parse(*answer)) {
  if (!answer) return std::unexpected(answer.error());
  if (keep != nullptr) *keep = *answer;
  return parse(*answer);
}

// A call whose answer carries nothing the caller needs: done, or its Error.
inline Result<void> Done(const Result<boost::json::value>& answer) {
  if (!answer) return std::unexpected(answer.error());
  return {};
}

struct HttpRequest {
  std::string method;
  std::string target;
  std::string body;  // sent with Content-Type: application/json if not empty
};

class Client::Impl {
 public:
  Impl(ClientOptions options, detail::Endpoint endpoint);

  // One request, with one retry on a fresh connection when a reused
  // connection turns out to be stale and resending is safe. `wait` is the
  // deadline for the whole call (negative: none).
  Result<http::Answer> Send(const HttpRequest& request, Milliseconds wait,
                            Retry retry);

  // Send, then the API's conventions: 2xx and `accept_status` answers give
  // the parsed body (null when empty), anything else an Error.
  // `body` is JSON text (api_codec.h's), empty for none.
  Result<boost::json::value> Call(std::string_view method, std::string target,
                                  std::string body,
                                  const std::vector<unsigned>& accept_status,
                                  Milliseconds wait, Retry retry);
  // As above with a JSON value for the body (nullptr: none).
  Result<boost::json::value> Call(std::string_view method, std::string target,
                                  const boost::json::value* body,
                                  const std::vector<unsigned>& accept_status,
                                  Milliseconds wait, Retry retry);

  // A dedicated, unpooled connection (for streams).
  std::unique_ptr<http::Connection> NewConnection() const;

  const ClientOptions& options() const { return options_; }

 private:
  static constexpr std::size_t kMaxIdle = 16;

  std::unique_ptr<http::Connection> TakeIdle();
  void ReturnIdle(std::unique_ptr<http::Connection> connection);

  const ClientOptions options_;
  const http::Address address_;
  std::mutex mu_;
  std::vector<std::unique_ptr<http::Connection>> idle_;  // guarded
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_
