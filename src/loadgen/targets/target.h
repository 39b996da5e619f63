// Target: a lock service that `leasehold bench --target URL` drives — a
// leasehold server, Redis, PostgreSQL, SQLite or etcd — behind one small
// blocking interface, so that one driver (client_phase.h: one thread per
// client) runs the same scenarios against every one of them.
//
// Each target maps the bench's three operations onto its own idiom (see
// docs/benchmarks.md for exactly which commands):
//   - an application lock on a name: acquire (waiting up to a limit, or not
//     at all) and release;
//   - a durable checkout of a record key and its check-in;
//   - many idle held locks, kept while the other operations run.
// Errors are values: Result<bool> is true when granted, false when the name
// is held by someone else (or the wait ran out), and an error Status only
// when the call itself failed (transport, protocol, unexpected answer).
#ifndef LEASEHOLD_LOADGEN_TARGETS_TARGET_H_
#define LEASEHOLD_LOADGEN_TARGETS_TARGET_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::loadgen {

// What a scenario asks of a target as a whole.
enum class Workload {
  kApplock,   // application locks on random names, and the hot name
  kCheckout,  // durable checkout + check-in of random record keys
};

// One client's connection. Used by one thread at a time; not thread-safe.
class TargetClient {
 public:
  virtual ~TargetClient() = default;

  // Takes the application lock `name` (a number from the scenario's key
  // space, or kHotName) exclusively. `wait` zero: answers at once; else
  // waits (in the target's own way) up to `wait`. True: granted.
  virtual Result<bool> Acquire(std::uint64_t name,
                               std::chrono::milliseconds wait) = 0;
  // Releases `name`, which this client holds; an error if it did not.
  virtual Status Release(std::uint64_t name) = 0;
  // Checks out record `key` for this client (a lease of a minute), durably.
  // True: granted; false: another client holds an unexpired lease.
  virtual Result<bool> Checkout(std::uint64_t key) = 0;
  // Checks record `key` in; an error if this client did not hold it.
  virtual Status Checkin(std::uint64_t key) = 0;
};

// Locks held idle until this object is destroyed (or Release is called).
class IdleLocks {
 public:
  virtual ~IdleLocks() = default;
  // Gives every idle lock back; further calls do nothing.
  virtual Status Release() = 0;
};

class Target {
 public:
  virtual ~Target() = default;

  // "leasehold", "redis", "postgresql", "sqlite" or "etcd".
  virtual std::string_view Kind() const = 0;
  // Gets ready for `workload` over names and keys 0..keys-1: tables and
  // rows, scripts. Called once, before any client connects.
  virtual Status Prepare(Workload workload, std::uint64_t keys) = 0;
  // What an acknowledged operation of `workload` survives, in a few words
  // read from the target itself where it can tell ("yes: fsync per commit").
  virtual std::string Durability(Workload workload) const = 0;
  // True when an acknowledged `workload` operation survives a crash.
  virtual bool Durable(Workload workload) const = 0;
  // A new client; `index` is its number in the phase (0..N-1).
  virtual Result<std::unique_ptr<TargetClient>> Connect(int index) = 0;
  // Takes `count` exclusive locks on names that no scenario uses and holds
  // them (the target's way: sessions, keys, rows, connections).
  virtual Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) = 0;
};

// The name every client contends for in the hot scenario.
inline constexpr std::uint64_t kHotName = ~std::uint64_t{0};

// Parses a target URL; nothing is connected yet. Schemes:
//   http://HOST:PORT               a leasehold server (`token`: bearer token)
//   redis://HOST:PORT              Redis (hiredis)
//   postgresql://… or postgres://… PostgreSQL (libpq); `mode=advisory` or
//                                  `mode=update` in the query picks the lock
//                                  (default: advisory locks for application
//                                  locks, the one-UPDATE for checkouts)
//   sqlite:PATH                    a SQLite file (created if missing)
//   etcd://HOST:PORT, etcd+http:// etcd's v3 JSON gateway
//   `ns` is the leasehold namespace used. Anything else is kBadRequest.
Result<std::unique_ptr<Target>> MakeTarget(std::string_view url,
                                           std::string token = "",
                                           std::string ns = "bench");

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_TARGETS_TARGET_H_
