// The applock and hot scenarios: acquire + release through one session.
#include <fmt/format.h>

#include "client/api_codec.h"
#include "loadgen/scenarios.h"
#include "loadgen/session_calls.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace api = client::api;

namespace {

// Acquire + release of `resource` until the window ends. `choose` names the
// resource of each pair.
template <typename Choose>
asio::awaitable<void> AcquireReleaseLoop(Worker& w, const std::string& session,
                                         std::int64_t timeout_ms,
                                         Choose choose) {
  const BenchOptions& o = w.options();
  const std::string acquire = api::ApplockPath(o.ns, "acquire");
  const std::string release = api::ApplockPath(o.ns, "release");
  const client::AcquireOptions exclusive{
      .mode = "Exclusive",
      .owner = "Session",
      .timeout = client::Milliseconds(timeout_ms),
      .principal = "public"};
  while (w.Running()) {
    const std::string resource = choose();
    const auto start = SteadyClock::now();
    const Verdict got = co_await w.Call(
        http::Method::kPost, acquire,
        api::AcquireBody(session, resource, exclusive), 200, 409);
    if (got == Verdict::kError) co_return;
    if (got == Verdict::kRefused) continue;
    const Verdict freed =
        co_await w.Call(http::Method::kPost, release,
                        api::ReleaseBody(session, resource, exclusive.owner,
                                         exclusive.principal),
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
