// A history of what clients observed: each call a client made, with the
// moment it was sent (invoke), the moment its answer came or the client gave
// up (complete), both on std::chrono::steady_clock, and what the answer said.
// Tests with many client threads (failover, fault-injection soaks) record
// into a HistoryRecorder; the checks in lock_history_check.h then prove
// safety from the history alone, knowing nothing of the servers' insides.
//
// Recording, per call (one Operation each):
//   Acquire(session, resource, mode)  kOk (granted, with its fence),
//                                     kRefused (timeout, cancelled, deadlock),
//                                     kUnknown, kSessionLost
//   Release(session, resource)        kOk, kRefused (not_held, wait_pending),
//                                     kUnknown, kSessionLost
//   KeepAlive(session, ttl)           kOk (renewed), kLocksLost (renewed, its
//                                     in-memory locks are gone), kUnknown,
//                                     kSessionLost. Record a session's
//                                     creation as a KeepAlive answered kOk.
//   EndSession(session)               any outcome: the client let it go
//   Write(key, value)                 kOk (acknowledged), kRefused, kUnknown
//   Read(key, value or none)          kOk; other outcomes are not checked
//   Probe(session, resource, mode)    kOk with the mode the server said the
//                                     session holds (GET .../mode); other
//                                     outcomes are not checked
// kUnknown is any call whose effect the client cannot know: no answer, a
// broken connection, its own timeout, a 5xx. It is always safe to record a
// doubtful answer as kUnknown (the checks assume less); never record kOk or
// kRefused unless the server said so. Resources and keys are opaque names:
// put the namespace (and principal) in them if the test uses several.
// Locks are Session-owned. Each session's acquires and releases of one
// resource are made one at a time (the next is sent after the previous one
// completed); keep-alives may run beside them.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/lock_types.h"

namespace leasehold::testing {

using HistoryClock = std::chrono::steady_clock;
using Instant = HistoryClock::time_point;

enum class OperationKind : std::uint8_t {
  kAcquire,
  kRelease,
  kKeepAlive,
  kEndSession,
  kWrite,
  kRead,
  kProbe,
};

enum class Outcome : std::uint8_t {
  kOk,           // the server said it took effect
  kRefused,      // the server said it took no effect
  kUnknown,      // no answer to trust: it may or may not take effect
  kSessionLost,  // session_not_found: the session is gone
  kLocksLost,    // (keep-alive) renewed, but its in-memory locks are gone
};

struct Operation {
  OperationKind kind = OperationKind::kAcquire;
  Outcome outcome = Outcome::kUnknown;
  Instant invoke;
  Instant complete;
  std::string session;                // lock calls and keep-alives
  std::string name;                   // the resource, or the record's key
  LockMode mode = LockMode::kNoLock;  // acquire: asked for; probe: seen
  Fence fence = 0;                    // acquire answered kOk
  // Keep-alive answered kOk or kLocksLost: the session lives at least this
  // long after the call was sent. Zero: not known (no expiry is assumed).
  std::chrono::nanoseconds ttl{0};
  // Write: the value written, unique per key. Read: the value seen, none
  // when the record does not exist.
  std::optional<std::string> value;
};

// The history as recorded; an operation's number ("#12") is its index.
using History = std::vector<Operation>;

Operation Acquire(std::string session, std::string resource, LockMode mode,
                  Instant invoke, Instant complete, Outcome outcome,
                  Fence fence = 0);
Operation Release(std::string session, std::string resource, Instant invoke,
                  Instant complete, Outcome outcome);
Operation KeepAlive(std::string session, Instant invoke, Instant complete,
                    Outcome outcome, std::chrono::nanoseconds ttl = {});
Operation EndSession(std::string session, Instant invoke, Instant complete,
                     Outcome outcome);
Operation Write(std::string key, std::string value, Instant invoke,
                Instant complete, Outcome outcome);
Operation Read(std::string key, std::optional<std::string> value,
               Instant invoke, Instant complete);
// What the server said `session` holds of `resource` (answered: kOk).
Operation Probe(std::string session, std::string resource, LockMode seen,
                Instant invoke, Instant complete);

// Many threads append; each keeps its own timestamps (HistoryRecorder::Now
// before sending, again once answered or given up).
class HistoryRecorder {
 public:
  static Instant Now() { return HistoryClock::now(); }
  void Add(Operation op);
  std::size_t size() const;
  History Snapshot() const;

 private:
  mutable std::mutex mutex_;
  History history_;
};

// Counts for a test's log.
struct HistorySummary {
  std::size_t operations = 0;
  std::size_t acquires = 0, grants = 0, refusals = 0;
  std::size_t releases = 0;
  std::size_t sessions = 0, sessions_lost = 0, locks_lost = 0;
  std::size_t writes = 0, writes_acknowledged = 0, reads = 0, probes = 0;
  std::size_t unknowns = 0;  // calls of any kind answered kUnknown
  std::string ToString() const;
};
HistorySummary Summarize(const History& history);

// How violations name operations and moments: "#12 acquire a r Exclusive
// [t+0.000100s..t+0.000150s] granted fence 7", times counted from the
// history's first invoke; Instant::max() reads "the end of the history".
class HistoryDescriber {
 public:
  explicit HistoryDescriber(const History& history);
  std::string Op(std::size_t index) const;
  std::string At(Instant moment) const;
  static std::string Span(std::chrono::nanoseconds span);  // "1.000us"

 private:
  const History& history_;
  Instant origin_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_H_
