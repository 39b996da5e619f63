#include "server/event_stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>

namespace leasehold::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

EventStream::EventStream(tcp::socket socket, Strand strand, EventHub& hub,
                         std::shared_ptr<void> owner)
    : socket_(std::move(socket)),
      strand_(std::move(strand)),
      hub_(hub),
      owner_(std::move(owner)) {}

void EventStream::Start(EventAccess access, unsigned version) {
  auto res = std::make_shared<http::response<http::empty_body>>(
      http::status::ok, version);
  res->set(http::field::server, "leasehold");
  res->set(http::field::content_type, "text/event-stream");
  res->set(http::field::cache_control, "no-cache");
  res->keep_alive(false);  // the stream ends when the connection does
  auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
  http::async_write_header(
      socket_, *sr,
      [self = shared_from_this(), res, sr, access = std::move(access)](
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

void EventStream::End() {
  asio::post(strand_, [self = shared_from_this()] { self->EndOnStrand(); });
}

void EventStream::Enqueue(EventHub::Frame frame) {
  if (phase_ != Phase::kOpen) return;
  if (frames_.size() >= kMaxQueuedFrames) return EndOnStrand();  // too slow
  frames_.push_back(std::move(frame));
  if (frames_.size() == 1) Pump();  // else the write under way goes on
}

void EventStream::Pump() {
  asio::async_write(
      socket_, asio::buffer(*frames_.front()),
      [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec || self->phase_ != Phase::kOpen) return self->EndOnStrand();
        self->frames_.pop_front();
        if (!self->frames_.empty()) self->Pump();
      });
}

// A comment every 15 s keeps proxies from closing an idle stream and finds
// clients that vanished without a FIN.
void EventStream::Heartbeat() {
  heartbeat_.expires_after(std::chrono::seconds(15));
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->phase_ != Phase::kOpen) return;
    self->Enqueue(std::make_shared<const std::string>(": ping\n\n"));
    self->Heartbeat();
  });
}

void EventStream::WatchForHangUp() {
  socket_.async_read_some(
      asio::buffer(discard_),
      [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec) return self->EndOnStrand();
        self->WatchForHangUp();  // a client has nothing to say on a stream
      });
}

void EventStream::EndOnStrand() {
  if (phase_ == Phase::kEnded) return;
  phase_ = Phase::kEnded;
  if (subscription_ != 0) hub_.Unsubscribe(subscription_);
  subscription_ = 0;
  heartbeat_.cancel();
  beast::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  socket_.close(ec);
}

}  // namespace leasehold::server
