// The scenarios of `leasehold-peers bench`, one blocking loop per client
// (see client_phase.h), the same for every peer. Each returns once the
// window has ended and it has given back what it held, or at its first
// error (counted by the ClientWorker).
#ifndef LEASEHOLD_PEER_BENCH_SCENARIOS_H_
#define LEASEHOLD_PEER_BENCH_SCENARIOS_H_

#include "peer_bench/client_phase.h"

namespace leasehold::peer_bench {

// Acquire (no waiting) + release of a random name 0..keys-1. A pair is
// acquire + release; a name held by another client counts as refused.
void ApplockLoop(ClientWorker& w);

// Acquire the one hot name, waiting up to hot_timeout, then release it.
// A pair is one grant (a hand-off); a wait that ran out counts as refused.
void HotLoop(ClientWorker& w);

// Checkout + check-in of a random record key 0..keys-1. A pair is both; a
// key leased to another client counts as refused.
void CheckoutLoop(ClientWorker& w);

}  // namespace leasehold::peer_bench

#endif  // LEASEHOLD_PEER_BENCH_SCENARIOS_H_
