// Parser for concurrency scenarios written as data (`*.scenario` files).
//
// A scenario is a list of steps taken by named sessions at given instants,
// each with the result it expects. The format is described, with examples,
// in tests/scenarios/README.md. This file only turns text into Steps; it
// knows nothing of the engine (scenario_runner.h runs the steps).
//
// Uses: the public headers (types, status) and the standard library.
#ifndef LEASEHOLD_TESTS_SCENARIOS_SCENARIO_PARSER_H_
#define LEASEHOLD_TESTS_SCENARIOS_SCENARIO_PARSER_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/lock_types.h"

namespace leasehold::scenarios {

// Defaults for what a step does not say.
inline constexpr std::string_view kDefaultNamespace = "app";
inline constexpr std::string_view kDefaultPrincipal = "public";
inline constexpr std::int64_t kDefaultTtlMs = 60000;
inline constexpr std::int64_t kDefaultTimeoutMs = -1;  // wait forever
// The latest `at MS`: 100 years, so that every instant of a scenario is a
// Time (a larger one overflowed ScenarioStart() + MS).
inline constexpr std::int64_t kLatestAtMs = 100LL * 365 * 24 * 3600 * 1000;

// What a step does. The comment shows its shape in a file.
enum class Action : std::uint8_t {
  kAdvance,      // at MS                        (alone on its line)
  kOpenSession,  // session NAME [ttl=MS] [priority=N]
  kNamespace,    // namespace NS lock_delay=MS
  kBegin,        // NAME begin
  kCommit,       // NAME commit
  kRollback,     // NAME rollback
  kEnd,          // NAME end [by=client|admin]
  kKeepAlive,    // NAME keepalive
  kSetPriority,  // NAME priority N
  kAcquire,      // NAME acquire RESOURCE MODE [owner= timeout= ...] -> R
  kAcquireAll,   // NAME acquire-all RESOURCE:MODE... [owner= timeout= ...] -> R
  kRelease,      // NAME release RESOURCE [owner= ...]
  kMode,         // NAME mode RESOURCE [owner= ...] -> MODE
  kCount,        // NAME count RESOURCE [owner= ...] -> N
  kTest,         // NAME test RESOURCE MODE [owner= ...] -> true|false
  kCancel,       // NAME cancel -> true|false
  kWaiting,      // NAME waiting -> true|false
  kLocks,        // NAME locks -> N
  kQueue,        // queue RESOURCE [ns= principal=] -> NAME... | none
  kTake,         // NAME take SEMAPHORE PERMITS limit=N [owner= ...] -> R
  kGive,         // NAME give SEMAPHORE [permits=N] [owner= ...] [-> LEFT]
  kPermits,      // NAME permits SEMAPHORE [owner= ...] -> N
  kHeld,         // held SEMAPHORE [ns= principal=] -> N
  kDelay,        // delay NAME [ns= principal=] -> none | until=MS [permits=N]
  kFinished,     // NAME finished RESULT [held= count= cycle=]
};

// What a step expects to happen.
struct Expectation {
  enum class Kind : std::uint8_t {
    kOk,      // the command succeeds (the default for commands)
    kError,   // `error CODE`: fails with that API error code
    kWaits,   // `waits`: the request is parked
    kResult,  // 0, 1, -1, -2 or -3: sp_getapplock's result
    kBool,    // true or false
    kMode,    // a mode name, e.g. SharedIntentExclusive
    kNumber,  // a count
    kNames,   // session names in order (`none` for no names)
    kDelay,   // `none`, or `until=MS [permits=N]`: a lock-delay
  };
  Kind kind = Kind::kOk;
  std::string error;                  // kError, e.g. "not_held"
  int result = 0;                     // kResult
  bool flag = false;                  // kBool
  LockMode mode = LockMode::kNoLock;  // kMode
  std::int64_t number = 0;            // kNumber
  std::vector<std::string> names;     // kNames

  // Extra checks on a kResult:
  std::optional<LockMode> held;                   // held=MODE (after a grant)
  std::optional<std::int64_t> count;              // count=N (after a grant)
  std::optional<std::vector<std::string>> cycle;  // cycle=a,b (on -3)
  // permits=N: on a kResult, the permits a semaphore's owner holds after a
  // grant; on a kDelay, the permits the delay holds back.
  std::optional<std::int64_t> permits;
  std::optional<std::int64_t> until_ms;  // kDelay: its end; empty for `none`
};

// A lock's identity as written in a step.
struct LockTarget {
  std::string ns{kDefaultNamespace};
  std::string principal{kDefaultPrincipal};
  std::string resource;
};

// One line of a scenario that does something or checks something.
struct Step {
  int line = 0;            // 1-based line number in the file
  std::string text;        // the line as written (trimmed), for messages
  std::int64_t at_ms = 0;  // milliseconds since the scenario's start
  Action action = Action::kAdvance;
  std::string session;  // who acts; empty for `at` and `queue`

  std::int64_t ttl_ms = kDefaultTtlMs;  // session
  int priority = 0;                     // session, priority
  LockTarget target;  // acquire release mode count test queue, semaphores
  LockMode mode = LockMode::kNoLock;  // acquire, test
  // acquire-all: the locks as listed (target.resource stays empty).
  std::vector<std::pair<std::string, LockMode>> locks;
  LockOwner owner = LockOwner::kTransaction;  // acquire release mode count test
  std::int64_t timeout_ms = kDefaultTimeoutMs;  // acquire, acquire-all, take
  std::int64_t permits = 0;  // take: asked for; give: to give back, 0 = all
  std::int64_t limit = 0;    // take
  std::int64_t lock_delay_ms = 0;       // namespace (its name: target.ns)
  bool ended_by_administrator = false;  // end by=admin

  Expectation expect;
};

struct Scenario {
  std::vector<Step> steps;
};

struct ParseError {
  int line = 0;  // 1-based; 0 when the error is about the whole file
  std::string message;
};

// Parses a whole scenario file. Fails on the first line that is not valid,
// saying what is wrong with it and what was expected instead.
std::expected<Scenario, ParseError> ParseScenario(std::string_view text);

// Mode names: the APPLOCK_MODE names ("SharedIntentExclusive") or their
// short forms ("SIX"), matched ignoring case. Empty if unknown.
std::optional<LockMode> ParseModeName(std::string_view text);
// "NoLock", "IntentShared", ..., as APPLOCK_MODE says them.
std::string_view ModeName(LockMode mode);

}  // namespace leasehold::scenarios

#endif  // LEASEHOLD_TESTS_SCENARIOS_SCENARIO_PARSER_H_
