// Ticker: calls `tick` on its own thread every `period` until `tick` returns
// false or Stop() is called. Stop wakes the thread at once (a condition
// variable, not a sleep), so owners are destroyed promptly.
#ifndef LEASEHOLD_SRC_CLIENT_TICKER_H_
#define LEASEHOLD_SRC_CLIENT_TICKER_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "leasehold/client.h"

namespace leasehold::client::detail {

class Ticker {
 public:
  Ticker(Milliseconds period, std::function<bool()> tick);
  ~Ticker();  // Stop()
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // Waits for a running tick to finish. Called from within `tick` (e.g. a
  // lost-callback that destroys its owner), it detaches instead; `tick`
  // must then not touch its owner after the call returns.
  void Stop();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;  // guarded by mu
  };
  static void Loop(std::shared_ptr<State> state, Milliseconds period,
                   std::function<bool()> tick);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_TICKER_H_
