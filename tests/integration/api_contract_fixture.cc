#include "tests/integration/api_contract_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

#include "client/api_codec.h"

namespace leasehold::testing {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using SysTime = std::chrono::system_clock::time_point;

namespace {

const char* KindName(Kind k) {
  static constexpr const char* kNames[] = {
      "string", "integer", "bool", "RFC 3339 UTC ms time",
      "null",   "object",  "array"};
  return kNames[static_cast<int>(k)];
}

bool IsKind(const json::value& v, Kind k) {
  switch (k) {
    case Kind::kString:
      return v.is_string();
    case Kind::kInt:
      return v.is_int64() || v.is_uint64();
    case Kind::kBool:
      return v.is_bool();
    case Kind::kTime:
      return v.is_string() && ParseUtcMillis(v.as_string()).has_value();
    case Kind::kNull:
      return v.is_null();
    case Kind::kObject:
      return v.is_object();
    case Kind::kArray:
      return v.is_array();
  }
  return false;
}

}  // namespace

// --- Helpers: bodies, paths, fields ---------------------------------------

std::string J(const json::object& o) { return json::serialize(o); }

std::string Str(const json::value& v, std::string_view key) {
  return std::string(v.at(key).as_string());
}

std::int64_t Int(const json::value& v, std::string_view key) {
  return v.at(key).to_number<std::int64_t>();
}

std::string Repeat(std::string_view unit, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += unit;
  return out;
}

std::optional<SysTime> ParseUtcMillis(std::string_view text) {
  static const std::regex re(
      R"(^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, re)) return std::nullopt;
  auto num = [&](int i) { return std::stoi(m[i].str()); };
  using namespace std::chrono;
  const year_month_day ymd{year{num(1)}, month{static_cast<unsigned>(num(2))},
                           day{static_cast<unsigned>(num(3))}};
  if (!ymd.ok() || num(4) > 23 || num(5) > 59 || num(6) > 60) {
    return std::nullopt;
  }
  return SysTime(sys_days{ymd} + hours{num(4)} + minutes{num(5)} +
                 seconds{num(6)} + milliseconds{num(7)});
}

SysTime TimeOf(const json::value& v, std::string_view key) {
  return ParseUtcMillis(v.at(key).as_string()).value();
}

::testing::AssertionResult Has(const json::value& v, std::string_view key,
                               Kind kind, std::optional<Kind> or_kind) {
  if (!v.is_object()) {
    return ::testing::AssertionFailure() << "not an object: " << v;
  }
  const json::value* f = v.as_object().if_contains(key);
  if (f == nullptr) {
    return ::testing::AssertionFailure()
           << "no field \"" << key << "\" in " << v;
  }
  if (IsKind(*f, kind) || (or_kind && IsKind(*f, *or_kind))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "field \"" << key << "\" is not a " << KindName(kind)
         << (or_kind ? std::string(" or ") + KindName(*or_kind) : "") << ": "
         << v;
}

::testing::AssertionResult IsError(const HttpAnswer& a, unsigned status,
                                   std::string_view code) {
  if (a.status != status || a.error_code() != code) {
    return ::testing::AssertionFailure()
           << "want " << status << " " << code << ", got " << a.status << " "
           << a.body;
  }
  const auto& e = a.json.at("error");
  if (!e.at("message").is_string() || e.at("message").as_string().empty()) {
    return ::testing::AssertionFailure() << "no message: " << a.body;
  }
  return ::testing::AssertionSuccess();
}

// --- A raw socket with deadlines, for connection-level limits -------------

RawSocket::RawSocket(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ =
      ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

RawSocket::~RawSocket() { ::close(fd_); }

bool RawSocket::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

RawSocket::Read RawSocket::ReadFor(milliseconds timeout, bool one_answer) {
  Read r;
  const auto deadline = Steady::now() + timeout;
  char buf[8192];
  while (!(one_answer && CompleteAnswer(r.bytes))) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - Steady::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.bytes.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

bool RawSocket::CompleteAnswer(const std::string& s) {
  const std::size_t head = s.find("\r\n\r\n");
  if (head == std::string::npos) return false;
  std::smatch m;
  static const std::regex cl("\r\ncontent-length: *([0-9]+)",
                             std::regex::icase);
  const std::string headers = s.substr(0, head + 2);
  if (!std::regex_search(headers, m, cl)) return true;
  return s.size() >= head + 4 + std::stoul(m[1].str());
}

// --- HTTP/1.1 framing ------------------------------------------------------

std::vector<RawAnswer> SplitAnswers(const std::string& bytes) {
  std::vector<RawAnswer> out;
  std::size_t at = 0;
  static const std::regex cl("\r\ncontent-length: *([0-9]+)",
                             std::regex::icase);
  while (true) {
    const std::size_t head = bytes.find("\r\n\r\n", at);
    if (head == std::string::npos) break;
    const std::string headers = bytes.substr(at, head + 2 - at);
    std::smatch m;
    const std::size_t length =
        std::regex_search(headers, m, cl) ? std::stoul(m[1].str()) : 0;
    if (bytes.size() < head + 4 + length) break;
    out.push_back({static_cast<unsigned>(std::stoul(headers.substr(9, 3))),
                   bytes.substr(head + 4, length)});
    at = head + 4 + length;
  }
  return out;
}

std::string RawRequest(const std::string& method, const std::string& target,
                       const std::string& body) {
  return method + " " + target +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
         "\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// --- The fixture ----------------------------------------------------------

void ApiContractTest::Start() {
  std::ofstream(dir_.File("config.json")) << Config();
  server_ = std::make_unique<ServerProcess>(dir_.File("data"),
                                            dir_.File("config.json"));
}

std::string ApiContractTest::OpenSession(HttpClient& c, const std::string& name,
                                         int ttl_ms) {
  auto a = c.Request("POST", api::SessionsPath(),
                     api::OpenSessionBody(name, milliseconds(ttl_ms)));
  EXPECT_EQ(a.status, 201u) << a.body;
  return a.status == 201 ? Str(a.json, "id") : "";
}

std::string ApiContractTest::AcquireBody(const std::string& session,
                                         const std::string& resource,
                                         const std::string& mode,
                                         const std::string& owner,
                                         int timeout_ms) {
  return api::AcquireBody(session, resource,
                          {.mode = mode,
                           .owner = owner,
                           .timeout = milliseconds(timeout_ms),
                           .principal = "public"});
}

HttpAnswer ApiContractTest::Acquire(HttpClient& c, const std::string& session,
                                    const std::string& resource,
                                    const std::string& mode,
                                    const std::string& owner, int timeout_ms) {
  return c.Request("POST", api::ApplockPath("app", "acquire"),
                   AcquireBody(session, resource, mode, owner, timeout_ms));
}

HttpAnswer ApiContractTest::Release(HttpClient& c, const std::string& session,
                                    const std::string& resource,
                                    const std::string& owner) {
  return c.Request("POST", api::ApplockPath("app", "release"),
                   api::ReleaseBody(session, resource, owner, "public"));
}

std::pair<std::string, std::string> ApiContractTest::HolderOfBusyAnd(
    HttpClient& c, const std::string& name) {
  const std::string holder = OpenSession(c, "holder");
  const std::string other = OpenSession(c, name);
  const auto held = Acquire(c, holder, "busy", "Exclusive");
  EXPECT_EQ(held.status, 200u) << held.body;
  return {holder, other};
}

std::string ApiContractTest::ModeOf(HttpClient& c, const std::string& session,
                                    const std::string& resource,
                                    const std::string& owner) {
  auto a = c.Request("GET",
                     api::ModePath("app", session, resource, owner, "public"));
  EXPECT_EQ(a.status, 200u) << a.body;
  return a.status == 200 ? Str(a.json, "mode") : "";
}

std::optional<bool> ApiContractTest::Test(HttpClient& c,
                                          const std::string& session,
                                          const std::string& resource,
                                          const std::string& mode,
                                          const std::string& owner) {
  auto a = c.Request("GET", api::TestPath("app", session, resource,
                                          {.mode = mode,
                                           .owner = owner,
                                           .timeout = milliseconds(-1),
                                           .principal = "public"}));
  if (a.status != 200 || !a.json.at("grantable").is_bool()) {
    ADD_FAILURE() << a.body;
    return std::nullopt;
  }
  return a.json.at("grantable").as_bool();
}

std::size_t ApiContractTest::Waiting(HttpClient& c) {
  std::size_t n = 0;
  auto locks = c.Request("GET", api::ApplockPath("app"));
  for (const auto& l : locks.json.at("locks").as_array()) {
    n += l.at("waiting").as_array().size();
  }
  return n;
}

std::size_t ApiContractTest::AwaitWaiting(HttpClient& c, std::size_t n) {
  const auto deadline = Steady::now() + milliseconds(5000);
  std::size_t seen = Waiting(c);
  while (seen != n && Steady::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
    seen = Waiting(c);
  }
  return seen;
}

HttpAnswer ApiContractTest::AwaitState(HttpClient& c, const std::string& path,
                                       const std::string& state,
                                       milliseconds within) {
  const auto deadline = Steady::now() + within;
  HttpAnswer a = c.Request("GET", path);
  while (Steady::now() < deadline &&
         !(a.status == 200 && Str(a.json, "state") == state)) {
    std::this_thread::sleep_for(milliseconds(10));
    a = c.Request("GET", path);
  }
  return a;
}

}  // namespace leasehold::testing
