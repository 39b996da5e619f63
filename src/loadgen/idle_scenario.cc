// The idle scenario's set-up and tear-down: many sessions holding many locks.
#include <fmt/format.h>

#include "client/api_codec.h"
#include "loadgen/scenarios.h"
#include "loadgen/session_calls.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace api = client::api;

namespace {
// Idle sessions outlive any build without keepalive; they are ended at the
// end of the run (or die with a spawned server).
constexpr std::chrono::milliseconds kIdleTtl{3'600'000};
}  // namespace

asio::awaitable<void> IdleBuild(Worker& w, int connections,
                                std::vector<std::string>& ids) {
  const BenchOptions& o = w.options();
  const std::string acquire = api::ApplockPath(o.ns, "acquire");
  const client::AcquireOptions exclusive{.mode = "Exclusive",
                                         .owner = "Session",
                                         .timeout = client::Milliseconds(0),
                                         .principal = "public"};
  for (int s = w.index(); s < o.idle_sessions; s += connections) {
    const auto session =
        co_await OpenSession(w, fmt::format("bench-idle-{}", s), kIdleTtl);
    if (!session) co_return;
    ids.push_back(*session);
    for (int j = 0; j < o.locks_per_session; ++j) {
      const Verdict v = co_await w.Call(
          http::Method::kPost, acquire,
          api::AcquireBody(*session, fmt::format("idle-{}-{}", s, j),
                           exclusive),
          200);
      if (v != Verdict::kOk) co_return;
    }
  }
}

asio::awaitable<void> EndSessions(Worker& w,
                                  const std::vector<std::string>& ids) {
  for (const std::string& id : ids) co_await EndSession(w, id);
}

}  // namespace leasehold::loadgen
