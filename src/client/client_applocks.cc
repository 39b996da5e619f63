// Client: application locks (docs/api.md, "Application locks").
#include <boost/json/value.hpp>

#include "client/across_restarts.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::ApplockPath;

Result<AcquireOutcome> Client::AcquireOnce(std::string_view ns,
                                           std::string_view session,
                                           std::string_view resource,
                                           const AcquireOptions& options) {
  const Milliseconds wait =
      WaitingCallDeadline(impl_->options(), options.timeout);
  return Parsed(impl_->Call("POST", ApplockPath(ns, "acquire"),
                            api::AcquireBody(session, resource, options), {409},
                            wait, Retry::kNever),
                nullptr, api::ParseAcquireAnswer);
}

Result<AcquireAllOutcome> Client::AcquireAllOnce(
    std::string_view ns, std::string_view session,
    const std::vector<LockSpec>& locks, const AcquireAllOptions& options) {
  const Milliseconds wait =
      WaitingCallDeadline(impl_->options(), options.timeout);
  return Parsed(impl_->Call("POST", ApplockPath(ns, "acquire-all"),
                            api::AcquireAllBody(session, locks, options), {409},
                            wait, Retry::kNever),
                nullptr, api::ParseAcquireAllAnswer);
}

Result<AcquireOutcome> Client::Acquire(std::string_view ns,
                                       std::string_view session,
                                       std::string_view resource,
                                       const AcquireOptions& options) {
  return detail::SendAcrossRestartsIfSafe<AcquireOutcome>(
      *this,
      {std::string(ns),
       std::string(session),
       options.principal,
       {{std::string(resource), options.mode}}},
      options.owner, options.timeout,
      detail::WithTimeout(options, [&](const AcquireOptions& asked) {
        return AcquireOnce(ns, session, resource, asked);
      }));
}

Result<void> Client::Release(std::string_view ns, std::string_view session,
                             std::string_view resource, std::string_view owner,
                             std::string_view principal) {
  return Done(impl_->Call("POST", ApplockPath(ns, "release"),
                          api::ReleaseBody(session, resource, owner, principal),
                          {}, impl_->options().io_timeout, Retry::kRefused));
}

Result<std::string> Client::Mode(std::string_view ns, std::string_view session,
                                 std::string_view resource,
                                 std::string_view owner,
                                 std::string_view principal) {
  return Parsed(
      impl_->Call("GET", api::ModePath(ns, session, resource, owner, principal),
                  nullptr, {}, impl_->options().io_timeout, Retry::kIdempotent),
      nullptr, api::ParseModeAnswer);
}

Result<bool> Client::Test(std::string_view ns, std::string_view session,
                          std::string_view resource,
                          const AcquireOptions& options) {
  return Parsed(
      impl_->Call("GET", api::TestPath(ns, session, resource, options), nullptr,
                  {}, impl_->options().io_timeout, Retry::kIdempotent),
      nullptr, api::ParseTestAnswer);
}

Result<std::vector<LockInfo>> Client::ListLocks(std::string_view ns,
                                                json::value* answer) {
  return Parsed(impl_->Call("GET", ApplockPath(ns), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                answer, api::ParseLocks);
}

Result<AcquireAllOutcome> Client::AcquireAll(std::string_view ns,
                                             std::string_view session,
                                             const std::vector<LockSpec>& locks,
                                             const AcquireAllOptions& options) {
  return detail::SendAcrossRestartsIfSafe<AcquireAllOutcome>(
      *this, {std::string(ns), std::string(session), options.principal, locks},
      options.owner, options.timeout,
      detail::WithTimeout(options, [&](const AcquireAllOptions& asked) {
        return AcquireAllOnce(ns, session, locks, asked);
      }));
}

}  // namespace leasehold::client
