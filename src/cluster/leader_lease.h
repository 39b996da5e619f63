// LeaderLease: one leader among the leasehold nodes that share a PostgreSQL
// database.
//
// Leadership is one row (SCHEMA.leader, id 1): an epoch, the holder's node
// name and advertised URL, and an expiry. Every instant in it is
// PostgreSQL's own clock (now()), so the nodes' wall clocks never matter. A
// node takes the row only once it has expired, and the epoch then rises by
// one. The leader renews the row by its epoch, never by its name: a node
// restarted under the same name is a new holder, not its older self (Oban's
// leader renewed by name and believed it led for 19 days, oban #1488).
//
// The leader also keeps a deadline of its own on the monotonic clock. Each
// take or renewal that succeeds sets it to (when the statement was SENT) +
// lease - margin. The database set the row's expiry at or after that
// moment, to its now() + lease, so the leader's deadline passes at least
// `margin` before any other node can take the row, as long as the two
// clocks' rates differ by less than margin / lease. A leader that cannot
// renew (paused by SIGSTOP, cut off, the database gone) stops acting when
// valid_until() passes, before a standby can have taken over.
//
// Every write transaction of the leader must also run EpochCheckSql() first,
// inside the same transaction (Temporal's range_id): it share-locks the row,
// so a takeover waits until that transaction ends, and it fails once the
// epoch has moved on, so the transaction rolls back.
//
// A statement the database leaves unanswered for a whole lease, and at
// least kLeastStatementLimit (a stopped backend, a commit waiting for a
// synchronous standby that is gone), is given up (pg::Watchdog), so the
// keeper goes on; the node's own deadline, not the limit, decides when it
// stops acting, so a generous limit costs no safety, and spares a loaded
// machine's slow statement with a short lease.
//
// Not thread-safe: one thread (the node's lease keeper) calls it.
#ifndef LEASEHOLD_CLUSTER_LEADER_LEASE_H_
#define LEASEHOLD_CLUSTER_LEADER_LEASE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pg/connection.h"
#include "pg/watchdog.h"

namespace leasehold::cluster {

// The least time a lease statement is given before it is given up.
inline constexpr std::chrono::milliseconds kLeastStatementLimit{2000};

// The SQLSTATE of EpochCheckSql() once another node has taken over.
inline constexpr char kEpochLostSqlState[] = "LH001";

struct LeaderLeaseOptions {
  std::string url = {};              // a libpq connection string or URI
  std::string schema = "leasehold";  // where the leader row lives
  // This node's name (e.g. its host), shown to the other nodes and to
  // operators. The lease adds a random suffix per Open(), so a node
  // restarted under the same name is never taken for its older self.
  std::string node = {};
  std::string advertise = {};  // how clients reach this node ("" if unknown)
  std::chrono::milliseconds lease{5000};
  // How much sooner than the row's expiry the leader stops acting; more
  // than zero and less than `lease`.
  std::chrono::milliseconds margin{1000};
};

// A node that announced itself lately (Announce), as the database sees it.
struct MemberRow {
  std::string node;  // its LeaderLease::holder()
  std::string advertise;
  std::string role;                       // what it last announced
  std::chrono::milliseconds seen_ago{0};  // since its last announcement
};

// The row as the database sees it now.
struct LeaderRow {
  std::uint64_t epoch = 0;
  std::string node;  // the holder's LeaderLease::holder()
  std::string advertise;
  // Until the row expires by the database's clock; zero or less once it
  // has.
  std::chrono::milliseconds expires_in{0};
};

class LeaderLease {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Renewal { kRenewed, kLost };

  // Connects and creates the schema and its leader table if missing.
  // kBadRequest for options that cannot work (an empty node, a margin not
  // inside the lease); kUnavailable when the database cannot be reached.
  static Result<std::unique_ptr<LeaderLease>> Open(LeaderLeaseOptions options);
  ~LeaderLease();

  // Takes the row if there is none, it has expired, or this very lease
  // (this Open(): holder()) holds it already: this node's new epoch,
  // one higher (so a take whose answer was lost can be retried). nullopt
  // while another node's lease runs. Not for a node that is leading: its
  // writes under the old epoch would then fail. kUnavailable when the
  // database cannot be reached.
  Result<std::optional<std::uint64_t>> TryTake();

  // Extends this node's lease. kLost once another node holds the row (or
  // this node never took it); this node must then stop acting at once.
  // kUnavailable when the database cannot be reached; valid_until() does
  // not move then.
  Result<Renewal> Renew();

  // Gives the row up (it expires now) if this node still holds it, so that
  // a standby takes over without waiting out the lease; epoch() is 0 after.
  Status Resign();

  // The row, or nullopt before any node ever took it.
  Result<std::optional<LeaderRow>> Current();

  // Says that this node is alive and in `role` ("leader", "standby"), for
  // Members(); forgets nodes silent for ten minutes.
  Status Announce(std::string_view role);
  // The nodes that announced themselves within the last three leases, by
  // name.
  Result<std::vector<MemberRow>> Members();

  // The name this lease holds the row under: the node's, a '#' and a
  // random suffix.
  const std::string& holder() const { return holder_; }
  // This node's epoch, 0 until it took the row.
  std::uint64_t epoch() const { return epoch_; }
  // Until when this node may act as the leader, by its monotonic clock;
  // in the past before it took the row and after it lost it.
  Clock::time_point valid_until() const { return valid_until_; }
  bool valid(Clock::time_point now) const { return now < valid_until_; }

  // The statement a leader's write transaction runs first, with $1 = its
  // epoch as text. While the epoch is current it share-locks the row until
  // the transaction ends; after a takeover it fails with SQLSTATE
  // kEpochLostSqlState, which aborts the transaction.
  static std::string EpochCheckSql(std::string_view schema);

 private:
  explicit LeaderLease(LeaderLeaseOptions options);
  // Connects (again, after a broken connection) and prepares the
  // statements.
  Status Connect();
  // Creates what the lease needs if missing and prepares its statements.
  Status SetUp(PGconn* conn);
  // Runs `statement` with `values`, reconnecting once if the connection
  // broke (not when it went unanswered).
  Result<pg::PgResult> Run(const pg::Statement& statement,
                           std::span<const char* const> values);

  LeaderLeaseOptions options_;
  std::string holder_;
  std::string take_sql_, renew_sql_, resign_sql_, current_sql_;
  std::string announce_sql_, members_sql_;
  pg::Watchdog watchdog_;  // bounds each statement (see above)
  pg::Connection conn_;
  std::uint64_t epoch_ = 0;
  Clock::time_point valid_until_ = Clock::time_point::min();
};

}  // namespace leasehold::cluster

#endif  // LEASEHOLD_CLUSTER_LEADER_LEASE_H_
