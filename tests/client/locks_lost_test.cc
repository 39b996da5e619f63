// The C++ client's self-renewing session across a SIGKILL of the server:
// its on_locks_lost callback fires once when the restarted server says the
// session's locks in a "locks": "memory" namespace are gone, and the
// session itself is not lost.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace leasehold::client
