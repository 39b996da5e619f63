// TestServer (src/testing/test_server.h): what `leasehold serve --store
// memory --clock manual` runs (src/cli/serve.cc), started in this process.
#include "testing/test_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "common/manual_clock.h"
#include "server/frontend.h"
#include "service/engine_service.h"
#include "store/memory/memory_store.h"

namespace leasehold::testing {

namespace asio = boost::asio;

namespace {

client::Error ErrorOf(const Status& st) {
  return client::Error{std::string(StatusCodeName(st.code())), st.message(), 0};
}

}  // namespace

class TestServer::Impl {
 public:
  // Builds the server and starts listening on a free loopback port.
  Status Open(const TestServerOptions& options) {
    auto opened = EngineService::Open(io_, OpenMemoryStore(), {}, clock_);
    if (!opened) return opened.error();
    service_ = std::move(*opened);
    service_->UseManualClock(clock_);
    for (const auto& [ns, ns_options] : options.namespaces) {
      service_->SetNamespaceOptions(ns, ns_options);
    }
    server::ApiOptions api_options;
    api_options.default_session_ttl = options.default_session_ttl;
    server::HttpOptions http_options;
    http_options.address = "127.0.0.1";
    http_options.port = 0;
    frontend_.emplace(io_, *service_, api_options, http_options);
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
    auto port = frontend_->http().Start();
    if (!port) return port.error();
    port_ = *port;
    return Status::Ok();
  }

  // As serve does on SIGTERM: no new connections, waiters answered, then
  // the threads end.
  ~Impl() {
    if (frontend_) frontend_->http().Stop();
    if (service_) service_->Shutdown();
    for (int i = 0;
         frontend_ && i < 200 && frontend_->http().open_connections() > 0;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  std::uint16_t port() const { return port_; }
  Time Now() const { return clock_.Now(); }

  Result<Time> AdvanceClock(Duration by) {
    std::promise<Result<Time>> applied;
    service_->AdvanceClock(
        by, [&applied](Result<Time> now) { applied.set_value(now); });
    return applied.get_future().get();
  }

 private:
  ManualClock clock_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_{asio::make_work_guard(io_)};
  std::unique_ptr<EngineService> service_;
  std::optional<server::Frontend> frontend_;
  std::vector<std::thread> threads_;
  std::uint16_t port_ = 0;
};

client::Result<std::unique_ptr<TestServer>> TestServer::Start(
    TestServerOptions options) {
  auto impl = std::make_unique<Impl>();
  if (Status st = impl->Open(options); !st.ok()) {
    client::Error e = ErrorOf(st);
    if (st.code() == StatusCode::kUnavailable) e.code = "unreachable";
    return std::unexpected(std::move(e));
  }
  return std::unique_ptr<TestServer>(new TestServer(std::move(impl)));
}

TestServer::TestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TestServer::~TestServer() = default;

std::uint16_t TestServer::port() const { return impl_->port(); }

std::string TestServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port());
}

client::Client TestServer::NewClient() const {
  // Cannot fail: the URL is well formed and io_timeout positive.
  client::ClientOptions options;
  options.url = url();
  return *client::Client::Create(std::move(options));
}

std::string TestServer::Now() const { return FormatTime(impl_->Now()); }

client::Result<std::string> TestServer::AdvanceClock(
    std::chrono::milliseconds by) {
  auto now = impl_->AdvanceClock(by);
  if (!now) return std::unexpected(ErrorOf(now.error()));
  return FormatTime(*now);
}

}  // namespace leasehold::testing
