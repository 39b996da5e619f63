// The article's two walkthroughs, run on any peer with documents and
// recorded as
// steps (what was done, what came back, what the article says should):
//   expiry  - a short lease that runs out: Ravi is refused, then granted
//             after expiry; Asha's late save is refused, Ravi's is applied.
//   checkin - only the holder can check in: Ravi is refused, Asha succeeds.
#ifndef LEASEHOLD_RACE_WALKTHROUGH_H_
#define LEASEHOLD_RACE_WALKTHROUGH_H_

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "peers/peer.h"

namespace leasehold::race {

using peers::DocumentView;
using peers::Variant;

struct Step {
  std::string what;
  std::string result;    // "1"/"0" as the article's procedures return
  std::string expected;  // what the article shows
  bool ok() const { return result == expected; }
};

struct Walkthrough {
  std::string name;    // "expiry" or "checkin"
  std::string engine;  // peers::Peer::Name()
  std::vector<Step> steps;
  bool ok() const;  // every step as expected
};

// `ttl` is the short lease (the article's 2 s); the walkthrough waits one
// and a half times as long (the article's 3 s). Fails when a call fails
// (or, kBadRequest, when `ttl` is not positive); unexpected answers are
// steps with ok() false.
Result<Walkthrough> RunExpiryWalkthrough(peers::Peer& peer,
                                         std::chrono::milliseconds ttl);
Result<Walkthrough> RunCheckinWalkthrough(peers::Peer& peer);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_WALKTHROUGH_H_
