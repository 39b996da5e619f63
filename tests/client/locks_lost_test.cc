// The C++ client's self-renewing session told of locks it lost while it
// lives on. Across a SIGKILL of the server: its on_locks_lost callback fires
// once when the restarted server says the session's locks in a "locks":
// "memory" namespace are gone, and the session itself is not lost. At a
// hold limit and at a break: on_hold_lost fires within a keepalive period
// and the guard is no longer held, nor released over the lock taken again.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "leasehold/client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::client {
namespace {

using std::chrono::milliseconds;

TEST(ClientLocksLost, TheCallbackFiresOnceAfterARestart) {
  testing::TempDir dir;
  const std::string data = dir.File("data");
  const std::string config = dir.File("config.json");
  const std::string namespaces =
      R"("namespaces": {"fast": {"locks": "memory"}})";
  std::ofstream(config) << "{" << namespaces << "}";
  std::optional<testing::ServerProcess> server(std::in_place, data, config);
  // The restarted server listens on the same port, so that the client's
  // keep-alives reach it.
  const std::uint16_t port = server->port();
  auto client = Client::Create(
      {"http://127.0.0.1:" + std::to_string(port), "", milliseconds(10'000)});
  ASSERT_TRUE(client) << client.error().message;

  std::mutex mu;
  std::condition_variable told;
  int locks_lost = 0;
  int lost = 0;
  auto session = client->StartSession(
      "fast-holder", milliseconds(900),
      [&](const Error&) {
        std::lock_guard lock(mu);
        ++lost;
      },
      [&] {
        std::lock_guard lock(mu);
        ++locks_lost;
        told.notify_all();
      });
  ASSERT_TRUE(session) << session.error().message;
  AcquireOptions exclusive;
  exclusive.timeout = milliseconds(0);
  auto held = client->Acquire("fast", session->id(), "m", exclusive);
  ASSERT_TRUE(held && held->granted());
  auto durable = client->Acquire("app", session->id(), "d", exclusive);
  ASSERT_TRUE(durable && durable->granted());

  server->Kill();
  server.emplace(data, config, std::vector<std::string>{}, port);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(told.wait_for(lock, std::chrono::seconds(20),
                              [&] { return locks_lost > 0; }));
  }
  // Several keep-alive periods later: still once, and the session lives.
  std::this_thread::sleep_for(milliseconds(1000));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(locks_lost, 1);
    EXPECT_EQ(lost, 0);
  }
  EXPECT_FALSE(session->lost());
  // Its durable lock is still held; the memory one may be taken again.
  auto other = client->OpenSession("other", milliseconds(60'000));
  ASSERT_TRUE(other) << other.error().message;
  auto refused = client->Acquire("app", other->id, "d", exclusive);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->result, -1);
  auto retaken = client->Acquire("fast", session->id(), "m", exclusive);
  ASSERT_TRUE(retaken);
  EXPECT_TRUE(retaken->granted());
}

TEST(ClientHoldLost, AHoldLimitAndABreakReachTheGuardsWithinAKeepalive) {
  testing::TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"namespaces": {"app": {"max_hold_ms": 60000}}})";
  testing::ServerProcess server(dir.File("data"), config);
  auto client =
      Client::Create({"http://127.0.0.1:" + std::to_string(server.port()), "",
                      milliseconds(10'000)});
  ASSERT_TRUE(client) << client.error().message;
  std::mutex mu;
  std::condition_variable told;
  std::vector<LostHold> lost;
  auto session = client->StartSession("worker", milliseconds(900), {}, {},
                                      [&](const LostHold& h) {
                                        std::lock_guard lock(mu);
                                        lost.push_back(h);
                                        told.notify_all();
                                      });
  ASSERT_TRUE(session) << session.error().message;
  const auto wait_for = [&](std::size_t n) {
    std::unique_lock lock(mu);
    return told.wait_for(lock, std::chrono::seconds(10),
                         [&] { return lost.size() >= n; });
  };

  AcquireOptions brief;
  brief.timeout = milliseconds(0);
  brief.max_hold = milliseconds(300);
  auto guard = session->Lock("app", "job", brief);
  ASSERT_TRUE(guard) << guard.error().message;
  auto listed = client->ListLocks("app");
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE((*listed)[0].granted[0].hold_until.empty());
  ASSERT_TRUE(wait_for(1));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(lost[0].resource, "job");
    EXPECT_EQ(lost[0].kind, "applock");
    EXPECT_EQ(lost[0].reason, "expired");
  }
  EXPECT_FALSE(guard->held());
  EXPECT_FALSE(session->lost());

  // Taken again: the old guard's release is refused and sends nothing.
  AcquireOptions again;
  again.timeout = milliseconds(0);
  auto retaken = session->Lock("app", "job", again);
  ASSERT_TRUE(retaken) << retaken.error().message;
  auto refused = guard->Release();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "lost");
  EXPECT_TRUE(retaken->held());
  auto still = client->ListLocks("app");
  ASSERT_TRUE(still && still->size() == 1u);
  EXPECT_EQ((*still)[0].granted[0].count, 1);

  SemaphoreOptions lanes;
  lanes.limit = 2;
  lanes.timeout = milliseconds(0);
  auto permits = session->Permits("app", "lanes", lanes);
  ASSERT_TRUE(permits) << permits.error().message;
  boost::json::value body = {{"session", session->id()}};
  auto broken = client->Call("POST", "/v1/semaphores/app/lanes/break", &body);
  ASSERT_TRUE(broken) << broken.error().message;
  ASSERT_TRUE(wait_for(2));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(lost[1].kind, "semaphore");
    EXPECT_EQ(lost[1].reason, "broken");
  }
  EXPECT_FALSE(permits->held());
  EXPECT_TRUE(retaken->held());
}

}  // namespace
}  // namespace leasehold::client
