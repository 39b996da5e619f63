// Client::Watch: the GET /v1/events stream on a connection of its own.
#include <algorithm>

#include "client/client_impl.h"
#include "client/sse_parser.h"

namespace leasehold::client {

namespace {

// The server sends a heartbeat every 15 s; silence for much longer than
// that means the stream is dead even if no FIN arrived.
constexpr Milliseconds kStreamSilence{45'000};

}  // namespace

Result<void> Client::Watch(std::string_view ns,
                           const std::function<bool(const Event&)>& on_event) {
  std::string target = "/v1/events";
  if (!ns.empty()) detail::AddQuery(target, "ns", ns);
  auto connection = impl_->NewConnection();
  const Milliseconds io = impl_->options().io_timeout;
  auto status =
      connection->StartStream({"GET", target, ""}, detail::DeadlineAfter(io));
  if (!status) return std::unexpected(status.error());
  if (*status != 200) {
    return std::unexpected(
        Error{"bad_response",
              "GET " + target + " answered HTTP " + std::to_string(*status),
              *status});
  }
  detail::SseParser parser(on_event);
  const Milliseconds silence = std::max(io, kStreamSilence);
  char buffer[8192];
  while (true) {
    auto n = connection->ReadBody(buffer, sizeof buffer,
                                  detail::DeadlineAfter(silence));
    if (!n) {
      return std::unexpected(Error{"unreachable", n.error().message, 0});
    }
    if (*n == 0) return {};  // the server ended the stream
    if (!parser.Feed(std::string_view(buffer, *n))) return {};
  }
}

}  // namespace leasehold::client
