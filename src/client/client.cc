// Client: creation, the generic Call, health, sessions and transactions.
#include <algorithm>
#include <boost/json/value.hpp>

#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::SessionPath;

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<Client> Client::Create(ClientOptions options) {
  auto nodes = detail::ParseUrls(options.url);
  if (!nodes) return std::unexpected(nodes.error());
  if (options.io_timeout.count() <= 0) {
    return std::unexpected(
        Error{"bad_request", "ClientOptions::io_timeout must be positive", 0});
  }
  // Loaded now, so that a bad file is said at once, when TLS is to be
  // used (a plaintext client needs no OpenSSL context).
  std::shared_ptr<const http::TlsClientContext> tls;
  if (std::ranges::any_of(*nodes, &detail::Endpoint::tls) ||
      !options.ca_file.empty() || !options.cert_file.empty() ||
      !options.key_file.empty()) {
    auto made = http::TlsClientContext::Create(
        {options.ca_file, options.cert_file, options.key_file});
    if (!made) return std::unexpected(Error{"bad_url", made.error(), 0});
    tls = std::move(*made);
  }
  return Client(std::make_shared<Impl>(std::move(options), std::move(*nodes),
                                       std::move(tls)));
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
  const Retry retry = method == "GET" || method == "HEAD" ? Retry::kIdempotent
                                                          : Retry::kRefused;
  return impl_->Call(method, std::string(target), body, accept_status, wait,
                     retry);
}

Result<bool> Client::Healthy() { return impl_->Healthy(); }

Result<SessionInfo> Client::OpenSession(std::string_view name,
                                        Milliseconds ttl) {
  return Parsed(
      impl_->Call("POST", api::SessionsPath(), api::OpenSessionBody(name, ttl),
                  {}, impl_->options().io_timeout, Retry::kRefused),
      nullptr, [](const json::value& a) {
        return api::ParseSession(a, "POST /v1/sessions");
      });
}

Result<KeepaliveAnswer> Client::Keepalive(std::string_view session) {
  return KeepaliveWithin(session, impl_->options().io_timeout);
}

Result<KeepaliveAnswer> Client::KeepaliveWithin(std::string_view session,
                                                Milliseconds wait) {
  return Parsed(impl_->Call("POST", SessionPath(session, "keepalive"), nullptr,
                            {}, wait, Retry::kIdempotent),
                nullptr, api::ParseKeepaliveAnswer);
}

Result<void> Client::EndSession(std::string_view session) {
  return Done(impl_->Call("DELETE", SessionPath(session), nullptr, {},
                          impl_->options().io_timeout, Retry::kRefused));
}

Result<std::vector<SessionInfo>> Client::ListSessions(json::value* answer) {
  return Parsed(impl_->Call("GET", api::SessionsPath(), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                answer, api::ParseSessions);
}

Result<bool> Client::Cancel(std::string_view session) {
  return Parsed(impl_->Call("POST", SessionPath(session, "cancel"), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                nullptr, api::ParseCancelAnswer);
}

Result<std::int64_t> Client::BeginTransaction(std::string_view session) {
  return Parsed(impl_->Call("POST", api::TransactionPath(session), nullptr, {},
                            impl_->options().io_timeout, Retry::kRefused),
                nullptr, api::ParseTransactionAnswer);
}

Result<void> Client::Commit(std::string_view session) {
  return Done(impl_->Call("POST", api::TransactionPath(session, "commit"),
                          nullptr, {}, impl_->options().io_timeout,
                          Retry::kRefused));
}

Result<void> Client::Rollback(std::string_view session) {
  return Done(impl_->Call("POST", api::TransactionPath(session, "rollback"),
                          nullptr, {}, impl_->options().io_timeout,
                          Retry::kRefused));
}

}  // namespace leasehold::client
