// The applock and hot scenarios: acquire + release through one session.
#include <fmt/format.h>

#include "loadgen/scenarios.h"
#include "loadgen/session_calls.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;

namespace {

// Acquire + release of `resource` until the window ends. `choose` names the
// resource of each pair.
template <typename Choose>
asio::awaitable<void> AcquireReleaseLoop(Worker& w, const std::string& session,
                                         std::int64_t timeout_ms,
                                         Choose choose) {
  const BenchOptions& o = w.options();
  const std::string acquire = "/v1/applocks/" + o.ns + "/acquire";
  const std::string release = "/v1/applocks/" + o.ns + "/release";
  while (w.Running()) {
    const std::string resource = choose();
    const auto start = SteadyClock::now();
    const Verdict got = co_await w.Call(
        Method::kPost, acquire,
        fmt::format(R"({{"session":"{}","resource":"{}","mode":"Exclusive",)"
                    R"("owner":"Session","timeout_ms":{}}})",
                    session, resource, timeout_ms),
        200, 409);
    if (got == Verdict::kError) co_return;
    if (got == Verdict::kRefused) continue;
    const Verdict freed = co_await w.Call(
        Method::kPost, release,
        fmt::format(R"({{"session":"{}","resource":"{}","owner":"Session"}})",
                    session, resource),
        200);
    if (freed != Verdict::kOk) co_return;
    w.RecordPair(start);
  }
}

}  // namespace

asio::awaitable<void> ApplockLoop(Worker& w) {
  const auto session = co_await OpenSession(
      w, fmt::format("bench-applock-{}", w.index()), TtlForPhase(w.options()));
  if (!session) co_return;
  const std::uint64_t keys = w.options().keys;
  co_await AcquireReleaseLoop(w, *session, 0, [&w, keys] {
    return fmt::format("r{}", w.Random(keys));
  });
  co_await EndSession(w, *session);
}

asio::awaitable<void> HotLoop(Worker& w) {
  const auto session = co_await OpenSession(
      w, fmt::format("bench-hot-{}", w.index()), TtlForPhase(w.options()));
  if (!session) co_return;
  co_await AcquireReleaseLoop(w, *session, w.options().hot_timeout.count(),
                              [] { return std::string("hot"); });
  co_await EndSession(w, *session);
}

}  // namespace leasehold::loadgen
