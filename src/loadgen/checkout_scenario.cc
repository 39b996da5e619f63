// The checkout scenario: durable checkout + checkin of random keys.
#include <fmt/format.h>

#include "client/api_codec.h"
#include "loadgen/scenarios.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;
namespace api = client::api;

namespace {
constexpr int kLeaseTtlMs = 60'000;
}  // namespace

asio::awaitable<void> CheckoutLoop(Worker& w) {
  const BenchOptions& o = w.options();
  const std::string owner = fmt::format("bench-owner-{}", w.index());
  const std::string checkout_body = api::CheckoutBody(
      {.owner = owner, .ttl = client::Milliseconds(kLeaseTtlMs), .token = ""});
  const std::string checkin_body =
      api::ProofBody({.owner = owner, .token = ""});
  while (w.Running()) {
    const std::string key = fmt::format("k{}", w.Random(o.keys));
    const auto start = SteadyClock::now();
    const Verdict got = co_await w.Call(http::Method::kPost,
                                        api::RecordPath(o.ns, key, "checkout"),
                                        checkout_body, 200, 423);
    if (got == Verdict::kError) co_return;
    if (got == Verdict::kRefused) continue;
    const Verdict freed = co_await w.Call(http::Method::kPost,
                                          api::RecordPath(o.ns, key, "checkin"),
                                          checkin_body, 200);
    if (freed != Verdict::kOk) co_return;
    w.RecordPair(start);
  }
}

}  // namespace leasehold::loadgen
