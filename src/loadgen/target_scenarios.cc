#include "loadgen/target_scenarios.h"

namespace leasehold::loadgen {

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

void TargetApplockLoop(ClientWorker& w) {
  TargetClient& c = w.client();
  const std::uint64_t keys = w.options().keys;
  PairLoop(
      w, [&] { return w.Random(keys); },
      [&](std::uint64_t n) {
        return c.Acquire(n, std::chrono::milliseconds(0));
      },
      [&](std::uint64_t n) { return c.Release(n); });
}

void TargetHotLoop(ClientWorker& w) {
  TargetClient& c = w.client();
  const auto wait = w.options().hot_timeout;
  PairLoop(
      w, [] { return kHotName; },
      [&](std::uint64_t n) { return c.Acquire(n, wait); },
      [&](std::uint64_t n) { return c.Release(n); });
}

void TargetCheckoutLoop(ClientWorker& w) {
  TargetClient& c = w.client();
  const std::uint64_t keys = w.options().keys;
  PairLoop(
      w, [&] { return w.Random(keys); },
      [&](std::uint64_t k) { return c.Checkout(k); },
      [&](std::uint64_t k) { return c.Checkin(k); });
}

}  // namespace leasehold::loadgen
