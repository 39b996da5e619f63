#include "cluster/leader_lease.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <random>

namespace leasehold::cluster {

namespace {

// A schema name used as is in statements: lower-case letters, digits and
// underscores, not starting with a digit.
bool PlainIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

// Durations go to the database as whole milliseconds.
std::string Millis(std::chrono::milliseconds d) {
  return std::to_string(d.count());
}

}  // namespace

std::string LeaderLease::EpochCheckSql(std::string_view schema) {
  return fmt::format("SELECT {}.check_epoch($1::bigint)", schema);
}

LeaderLease::LeaderLease(LeaderLeaseOptions options)
    : options_(std::move(options)),
      watchdog_(std::max(options_.lease, kLeastStatementLimit)) {
  std::random_device random;
  holder_ = fmt::format("{}#{:08x}{:08x}", options_.node, random(), random());
  const std::string& s = options_.schema;
  // Free (no row), expired, or this very process's own (a take retried
  // after its answer was lost): take it, the epoch one higher. The condition
  // is evaluated on the latest row, after waiting for any transaction that
  // share-locked it (EpochCheckSql), so a takeover never overlaps a write
  // of the old leader.
  take_sql_ = fmt::format(
      "INSERT INTO {0}.leader AS l (id, epoch, node, advertise, expires_at) "
      "VALUES (1, 1, $1, $2, now() + $3::bigint * interval '1 millisecond') "
      "ON CONFLICT (id) DO UPDATE SET epoch = l.epoch + 1, "
      "node = EXCLUDED.node, advertise = EXCLUDED.advertise, "
      "expires_at = EXCLUDED.expires_at "
      "WHERE l.expires_at <= now() OR l.node = EXCLUDED.node "
      "RETURNING epoch",
      s);
  renew_sql_ = fmt::format(
      "UPDATE {}.leader SET expires_at = now() + $2::bigint * "
      "interval '1 millisecond' WHERE id = 1 AND epoch = $1::bigint "
      "RETURNING epoch",
      s);
  resign_sql_ = fmt::format(
      "UPDATE {}.leader SET expires_at = now() WHERE id = 1 AND "
      "epoch = $1::bigint",
      s);
  // Announcing also forgets nodes long gone, so that the table stays small.
  announce_sql_ = fmt::format(
      "WITH gone AS (DELETE FROM {0}.nodes WHERE seen_at < now() - "
      "interval '10 minutes') "
      "INSERT INTO {0}.nodes AS n (node, advertise, role, seen_at) "
      "VALUES ($1, $2, $3, now()) ON CONFLICT (node) DO UPDATE SET "
      "advertise = EXCLUDED.advertise, role = EXCLUDED.role, seen_at = now()",
      s);
  members_sql_ = fmt::format(
      "SELECT node, advertise, role, "
      "floor(extract(epoch FROM now() - seen_at) * 1000)::bigint "
      "FROM {}.nodes WHERE seen_at > now() - $1::bigint * "
      "interval '1 millisecond' ORDER BY node",
      s);
  current_sql_ = fmt::format(
      "SELECT epoch, node, advertise, "
      "floor(extract(epoch FROM expires_at - now()) * 1000)::bigint "
      "FROM {}.leader WHERE id = 1",
      s);
}

LeaderLease::~LeaderLease() = default;

Result<std::unique_ptr<LeaderLease>> LeaderLease::Open(
    LeaderLeaseOptions options) {
  if (options.node.empty()) {
    return std::unexpected(
        Status(StatusCode::kBadRequest, "leader lease: the node needs a name"));
  }
  if (!PlainIdentifier(options.schema)) {
    return std::unexpected(
        Status(StatusCode::kBadRequest,
               "leader lease: schema \"" + options.schema +
                   "\" must be lower-case letters, digits and underscores"));
  }
  if (options.margin.count() <= 0 || options.margin >= options.lease) {
    return std::unexpected(Status(
        StatusCode::kBadRequest,
        fmt::format("leader lease: the margin ({} ms) must be more than 0 and "
                    "less than the lease ({} ms)",
                    options.margin.count(), options.lease.count())));
  }
  std::unique_ptr<LeaderLease> lease(new LeaderLease(std::move(options)));
  if (Status st = lease->Connect(); !st.ok()) return std::unexpected(st);
  return lease;
}

Status LeaderLease::Connect() {
  auto conn = pg::Connect(options_.url);
  if (!conn) return conn.error();
  auto watch = watchdog_.Arm(conn->get());
  Status st = watch.Explain("leader lease: setting up its connection",
                            SetUp(conn->get()));
  if (!st.ok()) return st;
  // Broken if the watch fired just after: the next Run() reconnects.
  conn_ = std::move(*conn);
  return Status::Ok();
}

Status LeaderLease::SetUp(PGconn* conn) {
  // Two nodes starting at once may both create: the loser's statement
  // fails on the catalog's unique index, and its second try finds it all.
  const std::string create = fmt::format(
      "CREATE SCHEMA IF NOT EXISTS {0}; "
      "CREATE TABLE IF NOT EXISTS {0}.leader ("
      "id integer PRIMARY KEY CHECK (id = 1), epoch bigint NOT NULL, "
      "node text NOT NULL, advertise text NOT NULL, "
      "expires_at timestamptz NOT NULL); "
      // An error, not an empty answer: in a pipelined batch the statements
      // after it run without anyone reading its rows, and only an error
      // stops them (and COMMIT) from taking effect.
      "CREATE OR REPLACE FUNCTION {0}.check_epoch(mine bigint) RETURNS void "
      "LANGUAGE plpgsql AS $$ BEGIN "
      "PERFORM 1 FROM {0}.leader WHERE id = 1 AND epoch = mine FOR SHARE; "
      "IF NOT FOUND THEN RAISE EXCEPTION "
      "'leasehold: epoch % no longer leads (another node took over)', mine "
      "USING ERRCODE = '{1}'; END IF; END $$",
      options_.schema, kEpochLostSqlState);
  if (!pg::Exec(conn, create) && !pg::Exec(conn, create)) {
    return pg::Failure(conn, "create the leader table");
  }
  const std::string members = fmt::format(
      "CREATE TABLE IF NOT EXISTS {}.nodes (node text PRIMARY KEY, "
      "advertise text NOT NULL, role text NOT NULL, "
      "seen_at timestamptz NOT NULL)",
      options_.schema);
  if (!pg::Exec(conn, members) && !pg::Exec(conn, members)) {
    return pg::Failure(conn, "create the nodes table");
  }
  const std::array<pg::Statement, 6> statements = {{
      {"lease_take", take_sql_.c_str(), 3},
      {"lease_renew", renew_sql_.c_str(), 2},
      {"lease_resign", resign_sql_.c_str(), 1},
      {"lease_current", current_sql_.c_str(), 0},
      {"lease_announce", announce_sql_.c_str(), 3},
      {"lease_members", members_sql_.c_str(), 1},
  }};
  return pg::Prepare(conn, statements);
}

Result<pg::PgResult> LeaderLease::Run(const pg::Statement& statement,
                                      std::span<const char* const> values) {
  if (conn_ == nullptr || PQstatus(conn_.get()) != CONNECTION_OK) {
    conn_.reset();
    if (Status st = Connect(); !st.ok()) return std::unexpected(st);
  }
  bool unanswered = false;
  const auto run = [&]() -> Result<pg::PgResult> {
    auto watch = watchdog_.Arm(conn_.get());
    auto result = pg::Run(conn_.get(), statement, values);
    unanswered = watch.fired();
    if (result) return result;
    return std::unexpected(watch.Explain(
        "leader lease: " + std::string(statement.name), result.error()));
  };
  auto r = run();
  // Once more would wait as long again; the keeper's next round retries.
  if (unanswered) return r;
  if (!r && PQstatus(conn_.get()) != CONNECTION_OK) {
    // The connection broke under the statement: once more on a new one.
    // Taking and renewing are safe to repeat: each is one statement that
    // either happened or not, and its condition is checked again.
    conn_.reset();
    if (Status st = Connect(); !st.ok()) return std::unexpected(st);
    r = run();
  }
  return r;
}

Result<std::optional<std::uint64_t>> LeaderLease::TryTake() {
  const Clock::time_point sent = Clock::now();
  const std::string lease = Millis(options_.lease);
  const std::array<const char*, 3> values = {
      holder_.c_str(), options_.advertise.c_str(), lease.c_str()};
  auto r = Run({"lease_take", take_sql_.c_str(), 3}, values);
  if (!r) return std::unexpected(r.error());
  if (PQntuples(r->get()) != 1) return std::nullopt;  // someone else's
  epoch_ = std::stoull(PQgetvalue(r->get(), 0, 0));
  valid_until_ = sent + options_.lease - options_.margin;
  return epoch_;
}

Result<LeaderLease::Renewal> LeaderLease::Renew() {
  if (epoch_ == 0) return Renewal::kLost;
  const Clock::time_point sent = Clock::now();
  const std::string epoch = std::to_string(epoch_);
  const std::string lease = Millis(options_.lease);
  const std::array<const char*, 2> values = {epoch.c_str(), lease.c_str()};
  auto r = Run({"lease_renew", renew_sql_.c_str(), 2}, values);
  if (!r) return std::unexpected(r.error());
  if (PQntuples(r->get()) != 1) {
    valid_until_ = Clock::time_point::min();
    return Renewal::kLost;
  }
  valid_until_ = sent + options_.lease - options_.margin;
  return Renewal::kRenewed;
}

Status LeaderLease::Resign() {
  valid_until_ = Clock::time_point::min();  // stop acting first
  if (epoch_ == 0) return Status::Ok();
  const std::string epoch = std::to_string(epoch_);
  const std::array<const char*, 1> values = {epoch.c_str()};
  auto r = Run({"lease_resign", resign_sql_.c_str(), 1}, values);
  if (!r) return r.error();
  epoch_ = 0;
  return Status::Ok();
}

Result<std::optional<LeaderRow>> LeaderLease::Current() {
  auto r = Run({"lease_current", current_sql_.c_str(), 0}, {});
  if (!r) return std::unexpected(r.error());
  if (PQntuples(r->get()) != 1) return std::nullopt;
  LeaderRow row;
  row.epoch = std::stoull(PQgetvalue(r->get(), 0, 0));
  row.node = PQgetvalue(r->get(), 0, 1);
  row.advertise = PQgetvalue(r->get(), 0, 2);
  row.expires_in =
      std::chrono::milliseconds(std::stoll(PQgetvalue(r->get(), 0, 3)));
  return row;
}

Status LeaderLease::Announce(std::string_view role) {
  const std::string r(role);
  const std::array<const char*, 3> values = {
      holder_.c_str(), options_.advertise.c_str(), r.c_str()};
  auto done = Run({"lease_announce", announce_sql_.c_str(), 3}, values);
  return done ? Status::Ok() : done.error();
}

Result<std::vector<MemberRow>> LeaderLease::Members() {
  const std::string within = Millis(3 * options_.lease);
  const std::array<const char*, 1> values = {within.c_str()};
  auto r = Run({"lease_members", members_sql_.c_str(), 1}, values);
  if (!r) return std::unexpected(r.error());
  std::vector<MemberRow> members;
  for (int i = 0; i < PQntuples(r->get()); ++i) {
    members.push_back(
        {PQgetvalue(r->get(), i, 0), PQgetvalue(r->get(), i, 1),
         PQgetvalue(r->get(), i, 2),
         std::chrono::milliseconds(std::stoll(PQgetvalue(r->get(), i, 3)))});
  }
  return members;
}

}  // namespace leasehold::cluster
