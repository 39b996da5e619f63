#include "client/client_impl.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <exception>

namespace leasehold::client {

namespace json = boost::json;
using http::Answer;
using http::Connection;

namespace {

http::Address AddressOf(const detail::Endpoint& endpoint,
                        const ClientOptions& options) {
  // ParseUrl checked the port (1 to 65535).
  return http::Address{
      .host = endpoint.host,
      .port = static_cast<std::uint16_t>(std::stoul(endpoint.port)),
      .token = options.token,
      .host_header = endpoint.host_header,
      .user_agent = "leasehold-client"};
}

// The error of a non-accepted answer: the API's {"error":{code,message}}.
Error ErrorFromAnswer(const Answer& answer, const json::value& body) {
  Error e{"bad_response",
          "HTTP " + std::to_string(answer.status) + " without an API error",
          answer.status};
  const json::object* o = body.if_object();
  const json::value* err = o == nullptr ? nullptr : o->if_contains("error");
  if (err == nullptr || !err->is_object()) return e;
  if (const auto* code = err->get_object().if_contains("code");
      code != nullptr && code->is_string()) {
    e.code = std::string(code->get_string());
  }
  if (const auto* msg = err->get_object().if_contains("message");
      msg != nullptr && msg->is_string()) {
    e.message = std::string(msg->get_string());
  }
  return e;
}

bool IsApiError(const json::value& body) {
  const json::object* o = body.if_object();
  return o != nullptr && o->contains("error");
}

}  // namespace

http::Deadline DeadlineAfter(Milliseconds wait) {
  if (wait.count() < 0) return std::nullopt;
  return std::chrono::steady_clock::now() + wait;
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

Client::Impl::Impl(ClientOptions options, detail::Endpoint endpoint)
    : options_(std::move(options)), address_(AddressOf(endpoint, options_)) {}

std::unique_ptr<Connection> Client::Impl::NewConnection() const {
  return std::make_unique<Connection>(address_);
}

std::unique_ptr<Connection> Client::Impl::TakeIdle() {
  while (true) {
    std::unique_ptr<Connection> c;
    {
      std::lock_guard lock(mu_);
      if (idle_.empty()) return NewConnection();
      c = std::move(idle_.back());
      idle_.pop_back();
    }
    if (!c->PeerClosed()) return c;  // else the server dropped it: discard
  }
}

void Client::Impl::ReturnIdle(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(connection));
}

Result<Answer> Client::Impl::Send(const HttpRequest& request, Milliseconds wait,
                                  Retry retry) {
  const http::Deadline deadline = DeadlineAfter(wait);
  try {
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> c = TakeIdle();
      const bool reused = c->used();
      Answer answer =
          c->Request(request.method, request.target, request.body, deadline);
      if (!answer.error) {
        if (answer.keep_alive) ReturnIdle(std::move(c));
        return answer;
      }
      const Error failed = TransportError(*c, answer);
      // A reused connection may have been closed by the server while idle.
      // Resend only if the server cannot have acted on the request: it was
      // not fully written, or acting twice changes nothing.
      const bool stale =
          reused && failed.code == "unreachable" && !c->answer_started();
      const bool safe =
          c->failed_while_writing() || retry == Retry::kIdempotent;
      if (attempt > 0 || !stale || !safe) return std::unexpected(failed);
    }
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
  json::value parsed;
  if (!answer->body.empty()) {
    boost::system::error_code ec;
    parsed = json::parse(answer->body, ec);
    if (ec) {
      return std::unexpected(Error{
          "bad_response",
          "the answer to " + request.method + " " + request.target + " (HTTP " +
              std::to_string(answer->status) + ") is not JSON",
          answer->status});
    }
  }
  const unsigned s = answer->status;
  const bool accepted =
      (s >= 200 && s < 300) ||
      (std::ranges::find(accept_status, s) != accept_status.end() &&
       !IsApiError(parsed));
  if (accepted) return parsed;
  return std::unexpected(ErrorFromAnswer(*answer, parsed));
}

}  // namespace leasehold::client
