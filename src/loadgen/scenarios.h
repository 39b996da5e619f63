// The scenarios of `leasehold bench`, one coroutine per connection each
// (see phase.h). Each returns once the window has ended and it has given
// back what it held, or at its first error (counted by the Worker).
#ifndef LEASEHOLD_LOADGEN_SCENARIOS_H_
#define LEASEHOLD_LOADGEN_SCENARIOS_H_

#include <boost/asio/awaitable.hpp>
#include <string>
#include <vector>

#include "loadgen/phase.h"

namespace leasehold::loadgen {

// Opens its own session, then loops: acquire (Session owner, Exclusive,
// timeout 0) + release of a random resource r0..r<keys-1>. A pair is
// acquire + release; an acquire refused because another connection holds
// that name (409) is counted as refused, not as a pair.
boost::asio::awaitable<void> ApplockLoop(Worker& w);

// Loops: durable checkout + checkin of a random key k0..k<keys-1>, as its
// own owner. A pair is checkout + checkin; a checkout refused because
// another connection holds the key (423) is counted as refused.
boost::asio::awaitable<void> CheckoutLoop(Worker& w);

// Opens its own session, then loops: acquire the one resource "hot" with
// timeout hot_timeout, release it. A pair is one grant (a hand-off); a
// timeout (409) is counted as refused.
boost::asio::awaitable<void> HotLoop(Worker& w);

// Opens sessions index, index + connections, … (below idle_sessions), each
// living one hour, and acquires locks_per_session Exclusive Session-owned
// locks in each. Appends the session ids to `ids`.
boost::asio::awaitable<void> IdleBuild(Worker& w, int connections,
                                       std::vector<std::string>& ids);

// Ends the sessions in `ids`.
boost::asio::awaitable<void> EndSessions(Worker& w,
                                         const std::vector<std::string>& ids);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_SCENARIOS_H_
