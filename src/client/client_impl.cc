#include "client/client_impl.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <exception>
#include <optional>
#include <thread>

#include "client/answer_conventions.h"
#include "client/api_codec.h"

namespace leasehold::client {

namespace json = boost::json;
using http::Answer;
using http::Connection;
using Clock = std::chrono::steady_clock;

namespace {

// The pause between two rounds over every node, growing from the first to
// the longest: a takeover takes about a lease and a quarter.
constexpr Milliseconds kFirstPause{50};
constexpr Milliseconds kLongestPause{400};
// How long a connection may take to be made when other nodes could be
// asked instead: a host that is down (no answer at all, not even a
// refusal) must not use up a whole call's time.
constexpr Milliseconds kConnectWithin{2000};

bool Passed(const http::Deadline& deadline) {
  return deadline && Clock::now() >= *deadline;
}

}  // namespace

http::Deadline DeadlineAfter(Milliseconds wait) {
  if (wait.count() < 0) return std::nullopt;
  return Clock::now() + wait;
}

Error TransportError(const Connection& connection, const Answer& failed) {
  const bool timeout = http::IsTimeout(failed.error);
  return Error{timeout ? "timeout" : "unreachable",
               std::string(timeout ? "no answer in time " : "") +
                   std::string(http::StageName(failed.failed_in)) + " " +
                   connection.address().host_header + ": " +
                   failed.error.message(),
               0};
}

struct Client::Impl::Node {
  Node(http::Address a, std::string u)
      : address(std::move(a)), url(std::move(u)) {}
  const http::Address address;
  const std::string url;  // Endpoint::Origin: "https://host:port"
  bool tls() const { return address.tls != nullptr; }
  // No connection could be made, or no answer came, the last time: asked
  // after the others until it answers again.
  std::atomic<bool> silent{false};
  std::mutex mu;
  std::vector<std::unique_ptr<Connection>> idle;  // guarded by mu
};

// One exchange with one node: its answer, or the transport's Error and
// whether the request may have reached the node whole (and been acted on).
struct Client::Impl::Attempt {
  Result<Answer> answer;
  bool reached = false;
};

// One round over the known nodes.
struct Client::Impl::Round {
  // Set when the round ends the call: an answer, or a failure after which
  // the request must not be sent again.
  std::optional<Result<Answer>> done;
  // Whether some node answered 307 or 503: a cluster that has no leader
  // now may have one shortly.
  bool someone_answered = false;
  // What the call reports if no later round does better.
  std::optional<Result<Answer>> last;
};

Client::Impl::Impl(ClientOptions options, std::vector<detail::Endpoint> nodes,
                   std::shared_ptr<const http::TlsClientContext> tls)
    : options_(std::move(options)), tls_(std::move(tls)) {
  for (const detail::Endpoint& e : nodes) {
    nodes_.push_back(std::make_unique<Node>(AddressOf(e), e.Origin()));
  }
  // The first URL given is asked first until a node says who leads.
  leader_ = nodes_.front().get();
}

Client::Impl::~Impl() = default;

std::vector<Client::Impl::Node*> Client::Impl::Candidates() {
  std::vector<Node*> out;
  Node* first = leader_.load();
  if (first != nullptr) out.push_back(first);
  std::lock_guard lock(nodes_mu_);
  for (const bool silent : {false, true}) {
    for (const auto& n : nodes_) {
      if (n.get() != first && n->silent == silent) out.push_back(n.get());
    }
  }
  return out;
}

std::size_t Client::Impl::NodeCount() {
  std::lock_guard lock(nodes_mu_);
  return nodes_.size();
}

http::Address Client::Impl::AddressOf(const detail::Endpoint& endpoint) const {
  // ParseUrl checked the port (1 to 65535).
  return http::Address{
      .host = endpoint.host,
      .port = static_cast<std::uint16_t>(std::stoul(endpoint.port)),
      .token = options_.token,
      .host_header = endpoint.host_header,
      .user_agent = "leasehold-client",
      .tls = endpoint.tls ? tls_ : nullptr};
}

Result<Client::Impl::Node*> Client::Impl::Learn(
    const detail::Endpoint& endpoint) {
  const std::string url = endpoint.Origin();
  std::lock_guard lock(nodes_mu_);
  for (const auto& n : nodes_) {
    if (n->url == url) return n.get();
  }
  if (nodes_.size() >= kMaxNodes) {
    return std::unexpected(
        Error{"bad_url",
              "it knows " + std::to_string(kMaxNodes) + " nodes already", 0});
  }
  if (endpoint.tls && !tls_) {  // the first https:// node, from http://
    auto tls = http::TlsClientContext::Create(
        {options_.ca_file, options_.cert_file, options_.key_file});
    if (!tls) return std::unexpected(Error{"bad_url", tls.error(), 0});
    tls_ = std::move(*tls);
  }
  nodes_.push_back(std::make_unique<Node>(AddressOf(endpoint), url));
  return nodes_.back().get();
}

void Client::Impl::PassOver(Node& node) {
  Node* expected = &node;
  leader_.compare_exchange_strong(expected, nullptr);
}

void Client::Impl::FellSilent(Node& node) {
  PassOver(node);
  node.silent = true;
  std::lock_guard lock(node.mu);
  node.idle.clear();
}

std::unique_ptr<Connection> Client::Impl::TakeIdle(Node& node) {
  while (true) {
    std::unique_ptr<Connection> c;
    {
      std::lock_guard lock(node.mu);
      if (node.idle.empty()) return std::make_unique<Connection>(node.address);
      c = std::move(node.idle.back());
      node.idle.pop_back();
    }
    if (!c->PeerClosed()) return c;  // else the server dropped it: discard
  }
}

void Client::Impl::ReturnIdle(Node& node,
                              std::unique_ptr<Connection> connection) {
  std::lock_guard lock(node.mu);
  if (node.idle.size() < kMaxIdle) node.idle.push_back(std::move(connection));
}

std::unique_ptr<Connection> Client::Impl::Connected(Node& node,
                                                    http::Deadline deadline,
                                                    bool pooled,
                                                    Answer& failed) {
  auto c = pooled ? TakeIdle(node) : std::make_unique<Connection>(node.address);
  http::Deadline within = deadline;
  if (!c->used() && NodeCount() > 1) {
    const auto soon = Clock::now() + kConnectWithin;
    within = deadline ? std::min(*deadline, soon) : soon;
  }
  // At once when connected already.
  failed.error = c->Connect(within, &failed.failed_in);
  return c;
}

Client::Impl::Attempt Client::Impl::SendTo(Node& node,
                                           const HttpRequest& request,
                                           http::Deadline deadline,
                                           Retry retry) {
  for (int attempt = 0;; ++attempt) {
    Answer not_connected;
    std::unique_ptr<Connection> c =
        Connected(node, deadline, /*pooled=*/true, not_connected);
    if (not_connected.error) {
      Error failed = TransportError(*c, not_connected);
      // Only the call's own deadline is a timeout; a node slow to accept
      // is one that cannot be reached.
      if (!Passed(deadline)) failed.code = "unreachable";
      return {std::unexpected(std::move(failed)), false};
    }
    const bool reused = c->used();
    Answer answer =
        c->Request(request.method, request.target, request.body, deadline);
    if (!answer.error) {
      if (answer.keep_alive) ReturnIdle(node, std::move(c));
      return {std::move(answer), true};
    }
    const Error failed = TransportError(*c, answer);
    const bool reached = !c->failed_while_writing();
    // A reused connection may have been closed by the server while idle.
    // Resend only if the server cannot have acted on the request: it was
    // not fully written, or acting twice changes nothing.
    const bool stale =
        reused && failed.code == "unreachable" && !c->answer_started();
    const bool safe = !reached || retry == Retry::kIdempotent;
    if (attempt > 0 || !stale || !safe) {
      return {std::unexpected(failed), reached};
    }
  }
}

template <typename Exchange>
Client::Impl::Round Client::Impl::OneRound(const HttpRequest& request,
                                           Retry retry, Exchange& exchange) {
  Round round;
  std::vector<Node*> queue = Candidates();
  std::vector<Node*> asked;
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.erase(queue.begin());
    // Each node once a round: redirects that go round in a circle end.
    if (std::ranges::find(asked, node) != asked.end()) continue;
    asked.push_back(node);
    Attempt a = exchange(*node);
    if (!a.answer) {
      FellSilent(*node);
      const bool may_have_acted = a.reached && retry != Retry::kIdempotent;
      if (may_have_acted || a.answer.error().code == "timeout") {
        round.done = std::move(a.answer);
        return round;
      }
      round.last = std::move(a.answer);
      continue;
    }
    node->silent = false;
    if (a.answer->status == 307) {
      round.someone_answered = true;
      const std::string& location = a.answer->location;
      auto origin = detail::ParseLocation(location, node->tls());
      Result<Node*> next =
          origin ? Learn(*origin) : std::unexpected(std::move(origin.error()));
      if (!next) {
        round.done = std::unexpected(
            Error{"bad_response",
                  node->url + " redirected " + request.method + " " +
                      request.target + " to \"" + location +
                      "\", which this client does not follow (" +
                      next.error().message + ")",
                  307});
        return round;
      }
      leader_ = *next;
      queue.insert(queue.begin(), *next);
      continue;
    }
    if (retry != Retry::kNever && IsUnavailableAnswer(*a.answer)) {
      round.someone_answered = true;
      PassOver(*node);
      round.last = std::move(a.answer);
      continue;
    }
    if (a.answer->status != 503) leader_ = node;
    round.done = std::move(a.answer);
    return round;
  }
  return round;
}

template <typename Exchange>
Result<Answer> Client::Impl::AcrossNodes(const HttpRequest& request,
                                         http::Deadline deadline, Retry retry,
                                         Exchange exchange) {
  http::Deadline give_up = deadline;
  Milliseconds pause = kFirstPause;
  while (true) {
    Round round = OneRound(request, retry, exchange);
    if (round.done) return std::move(*round.done);
    Result<Answer> last =
        round.last
            ? std::move(*round.last)
            : std::unexpected(Error{"unavailable",
                                    "no node serves " + request.method + " " +
                                        request.target +
                                        ": the nodes redirect to one another",
                                    0});
    // With one node, or none answering at all, there is no takeover to
    // wait for: a node restarting is the caller's to wait for
    // (across_restarts.h).
    if (!round.someone_answered || NodeCount() < 2) return last;
    const auto now = Clock::now();
    if (!give_up) give_up = now + options_.io_timeout;
    if (now + pause >= *give_up) return last;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, kLongestPause);
  }
}

Result<Answer> Client::Impl::Send(const HttpRequest& request, Milliseconds wait,
                                  Retry retry) {
  const http::Deadline deadline = DeadlineAfter(wait);
  try {
    auto exchange = [&](Node& node) {
      return SendTo(node, request, deadline, retry);
    };
    return AcrossNodes(request, deadline, retry, exchange);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc
    return std::unexpected(Error{"unreachable", e.what(), 0});
  }
}

Result<json::value> Client::Impl::Call(
    std::string_view method, std::string target, const json::value* body,
    const std::vector<unsigned>& accept_status, Milliseconds wait,
    Retry retry) {
  return Call(method, std::move(target),
              body == nullptr ? std::string() : json::serialize(*body),
              accept_status, wait, retry);
}

Result<json::value> Client::Impl::Call(
    std::string_view method, std::string target, std::string body,
    const std::vector<unsigned>& accept_status, Milliseconds wait,
    Retry retry) {
  HttpRequest request{std::string(method), std::move(target), std::move(body)};
  auto answer = Send(request, wait, retry);
  if (!answer) return std::unexpected(answer.error());
  return InterpretAnswer(request.method, request.target, *answer,
                         accept_status);
}

Result<bool> Client::Impl::Healthy() {
  const HttpRequest request{"GET", api::HealthPath(), ""};
  const http::Deadline deadline = DeadlineAfter(options_.io_timeout);
  std::optional<Error> failure;
  bool standby = false;
  try {
    for (Node* node : Candidates()) {
      Attempt a = SendTo(*node, request, deadline, Retry::kIdempotent);
      if (!a.answer) {
        FellSilent(*node);
        failure = a.answer.error();
        if (failure->code == "timeout") break;
        continue;
      }
      node->silent = false;
      auto r = InterpretAnswer(request.method, request.target, *a.answer, {});
      if (r) {
        leader_ = node;
        return true;
      }
      if (r.error().code == "unavailable") {
        standby = true;
      } else {
        failure = r.error();
      }
    }
  } catch (const std::exception& e) {
    failure = Error{"unreachable", e.what(), 0};
  }
  if (standby) return false;
  return std::unexpected(*failure);
}

Result<Client::Impl::Stream> Client::Impl::StartStream(
    const std::string& target, Milliseconds wait) {
  const http::Deadline deadline = DeadlineAfter(wait);
  std::unique_ptr<Connection> streaming;
  auto exchange = [&](Node& node) -> Attempt {
    Answer not_connected;
    auto c = Connected(node, deadline, /*pooled=*/false, not_connected);
    if (not_connected.error) {
      Error failed = TransportError(*c, not_connected);
      if (!Passed(deadline)) failed.code = "unreachable";
      return {std::unexpected(std::move(failed)), false};
    }
    Answer started = c->StartStream(http::Method::kGet, target, deadline);
    if (started.error) {
      return {std::unexpected(TransportError(*c, started)),
              !c->failed_while_writing()};
    }
    streaming = std::move(c);  // an error's body is read from it too
    return {std::move(started), true};
  };
  try {
    const HttpRequest request{"GET", target, ""};
    auto started = AcrossNodes(request, deadline, Retry::kIdempotent, exchange);
    if (!started) return std::unexpected(started.error());
    return Stream{std::move(streaming), std::move(*started)};
  } catch (const std::exception& e) {
    return std::unexpected(Error{"unreachable", e.what(), 0});
  }
}

}  // namespace leasehold::client
