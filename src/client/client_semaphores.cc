// Client: semaphores (docs/api.md, "Semaphores").
#include <boost/json/value.hpp>

#include "client/across_restarts.h"
#include "client/api_codec.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace json = boost::json;
using api::SemaphorePath;

Result<SemaphoreOutcome> Client::AcquireSemaphoreOnce(
    std::string_view ns, std::string_view session, std::string_view name,
    const SemaphoreOptions& options) {
  const Milliseconds wait =
      WaitingCallDeadline(impl_->options(), options.timeout);
  return Parsed(impl_->Call("POST", SemaphorePath(ns, name, "acquire"),
                            api::SemaphoreAcquireBody(session, options), {409},
                            wait, Retry::kNever),
                nullptr, api::ParseSemaphoreAcquireAnswer);
}

Result<SemaphoreOutcome> Client::AcquireSemaphore(
    std::string_view ns, std::string_view session, std::string_view name,
    const SemaphoreOptions& options) {
  return detail::SendAcrossRestartsIfSafe(
      *this,
      {std::string(ns), std::string(session), options.principal,
       std::string(name), options.permits},
      options.owner, options.timeout,
      detail::WithTimeout(options, [&](const SemaphoreOptions& asked) {
        return AcquireSemaphoreOnce(ns, session, name, asked);
      }));
}

Result<std::int64_t> Client::ReleaseSemaphore(
    std::string_view ns, std::string_view session, std::string_view name,
    std::string_view owner, std::int64_t permits, std::string_view principal) {
  return Parsed(
      impl_->Call("POST", SemaphorePath(ns, name, "release"),
                  api::SemaphoreReleaseBody(session, owner, permits, principal),
                  {}, impl_->options().io_timeout, Retry::kRefused),
      nullptr, api::ParseSemaphoreReleaseAnswer);
}

Result<std::vector<SemaphoreInfo>> Client::ListSemaphores(std::string_view ns,
                                                          json::value* answer) {
  return Parsed(impl_->Call("GET", api::SemaphoresPath(ns), nullptr, {},
                            impl_->options().io_timeout, Retry::kIdempotent),
                answer, api::ParseSemaphores);
}

Result<SemaphoreInfo> Client::GetSemaphore(std::string_view ns,
                                           std::string_view name,
                                           std::string_view principal) {
  return Parsed(
      impl_->Call("GET", api::GetSemaphorePath(ns, name, principal), nullptr,
                  {}, impl_->options().io_timeout, Retry::kIdempotent),
      nullptr, api::ParseSemaphore);
}

}  // namespace leasehold::client
