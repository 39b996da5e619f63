// DeadlineTimer: an EngineService's one timer. Set to the engine's next
// deadline (a session's or lease's expiry, a wait's timeout, the end of a
// lock-delay), it calls `fire` then. With a manual clock it keeps no timer:
// the service applies deadlines each time that clock is moved. Every method
// but manual() runs under the service's mutex.
#ifndef LEASEHOLD_SERVICE_DEADLINE_TIMER_H_
#define LEASEHOLD_SERVICE_DEADLINE_TIMER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <optional>

#include "common/clock.h"
#include "common/manual_clock.h"

namespace leasehold {

class DeadlineTimer {
 public:
  // `clock` is the service's; `fire` runs on an I/O thread, not under the
  // mutex.
  DeadlineTimer(boost::asio::io_context& io, const Clock& clock,
                std::function<void()> fire)
      : clock_(clock), timer_(io), fire_(std::move(fire)) {}

  // Fires at `next` (now, if it has passed), or never (nullopt); re-arms
  // only when `next` differs from what is armed.
  void Arm(std::optional<Time> next);
  // Forgets what is armed (the engine was replaced, or the timer fired), so
  // that the next Arm() sets it again.
  void Forget() { armed_at_.reset(); }
  // Fires no more, for good.
  void Stop();

  // Makes `clock`, the service's, move only when told: no timer from now
  // on. Before serving.
  void UseManualClock(ManualClock& clock);
  // Moves the manual clock forward by `by`: its new time, kBadRequest when
  // it refuses the move (ManualClock::Advance), kNotFound without a manual
  // clock. The manual clock is set before serving: this and ManualNow()
  // run without the mutex.
  Result<Time> AdvanceManualClock(Duration by);
  // The manual clock's time; nullopt without one.
  std::optional<Time> ManualNow() const;

 private:
  const Clock& clock_;
  boost::asio::steady_timer timer_;
  std::function<void()> fire_;
  std::optional<Time> armed_at_;
  ManualClock* manual_ = nullptr;
  bool stopped_ = false;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_DEADLINE_TIMER_H_
