// The safety checks over a History (lock_history.h): what clients observed
// over real time must be explainable by a correct server. Each check
// returns its violations, one line each naming the operations ("#12 ...")
// and moments involved; empty when the history is safe. Every rule is
// conservative: a correct server, however unlucky the timing, the lost
// answers and the fail-overs, never produces a violation. A line that
// begins "malformed history" is the test's mistake (a precondition below
// does not hold), not the server's. A check reports at most
// kMaxViolations lines, then one saying how many more it found.
//
// 1. Mutual exclusion (CheckMutualExclusion).
//   A session holds resource r from the complete of an acquire of r
//   answered kOk, in the mode asked for; a grant while it holds adds a
//   reference and, from its complete, combines the modes (a conversion:
//   Shared then Exclusive holds Exclusive). Each release, whatever its
//   answer, takes a reference away at its invoke (if one is left); the
//   mode stays until the last one goes. A hold ends at the first of
//     - the invoke of the release that takes its last reference;
//     - the invoke of the session's keep-alive answered kLocksLost (a
//       namespace with in-memory locks grants nothing until each session
//       that lost some was told; the server tells it once, so a test of
//       such a namespace must not lose a keep-alive's answer unnoticed);
//     - the invoke of any call of the session answered kSessionLost, or of
//       its EndSession;
//     - the session's expiry horizon, when its keep-alives answered kOk or
//       kLocksLost carry a ttl: the latest invoke + ttl, or the latest
//       invoke of any of its calls the server answered, if later. With no
//       ttl recorded no expiry is assumed: the test vouches that its
//       sessions outlive the history;
//     - the end of the history.
//   Not counted as holding, since a correct server may not hold them:
//     - an acquire answered kUnknown (or kRefused);
//     - a grant that overlapped in time a keep-alive answered kLocksLost
//       (the loss may have come after the grant);
//     - any grant of r to a session after one of its releases of r was
//       answered kUnknown: that release may still take effect, late, and
//       take away a reference the grant added. A test that wants later
//       holds checked goes on with a new session.
//   Violation: two holds of one resource by different sessions whose
//   intervals [from, until) overlap by any positive time, in modes that
//   conflict (ModesConflict: Shared, Update, IntentShared, IntentExclusive,
//   Exclusive as sp_getapplock). A hand-off is legal when the next grant
//   completes at or after the previous holder's release was invoked.
//   Preconditions: a session's acquires and releases of one resource are
//   made one at a time (each invoked at or after the previous completed);
//   acquires ask for requestable modes.
//
// 2. Fences rise (CheckFencesRise). Per resource, over acquires answered
//   kOk, whichever leader answered them: each fence is above 0; no two
//   grants carry the same fence; and when one grant completed before
//   another was invoked, the later one's fence is the higher.
//
// 3. No acknowledged write lost (CheckNoAcknowledgedWriteLost). Each key
//   is a register. A read must show what some write may have left last
//   when the read took effect:
//     - the value of a write of that key answered kOk or kUnknown, invoked
//       before the read completed: never a value nobody wrote, nor that of
//       a write answered kRefused;
//     - that no acknowledged write certainly replaced: none was invoked
//       after the shown write completed and completed before the read was
//       invoked (a write answered kUnknown never completes: it may take
//       effect at any time after its invoke);
//     - "no record" only when no acknowledged write completed before the
//       read was invoked.
//   So a final read, once writers have stopped, shows the acknowledged
//   write invoked last, or an acknowledged one that did not complete
//   before that one was invoked, or any write answered kUnknown.
//   Preconditions: a key's written values are unique; every key written
//   is read (by a read answered kOk).
//
// 4. A refusal sticks (CheckRefusalsStick). A probe of resource r by
//   session s answered kOk that shows a mode other than NoLock must be
//   explained by a grant: among s's acquires and releases of r invoked
//   before the probe, counting references as in check 1 (a grant adds
//   one, a release answered kOk takes one away), at least one is held.
//   So a waiter told -1, -2 or -3 (kRefused) never holds the lock after
//   all. Not judged: a probe after any call of s on r answered kUnknown,
//   or still in flight when the probe was sent, since that call may have
//   granted it.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_CHECK_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_CHECK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "tests/testing/lock_history.h"

namespace leasehold::testing {

inline constexpr std::size_t kMaxViolations = 100;

// How much of a history the mutual exclusion check could use, so that a
// test can insist that it proved something.
struct MutualExclusionCoverage {
  std::size_t holds = 0;               // stretches of holding compared
  std::size_t grants_not_counted = 0;  // kOk grants it could not rely on
};

std::vector<std::string> CheckMutualExclusion(
    const History& history, MutualExclusionCoverage* coverage = nullptr);
std::vector<std::string> CheckFencesRise(const History& history);
std::vector<std::string> CheckNoAcknowledgedWriteLost(const History& history);
std::vector<std::string> CheckRefusalsStick(const History& history);

// The four checks' violations, in that order.
inline std::vector<std::string> CheckHistory(const History& history) {
  std::vector<std::string> all = CheckMutualExclusion(history);
  for (auto* check :
       {&CheckFencesRise, &CheckNoAcknowledgedWriteLost, &CheckRefusalsStick}) {
    std::vector<std::string> more = check(history);
    all.insert(all.end(), more.begin(), more.end());
  }
  return all;
}

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_CHECK_H_
