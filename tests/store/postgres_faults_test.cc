// One `leasehold serve --store postgresql://…` while its database fails
// under load, on PostgreSQL servers of each test's own
// (scripts/pg-test-cluster; the shared fixture cluster is never touched):
// restarted (`pg_ctl restart -m fast`, `-m immediate`), its connections
// ended (`pg_terminate_backend`), its store connection's backend stopped
// (SIGSTOP), and its primary crashed with a synchronous standby promoted in
// its place. Clients keep taking and
// releasing application locks and checking out and saving records over
// HTTP throughout. Meanwhile writes are answered (2xx, or 503 unavailable),
// never left hanging, and the server stays up; it recovers by itself,
// without a restart; and afterwards every write that was acknowledged is
// there, through the API and in the database's own tables.
//
// A write answered 503, or whose answer never came, may or may not have
// happened: it counts neither way.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "http/connection.h"
#include "tests/testing/server_process.h"
#include "tests/testing/session_lock_mode.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A request that takes longer than this is a hang: every write is answered
// well within it, outage or not (the store's connect_timeout is 5 s).
constexpr seconds kRequestDeadline{15};
// Writes must succeed again this soon after the database is back.
constexpr seconds kRecoveryLimit{30};

std::string PostgresBin() {
  const char* bin = std::getenv("LEASEHOLD_PG_BIN");
  return bin != nullptr ? bin : "/usr/lib/postgresql/15/bin";
}

// Why these tests cannot run on this machine, or "" when they can.
std::string MissingPostgres() {
  for (const char* tool :
       {"initdb", "pg_ctl", "pg_basebackup", "postgres", "psql"}) {
    const std::string path = PostgresBin() + "/" + tool;
    if (::access(path.c_str(), X_OK) != 0) return path + " is missing";
  }
  return "";
}

// A JSON string's text; "" for anything else.
std::string Text(const boost::json::value* v) {
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

// The rows of `sql` on `url`, each column as text (NULL as ""); a test
// failure, naming it, when it fails.
std::vector<std::vector<std::string>> PgRows(const std::string& url,
                                             const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  PGconn* conn = PQconnectdb(url.c_str());
  PGresult* r = PQexec(conn, sql.c_str());
  if (PQresultStatus(r) == PGRES_TUPLES_OK) {
    for (int i = 0; i < PQntuples(r); ++i) {
      auto& row = rows.emplace_back();
      for (int j = 0; j < PQnfields(r); ++j) row.push_back(PQgetvalue(r, i, j));
    }
  } else {
    ADD_FAILURE() << sql << ": " << PQerrorMessage(conn);
  }
  PQclear(r);
  PQfinish(conn);
  return rows;
}

// A PostgreSQL server of this test's own (scripts/pg-test-cluster in a
// directory of its own), stopped and deleted with the object.
class PrivateCluster {
 public:
  // A new cluster; or, with `primary`, a synchronous streaming standby of
  // it. Null, with a test failure saying why, when it did not start.
  static std::unique_ptr<PrivateCluster> Start(
      const std::string& dir, const PrivateCluster* primary = nullptr) {
    std::unique_ptr<PrivateCluster> cluster(new PrivateCluster(dir));
    const bool started =
        primary == nullptr
            ? cluster->Script("start")
            : cluster->Script("start-standby", "'" + primary->dir_ + "'");
    if (!started) return nullptr;
    const CommandRun url = RunShell("cat '" + dir + "/url'");
    cluster->url_ = url.out.substr(0, url.out.find('\n'));
    return cluster;
  }
  ~PrivateCluster() { (void)Script("stop"); }
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;

  // postgresql://postgres@127.0.0.1:PORT/postgres
  const std::string& url() const { return url_; }
  // 127.0.0.1:PORT
  std::string host_port() const {
    const auto at = url_.find('@') + 1;
    return url_.substr(at, url_.rfind('/') - at);
  }

  bool Restart(const std::string& mode) { return Script("restart", mode); }
  bool Kill() { return Script("kill"); }
  bool Resume() { return Script("resume"); }
  bool Promote() { return Script("promote"); }

 private:
  explicit PrivateCluster(std::string dir) : dir_(std::move(dir)) {}

  bool Script(const std::string& action, const std::string& extra = "") {
    const CommandRun run =
        RunShell(std::string("'") + LEASEHOLD_PG_CLUSTER + "' " + action +
                 " '" + dir_ + "' " + extra + " 2>&1");
    if (run.code != 0) {
      ADD_FAILURE() << "pg-test-cluster " << action << " failed: " << run.out;
    }
    return run.code == 0;
  }

  std::string dir_, url_;
};

// What the server shows, through the API or in its tables: each key's
// record and lease, each lock's holder.
struct Observed {
  struct Key {
    std::int64_t version = 0;
    std::optional<std::string> body;  // unknown from a listing
    bool leased = false;              // an unexpired lease
    std::string leased_by;
  };
  struct Lock {
    std::string session, owner, mode;
    std::int64_t count = 0;
  };
  std::map<std::string, Key> keys;
  std::map<std::string, Lock> locks;  // by resource (one holder each here)
  std::string source;                 // for messages
};

// One client of the load: a session of its own, keys of its own, fresh
// names. Each iteration inserts a new record, checks out one of its kKeys
// keys, saves it, checks it in every other time, takes a new lock and
// releases three locks in four. What was acknowledged is recorded; what was
// not is forgotten. A new record is never written again, and a new lock
// only released, so that a lost write of either shows in the end.
class LoadClient {
 public:
  static constexpr int kKeys = 8;

  LoadClient(int id, std::uint16_t port)
      : name_("c" + std::to_string(id)),
        connection_({.host = "127.0.0.1",
                     .port = port,
                     .token = "",
                     .host_header = "",
                     .user_agent = ""}) {}

  // Before the load: the session and the records, all acknowledged.
  void Prepare() {
    auto opened = Call("POST", api::SessionsPath(),
                       api::OpenSessionBody(name_, milliseconds(300'000)));
    ASSERT_EQ(opened.status, 201u) << opened.body;
    session_ = boost::json::value_to<std::string>(
        boost::json::parse(opened.body).at("id"));
    for (int k = 0; k < kKeys; ++k) {
      const std::string body = Body(k, 0);
      auto put =
          Call("PUT", api::RecordPath("docs", Key(k)), api::PutBody(body));
      ASSERT_EQ(put.status, 201u) << put.body;
      keys_[Key(k)] = {.version = 1, .body = body, .lease = Lease::kFree};
    }
  }

  void Run(const std::atomic<bool>& stop) {
    for (int n = 1; !stop.load(); ++n) Iteration(n);
  }

  // Acknowledged writes so far, and the moment of the last one.
  int acknowledged() const { return acknowledged_.load(); }
  SteadyClock::time_point last_acknowledged() const {
    std::lock_guard lock(mu_);
    return last_acknowledged_;
  }
  int unavailable() const { return unavailable_.load(); }
  int broken() const { return broken_.load(); }
  // The longest any request took, in ms.
  long slowest_ms() const { return slowest_ms_.load(); }
  std::vector<std::string> problems() const {
    std::lock_guard lock(mu_);
    return problems_;
  }
  const std::string& name() const { return name_; }

  // Every acknowledged write is in `seen`. Run once the load has stopped.
  void CheckAcknowledged(const Observed& seen) const {
    for (const auto& [key, body] : inserted_) {
      auto it = seen.keys.find(key);
      if (it == seen.keys.end()) {
        ADD_FAILURE() << seen.source << ": " << key << " was inserted";
        continue;
      }
      EXPECT_EQ(it->second.version, 1) << seen.source << ": " << key;
      if (it->second.body) {
        EXPECT_EQ(*it->second.body, body) << seen.source << ": " << key;
      }
    }
    for (const auto& [key, mine] : keys_) {
      auto it = seen.keys.find(key);
      ASSERT_TRUE(it != seen.keys.end()) << seen.source << ": " << key;
      const Observed::Key& got = it->second;
      ASSERT_TRUE(got.body) << seen.source << ": " << key;
      // A later save that was not acknowledged may have landed too.
      EXPECT_GE(got.version, mine.version) << seen.source << ": " << key;
      if (got.version == mine.version) {
        EXPECT_EQ(*got.body, mine.body) << seen.source << ": " << key;
      }
      EXPECT_GE(Sequence(*got.body), Sequence(mine.body))
          << seen.source << ": " << key << " holds " << *got.body
          << ", acknowledged " << mine.body;
      if (mine.lease == Lease::kHeld) {
        EXPECT_TRUE(got.leased && got.leased_by == name_)
            << seen.source << ": " << key << " was checked out by " << name_;
      } else if (mine.lease == Lease::kFree) {
        EXPECT_FALSE(got.leased)
            << seen.source << ": " << key << " was checked in by " << name_;
      }
    }
    int held = 0;
    for (const auto& [resource, acquired] : locks_) {
      auto it = seen.locks.find(resource);
      if (!acquired) {
        EXPECT_TRUE(it == seen.locks.end())
            << seen.source << ": " << resource << " was released";
        continue;
      }
      ++held;
      if (it == seen.locks.end()) {
        ADD_FAILURE() << seen.source << ": " << resource << " was granted to "
                      << name_;
        continue;
      }
      EXPECT_EQ(it->second.session, session_)
          << seen.source << ": " << resource;
      EXPECT_EQ(it->second.owner, "Session") << seen.source << ": " << resource;
      EXPECT_EQ(it->second.mode, "Exclusive")
          << seen.source << ": " << resource;
      EXPECT_EQ(it->second.count, 1) << seen.source << ": " << resource;
    }
    EXPECT_GT(held, 0) << name_ << " holds no acknowledged lock to check";
  }

 private:
  enum class Lease { kFree, kHeld, kUnknown };
  struct KeyState {
    std::int64_t version = 0;  // of the last acknowledged save
    std::string body;
    Lease lease = Lease::kFree;
  };
  enum class Outcome { kAcknowledged, kUnknown, kRefused };

  std::string Key(int k) const { return name_ + "-k" + std::to_string(k); }
  std::string Body(int k, int n) const {
    return Key(k) + " #" + std::to_string(n);
  }
  // The iteration a body was saved in.
  static long Sequence(const std::string& body) {
    const auto hash = body.rfind('#');
    return hash == std::string::npos ? -1 : std::stol(body.substr(hash + 1));
  }

  http::Answer Call(std::string_view method, const std::string& target,
                    const std::string& body = "") {
    const auto start = SteadyClock::now();
    http::Answer a =
        connection_.Request(method, target, body, start + kRequestDeadline);
    const auto took =
        std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start)
            .count();
    if (took > slowest_ms_.load()) slowest_ms_ = took;
    if (a.error && http::IsTimeout(a.error)) {
      Problem(std::string(method) + " " + target + " hung for " +
              std::to_string(kRequestDeadline.count()) + " s");
    }
    return a;
  }

  // A write: its answer, sorted. `expected` is its success status.
  Outcome Write(std::string_view method, const std::string& target,
                const std::string& body, unsigned expected,
                boost::json::value* answer = nullptr) {
    const http::Answer a = Call(method, target, body);
    if (a.error) {
      ++broken_;
      return Outcome::kUnknown;
    }
    boost::system::error_code ec;
    boost::json::value json = boost::json::parse(a.body, ec);
    if (a.status == 503) {
      const auto* error =
          json.is_object() ? json.as_object().if_contains("error") : nullptr;
      if (error == nullptr || !error->is_object() ||
          Text(error->as_object().if_contains("code")) != "unavailable") {
        Problem("503 without code unavailable: " + a.body);
      }
      ++unavailable_;
      return Outcome::kUnknown;
    }
    if (a.status != expected) {
      Problem(std::string(method) + " " + target + ": " +
              std::to_string(a.status) + " " + a.body);
      return Outcome::kRefused;
    }
    if (answer != nullptr) *answer = std::move(json);
    ++acknowledged_;
    std::lock_guard lock(mu_);
    last_acknowledged_ = SteadyClock::now();
    return Outcome::kAcknowledged;
  }

  // A read: whether it found something (200); 404 and 503 are "no".
  bool Read(const std::string& target) {
    const http::Answer a = Call("GET", target);
    if (a.error || a.status == 404 || a.status == 503) return false;
    if (a.status != 200) Problem("GET " + target + ": " + a.body);
    return a.status == 200;
  }

  void Iteration(int n) {
    const std::string fresh = name_ + "-n" + std::to_string(n);
    switch (Write("PUT", api::RecordPath("docs", fresh), api::PutBody(fresh),
                  201)) {
      case Outcome::kAcknowledged:
        inserted_[fresh] = fresh;
        break;
      case Outcome::kUnknown:
        // No answer shows what a crash could take back: a record that a
        // read shows must be there at the end, acknowledged or not.
        if (Read(api::RecordPath("docs", fresh))) inserted_[fresh] = fresh;
        break;
      case Outcome::kRefused:
        break;
    }

    const int k = n % kKeys;
    KeyState& key = keys_[Key(k)];
    const std::string owner = R"({"owner":")" + name_ + R"("})";
    switch (Write("POST", api::RecordPath("docs", Key(k), "checkout"),
                  R"({"owner":")" + name_ + R"(","ttl_ms":300000})", 200)) {
      case Outcome::kAcknowledged:
        key.lease = Lease::kHeld;
        break;
      case Outcome::kUnknown:
        key.lease = Lease::kUnknown;
        [[fallthrough]];
      case Outcome::kRefused:
        return;
    }
    const std::string body = Body(k, n);
    boost::json::value saved;
    if (Write("POST", api::RecordPath("docs", Key(k), "save"),
              R"({"owner":")" + name_ + R"(","body":")" + body + R"("})", 200,
              &saved) == Outcome::kAcknowledged) {
      key.version = saved.at("version").to_number<std::int64_t>();
      key.body = body;
    }
    if (n % 2 == 0) {
      const Outcome in =
          Write("POST", api::RecordPath("docs", Key(k), "checkin"), owner, 200);
      if (in == Outcome::kAcknowledged) key.lease = Lease::kFree;
      if (in == Outcome::kUnknown) key.lease = Lease::kUnknown;
    }

    const std::string resource = name_ + "-r" + std::to_string(n);
    client::AcquireOptions exclusive;  // Exclusive, owned by the session
    exclusive.timeout = milliseconds(0);
    if (Write("POST", api::ApplockPath("app", "acquire"),
              api::AcquireBody(session_, resource, exclusive),
              200) != Outcome::kAcknowledged) {
      return;
    }
    locks_[resource] = true;
    if (n % 4 == 0) return;  // kept: a held lock to find afterwards
    const Outcome released =
        Write("POST", api::ApplockPath("app", "release"),
              api::ReleaseBody(session_, resource, "Session", "public"), 200);
    if (released == Outcome::kAcknowledged) locks_[resource] = false;
    if (released == Outcome::kUnknown) locks_.erase(resource);
  }

  void Problem(std::string what) {
    std::lock_guard lock(mu_);
    if (problems_.size() < 10) problems_.push_back(std::move(what));
  }

  const std::string name_;
  http::Connection connection_;
  std::string session_;
  std::map<std::string, KeyState> keys_;
  std::map<std::string, std::string> inserted_;  // key: its body
  // Each lock whose grant was acknowledged: true while held, false once
  // its release was acknowledged (a release not acknowledged drops it).
  std::map<std::string, bool> locks_;
  std::atomic<int> acknowledged_{0}, unavailable_{0}, broken_{0};
  std::atomic<long> slowest_ms_{0};
  mutable std::mutex mu_;
  SteadyClock::time_point last_acknowledged_;
  std::vector<std::string> problems_;
};

// GET /healthz every 20 ms: how many times each answer came.
class HealthWatch {
 public:
  explicit HealthWatch(std::uint16_t port)
      : thread_([this, port] {
          http::Connection c({.host = "127.0.0.1",
                              .port = port,
                              .token = "",
                              .host_header = "",
                              .user_agent = ""});
          while (!stop_.load()) {
            const auto a = c.Request("GET", api::HealthPath(), "",
                                     SteadyClock::now() + kRequestDeadline);
            if (!a.error && a.status == 200) ++ok_;
            if (!a.error && a.status == 503) ++unavailable_;
            std::this_thread::sleep_for(milliseconds(20));
          }
        }) {}
  ~HealthWatch() {
    stop_ = true;
    thread_.join();
  }
  int ok() const { return ok_.load(); }
  int unavailable() const { return unavailable_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> ok_{0}, unavailable_{0};
  std::thread thread_;
};

class PostgresFaultsTest : public ::testing::Test {
 protected:
  static constexpr int kClients = 3;

  void SetUp() override {
    const std::string missing = MissingPostgres();
    if (!missing.empty()) {
      GTEST_SKIP() << missing << " (the Debian package postgresql-15; "
                   << "LEASEHOLD_PG_BIN names another directory)";
    }
  }
  void TearDown() override {
    StopLoad();
    server_.reset();
  }

  // leasehold on `store_url`, with the clients writing; returns once each
  // has had writes acknowledged.
  void StartLoad(const std::string& store_url,
                 const std::vector<std::string>& flags = {}) {
    server_ = ServerProcess::WithStore(store_url, scratch_.path(), flags);
    for (int i = 0; i < kClients; ++i) {
      clients_.push_back(std::make_unique<LoadClient>(i, server_->port()));
      ASSERT_NO_FATAL_FAILURE(clients_.back()->Prepare());
    }
    health_ = std::make_unique<HealthWatch>(server_->port());
    for (auto& c : clients_) {
      threads_.emplace_back([this, client = c.get()] { client->Run(stop_); });
    }
    const auto deadline = SteadyClock::now() + seconds(30);
    for (auto& c : clients_) {
      while (c->acknowledged() < 50 && SteadyClock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(10));
      }
      ASSERT_GE(c->acknowledged(), 50) << c->name() << " never got going";
    }
  }

  // Waits until every client has had a write acknowledged after `since`
  // and /healthz says 200: within kRecoveryLimit, without a restart. Then,
  // with `then_stop`, lets the load run on a little and stops it.
  void AwaitWritesAgain(SteadyClock::time_point since, bool then_stop = true) {
    bool again = false;
    while (!again && SteadyClock::now() < since + kRecoveryLimit) {
      std::this_thread::sleep_for(milliseconds(20));
      again = true;
      for (auto& c : clients_) again &= c->last_acknowledged() > since;
    }
    ASSERT_TRUE(again) << "writes were not acknowledged again within "
                       << kRecoveryLimit.count() << " s";
    const auto took = SteadyClock::now() - since;
    std::cout << "writes acknowledged again after "
              << std::chrono::duration_cast<milliseconds>(took).count()
              << " ms\n";
    http::Connection c({.host = "127.0.0.1",
                        .port = server_->port(),
                        .token = "",
                        .host_header = "",
                        .user_agent = ""});
    const auto health = c.Request("GET", api::HealthPath(), "",
                                  SteadyClock::now() + kRequestDeadline);
    EXPECT_EQ(health.status, 200u) << health.body;
    if (!then_stop) return;
    std::this_thread::sleep_for(milliseconds(500));
    StopLoad();
  }

  void StopLoad() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // How many writes the clients have had answered 503 so far.
  int Refused() const {
    int n = 0;
    for (const auto& c : clients_) n += c->unavailable();
    return n;
  }
  // Whether a write is answered 503 within 20 s, beyond the `before` of
  // Refused().
  bool RefusedAgainSince(int before) const {
    const auto until = SteadyClock::now() + seconds(20);
    while (Refused() == before && SteadyClock::now() < until) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    return Refused() > before;
  }

  // How the clients fared: every answer a 2xx or a 503 (never a hang or
  // another status), and how many were 503.
  int CheckAnswers() {
    int unavailable = 0, broken = 0, acknowledged = 0;
    long slowest_ms = 0;
    for (const auto& c : clients_) {
      slowest_ms = std::max(slowest_ms, c->slowest_ms());
      for (const auto& p : c->problems())
        ADD_FAILURE() << c->name() << ": " << p;
      unavailable += c->unavailable();
      broken += c->broken();
      acknowledged += c->acknowledged();
    }
    std::cout << acknowledged << " writes acknowledged, " << unavailable
              << " answered 503, " << broken << " without an answer; "
              << "/healthz " << health_->ok() << "x 200, "
              << health_->unavailable() << "x 503; slowest answer "
              << slowest_ms << " ms\n";
    return unavailable;
  }

  // The server is the one that was started: it recovered (by itself) at
  // least `recoveries` times, and stops cleanly. A node that could not
  // renew its leader lease during the outage stood by and took the lease
  // again: that reload counts too.
  void CheckRecoveredInPlace(int recoveries) {
    HttpClient c(server_->port());
    const auto metrics = c.Request("GET", "/metrics");
    auto counter = [&](const std::string& metric) {
      const std::string name = "\n" + metric + " ";
      const auto at = metrics.body.find(name);
      EXPECT_NE(at, std::string::npos) << metric << " in " << metrics.body;
      return at == std::string::npos
                 ? 0
                 : std::stoi(metrics.body.substr(at + name.size()));
    };
    const int reloads = counter("leasehold_store_recoveries_total") +
                        counter("leasehold_cluster_took_over_total") - 1;
    EXPECT_GE(reloads, recoveries);
    health_.reset();
    const int status = server_->Terminate();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "leasehold did not stop cleanly: " << status;
  }

  // Every acknowledged write, as the API shows it and as the tables at
  // `database_url` hold it.
  void CheckAcknowledged(const std::string& database_url) {
    const Observed through_api = ThroughApi();
    const Observed in_tables = InTables(database_url);
    for (const auto& c : clients_) {
      c->CheckAcknowledged(through_api);
      c->CheckAcknowledged(in_tables);
    }
  }

  Observed ThroughApi() {
    Observed seen;
    seen.source = "API";
    HttpClient c(server_->port());
    for (int i = 0; i < kClients; ++i) {
      for (int k = 0; k < LoadClient::kKeys; ++k) {
        const std::string key =
            "c" + std::to_string(i) + "-k" + std::to_string(k);
        const auto got = c.Request("GET", api::RecordPath("docs", key));
        if (got.status != 200) {
          ADD_FAILURE() << key << ": " << got.body;
          continue;
        }
        const auto& r = got.json.as_object();
        seen.keys[key] = {.version = r.at("version").to_number<std::int64_t>(),
                          .body = std::string(r.at("body").as_string()),
                          .leased = Text(r.if_contains("state")) == "locked",
                          .leased_by = Text(r.if_contains("locked_by"))};
      }
    }
    // The inserted records, page by page (a listing carries no bodies).
    for (std::string after;;) {
      client::ListOptions page{
          .state = "", .prefix = "", .after = after, .limit = 1000};
      const auto got = c.Request("GET", api::ListRecordsPath("docs", page));
      if (got.status != 200) {
        ADD_FAILURE() << got.body;
        break;
      }
      for (const auto& r : got.json.at("records").as_array()) {
        const std::string key(r.at("key").as_string());
        if (!seen.keys.contains(key)) {
          seen.keys[key].version = r.at("version").to_number<std::int64_t>();
        }
      }
      const auto* next = got.json.as_object().if_contains("next");
      if (next == nullptr || !next->is_string()) break;
      after = std::string(next->as_string());
    }
    const auto locks = c.Request("GET", api::ApplockPath("app"));
    EXPECT_EQ(locks.status, 200u) << locks.body;
    if (locks.status != 200) return seen;
    for (const auto& lock : locks.json.at("locks").as_array()) {
      const auto& holders = lock.at("granted").as_array();
      EXPECT_EQ(holders.size(), 1u) << boost::json::serialize(lock);
      if (holders.empty()) continue;
      const auto& h = holders[0].as_object();
      seen.locks[std::string(lock.at("resource").as_string())] = {
          .session = std::string(h.at("session").as_string()),
          .owner = std::string(h.at("owner").as_string()),
          .mode = std::string(h.at("mode").as_string()),
          .count = h.at("count").to_number<std::int64_t>()};
    }
    return seen;
  }

  static Observed InTables(const std::string& url) {
    Observed seen;
    seen.source = "tables at " + url;
    for (const auto& row :
         PgRows(url,
                "SELECT convert_from(key, 'UTF8'), version, "
                "convert_from(body, 'UTF8'), convert_from(locked_by, 'UTF8'), "
                "coalesce(lock_expires_us > extract(epoch FROM now()) * 1e6, "
                "false) FROM leasehold.keys WHERE ns = 'docs'::bytea")) {
      seen.keys[row[0]] = {.version = std::stoll(row[1]),
                           .body = row[2],
                           .leased = row[4] == "t",
                           .leased_by = row[3]};
    }
    // LockOwner 1 is Session, LockMode 7 Exclusive.
    for (const auto& row :
         PgRows(url,
                "SELECT convert_from(resource, 'UTF8'), session, "
                "CASE owner WHEN 1 THEN 'Session' ELSE owner::text END, "
                "CASE mode WHEN 7 THEN 'Exclusive' ELSE mode::text END, "
                "count FROM leasehold.locks WHERE ns = 'app'::bytea")) {
      seen.locks[row[0]] = {.session = row[1],
                            .owner = row[2],
                            .mode = row[3],
                            .count = std::stoll(row[4])};
    }
    return seen;
  }

  TempDir scratch_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<LoadClient>> clients_;
  std::unique_ptr<HealthWatch> health_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// pg_ctl restart under load, in each mode (fast: the server ends every
// connection and checkpoints; immediate: it crashes and recovers).
class PostgresRestart : public PostgresFaultsTest,
                        public ::testing::WithParamInterface<std::string> {};

TEST_P(PostgresRestart, AcknowledgedWritesSurviveAndServiceRecoversByItself) {
  TempDir dir;
  auto db = PrivateCluster::Start(dir.path());
  ASSERT_NE(db, nullptr);
  ASSERT_NO_FATAL_FAILURE(StartLoad(db->url()));

  ASSERT_TRUE(db->Restart(GetParam()));
  const auto restarted = SteadyClock::now();
  ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(restarted));

  EXPECT_GT(CheckAnswers(), 0) << "no write was refused: no outage was seen";
  EXPECT_GT(health_->unavailable(), 0) << "/healthz never said 503";
  CheckAcknowledged(db->url());
  CheckRecoveredInPlace(1);
}

INSTANTIATE_TEST_SUITE_P(PgCtl, PostgresRestart,
                         ::testing::Values("fast", "immediate"));

// A connection to a test's own server, ending leasehold's store
// connections there (pg_terminate_backend; application_name is leasehold's
// default). One round trip per call.
class BackendKiller {
 public:
  explicit BackendKiller(const std::string& url)
      : conn_(PQconnectdb(url.c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~BackendKiller() { PQfinish(conn_); }
  BackendKiller(const BackendKiller&) = delete;
  BackendKiller& operator=(const BackendKiller&) = delete;

  // The pids of leasehold's backends, comma-separated ("" for none).
  std::string Pids() {
    return Value("SELECT coalesce(string_agg(pid::text, ','), '') FROM " +
                 kTheirs);
  }
  // Ends every backend of leasehold; returns how many there were.
  int EndThem() {
    const std::string n =
        Value("SELECT count(pg_terminate_backend(pid)) FROM " + kTheirs);
    return n.empty() ? 0 : std::stoi(n);
  }

 private:
  inline static const std::string kTheirs =
      "pg_stat_activity WHERE application_name = 'leasehold' AND pid <> "
      "pg_backend_pid()";

  std::string Value(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    std::string value;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
      value = PQgetvalue(r, 0, 0);
    } else {
      ADD_FAILURE() << sql << ": " << PQerrorMessage(conn_);
    }
    PQclear(r);
    return value;
  }

  PGconn* conn_;
};

TEST_F(PostgresFaultsTest, EndedStoreConnectionsLoseNothing) {
  TempDir dir;
  auto db = PrivateCluster::Start(dir.path());
  ASSERT_NE(db, nullptr);
  ASSERT_NO_FATAL_FAILURE(StartLoad(db->url()));
  BackendKiller killer(db->url());

  // One at a time, each once leasehold is connected again: the store sends
  // a batch that a lost connection cut once more on a new one, so clients
  // seldom see these.
  for (int round = 0; round < 10; ++round) {
    const auto deadline = SteadyClock::now() + kRecoveryLimit;
    std::string pids;
    while ((pids = killer.Pids()).empty() && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_FALSE(pids.empty()) << "leasehold did not connect again";
    ASSERT_GE(killer.EndThem(), 1);
    std::string now;
    while (((now = killer.Pids()).empty() || now == pids) &&
           SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_NE(now, pids) << "leasehold kept a connection that was ended";
    ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(SteadyClock::now(), false));
  }
  const int seen_one_by_one = CheckAnswers();
  // Back to back for a second: its new connections are ended too, before
  // or during the batch sent again; writes answer 503 and the service
  // recovers (once the ending stops).
  int ended = 0;
  for (const auto until = SteadyClock::now() + seconds(1);
       SteadyClock::now() < until;) {
    ended += killer.EndThem();
  }
  std::cout << "then ended " << ended << " connections back to back\n";
  ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(SteadyClock::now()));

  EXPECT_GT(CheckAnswers(), seen_one_by_one)
      << "no write was refused: no outage was seen";
  EXPECT_GT(health_->unavailable(), 0) << "/healthz never said 503";
  CheckAcknowledged(db->url());
  CheckRecoveredInPlace(1);
}

// leasehold's store connection stops being answered (its backend stopped
// with SIGSTOP: as a frozen VM, or a commit waiting for a synchronous
// standby that is gone) for longer than --store-timeout-ms: writes are
// answered 503 while it is stopped, not held until it continues; the
// service recovers by itself once it does, and nothing acknowledged is lost.
TEST_F(PostgresFaultsTest,
       AStoppedStoreBackendAnswers503MeanwhileAndLosesNothing) {
  TempDir dir;
  auto db = PrivateCluster::Start(dir.path());
  ASSERT_NE(db, nullptr);
  ASSERT_NO_FATAL_FAILURE(StartLoad(db->url(), {"--store-timeout-ms", "1000"}));
  const int refused_before = Refused();
  {
    // application_name leasehold: the store's connections, not the lease's.
    StoppedBackend backend(db->url(), "leasehold");
    ASSERT_TRUE(backend.stopped());
    const auto stopped = SteadyClock::now();
    ASSERT_TRUE(RefusedAgainSince(refused_before))
        << "no write was answered 503 while the backend was stopped";
    std::cout << "first 503 after "
              << std::chrono::duration_cast<milliseconds>(SteadyClock::now() -
                                                          stopped)
                     .count()
              << " ms of the backend stopped\n";
    // Recoveries meanwhile find the backend alive and wait for it.
    std::this_thread::sleep_for(seconds(2));
  }
  ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(SteadyClock::now()));

  CheckAnswers();
  EXPECT_GT(health_->unavailable(), 0) << "/healthz never said 503";
  CheckAcknowledged(db->url());
  CheckRecoveredInPlace(1);
}

// A primary whose synchronous standby goes down: every COMMIT there waits
// for a standby, leasehold's batches and its leader lease's renewals alike.
// Writes answer 503 meanwhile (each round trip is bounded), none waits
// for the standby, and once a standby is synchronous again leasehold
// serves by itself, nothing acknowledged lost.
TEST_F(PostgresFaultsTest, ASynchronousStandbyDownBrings503sNotHangs) {
  TempDir primary_dir, standby_dir;
  auto primary = PrivateCluster::Start(primary_dir.path());
  ASSERT_NE(primary, nullptr);
  auto standby = PrivateCluster::Start(standby_dir.path(), primary.get());
  ASSERT_NE(standby, nullptr);
  ASSERT_NO_FATAL_FAILURE(
      StartLoad(primary->url(), {"--store-timeout-ms", "1000"}));
  const int refused_before = Refused();
  ASSERT_TRUE(standby->Kill());
  ASSERT_TRUE(RefusedAgainSince(refused_before))
      << "no write was answered 503 while no standby was synchronous";
  // Longer than a request may take: a write held by the stall until the
  // standby is back would count as a hang.
  std::this_thread::sleep_for(kRequestDeadline + seconds(2));
  standby.reset();
  standby = PrivateCluster::Start(standby_dir.path(), primary.get());
  ASSERT_NE(standby, nullptr);
  ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(SteadyClock::now()));

  CheckAnswers();
  EXPECT_GT(health_->unavailable(), 0) << "/healthz never said 503";
  CheckAcknowledged(primary->url());
  CheckRecoveredInPlace(1);
}

// The database goes down and stays down for a while. Writes answer 503;
// reads are answered from the state leasehold last had acknowledged (never
// with a write it refused) for as long as its leader lease lets it vouch
// that nobody else can have changed that state; then they answer 503 too,
// until the database is back and the node leads again, with everything
// acknowledged and nothing refused.
TEST_F(PostgresFaultsTest, ReadsServeTheAcknowledgedStateWhileTheLeaseLasts) {
  TempDir dir;
  auto db = PrivateCluster::Start(dir.path());
  ASSERT_NE(db, nullptr);
  // Valid for 9 s after each renewal (lease less its quarter margin), and
  // renewed every 4 s: at least 5 s of reads after the database is gone.
  server_ = ServerProcess::WithStore(db->url(), scratch_.path(),
                                     {"--leader-lease-ms", "12000"});
  HttpClient c(server_->port());
  auto session = c.Request("POST", api::SessionsPath(),
                           api::OpenSessionBody("Asha", seconds(60)));
  ASSERT_EQ(session.status, 201u) << session.body;
  const std::string s(session.json.at("id").as_string());
  client::AcquireOptions now_or_never;
  now_or_never.timeout = milliseconds(0);
  ASSERT_EQ(c.Request("POST", api::ApplockPath("app", "acquire"),
                      api::AcquireBody(s, "held", now_or_never))
                .status,
            200u);
  ASSERT_EQ(c.Request("PUT", api::RecordPath("docs", "kept"),
                      api::PutBody("acknowledged"))
                .status,
            201u);

  ASSERT_TRUE(db->Kill());
  const auto down = SteadyClock::now();
  auto refused = c.Request("PUT", api::RecordPath("docs", "refused"),
                           api::PutBody("never acknowledged"));
  EXPECT_EQ(refused.status, 503u) << refused.body;
  auto refused_lock = c.Request("POST", api::ApplockPath("app", "acquire"),
                                api::AcquireBody(s, "refused", now_or_never));
  EXPECT_EQ(refused_lock.status, 503u) << refused_lock.body;

  auto kept = c.Request("GET", api::RecordPath("docs", "kept"));
  while (kept.status == 503 && SteadyClock::now() < down + seconds(4)) {
    std::this_thread::sleep_for(milliseconds(20));
    kept = c.Request("GET", api::RecordPath("docs", "kept"));
  }
  ASSERT_EQ(kept.status, 200u)
      << "no read served during the outage: " << kept.body;
  EXPECT_EQ(kept.json.at("body").as_string(), "acknowledged");
  std::cout << "reads served "
            << std::chrono::duration_cast<milliseconds>(SteadyClock::now() -
                                                        down)
                   .count()
            << " ms after the database went down\n";
  auto unwritten = c.Request("GET", api::RecordPath("docs", "refused"));
  EXPECT_EQ(unwritten.status, 404u) << unwritten.body;
  EXPECT_EQ(SessionLockMode(c, "app", s, "held"), "Exclusive");
  auto locks = c.Request("GET", api::ApplockPath("app"));
  ASSERT_EQ(locks.status, 200u) << locks.body;
  ASSERT_EQ(locks.json.at("locks").as_array().size(), 1u) << locks.body;
  EXPECT_EQ(locks.json.at("locks").as_array()[0].at("resource").as_string(),
            "held");
  EXPECT_EQ(c.Request("GET", api::HealthPath()).status, 503u);
  EXPECT_EQ(
      c.Request("PUT", api::RecordPath("docs", "kept"), api::PutBody("changed"))
          .status,
      503u);

  // Once the lease has lapsed the node cannot vouch that its state is
  // current (another node may lead): reads answer 503 as well.
  auto lapsed = c.Request("GET", api::RecordPath("docs", "kept"));
  while (lapsed.status == 200 && SteadyClock::now() < down + seconds(20)) {
    std::this_thread::sleep_for(milliseconds(100));
    lapsed = c.Request("GET", api::RecordPath("docs", "kept"));
  }
  EXPECT_EQ(lapsed.status, 503u) << "reads served past the lease";
  std::cout << "reads refused "
            << std::chrono::duration_cast<milliseconds>(SteadyClock::now() -
                                                        down)
                   .count()
            << " ms after the database went down\n";

  // Back: the node renews its lease (or takes it again) and recovers; reads
  // may be answered from the acknowledged state before writes are.
  ASSERT_TRUE(db->Resume());
  auto health = c.Request("GET", api::HealthPath());
  while (health.status != 200 && SteadyClock::now() < down + seconds(60)) {
    std::this_thread::sleep_for(milliseconds(100));
    health = c.Request("GET", api::HealthPath());
  }
  ASSERT_EQ(health.status, 200u) << "the node did not recover: " << health.body;
  auto back = c.Request("GET", api::RecordPath("docs", "kept"));
  ASSERT_EQ(back.status, 200u) << back.body;
  EXPECT_EQ(back.json.at("body").as_string(), "acknowledged");
  EXPECT_EQ(c.Request("GET", api::RecordPath("docs", "refused")).status, 404u);
  EXPECT_EQ(SessionLockMode(c, "app", s, "held"), "Exclusive");
  auto after = c.Request("PUT", api::RecordPath("docs", "after"),
                         api::PutBody("written once it was back"));
  EXPECT_EQ(after.status, 201u) << after.body;
}

// A primary with a synchronous streaming standby; leasehold on both hosts
// (target_session_attrs=read-write). The primary crashes under load, the
// standby is promoted a moment later: leasehold follows by itself, and
// every acknowledged write is on the promoted server.
TEST_F(PostgresFaultsTest,
       PromotedSynchronousStandbyHasEveryAcknowledgedWrite) {
  TempDir primary_dir, standby_dir;
  auto primary = PrivateCluster::Start(primary_dir.path());
  ASSERT_NE(primary, nullptr);
  auto standby = PrivateCluster::Start(standby_dir.path(), primary.get());
  ASSERT_NE(standby, nullptr);
  ASSERT_NO_FATAL_FAILURE(StartLoad(
      "postgresql://postgres@" + primary->host_port() + "," +
      standby->host_port() + "/postgres?target_session_attrs=read-write"));

  ASSERT_TRUE(primary->Kill());
  // Meanwhile the only server up is a standby, which takes no writes.
  std::this_thread::sleep_for(milliseconds(1000));
  ASSERT_TRUE(standby->Promote());
  const auto promoted = SteadyClock::now();
  ASSERT_NO_FATAL_FAILURE(AwaitWritesAgain(promoted));

  EXPECT_GT(CheckAnswers(), 0) << "no write was refused: no outage was seen";
  EXPECT_GT(health_->unavailable(), 0) << "/healthz never said 503";
  CheckAcknowledged(standby->url());
  CheckRecoveredInPlace(1);
}

}  // namespace
}  // namespace leasehold::testing
