// Client::Watch: the GET /v1/events stream on a connection of its own, at
// the leader.
#include <algorithm>

#include "client/api_codec.h"
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
  const std::string target = api::EventsPath(ns);
  const Milliseconds io = impl_->options().io_timeout;
  // At the leader: a standby redirects the stream there.
  auto stream = impl_->StartStream(target, io);
  if (!stream) return std::unexpected(stream.error());
  const http::Answer& started = stream->started;
  if (started.status != 200) {
    return std::unexpected(Error{
        started.status == 503 ? "unavailable" : "bad_response",
        "GET " + target + " answered HTTP " + std::to_string(started.status),
        started.status});
  }
  http::Connection* connection = stream->connection.get();
  detail::SseParser parser(on_event);
  const Milliseconds silence = std::max(io, kStreamSilence);
  char buffer[8192];
  while (true) {
    const auto n =
        connection->ReadBody(buffer, sizeof buffer, DeadlineAfter(silence));
    if (n.error) {
      // A stream that went silent is as gone as one that broke.
      return std::unexpected(Error{
          "unreachable",
          std::string(http::IsTimeout(n.error) ? "no answer in time " : "") +
              "reading the stream from " + connection->address().host_header +
              ": " + n.error.message(),
          0});
    }
    if (n.size == 0) return {};  // the server ended the stream
    if (!parser.Feed(std::string_view(buffer, n.size))) return {};
  }
}

}  // namespace leasehold::client
