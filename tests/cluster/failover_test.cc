// Failover with real processes: two or three `leasehold serve` nodes on the
// tests' PostgreSQL (fixture pg_cluster), clients taking and releasing
// application locks and saving records through whichever node leads, and
// the leader killed with SIGKILL twenty times, or stopped with SIGSTOP past
// its lease. What the clients saw is checked afterwards (HistoryRecorder):
// no two sessions held conflicting locks at once, fences rose across every
// epoch, and no acknowledged write was lost. Each takeover's time is
// measured and printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "tests/cluster/cluster_processes.h"
#include "tests/testing/leader_client.h"
#include "tests/testing/lock_history.h"
#include "tests/testing/lock_history_check.h"
#include "tests/testing/recorded_session.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
namespace json = boost::json;

constexpr milliseconds kLease{1000};
const char* const kResources[] = {"r0", "r1", "r2", "r3", "r4", "r5"};

constexpr milliseconds kSessionTtl{20'000};

// A client that opens a session and takes and releases locks on a few
// resources, Exclusive or Shared, never waiting, keeping its session alive.
// After an unknown outcome it ends its session (which releases whatever it
// may hold) and opens a new one, so that it never holds a lock it does not
// know of.
void LockClient(int id, const std::vector<std::uint16_t>& ports,
                HistoryRecorder& history, const std::atomic<bool>& stop,
                std::atomic<int>& failures) {
  LeaderClient client(ports);
  std::mt19937 random(static_cast<unsigned>(id) * 7919u);
  RecordedSession session(client, history, "c" + std::to_string(id),
                          kSessionTtl);
  // Ends the session, which releases whatever it may hold, and opens
  // another.
  auto renew = [&] {
    if (session.End() == Outcome::kUnknown) ++failures;
    session.Open(stop);
  };
  auto lost = [&](const LeaderClient::Reply& r) {
    if (OutcomeOf(r, 200) != Outcome::kSessionLost) return false;
    ++failures;  // a session must survive a failover
    session.Forget();
    session.Open(stop);
    return true;
  };
  session.Open(stop);
  while (!stop) {
    if (!session.KeepAliveIfDue()) {
      ++failures;  // a session must survive a failover
      session.Forget();
      session.Open(stop);
      continue;
    }
    const std::string resource = kResources[random() % std::size(kResources)];
    const bool shared = random() % 3 == 0;
    const LockMode mode = shared ? LockMode::kShared : LockMode::kExclusive;
    const auto [acquired, r] = session.Acquire(resource, mode, 0);
    if (acquired == Outcome::kUnknown) {
      renew();
      continue;
    }
    if (lost(r)) continue;
    if (acquired == Outcome::kRefused) {
      if (r.status != 409) ++failures;  // only "timeout" is expected
      continue;
    }
    // One hold in five is long, so that many span a takeover: the new
    // leader must know them.
    const bool long_hold = random() % 5 == 0;
    std::this_thread::sleep_for(
        milliseconds(long_hold ? 200 + random() % 1800 : random() % 5));
    const auto [o, released] = session.Release(resource);
    if (o == Outcome::kUnknown) {
      renew();
    } else if (!lost(released) && o != Outcome::kOk) {
      ++failures;
    }
  }
  if (session.open() && session.End() == Outcome::kUnknown) ++failures;
}

// A client that checks its own record out and saves a counter into it,
// over and over. Its token makes a repeated checkout idempotent.
void RecordClient(int id, const std::vector<std::uint16_t>& ports,
                  HistoryRecorder& history, const std::atomic<bool>& stop,
                  std::atomic<int>& failures) {
  LeaderClient client(ports);
  const std::string key = "k" + std::to_string(id);
  const std::string path = "/v1/records/docs/" + key;
  const std::string token = "token-" + key;
  const Instant created_at = HistoryRecorder::Now();
  auto created = client.Retry(
      "PUT", path, json::serialize(json::object{{"body", "0"}}), seconds(30));
  if (!created.answered || created.status != 201) ++failures;
  history.Add(Write(key, "0", created_at, HistoryRecorder::Now(),
                    OutcomeOf(created, 201)));
  for (int n = 1; !stop; ++n) {
    auto out =
        client.Send("POST", path + "/checkout",
                    json::serialize(json::object{
                        {"owner", key}, {"ttl_ms", 20'000}, {"token", token}}));
    if (!out.answered) continue;
    if (out.status != 200) {
      ++failures;
      continue;
    }
    const std::string value = std::to_string(n);
    const Instant invoked = HistoryRecorder::Now();
    auto saved = client.Send(
        "POST", path + "/save",
        json::serialize(json::object{{"token", token}, {"body", value}}));
    const Outcome o = OutcomeOf(saved, 200);
    if (o == Outcome::kRefused) ++failures;
    history.Add(Write(key, value, invoked, HistoryRecorder::Now(), o));
    (void)client.Send("POST", path + "/checkin",
                      json::serialize(json::object{{"token", token}}));
  }
}

struct Takeover {
  milliseconds time;
  int from, to;
};

void KillTheLeaderUnderLoad(int nodes, int kills) {
  TestDatabase db("failover");
  ASSERT_FALSE(db.url().empty());
  TempDir dir;
  ClusterProcesses cluster(db.url(), dir.path(), nodes, kLease);
  ASSERT_TRUE(cluster.Leader(seconds(30)).has_value()) << "no node leads";

  HistoryRecorder history;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  const auto ports = cluster.ports();
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back(
        [&, i] { LockClient(i, ports, history, stop, failures); });
  }
  for (int i = 0; i < 2; ++i) {
    clients.emplace_back(
        [&, i] { RecordClient(i, ports, history, stop, failures); });
  }

  std::vector<Takeover> takeovers;
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(milliseconds(300));  // some load per epoch
    auto leader = cluster.Leader(seconds(30));
    ASSERT_TRUE(leader.has_value()) << "no leader before kill " << k;
    cluster.Kill(*leader);
    const auto killed = Clock::now();
    std::optional<int> next;
    while (!next && Clock::now() - killed < seconds(30)) {
      for (int i = 0; i < cluster.size(); ++i) {
        if (i != *leader && cluster.Healthy(i, milliseconds(200))) next = i;
      }
    }
    ASSERT_TRUE(next.has_value()) << "no takeover after kill " << k;
    takeovers.push_back(
        {std::chrono::duration_cast<milliseconds>(Clock::now() - killed),
         *leader, *next});
    cluster.Start(*leader);  // back as a standby
  }
  stop = true;
  for (auto& t : clients) t.join();

  // Every record as the last leader has it.
  LeaderClient reader(ports);
  for (int i = 0; i < 2; ++i) {
    const std::string key = "k" + std::to_string(i);
    const Instant invoked = HistoryRecorder::Now();
    auto r = reader.Retry("GET", "/v1/records/docs/" + key, "", seconds(30));
    ASSERT_TRUE(r.answered && r.status == 200) << key;
    history.Add(
        Read(key, JsonString(r.json, "body"), invoked, HistoryRecorder::Now()));
  }

  const History recorded = history.Snapshot();
  std::vector<milliseconds> times;
  for (const Takeover& t : takeovers) times.push_back(t.time);
  std::sort(times.begin(), times.end());
  std::printf(
      "failover: %d nodes, lease %lld ms, %d kills: takeover median "
      "%lld ms, worst %lld ms; %s\n",
      nodes, static_cast<long long>(kLease.count()), kills,
      static_cast<long long>(times[times.size() / 2].count()),
      static_cast<long long>(times.back().count()),
      Summarize(recorded).ToString().c_str());
  EXPECT_EQ(failures.load(), 0);
  MutualExclusionCoverage coverage;
  for (const std::string& v : CheckMutualExclusion(recorded, &coverage)) {
    ADD_FAILURE() << v;
  }
  for (const std::string& v : CheckFencesRise(recorded)) ADD_FAILURE() << v;
  for (const std::string& v : CheckNoAcknowledgedWriteLost(recorded)) {
    ADD_FAILURE() << v;
  }
  // The checks proved something: many holds, across every epoch.
  EXPECT_GT(coverage.holds, static_cast<std::size_t>(10 * kills));
}

TEST(Failover, TwoNodesKillTheLeaderTwentyTimesUnderLoad) {
  KillTheLeaderUnderLoad(2, 20);
}

TEST(Failover, ThreeNodesKillTheLeaderTwentyTimesUnderLoad) {
  KillTheLeaderUnderLoad(3, 20);
}

}  // namespace
}  // namespace leasehold::testing
