// EventStream: GET /v1/events as Server-Sent Events. It takes the socket
// over from the connection that read the request and only writes to it from
// then on: the response header, `retry: 2000` (browsers reconnect after
// that long), the EventHub's frames for the caller's namespaces, and a
// comment every 15 s. What the client sends is read and dropped; a client
// that hangs up, or falls 10,000 frames behind, ends its stream.
#ifndef LEASEHOLD_SERVER_EVENT_STREAM_H_
#define LEASEHOLD_SERVER_EVENT_STREAM_H_

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <deque>
#include <memory>

#include "server/api.h"
#include "server/event_hub.h"

namespace leasehold::server {

// Stream: a TCP socket, or a TLS stream over one (both are instantiated in
// event_stream.cc).
template <class Stream>
class EventStream : public std::enable_shared_from_this<EventStream<Stream>> {
 public:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  // `owner` is held as long as the stream lives: the HTTP server counts the
  // stream, and stops it, through the connection it came from.
  EventStream(Stream socket, Strand strand, EventHub& hub,
              std::shared_ptr<void> owner);

  // Writes the header (HTTP/1.`version` / 10, 10 or 11), then subscribes
  // with `access`. On the strand.
  void Start(EventAccess access, unsigned version);
  // Ends the stream and closes the socket. Any thread.
  void End();

 private:
  enum class Phase : std::uint8_t {
    kStarting,  // writing the header; not yet subscribed
    kOpen,      // subscribed; frames_ not empty <=> a write is under way
    kEnded,
  };
  static constexpr std::size_t kMaxQueuedFrames = 10'000;

  void Enqueue(EventHub::Frame frame);
  void Pump();
  void Heartbeat();
  void WatchForHangUp();
  void EndOnStrand();

  Stream socket_;
  Strand strand_;
  EventHub& hub_;
  std::shared_ptr<void> owner_;
  Phase phase_ = Phase::kStarting;
  std::uint64_t subscription_ = 0;
  // The frame being written first, then those waiting; kept until the
  // stream is gone, since a write in flight may still read its frame.
  std::deque<EventHub::Frame> frames_;
  boost::asio::steady_timer heartbeat_{strand_};
  std::array<char, 1024> discard_{};  // what a client sends anyway
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_EVENT_STREAM_H_
