#include "tests/testing/server_process.h"

#include <algorithm>

#include <sys/wait.h>

#include <unistd.h>

#include <atomic>
#include <boost/system/system_error.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "http/connection.h"
#include "http/spawned_server.h"

namespace leasehold::testing {

namespace {

// Throws what failed, so that the test stops there.
void Check(const boost::system::error_code& ec, const char* what) {
  if (ec) throw boost::system::system_error(ec, what);
}

// With LEASEHOLD_RECORD_EXCHANGES=DIR (fuzz/seed-corpus sets it), what the
// tests send and receive is written to DIR, one file each, named
// PID-N.KIND: KIND "request" (as it goes on the wire), "raw" (a malformed
// request as sent), "answer" ("STATUS\nBODY"), "stream" (event-stream
// bytes) or "config" (a server's --config, written as it starts). The fuzz
// corpora are seeded from them (docs/fuzzing.md).
void Record(std::string_view kind, std::string_view bytes) {
  static const char* dir = std::getenv("LEASEHOLD_RECORD_EXCHANGES");
  static std::atomic<int> next{0};
  if (dir == nullptr || *dir == '\0') return;
  const std::string path = std::string(dir) + "/" + std::to_string(::getpid()) +
                           "-" + std::to_string(next++) + "." +
                           std::string(kind);
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A request as a client writes it.
std::string WireRequest(const std::string& method, const std::string& target,
                        const std::string& body, const std::string& token) {
  std::string r = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) r += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty()) {
    r += "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n";
  }
  return r + "\r\n" + body;
}

// The answer, parsed (and recorded); throws on a failure (a timeout too).
HttpAnswer Parsed(const http::Answer& got) {
  Check(got.error, "receive");
  HttpAnswer a;
  a.status = got.status;
  a.body = got.body;
  Record("answer", std::to_string(a.status) + "\n" + a.body);
  boost::system::error_code ec;
  if (!a.body.empty()) a.json = boost::json::parse(a.body, ec);
  return a;
}

}  // namespace

std::string HttpAnswer::error_code() const {
  if (!json.is_object()) return "";
  const auto* e = json.as_object().if_contains("error");
  if (e == nullptr || !e->is_object()) return "";
  return std::string(e->as_object().at("code").as_string());
}

class HttpClient::Impl {
 public:
  explicit Impl(std::uint16_t port)
      : connection({.host = "127.0.0.1",
                    .port = port,
                    .token = "",
                    .host_header = "",
                    .user_agent = ""}) {
    Check(connection.Connect(), "connect");
  }
  http::Connection connection;
  bool head = false;  // the last request sent was a HEAD
  std::string token;  // for Record only
};

HttpClient::HttpClient(std::uint16_t port)
    : impl_(std::make_unique<Impl>(port)) {}
HttpClient::~HttpClient() = default;

void HttpClient::SetBearerToken(const std::string& token) {
  impl_->connection.SetToken(token);
  impl_->token = token;
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
  impl_->head = method == "HEAD";
  Record("request", WireRequest(method, target, body, impl_->token));
  const http::Answer sent = impl_->connection.Send(method, target, body);
  Check(sent.error, "send");
}

HttpAnswer HttpClient::Receive() {
  return Parsed(impl_->connection.Receive(impl_->head));
}

HttpAnswer HttpClient::Receive(std::chrono::milliseconds timeout) {
  return Parsed(impl_->connection.Receive(
      impl_->head, std::chrono::steady_clock::now() + timeout));
}

HttpAnswer HttpClient::Request(const std::string& method,
                               const std::string& target,
                               const std::string& body) {
  Send(method, target, body);
  return Receive();
}

void HttpClient::Close() { impl_->connection.Close(); }

std::string HttpClient::Raw(const std::string& bytes) {
  Record("raw", bytes);
  Check(impl_->connection.WriteRaw(bytes), "write");
  std::string out;
  char buf[4096];
  while (true) {
    const auto got = impl_->connection.ReadRaw(buf, sizeof buf, std::nullopt);
    out.append(buf, got.size);
    if (got.error) break;
    const auto head_end = out.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    // Read the body too, if the answer says how long it is.
    const auto cl = out.find("Content-Length: ");
    if (cl == std::string::npos) break;
    const std::size_t len = std::stoul(out.substr(cl + 16));
    if (out.size() >= head_end + 4 + len) break;
  }
  return out;
}

std::string HttpClient::ReadStreamUntil(const std::string& needle,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string out;
  char buf[4096];
  while (out.find(needle) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    const auto got = impl_->connection.ReadRaw(buf, sizeof buf, deadline);
    out.append(buf, got.size);
    if (got.error && !http::IsTimeout(got.error)) break;
  }
  Record("stream", out);
  return out;
}

namespace {

std::unique_ptr<http::SpawnedServer> StartBinary(
    const std::string& binary, const std::string& data_dir,
    const std::string& config, const std::vector<std::string>& env,
    std::uint16_t port) {
  // Also marks where one server's exchanges begin (empty without a config).
  std::ostringstream text;
  if (!config.empty()) text << std::ifstream(config).rdbuf();
  Record("config", text.str());
  auto started = http::SpawnedServer::Start({.binary = binary,
                                             .data_dir = data_dir,
                                             .config = config,
                                             .store = "",
                                             .env = env,
                                             .log_to_file = false,
                                             .port = port});
  if (!started) throw std::runtime_error(started.error());
  return std::move(*started);
}

}  // namespace

ServerProcess::ServerProcess(const std::string& data_dir,
                             const std::string& config,
                             const std::vector<std::string>& env,
                             std::uint16_t port)
    : server_(StartBinary(LEASEHOLD_BINARY, data_dir, config, env, port)) {}

std::unique_ptr<ServerProcess> ServerProcess::OfBinary(
    const std::string& binary, const std::string& data_dir,
    const std::string& config, const std::vector<std::string>& env) {
  return std::unique_ptr<ServerProcess>(
      new ServerProcess(StartBinary(binary, data_dir, config, env, 0)));
}

ServerProcess::ServerProcess(std::unique_ptr<http::SpawnedServer> server)
    : server_(std::move(server)) {}

std::unique_ptr<ServerProcess> ServerProcess::WithStore(
    const std::string& store_url, const std::string& scratch_dir,
    const std::vector<std::string>& flags) {
  // A restart after kill -9 waits out the dead node's lease before it
  // leads: a short one, unless the test names its own.
  std::vector<std::string> args = flags;
  if (std::ranges::find(flags, "--leader-lease-ms") == flags.end()) {
    args.insert(args.begin(), {"--leader-lease-ms", "1000"});
  }
  auto started = http::SpawnedServer::Start({.binary = LEASEHOLD_BINARY,
                                             .data_dir = scratch_dir + "/data",
                                             .config = "",
                                             .store = store_url,
                                             .env = {},
                                             .log_to_file = false,
                                             .port = 0,
                                             .extra_args = args,
                                             .wait_until_healthy = true});
  if (!started) throw std::runtime_error(started.error());
  return std::unique_ptr<ServerProcess>(new ServerProcess(std::move(*started)));
}

std::unique_ptr<ServerProcess> ServerProcess::InMemoryWithManualClock(
    const std::string& scratch_dir, const std::string& config) {
  auto started =
      http::SpawnedServer::Start({.binary = LEASEHOLD_BINARY,
                                  .data_dir = scratch_dir + "/data",
                                  .config = config,
                                  .store = "memory",
                                  .env = {},
                                  .log_to_file = false,
                                  .port = 0,
                                  .extra_args = {"--clock", "manual"}});
  if (!started) throw std::runtime_error(started.error());
  return std::unique_ptr<ServerProcess>(new ServerProcess(std::move(*started)));
}

ServerProcess::~ServerProcess() = default;

std::uint16_t ServerProcess::port() const { return server_->port(); }
int ServerProcess::pid() const { return server_->pid(); }
int ServerProcess::Terminate() { return server_->Terminate(); }
int ServerProcess::Wait() { return server_->Wait(); }
void ServerProcess::Kill() { server_->Kill(); }

}  // namespace leasehold::testing
