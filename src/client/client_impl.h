// Client::Impl: the options, the nodes the client knows (those of
// ClientOptions::url, and any a redirect names), which of them it believes
// leads, and a pool of idle keep-alive connections per node, shared by
// every copy of a Client.
#ifndef LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_
#define LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "client/url.h"
#include "http/connection.h"
#include "http/tls_client.h"
#include "leasehold/client.h"

namespace leasehold::client {

// When a request may be sent again (to the same node or another). Sending
// where no connection could be made, or where a 307 points, is always
// safe: no server acted on it.
enum class Retry {
  // Never after a server may have acted on it. For lock requests, whose
  // callers read what the session holds instead (across_restarts.h).
  kNever,
  // Also after a 503 unavailable: a node that does not serve now (a
  // standby during a takeover, a leader whose lease lapsed) acted on
  // nothing. The exception is a leader that lost its database in the
  // middle of a commit, which cannot know whether it committed: a request
  // sent again then may be applied twice, as client.h says.
  kRefused,
  // Also after a connection broke once the request had been written: a
  // second arrival changes nothing.
  kIdempotent,
};

// How long a background renewal due every `period` waits for its answer:
// half the period (at least 1 s, at most io_timeout), so that a node that
// stopped answering without a word (a paused process, a host that is gone)
// leaves time for the next renewal, at another node, before the lease
// (which a takeover does not extend for a checkout) runs out.
inline Milliseconds RenewalWait(Milliseconds period, Milliseconds io_timeout) {
  return std::min(io_timeout, std::max(period / 2, Milliseconds(1000)));
}

// How long to wait for the answer of a call that may wait (a lock or
// semaphore acquire): as long as the wait asked for, plus the usual I/O
// allowance (none for -1: forever).
inline Milliseconds WaitingCallDeadline(const ClientOptions& options,
                                        Milliseconds timeout) {
  return timeout.count() < 0 ? Milliseconds(-1) : options.io_timeout + timeout;
}

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
  // `nodes`: ParseUrls(options.url), at least one. `tls`: the options'
  // TLS files loaded, when a node is https:// or a file was given; else
  // null (made when a redirect first names an https:// node).
  Impl(ClientOptions options, std::vector<detail::Endpoint> nodes,
       std::shared_ptr<const http::TlsClientContext> tls);
  ~Impl();

  // One request, to the node believed to lead, then, while no node serves
  // it, to each known node in turn: a 307 is followed to the node it names
  // (which is remembered as the leader); a node that cannot be reached, or
  // (as `retry` allows) answers 503 unavailable, is passed over for the
  // next; one that could not be reached or did not answer is asked after
  // the others from then on, until it answers again. A round in which every
  // node was asked is followed by another, after a short pause, while some node
  // answered (a takeover is under way) and more than one node is known, until
  // the deadline (or, with none, io_timeout after the first failed round). A
  // reused connection found stale is replaced once, where resending is safe.
  // `wait` is the deadline for the whole call (negative: none).
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

  // GET /healthz of each known node once, the believed leader first: true
  // at the first that answers 200 (it is the leader from then on), false
  // if none did but one answered 503 unavailable, else the last Error.
  Result<bool> Healthy();

  // A stream (GET `target`, header read) on a connection of its own, at
  // the node that serves it, found as Send finds it; the body (the stream,
  // or an error's JSON) is still to be read from the connection.
  struct Stream {
    std::unique_ptr<http::Connection> connection;
    http::Answer started;
  };
  Result<Stream> StartStream(const std::string& target, Milliseconds wait);

  const ClientOptions& options() const { return options_; }

 private:
  struct Node;
  struct Attempt;
  struct Round;
  static constexpr std::size_t kMaxIdle = 16;
  // Nodes learned from redirects beyond this many are not followed.
  static constexpr std::size_t kMaxNodes = 32;

  template <typename Exchange>
  Result<http::Answer> AcrossNodes(const HttpRequest& request,
                                   http::Deadline deadline, Retry retry,
                                   Exchange exchange);
  template <typename Exchange>
  Round OneRound(const HttpRequest& request, Retry retry, Exchange& exchange);
  // One request to `node` (a stale pooled connection replaced once).
  Attempt SendTo(Node& node, const HttpRequest& request,
                 http::Deadline deadline, Retry retry);
  // A connection to `node` (an idle one when `pooled`, else a new one),
  // connected within `deadline`, or sooner when other nodes could be asked
  // instead; `failed` says why not.
  std::unique_ptr<http::Connection> Connected(Node& node,
                                              http::Deadline deadline,
                                              bool pooled,
                                              http::Answer& failed);

  // Every known node: the believed leader first, silent ones last.
  std::vector<Node*> Candidates();
  std::size_t NodeCount();
  // The known node at `endpoint`, added if new; an Error (why it is not
  // followed) once kMaxNodes are known, or for an https:// node when TLS
  // cannot be set up.
  Result<Node*> Learn(const detail::Endpoint& endpoint);
  // The address of a node; nodes_mu_ held.
  http::Address AddressOf(const detail::Endpoint& endpoint) const;
  // `node` does not serve now: it is not asked first any more.
  void PassOver(Node& node);
  // Nor could it be reached, or it did not answer: it is asked after the
  // others from now on (a paused process, or a host that is gone, would
  // take every call's whole time), and its idle connections, to a process
  // that may be gone, are dropped.
  void FellSilent(Node& node);

  std::unique_ptr<http::Connection> TakeIdle(Node& node);
  void ReturnIdle(Node& node, std::unique_ptr<http::Connection> connection);

  const ClientOptions options_;
  std::mutex nodes_mu_;
  std::vector<std::unique_ptr<Node>> nodes_;  // guarded; only grows
  // Shared by every https:// node; guarded (set once, when first needed).
  std::shared_ptr<const http::TlsClientContext> tls_;
  std::atomic<Node*> leader_;  // nullptr: none believed
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_CLIENT_IMPL_H_
