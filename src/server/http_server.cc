// With event_stream.cc and http_request.cc, the only translation units that
// include Beast (it is slow to compile).
#include "server/http_server.h"

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "common/log.h"
#include "server/connection_state.h"
#include "server/dashboard_assets.h"
#include "server/event_stream.h"
#include "server/http_request.h"
#include "server/json_io.h"

namespace leasehold::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using PlainStream = tcp::socket;
using TlsStream = asio::ssl::stream<tcp::socket>;
using Strand = asio::strand<asio::io_context::executor_type>;

// What the server asks of a connection of either kind.
class Connection {
 public:
  virtual ~Connection() = default;
  // Closes the connection if it is between requests, or ends its event
  // stream. Any thread.
  virtual void CloseIfIdle() = 0;
};

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& io, Api& api, HttpOptions o, EventHub* events)
      : io_(io),
        api_(api),
        options_(std::move(o)),
        events_(events),
        tls_(options_.tls),
        acceptor_(asio::make_strand(io)),
        accept_retry_(acceptor_.get_executor()) {}

  Result<std::uint16_t> Start();
  void Stop();
  void Accept();
  // Starts serving an accepted socket, as TLS or not.
  void Admit(tcp::socket socket, Strand strand);
  void Forget(Connection* c);

  asio::io_context& io_;
  Api& api_;
  const HttpOptions options_;
  EventHub* events_;
  // What new handshakes use (null: plaintext); SetTls swaps it.
  std::atomic<std::shared_ptr<const ServerTls>> tls_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;  // after a failed accept (e.g. EMFILE)
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  // Every open connection, by address (its destructor removes it), with a
  // weak pointer for Stop() to reach it.
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections_;
  // Connections refused past max_connections: logged at most every 10 s.
  log::BurstCounter refused_{std::chrono::seconds(10)};
};

// One client connection: read a request, answer it, repeat; its phase
// (connection_state.h) says where in that it is.
//
// The request loop is written for the common case of a small request
// answered from memory: bytes go straight from the socket into Beast's
// parser (no composed read operation), and the answer is written with one
// non-blocking send. The answer is queued on the strand rather than written
// from inside the handler, even when it is ready at once: the requests that
// arrived together are all handled before the first answer wakes its client,
// as Redis does by writing its replies before it next waits (a client woken
// on this core would otherwise preempt the server in the middle of the
// batch; +15-25% pairs/s with one I/O thread, docs/benchmarks.md, "Profiles,
// round 2").
//
// Stream is a TCP socket, or a TLS stream over one (then the handshake
// comes first, and what goes to the TCP socket itself, shutdown, cancel
// and close, goes to its lowest layer).
template <class Stream>
class BasicConnection final
    : public Connection,
      public std::enable_shared_from_this<BasicConnection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `tls`: the material `stream` was made with (kept while it lives).
  BasicConnection(Stream stream, Strand strand,
                  std::shared_ptr<HttpServer::Impl> server,
                  std::shared_ptr<const ServerTls> tls = nullptr)
      : socket_(std::move(stream)),
        strand_(std::move(strand)),
        server_(std::move(server)),
        tls_(std::move(tls)) {}
  ~BasicConnection() override { server_->Forget(this); }

  void Start() {
    asio::dispatch(strand_, [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->Handshake();
      } else {
        beast::error_code ec;
        // Sends that would block return at once instead of polling: Send()
        // then finishes asynchronously.
        self->socket_.non_blocking(true, ec);
        if (ec) return self->Close();
        self->Read();
      }
    });
  }

  void CloseIfIdle() override {
    asio::post(strand_, [self = this->shared_from_this()] {
      if (self->state_.Is(Phase::kStreaming)) {
        if (auto stream = self->stream_.lock()) stream->End();
      } else if (self->state_.Is(Phase::kReading)) {
        self->Close(tcp::socket::shutdown_both);
      }
    });
  }

 private:
  using Phase = ConnectionPhase;
  // Bytes asked of the socket per read.
  static constexpr std::size_t kReadSize = 16 << 10;

  tcp::socket& tcp_socket() { return beast::get_lowest_layer(socket_); }

  // TLS: tells a TLS client from a plaintext one by its first bytes, then
  // shakes hands, all within the request timeout (a stalled handshake is
  // closed as a stalled request is). A plaintext request gets a 400 in
  // cleartext saying why, so that its client need not guess.
  void Handshake() {
    SetDeadline();
    beast::async_detect_ssl(
        tcp_socket(), buffer_,
        [self = this->shared_from_this()](beast::error_code ec, bool tls) {
          if (ec || !self->state_.Is(Phase::kReading)) return self->Close();
          if (!tls) return self->RefusePlaintext();
          self->socket_.async_handshake(
              asio::ssl::stream_base::server, self->buffer_.data(),
              [self](beast::error_code shake_ec, std::size_t used) {
                self->buffer_.consume(used);
                // Nothing may follow a ClientHello before the server's
                // answer (no 0-RTT): left-over bytes are a broken client.
                if (shake_ec || self->buffer_.size() > 0 ||
                    !self->state_.Is(Phase::kReading)) {
                  return self->Close();
                }
                self->peer_ = VerifiedPeer(self->socket_.native_handle());
                self->Read();
              });
        });
  }

  // The answer goes to the TCP socket itself: no TLS was agreed.
  void RefusePlaintext() {
    keep_alive_ = false;
    FormatResponse(ErrorResponse(Status(StatusCode::kBadRequest,
                                        "this port speaks TLS: use an "
                                        "https:// URL")),
                   11);
    state_.MoveTo(Phase::kWriting);
    asio::async_write(
        tcp_socket(), asio::buffer(response_),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->Close();
          self->Linger();
        });
  }

  // In kReading: starts reading the next request.
  void Read() {
    parser_.emplace();
    ApplyLimits(*parser_, server_->options_);
    header_bytes_ = 0;
    SetDeadline();
    if (buffer_.size() > 0) {
      // A pipelined request: start it on a fresh stack. Answers written at
      // once (dashboard files, refusals) would otherwise nest one request
      // inside the last, as deep as the client pipelines.
      return asio::post(strand_,
                        [self = this->shared_from_this()] { self->Parse(); });
    }
    Parse();
  }

  // Feeds the buffered bytes to the parser; reads more while it needs them.
  void Parse() {
    if (!state_.Is(Phase::kReading)) return;  // closed meanwhile
    if (auto ec =
            FeedParser(*parser_, buffer_, server_->options_, header_bytes_)) {
      return OnRequest(ec);
    }
    if (parser_->is_done()) return OnRequest({});
    socket_.async_read_some(
        buffer_.prepare(kReadSize),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
          self->buffer_.commit(n);
          if (ec == asio::error::eof) {
            // Between requests, a hang-up; inside one, a torn request.
            if (!self->parser_->got_some()) return self->Close();
            ec = http::error::partial_message;
          }
          if (ec) return self->OnRequest(ec);
          self->Parse();
        });
  }

  // A whole request is parsed (or reading it failed with `ec`).
  void OnRequest(beast::error_code ec) {
    if (ec && !IsHttpError(ec)) {
      return Close();  // the socket failed, was closed, or timed out
    }
    if (!state_.Is(Phase::kReading)) return;
    if (ec) {
      keep_alive_ = false;
      return Write(RefusedRequestResponse(ec, server_->options_), 11);
    }
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive() && !server_->stopping_;
    version_ = req.version();
    ClearDeadline();  // a lock request may wait as long as it asked
    RequestRoute route =
        RouteRequest(server_->api_, server_->events_ != nullptr, req, peer_);
    if (auto* answer = std::get_if<ApiResponse>(&route)) {
      return Write(std::move(*answer), version_);
    }
    if (auto* access = std::get_if<EventAccess>(&route)) {
      return StartStream(std::move(*access));
    }
    if (auto* asset = std::get_if<const DashboardAsset*>(&route)) {
      return WriteAsset(**asset, req[http::field::if_none_match]);
    }
    ApiRequest api_req = std::move(std::get<ApiRequest>(route));
    auto self = this->shared_from_this();
    const std::uint64_t seq = ++request_seq_;
    state_.MoveTo(Phase::kHandling);
    // The parked notice and the answer reach this strand by different
    // paths; the sequence number keeps a late notice from watching a
    // connection that has moved on.
    api_req.on_parked = [self, seq](WaitId wait) {
      asio::post(self->strand_, [self, wait, seq] { self->Watch(wait, seq); });
    };
    server_->api_.Handle(std::move(api_req), [self, seq](ApiResponse r) {
      asio::post(self->strand_, [self, seq, r = std::move(r)]() mutable {
        // Exactly one answer per request reaches the socket, even if a
        // failing store made the Api answer twice.
        if (!self->AwaitsAnswer(seq)) return;
        self->Answer(std::move(r));
      });
    });
  }

  // Whether request `seq` is still with the Api.
  bool AwaitsAnswer(std::uint64_t seq) const {
    return (state_.Is(Phase::kHandling) || state_.Is(Phase::kWatching)) &&
           seq == request_seq_;
  }

  // Hands the socket to an EventStream, which keeps this connection (and
  // so its place among the server's connections) as long as it streams.
  void StartStream(EventAccess access) {
    state_.MoveTo(Phase::kStreaming);
    deadline_.cancel();
    auto stream = std::make_shared<EventStream<Stream>>(
        std::move(socket_), strand_, *server_->events_,
        this->shared_from_this());
    stream_ = stream;
    stream->Start(std::move(access), version_);
  }

  // While a request waits, a read that ends means the client hung up.
  void Watch(WaitId wait, std::uint64_t seq) {
    if (!AwaitsAnswer(seq)) return;
    // acquire-all parks once for each lock it waits for, and the notices
    // can arrive out of order; wait ids grow, so the largest is current.
    wait_ = std::max(wait_, wait);
    if (state_.Is(Phase::kWatching)) return;
    state_.MoveTo(Phase::kWatching);
    socket_.async_read_some(
        buffer_.prepare(1024),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
          self->buffer_.commit(n);  // a pipelined request: keep its bytes
          if (self->state_.Is(Phase::kAnswerHeld)) {
            auto r = std::move(*self->pending_);
            self->pending_.reset();
            return self->Write(std::move(r), self->version_);
          }
          if (!self->state_.Is(Phase::kWatching)) return;  // closed
          self->state_.MoveTo(Phase::kHandling);
          const std::size_t read_ahead_limit =
              self->server_->options_.header_limit +
              self->server_->options_.body_limit;
          if ((ec && ec != asio::error::operation_aborted) ||
              self->buffer_.size() > read_ahead_limit) {
            // Hung up, or sent more than a whole request ahead of its
            // answer: stop reading, end the wait, close after answering.
            self->server_->api_.CancelWait(self->wait_);
            self->keep_alive_ = false;
          } else if (!ec) {
            self->Watch(self->wait_, self->request_seq_);
          }
        });
  }

  void Answer(ApiResponse r) {
    if (state_.Is(Phase::kWatching)) {
      state_.MoveTo(Phase::kAnswerHeld);
      pending_ = std::move(r);
      beast::error_code ec;
      tcp_socket().cancel(ec);  // the watch ends, then writes
      return;
    }
    Write(std::move(r), version_);
  }

  void Write(ApiResponse r, unsigned version) {
    FormatResponse(r, version);
    file_ = std::move(r.file);
    file_sent_ = 0;
    Send();
  }

  // 200 with the file, or 304 when the browser's copy is current. "no-cache"
  // makes the browser ask each time (a cheap 304), so a new binary's page
  // is never mixed with an old script.
  void WriteAsset(const DashboardAsset& a, std::string_view if_none_match) {
    const bool current = if_none_match == a.etag;
    response_.clear();
    response_.append(version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    response_.append(current ? "304 Not Modified" : "200 OK");
    response_.append("\r\nServer: leasehold\r\nETag: ").append(a.etag);
    response_.append("\r\nCache-Control: no-cache");
    response_.append("\r\nX-Content-Type-Options: nosniff");
    response_.append(
        "\r\nContent-Security-Policy: default-src 'self'; "
        "frame-ancestors 'none'");
    if (!current) {
      response_.append("\r\nContent-Type: ").append(a.content_type);
      response_.append("\r\nContent-Length: ");
      response_.append(std::to_string(a.body.size()));
    }
    if (!keep_alive_ && version_ >= 11) {
      response_.append("\r\nConnection: close");
    } else if (keep_alive_ && version_ < 11) {
      response_.append("\r\nConnection: keep-alive");
    }
    response_.append("\r\n\r\n");
    if (!current) response_.append(a.body);
    Send();
  }

  // Writes response_, then reads the next request (or closes). One
  // non-blocking send nearly always takes it all; what it leaves goes out
  // asynchronously.
  void Send() {
    state_.MoveTo(Phase::kWriting);
    SetDeadline();
    std::size_t sent = 0;
    if constexpr (!kTls) {
      // (A TLS record cannot be half written and resumed this way.)
      beast::error_code sync_ec;
      sent = socket_.write_some(asio::buffer(response_), sync_ec);
      if (!sync_ec && sent == response_.size()) return AfterSend();
      if (sync_ec && sync_ec != asio::error::would_block) return Close();
    }
    asio::async_write(
        socket_, asio::buffer(response_) + sent,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->Close();
          self->AfterSend();
        });
  }

  void AfterSend() {
    if (file_ != nullptr) return SendFileChunk();
    if (!keep_alive_ || server_->stopping_) return Linger();
    state_.MoveTo(Phase::kReading);
    Read();
  }

  // response_ = status line, headers and body, as one buffer for one write.
  // (Beast's serializer walks a chain of buffer views and took more CPU
  // than the rest of a lock request; the headers here are few and fixed.)
  void FormatResponse(const ApiResponse& r, unsigned version) {
    const auto status = static_cast<http::status>(r.status);
    // No body, and so no Content-Length, for 1xx, 204 and 304 (RFC 9110).
    const bool bodiless = r.status < 200 || r.status == 204 || r.status == 304;
    response_.clear();
    response_.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    response_.append(std::to_string(r.status)).append(" ");
    response_.append(http::obsolete_reason(status));
    response_.append("\r\nServer: leasehold");
    if (!r.location.empty()) {
      response_.append("\r\nLocation: ").append(r.location);
    }
    if (!bodiless) {
      response_.append("\r\nContent-Type: ").append(r.content_type);
      response_.append("\r\nContent-Length: ");
      response_.append(
          std::to_string(r.file != nullptr ? r.file->size() : r.body.size()));
    }
    if (!keep_alive_ && version >= 11) {
      response_.append("\r\nConnection: close");
    } else if (keep_alive_ && version < 11) {
      response_.append("\r\nConnection: keep-alive");
    }
    response_.append("\r\n\r\n");
    if (!bodiless) response_.append(r.body);
  }

  // The next chunk of a file body (after its headers), read into response_;
  // each chunk has the request timeout to go out. A file that cannot be
  // read ends the connection: the client sees a body shorter than its
  // Content-Length, never a whole one that is wrong.
  void SendFileChunk() {
    const std::uint64_t left = file_->size() - file_sent_;
    if (left == 0) {
      file_.reset();
      response_.clear();
      response_.shrink_to_fit();  // a kept-alive connection keeps no chunk
      return AfterSend();
    }
    response_.resize(
        static_cast<std::size_t>(std::min<std::uint64_t>(left, kFileChunk)));
    const ssize_t n = ::pread(file_->fd(), response_.data(), response_.size(),
                              static_cast<off_t>(file_sent_));
    if (n <= 0) return Close();
    response_.resize(static_cast<std::size_t>(n));
    file_sent_ += static_cast<std::uint64_t>(n);
    SetDeadline();
    asio::async_write(
        socket_, asio::buffer(response_),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->Close();
          self->SendFileChunk();
        });
  }

  // After the last answer: stop sending, but read and drop what the client
  // is still sending (say, the rest of a body that was too large) for a
  // moment, so that it can read our answer instead of a reset.
  void Linger() {
    state_.MoveTo(Phase::kLingering);
    beast::error_code ec;
    tcp_socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    // Its own, shorter deadline: the timer is re-armed for it now, not left
    // at the request timeout it may be waiting for.
    deadline_at_ =
        Clock::now() + (server_->stopping_ ? std::chrono::milliseconds(200)
                                           : std::chrono::milliseconds(2000));
    ArmDeadline();
    Drain();
  }

  // (Over TLS too the bytes are read raw: they are dropped anyway.)
  void Drain() {
    buffer_.consume(buffer_.size());
    tcp_socket().async_read_some(
        buffer_.prepare(64 << 10),
        [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
          self->buffer_.commit(n);
          if (ec) return self->Close();
          self->Drain();
        });
  }

  void Close(tcp::socket::shutdown_type how = tcp::socket::shutdown_send) {
    state_.MoveTo(Phase::kClosed);
    file_.reset();
    deadline_.cancel();
    beast::error_code ec;
    tcp_socket().shutdown(how, ec);
    tcp_socket().close(ec);
  }

  // The request timeout: a request must be read, and its answer written,
  // within request_timeout. Kept as a time point that each request moves,
  // checked by one timer that is re-armed only when it fires (at most once
  // per timeout), instead of Beast's per-operation timer: re-arming that on
  // every read and write cost a timerfd_settime system call per request
  // and about a fifth of the server's CPU with one client
  // (docs/benchmarks.md, "Profiles").
  void SetDeadline() {
    deadline_at_ = Clock::now() + server_->options_.request_timeout;
    if (!deadline_armed_) ArmDeadline();
  }
  void ClearDeadline() { deadline_at_ = Clock::time_point::max(); }

  void ArmDeadline() {
    deadline_armed_ = true;
    deadline_.expires_at(deadline_at_ == Clock::time_point::max()
                             ? Clock::now() + server_->options_.request_timeout
                             : deadline_at_);
    deadline_.async_wait(
        [weak = this->weak_from_this()](const beast::error_code& ec) {
          auto self = weak.lock();
          if (self == nullptr || ec) return;  // closed or gone
          self->deadline_armed_ = false;
          if (self->state_.Is(Phase::kStreaming) ||
              self->state_.Is(Phase::kClosed)) {
            return;  // the socket is no longer this connection's
          }
          if (Clock::now() >= self->deadline_at_) return self->Close();
          self->ArmDeadline();
        });
  }

  Stream socket_;
  Strand strand_;
  ConnectionState state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::size_t header_bytes_ = 0;  // of the request being read
  std::shared_ptr<HttpServer::Impl> server_;
  std::shared_ptr<const ServerTls> tls_;  // what socket_ was made with
  // The client's verified certificate (TLS), for every request it sends.
  std::shared_ptr<const PeerCertificate> peer_;
  std::uint64_t request_seq_ = 0;       // the request now with the Api
  WaitId wait_ = 0;                     // its latest wait, while it is parked
  std::optional<ApiResponse> pending_;  // in kAnswerHeld: the answer
  std::string response_;                // the answer being written; reused
  // A file body still to send after response_, and how much of it went.
  std::shared_ptr<const FileBody> file_;
  std::uint64_t file_sent_ = 0;
  static constexpr std::uint64_t kFileChunk = 256 << 10;
  std::weak_ptr<EventStream<Stream>> stream_;  // in kStreaming
  // Facts of the current request, independent of the phase: its HTTP
  // version, and whether the connection stays open after its answer (the
  // client's wish, cleared by a refusal, a hang-up or Stop()).
  unsigned version_ = 11;
  bool keep_alive_ = true;
  // The deadline timer's own state: it runs across every phase, and
  // deadline_armed_ says only whether its one wait is outstanding.
  using Clock = std::chrono::steady_clock;
  asio::steady_timer deadline_{strand_};
  Clock::time_point deadline_at_ = Clock::time_point::max();
  bool deadline_armed_ = false;
};

Result<std::uint16_t> HttpServer::Impl::Start() {
  beast::error_code ec;
  const auto address = asio::ip::make_address(options_.address, ec);
  if (ec) {
    return Error(
        StatusCode::kBadRequest,
        "cannot listen on \"" + options_.address + "\": not an IP address");
  }
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Error(StatusCode::kUnavailable,
                 "cannot listen on " + options_.address + ":" +
                     std::to_string(options_.port) + ": " + ec.message());
  }
  const std::uint16_t port = acceptor_.local_endpoint().port();
  asio::dispatch(acceptor_.get_executor(),
                 [self = shared_from_this()] { self->Accept(); });
  return port;
}

void HttpServer::Impl::Accept() {
  Strand strand = asio::make_strand(io_);
  acceptor_.async_accept(strand, [self = shared_from_this(), strand](
                                     beast::error_code ec, tcp::socket socket) {
    if (self->stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors, or a connection aborted before it was
      // taken: keep accepting, after a pause that lets the first pass.
      self->accept_retry_.expires_after(std::chrono::milliseconds(50));
      self->accept_retry_.async_wait([self](beast::error_code) {
        if (!self->stopping_) self->Accept();
      });
      return;
    }
    bool admitted;
    {
      std::lock_guard lock(self->mu_);
      admitted = self->connections_.size() < self->options_.max_connections;
    }
    if (admitted) {
      self->Admit(std::move(socket), strand);
    } else if (auto n =
                   self->refused_.Count(std::chrono::steady_clock::now())) {
      // Closed unanswered: a client that cannot connect retries elsewhere.
      log::Warn("refused " + std::to_string(*n) +
                    " connection(s) since the last such line (at most one "
                    "every 10 s): max_connections reached",
                {{"max_connections",
                  std::to_string(self->options_.max_connections)}});
    }
    self->Accept();
  });
}

void HttpServer::Impl::Admit(tcp::socket socket, Strand strand) {
  // Answers go out at once, not held back for coalescing (Nagle).
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto start = [this](auto c) {
    {
      std::lock_guard lock(mu_);
      connections_.emplace(c.get(), c);
    }
    c->Start();
  };
  if (auto tls = tls_.load()) {
    TlsStream stream(std::move(socket), tls->context());
    start(std::make_shared<BasicConnection<TlsStream>>(
        std::move(stream), std::move(strand), shared_from_this(),
        std::move(tls)));
  } else {
    start(std::make_shared<BasicConnection<PlainStream>>(
        std::move(socket), std::move(strand), shared_from_this()));
  }
}

void HttpServer::Impl::Forget(Connection* c) {
  std::lock_guard lock(mu_);
  connections_.erase(c);
}

void HttpServer::Impl::Stop() {
  stopping_ = true;
  asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
  });
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard lock(mu_);
    for (auto& [address, w] : connections_) {
      if (auto c = w.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live) c->CloseIfIdle();
}

HttpServer::HttpServer(asio::io_context& io, Api& api, HttpOptions options,
                       EventHub* events)
    : impl_(std::make_shared<Impl>(io, api, std::move(options), events)) {}

HttpServer::~HttpServer() = default;

Result<std::uint16_t> HttpServer::Start() { return impl_->Start(); }
void HttpServer::Stop() { impl_->Stop(); }

void HttpServer::SetTls(std::shared_ptr<const ServerTls> tls) {
  if (impl_->options_.tls == nullptr || tls == nullptr) return;
  impl_->tls_.store(std::move(tls));
}

std::shared_ptr<const ServerTls> HttpServer::tls() const {
  return impl_->tls_.load();
}

std::size_t HttpServer::open_connections() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->connections_.size();
}

}  // namespace leasehold::server
