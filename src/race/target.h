// Target: where the checkout race and the walkthroughs run — a SQLite file,
// a PostgreSQL database or a leasehold server — behind one small interface.
//
// A Target prepares the documents (rows 1..N, all free) and opens sessions;
// each TargetSession is one connection used by one thread at a time. Every
// call answers the article's way: true when the statement did what was
// asked (checkout granted, save applied, check-in done), false when it was
// refused, and an error Status only when the call itself failed.
#ifndef LEASEHOLD_RACE_TARGET_H_
#define LEASEHOLD_RACE_TARGET_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "race/tally.h"

namespace leasehold::race {

// How a checkout is decided.
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

class TargetSession {
 public:
  virtual ~TargetSession() = default;

  // Asks for document `doc` for `ttl`: granted when it is free, expired, or
  // already this session's user's. In kNaive mode, sleeps `gap` between the
  // read and the write (zero: no sleep).
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

class Target {
 public:
  virtual ~Target() = default;

  // "SQLite", "PostgreSQL" or "leasehold".
  virtual std::string_view Engine() const = 0;
  // False where only the atomic design exists (a leasehold server).
  virtual bool SupportsNaive() const = 0;
  // Starts afresh: documents 1..rows, all free, and an empty race log.
  virtual Status Prepare(int rows) = 0;
  // A new connection acting for `user`.
  virtual Result<std::unique_ptr<TargetSession>> Open(
      const std::string& user) = 0;
  // The two counts computed by the target itself from its race log (the
  // article's GROUP BY queries), for `sessions` sessions over `documents`
  // documents; nullopt where there is no log.
  virtual Result<std::optional<Tally>> TallyLog(int documents,
                                                int sessions) = 0;
};

// Parses a target string: "sqlite:PATH", "postgresql://…" (or
// "postgres://…"), or "http://HOST:PORT" for a leasehold server (sent
// `token` as its bearer token, if not empty). A string that is none of
// these is kBadRequest; nothing is connected yet.
Result<std::unique_ptr<Target>> MakeTarget(std::string_view spec,
                                           std::string token = "");

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_TARGET_H_
