// What the API contract tests share. They run a real `leasehold serve` over
// real HTTP on loopback, one file per resource (api_*_test.cc, as
// src/server/handlers_*.cc), and assert the HTTP status, every documented
// field with its type and format (`*_at`: RFC 3339 UTC with milliseconds)
// and every documented error code reachable without authentication.
// Elsewhere: the outbox (outbox_contract_test.cc), the dashboard's
// endpoints (dashboard_test.cc), authentication (server_test.cc).
//
// Here: helpers for fields and for the requests most tests make (their
// paths and bodies from the client's API codec), gtest predicates for the
// field kinds and the error shape, a raw socket for connection-level
// limits, and ApiContractTest, the fixture with the contract's config.
//
// When these tests and docs/api.md disagree, one of them is wrong: fix the
// server or change the contract (with a version bump), never just the test.
#ifndef LEASEHOLD_TESTS_INTEGRATION_API_CONTRACT_FIXTURE_H_
#define LEASEHOLD_TESTS_INTEGRATION_API_CONTRACT_FIXTURE_H_

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {

// --- Helpers: bodies, paths, fields ---------------------------------------

std::string J(const boost::json::object& o);
std::string Str(const boost::json::value& v, std::string_view key);
std::int64_t Int(const boost::json::value& v, std::string_view key);

std::string Repeat(std::string_view unit, int n);

// An RFC 3339 UTC instant with milliseconds ("2025-01-31T12:00:00.000Z").
std::optional<std::chrono::system_clock::time_point> ParseUtcMillis(
    std::string_view text);

// Field `key` of `v` as such an instant (throws when it is not one).
std::chrono::system_clock::time_point TimeOf(const boost::json::value& v,
                                             std::string_view key);

enum class Kind { kString, kInt, kBool, kTime, kNull, kObject, kArray };

// `v` is an object whose field `key` has kind `kind` (or one of two kinds).
::testing::AssertionResult Has(const boost::json::value& v,
                               std::string_view key, Kind kind,
                               std::optional<Kind> or_kind = {});

// The answer is docs/api.md's error: `status` with
// {"error":{"code","message"}}.
::testing::AssertionResult IsError(const HttpAnswer& a, unsigned status,
                                   std::string_view code);

// --- A raw socket with deadlines, for connection-level limits -------------

class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }

  // False when the peer has closed or reset the connection.
  bool Send(std::string_view bytes);

  struct Read {
    std::string bytes;
    bool closed = false;  // end of stream or reset before the deadline
  };

  // Reads until the peer closes, `timeout` passes or (when `one_answer`)
  // one complete HTTP answer has arrived.
  Read ReadFor(std::chrono::milliseconds timeout, bool one_answer);

 private:
  static bool CompleteAnswer(const std::string& s);

  int fd_ = -1;
  bool connected_ = false;
};

// --- HTTP/1.1 framing ------------------------------------------------------

struct RawAnswer {
  unsigned status = 0;
  std::string body;
};

// The complete answers at the front of `bytes`, in order.
std::vector<RawAnswer> SplitAnswers(const std::string& bytes);

// One request as it goes on the wire, with Content-Length.
std::string RawRequest(const std::string& method, const std::string& target,
                       const std::string& body);

// --- The fixture ----------------------------------------------------------

// Record bodies above 1 KiB are refused by the engine (max_body_bytes);
// requests above 64 KiB by the HTTP layer (http_body_limit).
constexpr const char* kDefaultConfig =
    R"({"max_body_bytes":1024,"http_body_limit":65536,)"
    R"("namespaces":{"secure":{"require_token":true}}})";

// Starts a server with Config() before each test; Start() again (after
// server_->Kill() or Terminate()) restarts it on the same data.
class ApiContractTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }

  virtual std::string Config() const { return kDefaultConfig; }

  void Start();

  std::uint16_t port() const { return server_->port(); }

  // The new session's id ("" and a failure when it is refused).
  static std::string OpenSession(HttpClient& c, const std::string& name,
                                 int ttl_ms = 60'000);

  static std::string AcquireBody(const std::string& session,
                                 const std::string& resource,
                                 const std::string& mode,
                                 const std::string& owner = "Session",
                                 int timeout_ms = -1);

  static HttpAnswer Acquire(HttpClient& c, const std::string& session,
                            const std::string& resource,
                            const std::string& mode,
                            const std::string& owner = "Session",
                            int timeout_ms = -1);

  static HttpAnswer Release(HttpClient& c, const std::string& session,
                            const std::string& resource,
                            const std::string& owner = "Session");

  // Two sessions: "holder", which holds "busy" exclusively, and `name`.
  static std::pair<std::string, std::string> HolderOfBusyAnd(
      HttpClient& c, const std::string& name);

  static std::string ModeOf(HttpClient& c, const std::string& session,
                            const std::string& resource,
                            const std::string& owner = "Session");

  // Some(grantable) for a 200 answer.
  static std::optional<bool> Test(HttpClient& c, const std::string& session,
                                  const std::string& resource,
                                  const std::string& mode,
                                  const std::string& owner = "Session");

  // How many requests wait in namespace "app".
  static std::size_t Waiting(HttpClient& c);

  // Polls until `n` requests are parked (up to 5 s); returns the last count.
  static std::size_t AwaitWaiting(HttpClient& c, std::size_t n);

  // Polls GET of a record until its state is `state` (up to `within`).
  static HttpAnswer AwaitState(
      HttpClient& c, const std::string& path, const std::string& state,
      std::chrono::milliseconds within = std::chrono::milliseconds(5000));

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_INTEGRATION_API_CONTRACT_FIXTURE_H_
