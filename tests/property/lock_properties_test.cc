// Property test of the application-lock engine: random operation sequences
// from 2-8 sessions on a few contended names, with every invariant of
// harness.h checked after every step.
//
// 10,000 sequences by default. RC_PARAMS overrides anything (e.g.
// RC_PARAMS="seed=42" to repeat a run, "max_success=100000" for a soak);
// max_success is added when RC_PARAMS does not set it.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "tests/property/harness.h"
#include "tests/property/ops.h"

namespace leasehold::property {
namespace {

constexpr int kSequences = 10'000;
constexpr int kMaxOps = 60;

// rapidcheck reads RC_PARAMS once, when the first property runs, so this
// must happen during static initialization.
[[maybe_unused]] const bool kParamsSet = [] {
  const char* existing = std::getenv("RC_PARAMS");
  std::string params = existing == nullptr ? "" : existing;
  if (params.find("max_success") == std::string::npos) {
    params += " max_success=" + std::to_string(kSequences);
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  return true;
}();

rc::Gen<int> GenSlot(int sessions) { return rc::gen::inRange(0, sessions); }

rc::Gen<LockMode> GenMode() {
  // Mostly the five requestable modes; now and then one that is refused.
  return rc::gen::weightedElement<LockMode>({
      {12, LockMode::kIntentShared},
      {20, LockMode::kShared},
      {16, LockMode::kUpdate},
      {12, LockMode::kIntentExclusive},
      {20, LockMode::kExclusive},
      {1, LockMode::kNoLock},
      {1, LockMode::kSharedIntentExclusive},
  });
}

rc::Gen<LockOwner> GenOwner() {
  return rc::gen::weightedElement<LockOwner>(
      {{2, LockOwner::kTransaction}, {3, LockOwner::kSession}});
}

// Two mixes of operations. kMixed exercises everything, including time
// running out; kQueues piles long requests from 4-8 sessions onto one
// resource so that queues of several waiters form and move.
enum class Profile { kMixed, kQueues };

rc::Gen<int> GenResource(Profile p) {
  return p == Profile::kMixed
             ? rc::gen::weightedElement<int>({{12, 0}, {3, 1}, {1, 2}, {1, 3}})
             : rc::gen::weightedElement<int>({{30, 0}, {2, 1}, {1, 2}, {1, 3}});
}

// Mostly the default namespace and principal, so that sessions meet.
rc::Gen<int> GenNameVariant(Profile p) {
  return p == Profile::kMixed ? rc::gen::weightedElement<int>({{15, 0}, {1, 1}})
                              : rc::gen::just(0);
}

rc::Gen<int> GenTimeout(Profile p) {
  // -2 is refused (kBadTimeout).
  return p == Profile::kMixed
             ? rc::gen::weightedElement<int>(
                   {{6, 0}, {6, 50}, {12, 200}, {18, -1}, {1, -2}})
             : rc::gen::weightedElement<int>(
                   {{2, 0}, {3, 50}, {8, 200}, {12, -1}, {1, -2}});
}

rc::Gen<Op> GenKeyed(OpKind kind, int sessions, Profile p) {
  return rc::gen::map(
      rc::gen::tuple(GenSlot(sessions), GenNameVariant(p), GenNameVariant(p),
                     GenResource(p), GenMode(), GenOwner(), GenTimeout(p)),
      [kind](
          const std::tuple<int, int, int, int, LockMode, LockOwner, int>& t) {
        return Op{.kind = kind,
                  .slot = std::get<0>(t),
                  .ns = std::get<1>(t),
                  .principal = std::get<2>(t),
                  .resource = std::get<3>(t),
                  .mode = std::get<4>(t),
                  .owner = std::get<5>(t),
                  .timeout_ms = std::get<6>(t)};
      });
}

// Mostly a release of something the session holds; sometimes of the key
// drawn here, which it may not hold.
rc::Gen<Op> GenRelease(int sessions, Profile p) {
  return rc::gen::map(
      rc::gen::tuple(GenKeyed(OpKind::kRelease, sessions, p),
                     rc::gen::weightedOneOf<int>(
                         {{1, rc::gen::just(0)}, {3, rc::gen::inRange(1, 9)}})),
      [](const std::tuple<Op, int>& t) {
        Op op = std::get<0>(t);
        op.value = std::get<1>(t);
        return op;
      });
}

rc::Gen<Op> GenSessionOp(OpKind kind, int sessions, rc::Gen<int> value) {
  return rc::gen::map(rc::gen::tuple(GenSlot(sessions), value),
                      [kind](const std::tuple<int, int>& t) {
                        return Op{.kind = kind,
                                  .slot = std::get<0>(t),
                                  .value = std::get<1>(t)};
                      });
}

rc::Gen<Op> GenAdvance() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::inRange(0, 301),
                     rc::gen::element(AdvanceKind::kJump, AdvanceKind::kStep,
                                      AdvanceKind::kLazy)),
      [](const std::tuple<int, AdvanceKind>& t) {
        return Op{.kind = OpKind::kAdvance,
                  .value = std::get<0>(t),
                  .advance = std::get<1>(t)};
      });
}

// Short ttls are likelier, so that sessions expire within a sequence.
rc::Gen<int> GenTtl() {
  return rc::gen::weightedElement<int>(
      {{3, 1000}, {2, 1500}, {1, 2000}, {1, 3000}});
}

rc::Gen<Op> GenCommandOrAdvance(int sessions, Profile p);

// Now and then a command is sent late (see Op::late).
rc::Gen<Op> GenOp(int sessions, Profile p) {
  return rc::gen::map(
      rc::gen::tuple(GenCommandOrAdvance(sessions, p),
                     rc::gen::weightedElement<bool>({{19, false}, {1, true}})),
      [](const std::tuple<Op, bool>& t) {
        Op op = std::get<0>(t);
        op.late = std::get<1>(t) && op.kind != OpKind::kAdvance;
        return op;
      });
}

rc::Gen<Op> GenCommandOrAdvance(int sessions, Profile p) {
  const rc::Gen<int> none = rc::gen::just(0);
  // Weights per profile: {kMixed, kQueues}.
  auto w = [p](std::size_t mixed, std::size_t queues) {
    return p == Profile::kMixed ? mixed : queues;
  };
  return rc::gen::weightedOneOf<Op>({
      {w(36, 45), GenKeyed(OpKind::kAcquire, sessions, p)},
      {w(12, 12), GenRelease(sessions, p)},
      {w(8, 6), GenSessionOp(OpKind::kBegin, sessions, none)},
      {w(3, 4), GenSessionOp(OpKind::kCommit, sessions, none)},
      {w(2, 2), GenSessionOp(OpKind::kRollback, sessions, none)},
      {w(2, 2), GenSessionOp(OpKind::kCancel, sessions, none)},
      {w(2, 2),
       GenSessionOp(OpKind::kCancelWait, sessions, rc::gen::inRange(0, 3))},
      {w(1, 1), GenSessionOp(OpKind::kEndSession, sessions, none)},
      {w(6, 4), GenSessionOp(OpKind::kOpenSession, sessions, GenTtl())},
      {w(2, 1), GenSessionOp(OpKind::kKeepAlive, sessions, none)},
      {w(3, 3),
       GenSessionOp(OpKind::kSetPriority, sessions, rc::gen::inRange(-11, 12))},
      {w(22, 12), GenAdvance()},
      {w(3, 3), GenKeyed(OpKind::kTest, sessions, p)},
      {w(2, 1), GenKeyed(OpKind::kMode, sessions, p)},
  });
}

// How many passing sequences reached each situation, printed after the run
// so that a reader can see the property is not passing vacuously.
struct Coverage {
  int sequences = 0;
  long steps = 0;
  int granted_after_wait = 0;
  int deadlock = 0;
  int timeout = 0;
  int cancelled = 0;
  int expired = 0;
  int conversion_waited = 0;
  int queue_of_two = 0;
  int queue_of_three = 0;
  long grants = 0;
  long parked = 0;
  long errors = 0;
  long deadlocks = 0;
};
Coverage coverage;

void InvariantsHoldAfterEveryStep() {
  const Profile profile = *rc::gen::weightedElement<int>({{6, 0}, {4, 1}})
                                      .as("profile (0 mixed, 1 queues)") == 0
                              ? Profile::kMixed
                              : Profile::kQueues;
  Scenario scenario;
  scenario.sessions =
      *rc::gen::inRange(profile == Profile::kMixed ? 2 : 4, 9).as("sessions");
  const auto n = static_cast<std::size_t>(scenario.sessions);
  scenario.ttl_ms = *rc::gen::container<std::vector<int>>(n, GenTtl())
                         .as("ttl per session (ms)");
  scenario.start_in_txn =
      *rc::gen::container<std::vector<bool>>(
           n, rc::gen::weightedElement<bool>({{3, true}, {1, false}}))
           .as("begins a transaction first");
  scenario.fence_floor =
      *rc::gen::element(std::uint64_t{0}, std::uint64_t{1000})
           .as("fence floor");
  scenario.ops =
      *rc::gen::resize(kMaxOps,
                       rc::gen::nonEmpty(rc::gen::container<std::vector<Op>>(
                           GenOp(scenario.sessions, profile))))
           .as("ops");

  RunStats stats;
  const std::string error = RunScenario(scenario, &stats);
  if (!error.empty()) RC_FAIL(error);

  ++coverage.sequences;
  coverage.steps += stats.steps;
  coverage.granted_after_wait += stats.grants_after_wait > 0;
  coverage.deadlock += stats.deadlocks > 0;
  coverage.timeout += stats.timeouts > 0;
  coverage.cancelled += stats.cancels > 0;
  coverage.expired += stats.expiries > 0;
  coverage.conversion_waited += stats.conversions_parked > 0;
  coverage.queue_of_two += stats.longest_queue >= 2;
  coverage.queue_of_three += stats.longest_queue >= 3;
  coverage.grants += stats.grants_at_once + stats.grants_after_wait;
  coverage.parked += stats.parked;
  coverage.errors += stats.errors;
  coverage.deadlocks += stats.deadlocks;
}

TEST(LockProperties, InvariantsHoldAfterEveryStep) {
  coverage = Coverage{};
  rc::detail::checkGTest(&InvariantsHoldAfterEveryStep);
  if (HasFailure()) return;
  const Coverage& c = coverage;
  auto pct = [&](int k) { return 100 * k / std::max(c.sequences, 1); };
  std::cout << c.sequences << " sequences, " << c.steps
            << " steps. Sequences with: a grant after a wait "
            << pct(c.granted_after_wait) << "%, a deadlock " << pct(c.deadlock)
            << "%, a timeout " << pct(c.timeout) << "%, a cancel "
            << pct(c.cancelled) << "%, a session expiry " << pct(c.expired)
            << "%, a conversion that waited " << pct(c.conversion_waited)
            << "%, 2+ waiters on one resource " << pct(c.queue_of_two)
            << "%, 3+ " << pct(c.queue_of_three) << "%\n"
            << "Totals: " << c.grants << " grants, " << c.parked << " waits, "
            << c.deadlocks << " deadlock victims, " << c.errors
            << " errors as expected\n";
}

}  // namespace
}  // namespace leasehold::property
