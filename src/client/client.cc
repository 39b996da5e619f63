// Client: creation, the generic Call, health, sessions and transactions.
#include <boost/json/object.hpp>

#include "client/answer_reader.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::JoinPath;
using api::SessionPath;
using detail::AnswerReader;

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<Client> Client::Create(ClientOptions options) {
  auto endpoint = detail::ParseUrl(options.url);
  if (!endpoint) return std::unexpected(endpoint.error());
  if (options.io_timeout.count() <= 0) {
    return std::unexpected(
        Error{"bad_request", "ClientOptions::io_timeout must be positive", 0});
  }
  return Client(
      std::make_shared<Impl>(std::move(options), std::move(*endpoint)));
}

const ClientOptions& Client::options() const { return impl_->options(); }

Result<json::value> Client::Call(std::string_view method,
                                 std::string_view target,
                                 const json::value* body,
                                 std::vector<unsigned> accept_status,
                                 Milliseconds extra_wait) {
  const Milliseconds wait = extra_wait.count() < 0
                                ? Milliseconds(-1)
                                : impl_->options().io_timeout + extra_wait;
  const Retry retry =
      method == "GET" || method == "HEAD" ? Retry::kIdempotent : Retry::kNever;
  return impl_->Call(method, std::string(target), body, accept_status, wait,
                     retry);
}

Result<bool> Client::Healthy() {
  auto r = impl_->Call("GET", "/healthz", nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) {
    if (r.error().code == "unavailable") return false;
    return std::unexpected(r.error());
  }
  return true;
}

Result<SessionInfo> Client::OpenSession(std::string_view name,
                                        Milliseconds ttl) {
  auto r =
      impl_->Call("POST", api::SessionsPath(), api::OpenSessionBody(name, ttl),
                  {}, impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return api::ParseSession(*r, "POST /v1/sessions");
}

Result<std::string> Client::Keepalive(std::string_view session) {
  auto r = impl_->Call("POST", SessionPath(session, "keepalive"), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "keepalive");
  std::string expires_at = reader.String("expires_at");
  return reader.Finish(std::move(expires_at));
}

Result<void> Client::EndSession(std::string_view session) {
  auto r = impl_->Call("DELETE", SessionPath(session), nullptr, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return {};
}

Result<std::vector<SessionInfo>> Client::ListSessions() {
  auto r = impl_->Call("GET", api::SessionsPath(), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "GET /v1/sessions");
  std::vector<SessionInfo> out;
  for (const json::value& v : reader.Array("sessions")) {
    auto one = api::ParseSession(v, "GET /v1/sessions");
    if (!one) return std::unexpected(one.error());
    out.push_back(std::move(*one));
  }
  return reader.Finish(std::move(out));
}

Result<bool> Client::Cancel(std::string_view session) {
  auto r = impl_->Call("POST", SessionPath(session, "cancel"), nullptr, {},
                       impl_->options().io_timeout, Retry::kIdempotent);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "cancel");
  const bool cancelled = reader.BoolOr("cancelled", false);
  return reader.Finish(cancelled);
}

Result<std::int64_t> Client::BeginTransaction(std::string_view session) {
  auto r = impl_->Call("POST", SessionPath(session, "transaction"), nullptr, {},
                       impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  AnswerReader reader(*r, "begin transaction");
  const std::int64_t id = reader.Int("transaction");
  return reader.Finish(id);
}

Result<void> Client::Commit(std::string_view session) {
  auto r = impl_->Call(
      "POST", JoinPath({"v1", "sessions", session, "transaction", "commit"}),
      nullptr, {}, impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return {};
}

Result<void> Client::Rollback(std::string_view session) {
  auto r = impl_->Call(
      "POST", JoinPath({"v1", "sessions", session, "transaction", "rollback"}),
      nullptr, {}, impl_->options().io_timeout, Retry::kNever);
  if (!r) return std::unexpected(r.error());
  return {};
}

}  // namespace leasehold::client
