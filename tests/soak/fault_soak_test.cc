// A fault soak on one real `leasehold serve` (SQLite, its own data
// directory). Clients take and release application locks in every mode,
// waiting and nesting (so deadlocks happen), check records out and save
// them, while the server is killed with SIGKILL and restarted on the same
// data, stopped with SIGSTOP for a few seconds, waits are hung up mid-way,
// and sessions expire while holding. What the clients saw is checked
// afterwards (lock_history_check.h): no two sessions held conflicting
// modes at once, fences rose, a refused waiter never held the lock after
// all, a checkout had one holder at a time, and no acknowledged write was
// lost. Then a violation is injected into the recorded history, to show
// that the checks would have seen one.
//
// LEASEHOLD_SOAK_SECONDS sets the length (default 40: some 10,000 calls
// under ASan on two cores); scripts/soak runs a long one.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "http/connection.h"
#include "http/spawned_server.h"
#include "tests/testing/leader_client.h"
#include "tests/testing/lock_history.h"
#include "tests/testing/lock_history_check.h"
#include "tests/testing/recorded_session.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
namespace json = boost::json;

constexpr milliseconds kSessionTtl{10'000};
constexpr milliseconds kShortTtl{1'500};  // sessions left to expire
constexpr milliseconds kCheckoutTtl{3'000};
const char* const kResources[] = {"r0", "r1", "r2", "r3"};
const LockMode kModes[] = {LockMode::kShared, LockMode::kUpdate,
                           LockMode::kExclusive, LockMode::kIntentShared,
                           LockMode::kIntentExclusive};
const char* const kRecords[] = {"c0", "c1"};

LockMode ModeNamed(std::string_view name) {
  return ParseLockMode(name).value_or(LockMode::kNoLock);
}

// What the soak did to the server and its clients, for the log.
struct Faults {
  std::atomic<int> kills{0}, stops{0}, hang_ups{0}, expiries{0};
  std::atomic<int> deadlocks{0}, timeouts{0};
  std::atomic<int> unexpected{0};  // answers no correct server gives
};

// The server on one data directory and port, killed and restarted.
class SoakServer {
 public:
  explicit SoakServer(std::string data_dir) : data_dir_(std::move(data_dir)) {
    Start();
  }
  std::uint16_t port() const { return port_; }

  void Start() {
    auto started = http::SpawnedServer::Start({.binary = LEASEHOLD_BINARY,
                                               .data_dir = data_dir_,
                                               .config = "",
                                               .store = "",
                                               .env = {},
                                               .log_to_file = true,
                                               .port = port_});
    if (!started) throw std::runtime_error(started.error());
    process_ = std::move(*started);
    port_ = process_->port();
  }
  void Kill() { process_->Kill(); }
  void Signal(int signo) { ::kill(process_->pid(), signo); }

 private:
  std::string data_dir_;
  std::uint16_t port_ = 0;
  std::unique_ptr<http::SpawnedServer> process_;
};

// Takes locks in random modes with random waits, sometimes a second one
// while holding the first (so that waits form cycles and deadlocks are
// reported), sometimes hanging up mid-wait. After a refusal it asks what
// it holds (a Probe). After any unknown outcome it ends its session and
// opens another, so that it never holds a lock it does not know of.
class LockWorker {
 public:
  LockWorker(int id, std::uint16_t port, HistoryRecorder& history,
             Faults& faults)
      : id_(id),
        port_(port),
        client_({port}),
        history_(history),
        faults_(faults),
        random_(static_cast<unsigned>(id) * 7919u + 1),
        session_(client_, history, "w" + std::to_string(id), kSessionTtl) {}

  void Run(const std::atomic<bool>& stop) {
    session_.Open(stop);
    while (!stop && session_.open()) {
      if (!session_.KeepAliveIfDue()) {
        session_.Forget();
        ++faults_.unexpected;  // a live session must survive every fault
        session_.Open(stop);
        continue;
      }
      Round();
    }
    if (session_.open()) session_.End();
  }

 private:
  // One hold: acquire, maybe nest a second, release.
  void Round() {
    const int first = Pick(std::size(kResources));
    const std::optional<bool> got = TryAcquire(kResources[first]);
    if (!got || !*got) return;
    std::this_thread::sleep_for(milliseconds(Pick(30)));
    if (Pick(3) == 0) {
      const int second = (first + 1 + Pick(std::size(kResources) - 1)) %
                         static_cast<int>(std::size(kResources));
      const std::optional<bool> nested =
          TryAcquire(kResources[second], /*nested=*/true);
      if (!nested) return;
      if (*nested && !TryRelease(kResources[second])) return;
    }
    TryRelease(kResources[first]);
  }

  // True when granted, false when refused, nullopt when the session was
  // replaced (the outcome was unknown or the session was lost).
  // A nested acquire waits, so that two of them can wait for each other.
  std::optional<bool> TryAcquire(const std::string& resource,
                                 bool nested = false) {
    const LockMode mode = kModes[Pick(std::size(kModes))];
    const bool hang_up = !nested && Pick(10) == 0;
    const int timeouts[] = {0, 100, 300, 1000};
    const int timeout_ms = nested ? 1000 : timeouts[Pick(4)];
    const RecordedSession::Answer a =
        hang_up ? HangUpAfter(resource, mode, milliseconds(30 + Pick(270)))
                : session_.Acquire(resource, mode, timeout_ms);
    const Outcome o = a.outcome;
    const LeaderClient::Reply& r = a.reply;
    if (o == Outcome::kOk) return true;
    if (o == Outcome::kRefused && r.status == 409) {
      const auto result = JsonInt(r.json, "result").value_or(0);
      if (result == -3) ++faults_.deadlocks;
      if (result == -1) ++faults_.timeouts;
      if (result >= 0) ++faults_.unexpected;
      ProbeMode(resource);
      return false;
    }
    if (o == Outcome::kRefused) ++faults_.unexpected;
    Replace(o);
    return std::nullopt;
  }

  bool TryRelease(const std::string& resource) {
    const Outcome o = session_.Release(resource).outcome;
    if (o == Outcome::kOk) return true;
    if (o == Outcome::kRefused) ++faults_.unexpected;
    Replace(o);
    return false;
  }

  // What the session holds of `resource`, as the server says.
  void ProbeMode(const std::string& resource) {
    const Instant invoked = HistoryRecorder::Now();
    auto r = client_.Send("GET",
                          "/v1/applocks/app/mode?session=" + session_.id() +
                              "&resource=" + resource + "&owner=Session",
                          "");
    if (!r.answered || r.status != 200) return;
    history_.Add(testing::Probe(session_.id(), resource,
                                ModeNamed(JsonString(r.json, "mode")), invoked,
                                HistoryRecorder::Now()));
  }

  // Asks for `resource` with a wait of 2 s on a connection of its own, and
  // hangs up after `patience` unless answered by then: the server must end
  // the wait. Recorded as session_.Acquire records.
  RecordedSession::Answer HangUpAfter(const std::string& resource,
                                      LockMode mode, milliseconds patience) {
    http::Address address;
    address.port = port_;
    http::Connection c(address);
    const Instant invoked = HistoryRecorder::Now();
    http::Answer answer = c.Request(
        "POST", "/v1/applocks/app/acquire",
        json::serialize(json::object{{"session", session_.id()},
                                     {"resource", resource},
                                     {"mode", std::string(LockModeName(mode))},
                                     {"owner", "Session"},
                                     {"timeout_ms", 2000}}),
        Clock::now() + patience);
    RecordedSession::Answer a;
    if (answer.error) {
      ++faults_.hang_ups;  // unknown: granted or not, the session goes
    } else {
      boost::system::error_code ec;
      a.reply.json = json::parse(answer.body, ec);
      a.reply.status = answer.status;
      a.reply.answered = answer.status != 503;
    }
    a.outcome = OutcomeOf(a.reply, 200);
    history_.Add(testing::Acquire(
        session_.id(), resource, mode, invoked, HistoryRecorder::Now(),
        a.outcome,
        static_cast<Fence>(JsonInt(a.reply.json, "fence").value_or(0))));
    return a;
  }

  void Replace(Outcome o) {
    if (o == Outcome::kSessionLost) {
      ++faults_.unexpected;
      session_.Forget();
    } else {
      session_.End();
    }
    std::atomic<bool> never{false};
    session_.Open(never);
  }

  int Pick(std::size_t n) { return static_cast<int>(random_() % n); }

  int id_;
  std::uint16_t port_;
  LeaderClient client_;
  HistoryRecorder& history_;
  Faults& faults_;
  std::mt19937 random_;
  RecordedSession session_;
};

// Takes a lock in a session it then lets expire: the lock is free for
// others only once the session is gone (the checker ends the hold at the
// session's expiry horizon, kShortTtl after its last keep-alive was sent).
void ExpiringWorker(std::uint16_t port, HistoryRecorder& history,
                    Faults& faults, const std::atomic<bool>& stop) {
  LeaderClient client({port});
  std::mt19937 random(4242);
  for (int n = 0; !stop; ++n) {
    RecordedSession session(client, history, "expiring", kShortTtl);
    session.Open(stop);
    if (!session.open()) return;
    const std::string resource = kResources[random() % std::size(kResources)];
    const Outcome o =
        session.Acquire(resource, LockMode::kExclusive, 500).outcome;
    // Whatever the answer: no keep-alive, and the session runs out.
    std::this_thread::sleep_for(kShortTtl + milliseconds(1000));
    if (o == Outcome::kOk) {
      const Outcome gone = session.Release(resource).outcome;
      // A restart meanwhile gives a session a fresh TTL: it may still live.
      if (gone == Outcome::kSessionLost) ++faults.expiries;
    }
  }
}

// Checks one of the shared records out under a token of its own, saves a
// value and checks it in; another worker competes for the same records.
// Each lease is recorded as a session (named by its token) holding the
// resource "checkout:KEY" until its check-in or its expiry.
void CheckoutWorker(int id, std::uint16_t port, HistoryRecorder& history,
                    Faults& faults, const std::atomic<bool>& stop) {
  LeaderClient client({port});
  std::mt19937 random(static_cast<unsigned>(id) + 99);
  const std::string owner = "o" + std::to_string(id);
  // Kept after an unknown checkout, to ask again for the same lease.
  std::string token, key;
  for (int n = 0; !stop; ++n) {
    if (token.empty()) {
      token = owner + "-lease-" + std::to_string(n);
      key = kRecords[random() % std::size(kRecords)];
    }
    const std::string path = "/v1/records/docs/" + key;
    const std::string resource = "checkout:" + key;
    const Instant invoked = HistoryRecorder::Now();
    auto out = client.Send(
        "POST", path + "/checkout",
        json::serialize(json::object{{"owner", owner},
                                     {"ttl_ms", kCheckoutTtl.count()},
                                     {"token", token}}));
    const Outcome o = OutcomeOf(out, 200);
    history.Add(Acquire(
        token, resource, LockMode::kExclusive, invoked, HistoryRecorder::Now(),
        o, static_cast<Fence>(JsonInt(out.json, "fence").value_or(0))));
    if (o == Outcome::kUnknown) {  // the server is down or stopped
      std::this_thread::sleep_for(milliseconds(50));
      continue;
    }
    if (o != Outcome::kOk) {
      if (out.status != 423) ++faults.unexpected;
      token.clear();
      std::this_thread::sleep_for(milliseconds(random() % 20));
      continue;
    }
    history.Add(KeepAlive(token, invoked, invoked, Outcome::kOk, kCheckoutTtl));
    const std::string value = token + "-v";
    const Instant save_invoked = HistoryRecorder::Now();
    auto saved = client.Send(
        "POST", path + "/save",
        json::serialize(json::object{{"token", token}, {"body", value}}));
    history.Add(Write(key, value, save_invoked, HistoryRecorder::Now(),
                      OutcomeOf(saved, 200)));
    std::this_thread::sleep_for(milliseconds(random() % 30));
    const Instant checkin_invoked = HistoryRecorder::Now();
    auto in = client.Send("POST", path + "/checkin",
                          json::serialize(json::object{{"token", token}}));
    history.Add(Release(token, resource, checkin_invoked,
                        HistoryRecorder::Now(), OutcomeOf(in, 200)));
    token.clear();
  }
}

// A copy of `history` with a grant that breaks mutual exclusion: another
// session granted the resource of the first Exclusive grant, inside it.
History WithInjectedViolation(History history) {
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Operation op = history[i];  // a copy: the history grows below
    if (op.kind == OperationKind::kAcquire && op.outcome == Outcome::kOk &&
        op.mode == LockMode::kExclusive && op.name.starts_with("r")) {
      history.push_back(KeepAlive("intruder", op.invoke, op.invoke,
                                  Outcome::kOk, seconds(60)));
      history.push_back(Acquire("intruder", op.name, LockMode::kShared,
                                op.invoke, op.complete, Outcome::kOk,
                                op.fence + 1'000'000));
      return history;
    }
  }
  return history;
}

TEST(FaultSoak, EveryCheckHoldsUnderKillsStopsHangUpsAndExpiries) {
  const char* env = std::getenv("LEASEHOLD_SOAK_SECONDS");
  const seconds length(env != nullptr ? std::atoi(env) : 40);
  TempDir dir;
  SoakServer server(dir.File("data"));
  HistoryRecorder history;
  Faults faults;
  std::atomic<bool> stop{false};

  LeaderClient setup({server.port()});
  for (const char* key : kRecords) {
    const Instant invoked = HistoryRecorder::Now();
    auto r = setup.Retry("PUT", std::string("/v1/records/docs/") + key,
                         json::serialize(json::object{{"body", "initial"}}),
                         seconds(30));
    ASSERT_EQ(r.status, 201u);
    history.Add(
        Write(key, "initial", invoked, HistoryRecorder::Now(), Outcome::kOk));
  }

  std::vector<std::unique_ptr<LockWorker>> lockers;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    lockers.push_back(
        std::make_unique<LockWorker>(i, server.port(), history, faults));
    threads.emplace_back([&, w = lockers.back().get()] { w->Run(stop); });
  }
  threads.emplace_back(
      [&] { ExpiringWorker(server.port(), history, faults, stop); });
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back(
        [&, i] { CheckoutWorker(i, server.port(), history, faults, stop); });
  }

  std::mt19937 random(77);
  const auto until = Clock::now() + length;
  while (Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(1500 + random() % 1500));
    const auto fault = random() % 10;
    if (fault < 4) {
      server.Kill();
      ++faults.kills;
      std::this_thread::sleep_for(milliseconds(random() % 300));
      server.Start();
    } else if (fault < 7) {
      server.Signal(SIGSTOP);
      ++faults.stops;
      std::this_thread::sleep_for(milliseconds(1000 + random() % 2000));
      server.Signal(SIGCONT);
    }
  }
  stop = true;
  for (auto& t : threads) t.join();

  for (const char* key : kRecords) {
    const Instant invoked = HistoryRecorder::Now();
    auto r = setup.Retry("GET", std::string("/v1/records/docs/") + key, "",
                         seconds(30));
    ASSERT_EQ(r.status, 200u);
    history.Add(
        Read(key, JsonString(r.json, "body"), invoked, HistoryRecorder::Now()));
  }

  const History recorded = history.Snapshot();
  MutualExclusionCoverage coverage;
  std::vector<std::string> violations =
      CheckMutualExclusion(recorded, &coverage);
  for (auto* check :
       {&CheckFencesRise, &CheckNoAcknowledgedWriteLost, &CheckRefusalsStick}) {
    for (std::string& v : check(recorded)) violations.push_back(std::move(v));
  }
  const HistorySummary summary = Summarize(recorded);
  std::printf(
      "fault soak: %lld s; %s; faults: %d kill -9, %d SIGSTOP, %d hang-ups "
      "mid-wait, %d sessions expired holding; %d deadlocks, %d timeouts; "
      "%zu holds compared; %zu violations\n",
      static_cast<long long>(length.count()), summary.ToString().c_str(),
      faults.kills.load(), faults.stops.load(), faults.hang_ups.load(),
      faults.expiries.load(), faults.deadlocks.load(), faults.timeouts.load(),
      coverage.holds, violations.size());
  for (const std::string& v : violations) ADD_FAILURE() << v;
  EXPECT_EQ(faults.unexpected.load(), 0);
  // The soak proved something: enough calls, holds and faults of each kind.
  EXPECT_GE(summary.operations, static_cast<std::size_t>(length.count()) * 250)
      << "fewer calls than a soak of this length should make";
  EXPECT_GE(coverage.holds, static_cast<std::size_t>(length.count()) * 20);
  EXPECT_GT(faults.kills + faults.stops, 0);
  EXPECT_GT(summary.probes, 0u);

  // And the checks would have seen a violation in this very history.
  const History broken = WithInjectedViolation(recorded);
  ASSERT_GT(broken.size(), recorded.size());
  EXPECT_FALSE(CheckMutualExclusion(broken).empty());
}

}  // namespace
}  // namespace leasehold::testing
