// The real server over real HTTP on loopback: the reference walkthrough,
// waits, deadlocks, expiry, hang-ups, races, restarts and bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string Str(const boost::json::value& v, const char* key) {
  return std::string(v.at(key).as_string());
}

// The value of the first sample line that starts with `prefix`, or -1.
double Sample(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.find("\n" + prefix + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + prefix.size() + 2));
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : server_(std::make_unique<ServerProcess>(dir_.File("data"))) {}

  std::uint16_t port() const { return server_->port(); }

  std::string OpenSession(HttpClient& c, const std::string& name,
                          int ttl_ms = 60'000) {
    auto a = c.Request("POST", api::SessionsPath(),
                       api::OpenSessionBody(name, milliseconds(ttl_ms)));
    EXPECT_EQ(a.status, 201u) << a.body;
    return Str(a.json, "id");
  }

  static std::string AcquireBody(const std::string& session,
                                 const std::string& resource,
                                 const std::string& mode, int timeout_ms = -1) {
    return api::AcquireBody(session, resource,
                            {.mode = mode,
                             .owner = "Session",
                             .timeout = milliseconds(timeout_ms),
                             .principal = "public"});
  }

  static HttpAnswer Acquire(HttpClient& c, const std::string& session,
                            const std::string& resource,
                            const std::string& mode, int timeout_ms = -1) {
    return c.Request("POST", api::ApplockPath("app", "acquire"),
                     AcquireBody(session, resource, mode, timeout_ms));
  }

  // Parked requests in namespace "app", as the server lists them.
  static std::size_t Waiting(HttpClient& c) {
    std::size_t n = 0;
    auto locks = c.Request("GET", api::ApplockPath("app"));
    for (const auto& l : locks.json.at("locks").as_array()) {
      n += l.at("waiting").as_array().size();
    }
    return n;
  }

  // Polls until `n` requests are parked (up to 2 s); returns the last count.
  static std::size_t AwaitWaiting(HttpClient& c, std::size_t n) {
    std::size_t seen = Waiting(c);
    for (int i = 0; i < 400 && seen != n; ++i) {
      std::this_thread::sleep_for(milliseconds(5));
      seen = Waiting(c);
    }
    return seen;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerTest, SeedWalkthroughOverHttp) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/1", R"({"body":"First draft"})")
                .status,
            201u);
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/2", R"({"body":"First draft"})")
                .status,
            201u);
  auto asha = c.Request("POST", "/v1/records/docs/1/checkout",
                        R"({"owner":"Asha","ttl_ms":300})");
  ASSERT_EQ(asha.status, 200u);
  auto ravi =
      c.Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"Ravi"})");
  EXPECT_EQ(ravi.status, 423u);
  EXPECT_EQ(Str(ravi.json, "locked_by"), "Asha");
  std::this_thread::sleep_for(milliseconds(450));
  auto row = c.Request("GET", "/v1/records/docs/1");
  EXPECT_EQ(Str(row.json, "locked_by"), "Asha");
  EXPECT_EQ(Str(row.json, "state"), "free");
  EXPECT_EQ(
      c.Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"Ravi"})")
          .status,
      200u);
  auto late = c.Request("POST", "/v1/records/docs/1/save",
                        R"({"owner":"Asha","body":"Asha edit"})");
  EXPECT_EQ(late.status, 423u);
  EXPECT_EQ(Str(late.json, "reason"), "not_owner");
  auto saved = c.Request("POST", "/v1/records/docs/1/save",
                         R"({"owner":"Ravi","body":"Ravi edit"})");
  EXPECT_EQ(saved.status, 200u);
  EXPECT_EQ(
      c.Request("POST", "/v1/records/docs/2/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  EXPECT_EQ(
      c.Request("POST", "/v1/records/docs/2/checkin", R"({"owner":"Ravi"})")
          .status,
      423u);
  EXPECT_EQ(
      c.Request("POST", "/v1/records/docs/2/checkin", R"({"owner":"Asha"})")
          .status,
      200u);
  auto two = c.Request("GET", "/v1/records/docs/2");
  EXPECT_TRUE(two.json.at("locked_by").is_null());
  EXPECT_EQ(Str(two.json, "state"), "free");
}

TEST_F(ServerTest, DeadlockIsAnsweredAtOnceAndTheOtherWaiterGoesOn) {
  HttpClient a(port()), b(port()), a_wait(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "r1", "Exclusive").status, 200u);
  ASSERT_EQ(Acquire(b, sb, "r2", "Exclusive").status, 200u);
  a_wait.Send("POST", api::ApplockPath("app", "acquire"),
              AcquireBody(sa, "r2", "Exclusive"));
  // Wait until Asha's request is parked, then close the cycle.
  ASSERT_EQ(AwaitWaiting(b, 1), 1u);
  const auto start = Clock::now();
  auto victim = Acquire(b, sb, "r1", "Exclusive");
  const auto took =
      std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  std::printf("deadlock answered in %lld ms\n",
              static_cast<long long>(took.count()));
  EXPECT_EQ(victim.status, 409u);
  EXPECT_EQ(victim.json.at("result").as_int64(), -3);
  EXPECT_EQ(Str(victim.json, "status"), "deadlock");
  EXPECT_EQ(victim.json.at("deadlock").at("cycle").as_array().size(), 2u);
  ASSERT_EQ(b.Request("POST", "/v1/applocks/app/release",
                      R"({"session":")" + sb +
                          R"(","resource":"r2","owner":"Session"})")
                .status,
            200u);
  auto granted = a_wait.Receive();
  EXPECT_EQ(granted.status, 200u);
  EXPECT_EQ(granted.json.at("result").as_int64(), 1);
}

// Issue 6: two sessions taking {a, b} and {b, a} one lock at a time
// deadlock every round (the barrier makes each hold its first lock before
// asking for the second); with acquire-all the server orders the locks and
// the same two sessions never deadlock, over 1,000 rounds.
TEST_F(ServerTest, OneAtATimeDeadlocksWhileAcquireAllNeverDoes) {
  HttpClient setup(port());
  const std::string ids[2] = {OpenSession(setup, "Asha"),
                              OpenSession(setup, "Ravi")};
  const std::string names[2][2] = {{"a", "b"}, {"b", "a"}};
  auto release = [](HttpClient& c, const std::string& s, const std::string& r) {
    return c
        .Request("POST", "/v1/applocks/app/release",
                 R"({"session":")" + s + R"(","resource":")" + r +
                     R"(","owner":"Session"})")
        .status;
  };

  constexpr int kOneAtATimeRounds = 20;
  std::atomic<int> deadlocks{0}, second_grants{0};
  {
    std::barrier sync(2);
    auto worker = [&](int me) {
      HttpClient c(port());
      const std::string& s = ids[me];
      for (int round = 0; round < kOneAtATimeRounds; ++round) {
        EXPECT_EQ(Acquire(c, s, names[me][0], "Exclusive").status, 200u);
        sync.arrive_and_wait();  // both hold their first lock
        auto second = Acquire(c, s, names[me][1], "Exclusive");
        const std::int64_t result = second.json.at("result").as_int64();
        if (result == -3) ++deadlocks;
        if (second.status == 200) ++second_grants;
        // The victim lets go of its first lock, so the other goes on.
        EXPECT_EQ(release(c, s, names[me][0]), 200u);
        if (second.status == 200) {
          EXPECT_EQ(release(c, s, names[me][1]), 200u);
        }
        sync.arrive_and_wait();
      }
    };
    std::thread t0(worker, 0), t1(worker, 1);
    t0.join();
    t1.join();
  }
  EXPECT_EQ(deadlocks.load(), kOneAtATimeRounds) << "one victim per round";
  EXPECT_EQ(second_grants.load(), kOneAtATimeRounds);

  constexpr int kAcquireAllRounds = 1000;
  std::atomic<int> all_granted{0}, refused{0};
  {
    std::barrier sync(2);
    auto worker = [&](int me) {
      HttpClient c(port());
      const std::string& s = ids[me];
      const std::string body = R"({"session":")" + s +
                               R"(","owner":"Session","timeout_ms":-1,)" +
                               R"("locks":[{"resource":")" + names[me][0] +
                               R"(","mode":"Exclusive"},{"resource":")" +
                               names[me][1] + R"(","mode":"Exclusive"}]})";
      for (int round = 0; round < kAcquireAllRounds; ++round) {
        sync.arrive_and_wait();  // both ask at the same moment
        auto got = c.Request("POST", "/v1/applocks/app/acquire-all", body);
        if (got.status != 200) {
          ++refused;
          ADD_FAILURE() << got.body;
          continue;
        }
        ++all_granted;
        EXPECT_EQ(release(c, s, "a"), 200u);
        EXPECT_EQ(release(c, s, "b"), 200u);
      }
    };
    std::thread t0(worker, 0), t1(worker, 1);
    t0.join();
    t1.join();
  }
  EXPECT_EQ(all_granted.load(), 2 * kAcquireAllRounds);
  EXPECT_EQ(refused.load(), 0);
  auto m = setup.Request("GET", "/metrics");
  EXPECT_EQ(
      Sample(m.body, R"(leasehold_acquisitions_total{result="deadlock"})"),
      kOneAtATimeRounds)
      << "acquire-all rounds added no deadlock";
}

TEST_F(ServerTest, SessionExpiryReleasesLocksAndWakesTheWaiter) {
  HttpClient a(port()), b(port());
  const std::string sa = OpenSession(a, "Asha", 300),
                    sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  auto woken = Acquire(b, sb, "doc", "Shared");
  EXPECT_EQ(woken.status, 200u);
  EXPECT_EQ(woken.json.at("result").as_int64(), 1);
  EXPECT_EQ(a.Request("POST", "/v1/sessions/" + sa + "/keepalive").error_code(),
            "session_not_found");
}

TEST_F(ServerTest, HangingUpCancelsTheWait) {
  HttpClient a(port()), b(port()), watcher(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  b.Send("POST", api::ApplockPath("app", "acquire"),
         AcquireBody(sb, "doc", "Exclusive"));
  ASSERT_EQ(AwaitWaiting(watcher, 1), 1u);
  b.Close();
  EXPECT_EQ(AwaitWaiting(watcher, 0), 0u);
}

TEST_F(ServerTest, EightClientsRaceForTheSameKeysAndEachKeyHasOneWinner) {
  constexpr int kClients = 8, kKeys = 2000;
  std::vector<std::map<int, bool>> won(kClients);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      HttpClient c(port());
      const std::string body =
          R"({"owner":"client)" + std::to_string(t) + R"(","ttl_ms":600000})";
      for (int k = 0; k < kKeys; ++k) {
        auto a = c.Request(
            "POST", "/v1/records/race/doc" + std::to_string(k) + "/checkout",
            body);
        if (a.status == 200) {
          won[t][k] = true;
        } else if (a.status != 423) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<int> winners(kKeys, 0);
  std::vector<int> per_client(kClients, 0);
  for (int t = 0; t < kClients; ++t) {
    for (const auto& [k, w] : won[t]) {
      ++winners[k];
      ++per_client[t];
    }
  }
  for (int k = 0; k < kKeys; ++k) ASSERT_EQ(winners[k], 1) << "key " << k;
  std::printf("grants per client:");
  for (int n : per_client) std::printf(" %d", n);
  std::printf("\n");
}

TEST_F(ServerTest, RestartsKeepEveryAcknowledgedChange) {
  {
    HttpClient c(port());
    ASSERT_EQ(
        c.Request("PUT", "/v1/records/docs/a", R"({"body":"kept"})").status,
        201u);
    ASSERT_EQ(c.Request("POST", "/v1/records/docs/a/checkout",
                        R"({"owner":"Asha","ttl_ms":600000})")
                  .status,
              200u);
  }
  EXPECT_EQ(server_->Terminate(), 0) << "a clean SIGTERM exits 0";
  server_ = std::make_unique<ServerProcess>(dir_.File("data"));
  {
    HttpClient c(port());
    auto a = c.Request("GET", "/v1/records/docs/a");
    EXPECT_EQ(Str(a.json, "body"), "kept");
    EXPECT_EQ(Str(a.json, "locked_by"), "Asha");
    ASSERT_EQ(c.Request("PUT", "/v1/records/docs/b", R"({"body":"also kept"})")
                  .status,
              201u);
  }
  server_->Kill();
  server_ = std::make_unique<ServerProcess>(dir_.File("data"));
  HttpClient c(port());
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/b").json, "body"),
            "also kept");
}

TEST_F(ServerTest, SigtermAnswersWaitersAsCancelled) {
  HttpClient a(port()), b(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  b.Send("POST", api::ApplockPath("app", "acquire"),
         AcquireBody(sb, "doc", "Exclusive"));
  std::this_thread::sleep_for(milliseconds(200));
  std::thread stopper([&] { EXPECT_EQ(server_->Terminate(), 0); });
  auto cancelled = b.Receive();
  stopper.join();
  EXPECT_EQ(cancelled.status, 409u);
  EXPECT_EQ(cancelled.json.at("result").as_int64(), -2);
}

TEST_F(ServerTest, MetricsCountResultsWaitsAndState) {
  HttpClient a(port()), b(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(a.Request("POST", "/v1/sessions/" + sa + "/transaction").status,
            201u);
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  EXPECT_EQ(Acquire(b, sb, "doc", "Shared", 0).status, 409u);
  EXPECT_EQ(Acquire(b, sb, "doc", "Shared", 50).status, 409u);
  ASSERT_EQ(
      a.Request("POST", "/v1/records/docs/k/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  EXPECT_EQ(a.Request("GET", "/v1/no-such-thing").status, 404u);
  auto m = a.Request("GET", "/metrics");
  ASSERT_EQ(m.status, 200u);
  const std::string& t = m.body;
  // Per endpoint: answers by status class, and their times.
  const std::string acquire = R"(route="POST /v1/applocks/{ns}/acquire")";
  EXPECT_EQ(
      Sample(
          t,
          R"(leasehold_http_requests_total{route="POST /v1/sessions",code="2xx"})"),
      2);
  EXPECT_EQ(
      Sample(t, "leasehold_http_requests_total{" + acquire + R"(,code="2xx"})"),
      1);
  EXPECT_EQ(
      Sample(t, "leasehold_http_requests_total{" + acquire + R"(,code="4xx"})"),
      2);
  EXPECT_EQ(
      Sample(t, R"(leasehold_http_requests_total{route="other",code="4xx"})"),
      1);
  EXPECT_EQ(Sample(t, "leasehold_http_request_seconds_count{" + acquire + "}"),
            3);
  EXPECT_EQ(Sample(t, "leasehold_http_request_seconds_bucket{" + acquire +
                          R"(,le="+Inf"})"),
            3);
  EXPECT_LE(Sample(t, "leasehold_http_request_seconds_bucket{" + acquire +
                          R"(,le="0.025"})"),
            2)
      << "the 50 ms wait is counted above 25 ms";
  EXPECT_GE(Sample(t, "leasehold_http_request_seconds_sum{" + acquire + "}"),
            0.05);
  EXPECT_NE(t.find("# TYPE leasehold_http_request_seconds histogram"),
            std::string::npos);
  EXPECT_EQ(Sample(t, R"(leasehold_acquisitions_total{result="granted"})"), 1);
  EXPECT_EQ(Sample(t, R"(leasehold_acquisitions_total{result="timeout"})"), 2);
  EXPECT_EQ(Sample(t, "leasehold_wait_seconds_count"), 1);  // the 50 ms wait
  EXPECT_GE(Sample(t, "leasehold_wait_seconds_sum"), 0.04);
  EXPECT_EQ(Sample(t, "leasehold_locks_held"), 1);
  EXPECT_EQ(Sample(t, "leasehold_sessions_open"), 2);
  EXPECT_EQ(Sample(t, R"(leasehold_holds_taken_back_total{reason="expired"})"),
            0);
  EXPECT_EQ(Sample(t, R"(leasehold_holds_taken_back_total{reason="broken"})"),
            0);
  EXPECT_EQ(Sample(t, "leasehold_transactions_open"), 1);
  EXPECT_GT(Sample(t, "leasehold_oldest_transaction_age_seconds"), 0);
  EXPECT_EQ(Sample(t, "leasehold_checkouts_active"), 1);
  EXPECT_GE(Sample(t, "leasehold_store_batches_total"), 1);
  EXPECT_EQ(Sample(t, "leasehold_store_up"), 1);
  EXPECT_EQ(Sample(t, "leasehold_store_recoveries_total"), 0);
  EXPECT_NE(t.find("# TYPE leasehold_wait_seconds histogram"),
            std::string::npos);
}

TEST_F(ServerTest, EventsStreamWhatAScreenNeeds) {
  HttpClient stream(port()), c(port());
  stream.Send("GET", "/v1/events?ns=docs");
  // Wait for the stream to be open (its first frame) before acting.
  ASSERT_NE(stream.ReadStreamUntil("retry:", milliseconds(5000))
                .find("text/event-stream"),
            std::string::npos);
  ASSERT_EQ(c.Request("POST", "/v1/records/docs/17/checkout",
                      R"({"owner":"Asha","ttl_ms":300})")
                .status,
            200u);
  ASSERT_EQ(c.Request("POST", "/v1/records/elsewhere/1/checkout",
                      R"({"owner":"Ravi","ttl_ms":300})")
                .status,
            200u);
  const std::string got =
      stream.ReadStreamUntil("event: checkout.expired", milliseconds(5000));
  EXPECT_NE(got.find("event: checkout.granted\ndata: {"), std::string::npos)
      << got;
  EXPECT_NE(got.find(R"("holder":"Asha")"), std::string::npos) << got;
  EXPECT_NE(got.find(R"("resource":"17")"), std::string::npos) << got;
  EXPECT_NE(got.find(R"("until":")"), std::string::npos) << got;
  EXPECT_NE(got.find("event: checkout.expired"), std::string::npos) << got;
  EXPECT_EQ(got.find("Ravi"), std::string::npos) << "another namespace leaked";
}

TEST_F(ServerTest, BadInputGetsAClearErrorNeverACrash) {
  HttpClient c(port());
  EXPECT_EQ(c.Request("POST", "/v1/sessions", "{oops").error_code(),
            "bad_json");
  EXPECT_EQ(c.Request("POST", "/v1/sessions", "\"a string\"").error_code(),
            "bad_json");
  EXPECT_EQ(
      c.Request("POST", "/v1/sessions", "{\"name\":\"\xc3\x28\"}").error_code(),
      "bad_request");
  EXPECT_EQ(c.Request("POST", "/v1/sessions", R"({"ttl_ms":[1]})").error_code(),
            "bad_request");
  EXPECT_EQ(c.Request("PUT", "/v1/records/docs/" + std::string(300, 'k'),
                      R"({"body":"x"})")
                .error_code(),
            "name_too_long");
  EXPECT_EQ(
      c.Request("PUT", "/v1/records/docs/k", R"({"body":7})").error_code(),
      "bad_request");
  EXPECT_EQ(c.Request("PUT", "/v1/records/docs/k", "{}").error_code(),
            "bad_request");
  auto big = c.Request("PUT", "/v1/records/docs/big",
                       R"({"body":")" + std::string(2 << 20, 'x') + "\"}");
  EXPECT_EQ(big.status, 413u);
  EXPECT_EQ(big.error_code(), "body_too_large");
  HttpClient raw(port());
  const std::string answer = raw.Raw("GARBAGE\r\n\r\n");
  EXPECT_NE(answer.find("400"), std::string::npos) << answer;
  HttpClient still(port());
  EXPECT_EQ(still.Request("GET", "/healthz").status, 200u);
}

TEST(ServerStaleTransactionTest, ATransactionOpenTooLongIsRolledBack) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config)
      << R"({"namespaces": {"billing": {"max_transaction_ms": 300}}})";
  ServerProcess server(dir.File("data"), config);
  HttpClient stream(server.port()), a(server.port()), b(server.port());
  stream.Send("GET", "/v1/events?ns=billing");
  ASSERT_NE(stream.ReadStreamUntil("retry:", milliseconds(5000))
                .find("text/event-stream"),
            std::string::npos);
  auto opened = a.Request("POST", "/v1/sessions", R"({"name":"Asha"})");
  const std::string sa = Str(opened.json, "id");
  const std::string txn = "/v1/sessions/" + sa + "/transaction";
  ASSERT_EQ(a.Request("POST", txn).status, 201u);
  auto lock = a.Request("POST", "/v1/applocks/billing/acquire",
                        R"({"session":")" + sa +
                            R"(","resource":"invoice:9","mode":"Exclusive"})");
  ASSERT_EQ(lock.status, 200u) << lock.body;
  auto listed = a.Request("GET", "/v1/sessions");
  const auto& t = listed.json.at("sessions").at(0).at("transaction");
  EXPECT_TRUE(t.at("deadline").is_string()) << listed.body;

  // Ravi waits for the lock; the expiry hands it over.
  const std::string sb =
      Str(b.Request("POST", "/v1/sessions", R"({"name":"Ravi"})").json, "id");
  const auto started = std::chrono::steady_clock::now();
  auto waited = b.Request("POST", "/v1/applocks/billing/acquire",
                          R"({"session":")" + sb +
                              R"(","resource":"invoice:9","mode":"Exclusive",)"
                              R"("owner":"Session","timeout_ms":10000})");
  EXPECT_EQ(waited.status, 200u) << waited.body;
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(5000));

  const std::string got =
      stream.ReadStreamUntil("event: transaction.expired", milliseconds(5000));
  EXPECT_NE(got.find("event: transaction.expired\ndata: {"), std::string::npos)
      << got;
  EXPECT_NE(got.find(R"("session_name":"Asha")"), std::string::npos) << got;

  auto commit = a.Request("POST", txn + "/commit");
  EXPECT_EQ(commit.status, 409u);
  EXPECT_EQ(commit.error_code(), "transaction_expired") << commit.body;
  EXPECT_EQ(Sample(a.Request("GET", "/metrics").body,
                   "leasehold_transactions_expired_total"),
            1);
  EXPECT_EQ(a.Request("POST", txn).status, 201u) << "a new one may begin";
}

TEST(ServerAuthTest, BearerTokensAreCheckedOverHttp) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"tokens": [
      {"token": "billing-token-0001", "principal": "billing",
       "namespaces": ["billing"], "role": "write"},
      {"token": "ops-admin-token-0004", "principal": "ops",
       "namespaces": ["*"], "role": "admin"}]})";
  ServerProcess server(dir.File("data"), config);
  HttpClient anonymous(server.port());
  EXPECT_EQ(anonymous.Request("GET", "/healthz").status, 200u);
  auto refused = anonymous.Request("POST", "/v1/sessions", "{}");
  EXPECT_EQ(refused.status, 401u);
  EXPECT_EQ(refused.error_code(), "unauthorized");
  anonymous.Send("GET", "/v1/events?ns=billing");
  EXPECT_EQ(anonymous.Receive().status, 401u);

  HttpClient billing(server.port());
  billing.SetBearerToken("billing-token-0001");
  auto session = billing.Request("POST", "/v1/sessions", R"({"name":"Asha"})");
  ASSERT_EQ(session.status, 201u) << session.body;
  EXPECT_EQ(Str(session.json, "opened_by"), "billing");
  EXPECT_EQ(billing.Request("GET", "/v1/applocks/shipping").error_code(),
            "forbidden");
  EXPECT_EQ(billing.Request("POST", "/v1/records/billing/k/break").status,
            403u);
  billing.Send("GET", "/v1/events");  // every namespace: not for billing
  EXPECT_EQ(billing.Receive().status, 403u);

  HttpClient ops(server.port());
  ops.SetBearerToken("ops-admin-token-0004");
  EXPECT_EQ(ops.Request("GET", "/metrics").status, 200u);
  EXPECT_EQ(
      ops.Request("DELETE", "/v1/sessions/" + Str(session.json, "id")).status,
      204u);
}

// Runs `leasehold serve` with `args`; returns its exit status and stderr.
std::pair<int, std::string> RunServe(const TempDir& dir,
                                     const std::string& args) {
  const std::string err = dir.File("serve.err");
  const std::string command = LeaseholdBinary() + " serve --data " +
                              dir.File("data") + " " + args + " 2>" + err;
  const int status = std::system(command.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(ServerAuthTest, RefusesToListenBeyondLoopbackWithoutTokens) {
  TempDir dir;
  auto [code, err] = RunServe(dir, "--listen 0.0.0.0:0");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("without authentication"), std::string::npos) << err;
  std::ofstream(dir.File("weak.json"))
      << R"({"tokens": [{"token": "short", "principal": "p",
                         "namespaces": ["*"], "role": "read"}]})";
  std::tie(code, err) = RunServe(dir, "--config " + dir.File("weak.json"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("shorter than 16"), std::string::npos) << err;
}

// A namespace keeps its locks "durable" or in "memory"; anything else is a
// start-up error that names the choices.
TEST(ServerConfigTest, ANamespacesLockDurabilityIsDurableOrMemory) {
  TempDir dir;
  std::ofstream(dir.File("bad.json"))
      << R"({"namespaces": {"fast": {"locks": "fast"}}})";
  auto [code, err] = RunServe(dir, "--config " + dir.File("bad.json"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find(R"("locks" must be one of durable, memory)"),
            std::string::npos)
      << err;
}

// The command line wins over the config file: a service's config names
// where it listens and keeps its data, and an operator's --listen and
// --data (a test's free port and temp dir) override them.
TEST(ServerConfigTest, ListenAndDataOnTheCommandLineWinOverTheConfig) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  // Beyond loopback without tokens: refused, were it the config's listen.
  std::ofstream(config) << R"({"listen": "0.0.0.0:7070", "data": ")"
                        << dir.File("config-data") << R"("})";
  ServerProcess server(dir.File("data"), config);
  HttpClient c(server.port());
  ASSERT_EQ(c.Request("POST", "/v1/records/docs/k/checkout",
                      R"({"owner":"Asha","ttl_ms":60000})")
                .status,
            200u);
  EXPECT_TRUE(std::filesystem::exists(dir.File("data")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("config-data")));
}

// Two servers on one data directory would be two lock services for the
// same leases: the second is refused and exits, and the first serves on.
TEST(ServerDataTest, ASecondServerOnTheSameDataIsRefused) {
  TempDir dir;
  ServerProcess first(dir.File("data"));
  HttpClient c(first.port());
  ASSERT_EQ(c.Request("POST", "/v1/records/docs/k/checkout",
                      R"({"owner":"Asha","ttl_ms":60000})")
                .status,
            200u);
  auto [code, err] = RunServe(dir, "--listen 127.0.0.1:0");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("in use by another process"), std::string::npos) << err;
  const auto record = c.Request("GET", "/v1/records/docs/k");
  EXPECT_EQ(record.status, 200u) << record.body;
  EXPECT_NE(record.body.find("Asha"), std::string::npos) << record.body;
}

}  // namespace
}  // namespace leasehold::testing
