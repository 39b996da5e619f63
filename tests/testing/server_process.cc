#include "tests/testing/server_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace leasehold::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string HttpAnswer::error_code() const {
  if (!json.is_object()) return "";
  const auto* e = json.as_object().if_contains("error");
  if (e == nullptr || !e->is_object()) return "";
  return std::string(e->as_object().at("code").as_string());
}

class HttpClient::Impl {
 public:
  explicit Impl(std::uint16_t port) : port_(port), stream_(io_) { Connect(); }
  void Connect() {
    stream_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
  }
  std::uint16_t port_;
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::string authorization_;
};

HttpClient::HttpClient(std::uint16_t port)
    : impl_(std::make_unique<Impl>(port)) {}
HttpClient::~HttpClient() = default;

void HttpClient::SetBearerToken(const std::string& token) {
  impl_->authorization_ = token.empty() ? "" : "Bearer " + token;
}

std::string LeaseholdBinary() { return LEASEHOLD_BINARY; }

CommandRun RunShell(const std::string& command) {
  CommandRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void HttpClient::Send(const std::string& method, const std::string& target,
                      const std::string& body) {
  http::request<http::string_body> req{http::string_to_verb(method), target,
                                       11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  if (!impl_->authorization_.empty()) {
    req.set(http::field::authorization, impl_->authorization_);
  }
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  http::write(impl_->stream_, req);
}

HttpAnswer HttpClient::Receive() {
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(impl_->stream_, impl_->buffer_, parser);
  HttpAnswer a;
  a.status = parser.get().result_int();
  a.body = parser.get().body();
  boost::system::error_code ec;
  if (!a.body.empty()) a.json = boost::json::parse(a.body, ec);
  if (!parser.get().keep_alive()) {
    beast::error_code ignored;
    impl_->stream_.socket().close(ignored);
    impl_->buffer_.clear();
    impl_->Connect();
  }
  return a;
}

HttpAnswer HttpClient::Request(const std::string& method,
                               const std::string& target,
                               const std::string& body) {
  Send(method, target, body);
  return Receive();
}

void HttpClient::Close() {
  beast::error_code ec;
  impl_->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  impl_->stream_.socket().close(ec);
}

std::string HttpClient::Raw(const std::string& bytes) {
  asio::write(impl_->stream_.socket(), asio::buffer(bytes));
  std::string out;
  beast::error_code ec;
  char buf[4096];
  while (true) {
    const std::size_t n =
        impl_->stream_.socket().read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec || out.find("\r\n\r\n") != std::string::npos) {
      if (ec) break;
      // Read the body too, if the answer says how long it is.
      const auto cl = out.find("Content-Length: ");
      const auto head_end = out.find("\r\n\r\n") + 4;
      if (cl == std::string::npos) break;
      const std::size_t len = std::stoul(out.substr(cl + 16));
      if (out.size() >= head_end + len) break;
    }
  }
  return out;
}

std::string HttpClient::ReadStreamUntil(const std::string& needle,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  timeval tv{0, 50'000};  // wake every 50 ms to check the deadline
  setsockopt(impl_->stream_.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO,
             &tv, sizeof tv);
  std::string out(static_cast<const char*>(impl_->buffer_.data().data()),
                  impl_->buffer_.size());
  impl_->buffer_.consume(impl_->buffer_.size());
  char buf[4096];
  while (out.find(needle) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    const ssize_t n =
        ::recv(impl_->stream_.socket().native_handle(), buf, sizeof buf, 0);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  return out;
}

ServerProcess::ServerProcess(const std::string& data_dir,
                             const std::string& config,
                             const std::vector<std::string>& env) {
  const std::string port_file = data_dir + ".port";
  std::filesystem::remove(port_file);
  std::vector<std::string> args = {LEASEHOLD_BINARY, "serve",  "--listen",
                                   "127.0.0.1:0",    "--data", data_dir,
                                   "--port-file",    port_file};
  if (!config.empty()) {
    args.push_back("--config");
    args.push_back(config);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text(env);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), envp.data()) !=
      0) {
    throw std::runtime_error("cannot start leasehold serve");
  }
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(port_file);
    int port = 0;
    if (in >> port && port > 0) {
      port_ = static_cast<std::uint16_t>(port);
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("leasehold serve exited at start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("leasehold serve did not start within 10 s");
}

ServerProcess::~ServerProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 500; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
}

int ServerProcess::Terminate() {
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

int ServerProcess::Wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

void ServerProcess::Kill() {
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace leasehold::testing
