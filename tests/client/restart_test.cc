// The C++ client across a SIGKILL of a real `leasehold serve`, restarted on
// the same data and port: its session and locks survive, a wait whose
// connection broke is asked again, and a grant that reached the disk before
// the break is adopted rather than taken twice.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "leasehold/client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::client {
namespace {

using std::chrono::milliseconds;
using testing::ServerProcess;
using testing::TempDir;

AcquireOptions Exclusive(milliseconds timeout) {
  AcquireOptions o;
  o.timeout = timeout;
  return o;
}

// The holders of `resource` in "app" as (session, count, fence).
std::vector<LockHolder> Holders(Client& c, const std::string& resource) {
  auto locks = c.ListLocks("app");
  EXPECT_TRUE(locks) << locks.error().message;
  for (const LockInfo& l : locks.value_or(std::vector<LockInfo>{})) {
    if (l.resource == resource) return l.granted;
  }
  return {};
}

// Polls until the server lists a waiter in "app", or about 10 s pass.
bool SomeoneWaits(Client& c) {
  for (int i = 0; i < 1000; ++i) {
    auto locks = c.ListLocks("app");
    if (locks) {
      for (const LockInfo& l : *locks) {
        if (!l.waiting.empty()) return true;
      }
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

class ClientRestartTest : public ::testing::Test {
 protected:
  Client Connect(std::uint16_t port) {
    return *Client::Create(
        {"http://127.0.0.1:" + std::to_string(port), "", milliseconds(10'000)});
  }
  TempDir dir_;
};

TEST_F(ClientRestartTest, AWaitBrokenByARestartIsAskedAgain) {
  auto first = std::make_unique<ServerProcess>(dir_.File("data"));
  const std::uint16_t port = first->port();
  Client c = Connect(port);
  auto holder = c.StartSession("holder", milliseconds(60'000));
  ASSERT_TRUE(holder) << holder.error().message;
  auto held = holder->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_TRUE(held) << held.error().message;
  auto waiter = c.StartSession("waiter", milliseconds(60'000));
  ASSERT_TRUE(waiter) << waiter.error().message;
  auto wait = std::async(std::launch::async, [&] {
    return waiter->Lock("app", "job", Exclusive(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaits(c));

  first->Kill();
  ServerProcess second(dir_.File("data"), "", {}, port);
  // The holder still holds it; its release lets the asked-again wait in.
  ASSERT_TRUE(held->held());
  ASSERT_TRUE(held->Release()) << "the restored lock releases";
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_GT(got->fence(), held->fence());
  const auto holders = Holders(c, "job");
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].session, waiter->id());
  EXPECT_EQ(holders[0].count, 1);
}

TEST_F(ClientRestartTest, AGrantOnDiskBeforeTheBreakIsAdoptedNotTakenTwice) {
  // This server kills itself once a waiter's grant is durable, before the
  // answer goes out.
  auto first = std::make_unique<ServerProcess>(
      dir_.File("data"), "",
      std::vector<std::string>{"LEASEHOLD_FAULT=wait_grant.durable"});
  const std::uint16_t port = first->port();
  Client c = Connect(port);
  auto holder = c.StartSession("holder", milliseconds(60'000));
  ASSERT_TRUE(holder);
  auto held = holder->Lock("app", "job", Exclusive(milliseconds(0)));
  ASSERT_TRUE(held);
  auto waiter = c.StartSession("waiter", milliseconds(60'000));
  ASSERT_TRUE(waiter);
  auto wait = std::async(std::launch::async, [&] {
    return waiter->Lock("app", "job", Exclusive(milliseconds(60'000)));
  });
  ASSERT_TRUE(SomeoneWaits(c));
  (void)held->Release();  // grants the waiter; the server dies answering
  EXPECT_NE(first->Wait(), 0);

  ServerProcess second(dir_.File("data"), "", {}, port);
  auto got = wait.get();
  ASSERT_TRUE(got) << got.error().code << ": " << got.error().message;
  EXPECT_TRUE(got->waited());
  const auto holders = Holders(c, "job");
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].session, waiter->id());
  EXPECT_EQ(holders[0].count, 1) << "the grant was taken twice";
  EXPECT_EQ(holders[0].fence, got->fence());
  ASSERT_TRUE(got->Release());
  EXPECT_TRUE(Holders(c, "job").empty());
}

}  // namespace
}  // namespace leasehold::client
