// TestServer (src/testing/test_server.h) through its public face only:
// the clock moves only when told, by exactly what was asked, refuses bad
// moves, and a request blocked in a lock wait is answered when the clock
// passes its timeout. No assertion on real time.
#include "testing/test_server.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "common/clock.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<TestServer> StartOrDie() {
  auto started = TestServer::Start();
  EXPECT_TRUE(started.has_value()) << started.error().message;
  return started ? std::move(*started) : nullptr;
}

Time At(const std::string& text) {
  const std::optional<Time> t = ParseTime(text);
  EXPECT_TRUE(t.has_value()) << text;
  return t.value_or(Time{});
}

TEST(TestServerTest, TheClockMovesByWhatIsAskedAndOnlyThen) {
  auto server = StartOrDie();
  ASSERT_NE(server, nullptr);
  const std::string start = server->Now();
  std::this_thread::sleep_for(milliseconds(20));  // real time passes
  EXPECT_EQ(server->Now(), start);
  auto moved = server->AdvanceClock(seconds(90));
  ASSERT_TRUE(moved.has_value()) << moved.error().message;
  EXPECT_EQ(At(*moved) - At(start), seconds(90));
  EXPECT_EQ(server->Now(), *moved);
  auto still = server->AdvanceClock(milliseconds(0));
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(*still, *moved);
}

TEST(TestServerTest, BadMovesAreRefusedAndMoveNothing) {
  auto server = StartOrDie();
  ASSERT_NE(server, nullptr);
  const std::string start = server->Now();
  auto back = server->AdvanceClock(milliseconds(-1));
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().code, "bad_request");
  auto ages = server->AdvanceClock(
      std::chrono::duration_cast<milliseconds>(std::chrono::years(8000)));
  ASSERT_FALSE(ages.has_value());
  EXPECT_EQ(ages.error().code, "bad_request");
  EXPECT_EQ(server->Now(), start);
}

TEST(TestServerTest, ABlockedLockWaitIsAnsweredWhenTheClockPassesIt) {
  auto server = StartOrDie();
  ASSERT_NE(server, nullptr);
  client::Client client = server->NewClient();
  auto holder = client.OpenSession("holder", std::chrono::hours(1));
  auto waiter = client.OpenSession("waiter", std::chrono::hours(1));
  ASSERT_TRUE(holder.has_value() && waiter.has_value());
  ASSERT_TRUE(
      client.Acquire("app", holder->id, "r", {.timeout = milliseconds(0)})
          .has_value());
  auto waited = std::async(std::launch::async, [&] {
    return client.Acquire("app", waiter->id, "r", {.timeout = seconds(60)});
  });
  // Until the wait is parked (however slow the machine): the clock must
  // pass its deadline, not reach the server before the request does.
  for (int i = 0; i < 3000; ++i) {
    auto sessions = client.ListSessions();
    ASSERT_TRUE(sessions.has_value());
    const bool parked = std::ranges::any_of(*sessions, [&](const auto& s) {
      return s.id == waiter->id && s.waiting;
    });
    if (parked) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(server->AdvanceClock(seconds(61)).has_value());
  auto outcome = waited.get();
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->result, -1) << outcome->status;
}

// Namespace options apply as serve's config does: here a lock-delay holds
// an expired holder's lock back until the clock passes it.
TEST(TestServerTest, NamespaceOptionsApplyToTheirNamespaceOnly) {
  TestServerOptions options;
  options.namespaces["delayed"] = {.lock_delay = seconds(15)};
  auto started = TestServer::Start(options);
  ASSERT_TRUE(started.has_value()) << started.error().message;
  TestServer& server = **started;
  client::Client client = server.NewClient();
  auto lost = client.OpenSession("lost", seconds(10));
  ASSERT_TRUE(lost.has_value());
  for (const char* ns : {"delayed", "plain"}) {
    ASSERT_EQ(
        client.Acquire(ns, lost->id, "r", {.timeout = milliseconds(0)})->result,
        0);
  }
  ASSERT_TRUE(server.AdvanceClock(seconds(11)).has_value());  // it expires
  auto next = client.OpenSession("next", std::chrono::hours(1));
  ASSERT_TRUE(next.has_value());
  auto take = [&](const char* ns) {
    auto r = client.Acquire(ns, next->id, "r", {.timeout = milliseconds(0)});
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r ? r->result : -100;
  };
  EXPECT_EQ(take("plain"), 0);
  EXPECT_EQ(take("delayed"), -1) << "held back by the lock-delay";
  ASSERT_TRUE(server.AdvanceClock(seconds(15)).has_value());
  EXPECT_EQ(take("delayed"), 0);
}

TEST(TestServerTest, EachServerHasItsOwnClock) {
  auto a = StartOrDie(), b = StartOrDie();
  ASSERT_TRUE(a != nullptr && b != nullptr);
  EXPECT_NE(a->port(), b->port());
  const std::string b_start = b->Now();
  ASSERT_TRUE(a->AdvanceClock(std::chrono::minutes(10)).has_value());
  EXPECT_EQ(b->Now(), b_start);
}

}  // namespace
}  // namespace leasehold::testing
