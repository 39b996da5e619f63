#include "server/event_stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>

namespace leasehold::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

template <class Stream>
EventStream<Stream>::EventStream(Stream socket, Strand strand, EventHub& hub,
                                 std::shared_ptr<void> owner)
    : socket_(std::move(socket)),
      strand_(std::move(strand)),
      hub_(hub),
      owner_(std::move(owner)) {}

template <class Stream>
void EventStream<Stream>::Start(EventAccess access, unsigned version) {
  auto res = std::make_shared<http::response<http::empty_body>>(
      http::status::ok, version);
  res->set(http::field::server, "leasehold");
  res->set(http::field::content_type, "text/event-stream");
  res->set(http::field::cache_control, "no-cache");
  res->keep_alive(false);  // the stream ends when the connection does
  auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
  http::async_write_header(
      socket_, *sr,
      [self = this->shared_from_this(), res, sr, access = std::move(access)](
          beast::error_code ec, std::size_t) mutable {
        if (ec || self->phase_ == Phase::kEnded) return self->EndOnStrand();
        self->phase_ = Phase::kOpen;
        std::weak_ptr<EventStream> weak = self;
        self->subscription_ = self->hub_.Subscribe(
            std::move(access.ns),
            [weak](const EventHub::Frame& frame) {
              if (auto s = weak.lock()) {
                asio::post(s->strand_, [s, frame] { s->Enqueue(frame); });
              }
            },
            access.unscoped);
        self->Enqueue(std::make_shared<const std::string>("retry: 2000\n\n"));
        self->WatchForHangUp();
        self->Heartbeat();
      });
}

template <class Stream>
void EventStream<Stream>::End() {
  asio::post(strand_,
             [self = this->shared_from_this()] { self->EndOnStrand(); });
}

template <class Stream>
void EventStream<Stream>::Enqueue(EventHub::Frame frame) {
  if (phase_ != Phase::kOpen) return;
  if (frames_.size() >= kMaxQueuedFrames) return EndOnStrand();  // too slow
  frames_.push_back(std::move(frame));
  if (frames_.size() == 1) Pump();  // else the write under way goes on
}

template <class Stream>
void EventStream<Stream>::Pump() {
  asio::async_write(
      socket_, asio::buffer(*frames_.front()),
      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec || self->phase_ != Phase::kOpen) return self->EndOnStrand();
        self->frames_.pop_front();
        if (!self->frames_.empty()) self->Pump();
      });
}

// A comment every 15 s keeps proxies from closing an idle stream and finds
// clients that vanished without a FIN.
template <class Stream>
void EventStream<Stream>::Heartbeat() {
  heartbeat_.expires_after(std::chrono::seconds(15));
  heartbeat_.async_wait(
      [self = this->shared_from_this()](beast::error_code ec) {
        if (ec || self->phase_ != Phase::kOpen) return;
        self->Enqueue(std::make_shared<const std::string>(": ping\n\n"));
        self->Heartbeat();
      });
}

template <class Stream>
void EventStream<Stream>::WatchForHangUp() {
  socket_.async_read_some(
      asio::buffer(discard_),
      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec) return self->EndOnStrand();
        self->WatchForHangUp();  // a client has nothing to say on a stream
      });
}

template <class Stream>
void EventStream<Stream>::EndOnStrand() {
  if (phase_ == Phase::kEnded) return;
  phase_ = Phase::kEnded;
  if (subscription_ != 0) hub_.Unsubscribe(subscription_);
  subscription_ = 0;
  heartbeat_.cancel();
  beast::error_code ec;
  tcp::socket& tcp_socket = beast::get_lowest_layer(socket_);
  tcp_socket.shutdown(tcp::socket::shutdown_send, ec);
  tcp_socket.close(ec);
}

template class EventStream<tcp::socket>;
template class EventStream<asio::ssl::stream<tcp::socket>>;

}  // namespace leasehold::server
