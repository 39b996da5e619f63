#include "peer_bench/scenarios.h"

namespace leasehold::peer_bench {

namespace {

// Take + give back until the window ends. `take(name)` answers granted or
// refused; `give(name)` must succeed. `choose` names each pair's object.
template <typename Choose, typename Take, typename Give>
void PairLoop(ClientWorker& w, Choose choose, Take take, Give give) {
  while (w.Running()) {
    const std::uint64_t name = choose();
    const auto start = SteadyClock::now();
    const Result<bool> got = w.Time("acquire", [&] { return take(name); });
    if (!got) return;
    if (!*got) {
      w.Refused();
      continue;
    }
    if (!w.Time("release", [&] { return give(name); }).ok()) return;
    w.RecordPair(start);
  }
}

}  // namespace

void ApplockLoop(ClientWorker& w) {
  peers::LockClient& c = w.client();
  const std::uint64_t keys = w.options().keys;
  PairLoop(
      w, [&] { return w.Random(keys); },
      [&](std::uint64_t n) {
        return c.Acquire(n, std::chrono::milliseconds(0));
      },
      [&](std::uint64_t n) { return c.Release(n); });
}

void HotLoop(ClientWorker& w) {
  peers::LockClient& c = w.client();
  const auto wait = w.options().hot_timeout;
  PairLoop(
      w, [] { return peers::kHotName; },
      [&](std::uint64_t n) { return c.Acquire(n, wait); },
      [&](std::uint64_t n) { return c.Release(n); });
}

void CheckoutLoop(ClientWorker& w) {
  peers::LockClient& c = w.client();
  const std::uint64_t keys = w.options().keys;
  PairLoop(
      w, [&] { return w.Random(keys); },
      [&](std::uint64_t k) { return c.Checkout(k); },
      [&](std::uint64_t k) { return c.Checkin(k); });
}

}  // namespace leasehold::peer_bench
