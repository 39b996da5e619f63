#include "client/ticker.h"

namespace leasehold::client::detail {

Ticker::Ticker(Milliseconds period, std::function<bool()> tick)
    : state_(std::make_shared<State>()),
      thread_(&Ticker::Loop, state_, period, std::move(tick)) {}

Ticker::~Ticker() { Stop(); }

void Ticker::Loop(std::shared_ptr<State> state, Milliseconds period,
                  std::function<bool()> tick) {
  while (true) {
    {
      std::unique_lock lock(state->mu);
      if (state->cv.wait_for(lock, period, [&] { return state->stop; })) {
        return;
      }
    }
    if (!tick()) return;
  }
}

void Ticker::Stop() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  if (!thread_.joinable()) return;
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

}  // namespace leasehold::client::detail
