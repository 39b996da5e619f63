// FuzzServer: the server's Api, metrics, history and event hub over a fresh
// engine and an in-memory SQLite store, for one fuzz input (and for
// store_seed, which writes the sqlite_store target's seed with it). The clock
// stands still (2026-01-01T00:00:00Z), so that an input does the same each time
// it runs; nothing times out or expires. A request that parks waits until
// Finish(), which cancels it (-2) as a stopping server does.
//
// CheckAnswer holds what every answer must be (docs/api.md, "Errors" and
// "Malformed input"); it aborts, so that libFuzzer reports the input.
#ifndef LEASEHOLD_FUZZ_FUZZ_SERVER_H_
#define LEASEHOLD_FUZZ_FUZZ_SERVER_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "server/activity_history.h"
#include "server/api.h"
#include "server/event_hub.h"
#include "server/metrics.h"
#include "service/engine_service.h"
#include "tests/testing/manual_clock.h"

namespace leasehold::fuzz {

// The bearer tokens of FuzzServer(kWithTokens), also in fuzz/http.dict.
inline constexpr std::string_view kAdminToken = "fuzz-admin-token-0001";  // *
inline constexpr std::string_view kWriterToken =
    "fuzz-writer-token-002";  // app
inline constexpr std::string_view kReaderToken =
    "fuzz-reader-token-003";  // app

enum class Auth { kOff, kWithTokens };

class FuzzServer {
 public:
  // The store is SQLite at `store` (":memory:": in memory), or, when
  // empty (the default), one that keeps nothing.
  explicit FuzzServer(Auth auth = Auth::kOff, const std::string& store = "");
  // Finish()es if not yet done.
  ~FuzzServer();
  FuzzServer(const FuzzServer&) = delete;
  FuzzServer& operator=(const FuzzServer&) = delete;

  server::Api& api() { return *api_; }
  server::EventHub& hub() { return hub_; }

  // Hands `request` to the Api (its on_parked is replaced) and returns once
  // it is answered (with its answer, checked by CheckAnswer) or parked
  // (nullptr; its answer comes by Finish()). The answer lives as long as
  // the server.
  const server::ApiResponse* Send(server::ApiRequest request);

  // Cancels every parked request (-2), waits until each request has its
  // one answer and checks them.
  void Finish();

 private:
  struct Slot {
    std::vector<WaitId> waits;  // parked under these (acquire-all: several)
    int answers = 0;
    server::ApiResponse response;
  };

  // Runs io_'s handlers, waiting for them, until done().
  template <typename Done>
  void RunUntil(Done done);

  testing::ManualClock clock_;
  boost::asio::io_context io_;
  std::optional<
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      work_;
  server::Metrics metrics_;
  server::ActivityHistory history_;
  server::EventHub hub_;
  std::unique_ptr<EngineService> service_;
  std::unique_ptr<server::Api> api_;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per request, in order
  bool finished_ = false;
};

// Aborts unless `r` keeps the contract: a body that is valid UTF-8; JSON
// (for application/json) that is an object; for a status of 400 or more,
// {"error":{"code","message"}} with a known code of that status, except
// the refusals that carry their own JSON (409 lock not granted, 412, 423);
// no body for 204.
void CheckAnswer(const server::ApiResponse& r);

// Aborts unless `frame` is one SSE frame: "event: TYPE\ndata: JSON\n\n",
// valid UTF-8, its data a JSON object.
void CheckEventFrame(std::string_view frame);

}  // namespace leasehold::fuzz

#endif  // LEASEHOLD_FUZZ_FUZZ_SERVER_H_
