// The checkout race of seed 000: N sessions start at one instant (a
// barrier), each walks documents 1..R in order asking for a checkout and
// logs what it was granted; then the grants are counted.
#ifndef LEASEHOLD_RACE_RACE_H_
#define LEASEHOLD_RACE_RACE_H_

#include <chrono>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "peers/peer.h"
#include "race/tally.h"

namespace leasehold::race {

using peers::Variant;

struct RaceOptions {
  int sessions = 2;  // at least 1
  int rows = 2'000;  // at least 1
  Variant variant = Variant::kAtomic;
  // Lease length asked for on every checkout (the article's 300 s default).
  std::chrono::milliseconds ttl{300'000};
  // kNaive only: a sleep between the read and the write, which widens the
  // window in which another session can read the same free row. 0: none.
  std::chrono::microseconds gap{0};
};

struct RaceResult {
  std::string engine;  // peers::Peer::Name()
  RaceOptions options;
  std::vector<std::string> sessions;  // names, in start order
  Tally tally;
  bool from_log = false;  // the target's race log was counted and agreed
  std::chrono::milliseconds elapsed{0};  // barrier to last session done
};

// The session names: Asha and Ravi as in the article, then more names.
std::vector<std::string> SessionNames(int count);

// Prepares `peer`'s documents, runs the race and counts it. Errors:
// kBadRequest for bad options (fewer than 1 session or row, a TTL that is
// not positive), kNaive on a peer without it, or a peer without documents;
// the peer's error when a call fails; kInternal if the peer's race log
// disagrees with what the sessions were told. `clock` times the race.
Result<RaceResult> RunRace(peers::Peer& peer, const RaceOptions& options,
                           const Clock& clock);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_RACE_H_
