// Peer: one system that leasehold-peers drives — a leasehold server, SQLite,
// PostgreSQL, Redis or etcd — with the operations of both of its runs:
//   - seed 000's checkout race and walkthroughs (src/race): documents
//     1..N, checked out, saved and checked in by named users, and a race
//     log counted by the system itself where it has one;
//   - the peer benchmarks (src/peer_bench): application locks on names,
//     durable checkouts of record keys, and many idle held locks.
// Each system maps these onto its own idiom (docs/benchmarks.md,
// docs/seed-reproduction.md). Redis and etcd hold no documents, so only the
// benchmarks run on them.
//
// Errors are values: Result<bool> is true when the call did what was asked
// (granted, saved, checked in), false when it was refused (held by someone
// else, the wait ran out), and an error Status only when the call itself
// failed (transport, protocol, unexpected answer). Connections (sessions,
// clients) are used by one thread at a time.
#ifndef LEASEHOLD_PEERS_PEER_H_
#define LEASEHOLD_PEERS_PEER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace leasehold::peers {

// --- the race -----------------------------------------------------------

// How a race checkout is decided.
enum class Variant {
  // Read the row, decide in the client, then write in a separate statement:
  // two sessions can both read a free row and both take it.
  kNaive,
  // One statement holds the whole condition: granted iff it changed the row.
  kAtomic,
};

std::string_view VariantName(Variant variant);

// What a session sees when it reads one document.
struct DocumentView {
  std::optional<std::string> locked_by;  // kept after expiry
  bool locked = false;                   // true while the lease is unexpired
};

// One connection acting for one user on the documents.
class DocumentSession {
 public:
  virtual ~DocumentSession() = default;

  // Asks for document `doc` for `ttl`: granted when it is free, expired, or
  // already this user's. In kNaive mode, sleeps `gap` between the read and
  // the write (zero: no sleep).
  virtual Result<bool> Checkout(int doc, Variant variant,
                                std::chrono::milliseconds ttl,
                                std::chrono::microseconds gap) = 0;
  // Records one answer in the race log (a no-op where there is none).
  virtual Status Log(int doc, bool granted) = 0;
  // Saves `body` if this user holds an unexpired lease on `doc`.
  virtual Result<bool> Save(int doc, std::string_view body) = 0;
  // Releases `doc` if this user holds it.
  virtual Result<bool> Checkin(int doc) = 0;
  virtual Result<DocumentView> Read(int doc) = 0;
};

// The race log's two GROUP BY counts, as the system computed them.
struct RaceLog {
  // Number of winners -> logged documents with that many.
  std::map<int, int> documents_by_winners;
  // User -> documents granted.
  std::map<std::string, int> grants_by_user;
};

// --- the benchmarks -----------------------------------------------------

// What a benchmark scenario asks of a peer as a whole.
enum class Workload {
  kApplock,   // application locks on random names, and the hot name
  kCheckout,  // durable checkout + check-in of random record keys
};

// The name every client contends for in the hot scenario.
inline constexpr std::uint64_t kHotName = ~std::uint64_t{0};

// One benchmark client's connection.
class LockClient {
 public:
  virtual ~LockClient() = default;

  // Takes the application lock `name` (a number from the scenario's key
  // space, or kHotName) exclusively. `wait` zero: answers at once; else
  // waits (in the system's own way) up to `wait`. True: granted.
  virtual Result<bool> Acquire(std::uint64_t name,
                               std::chrono::milliseconds wait) = 0;
  // Releases `name`, which this client holds; an error if it did not.
  virtual Status Release(std::uint64_t name) = 0;
  // Checks out record `key` for this client (a lease of a minute), durably
  // where the system can. True: granted; false: leased to another client.
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

// --- the system ---------------------------------------------------------

class Peer {
 public:
  virtual ~Peer() = default;

  // "leasehold", "sqlite", "postgresql", "redis" or "etcd" (the benchmark
  // reports' `kind`).
  virtual std::string_view Kind() const = 0;
  // "leasehold", "SQLite", "PostgreSQL", "Redis" or "etcd" (the race's).
  virtual std::string_view Name() const = 0;

  // The race. False where the system holds no documents (Redis, etcd); the
  // race calls below then fail with kBadRequest saying so.
  virtual bool HasDocuments() const { return false; }
  // False where only the atomic design exists (a leasehold server).
  virtual bool SupportsNaive() const { return false; }
  // Starts afresh: documents 1..rows, all free, and an empty race log.
  virtual Status PrepareDocuments(int rows);
  // A new connection acting for `user`.
  virtual Result<std::unique_ptr<DocumentSession>> OpenDocumentSession(
      const std::string& user);
  // The race log's counts; nullopt where there is no log.
  virtual Result<std::optional<RaceLog>> CountRaceLog();

  // The benchmarks. Gets ready for `workload` over names and keys
  // 0..keys-1 (tables and rows, scripts); called once, before any client
  // connects.
  virtual Status Prepare(Workload workload, std::uint64_t keys) = 0;
  // What an acknowledged `workload` operation survives, in a few words read
  // from the system itself where it can tell ("yes: fsync per commit").
  virtual std::string Durability(Workload workload) const = 0;
  // True when an acknowledged `workload` operation survives a crash.
  virtual bool Durable(Workload workload) const = 0;
  // A new client; `index` is its number in the phase (0..N-1).
  virtual Result<std::unique_ptr<LockClient>> Connect(int index) = 0;
  // Takes `count` exclusive locks on names that no scenario uses and holds
  // them (the system's way: sessions, keys, rows, connections).
  virtual Result<std::unique_ptr<IdleLocks>> HoldIdle(std::uint64_t count) = 0;
};

struct PeerOptions {
  std::string token;         // a leasehold server's bearer token, if any
  std::string ns = "bench";  // the leasehold namespace the benchmarks use
};

// Parses a peer URL; nothing is connected yet. Schemes:
//   http://HOST:PORT               a leasehold server
//   sqlite:PATH                    a SQLite file (created if missing)
//   postgresql://… or postgres://… PostgreSQL (libpq); `mode=advisory` or
//                                  `mode=update` in the query picks the
//                                  benchmarks' application lock (default:
//                                  advisory locks; checkouts are always the
//                                  one UPDATE)
//   redis://HOST:PORT              Redis (hiredis)
//   etcd://HOST:PORT, etcd+http:// etcd's v3 JSON gateway
// Anything else is kBadRequest.
Result<std::unique_ptr<Peer>> MakePeer(std::string_view url,
                                       PeerOptions options = {});

}  // namespace leasehold::peers

#endif  // LEASEHOLD_PEERS_PEER_H_
