// A restart with the wall clock stepped an hour: the store holds instants in
// UTC (a checkout's and an outbox claim's lease expiry), and the restarted
// server judges them against the wall clock it reads at start, the only
// measure of the time that passed while it was down. An hour ahead, a lease
// whose UTC expiry that clock has passed is free; an hour behind, a lease
// stays held until that clock reaches its UTC expiry, an hour late in real
// time. Sessions are not judged by a stored instant: each gets its full ttl
// again from the restart, so they end on time either way. Idempotency keys
// have no expiry. docs/api.md, "Time", says the same.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "client/api_codec.h"
#include "tests/integration/clock_step_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr milliseconds kSessionTtl{4000};
constexpr milliseconds kLate{5000};
constexpr milliseconds kRounding{5};

SysTime RealNow() { return std::chrono::system_clock::now(); }

milliseconds Apart(SysTime a, SysTime b) {
  return std::chrono::duration_cast<milliseconds>(a > b ? a - b : b - a);
}

HttpAnswer CheckOut(HttpClient& c, const std::string& owner, milliseconds ttl) {
  return c.Request(
      "POST", api::RecordPath("docs", "17", "checkout"),
      api::CheckoutBody({.owner = owner, .ttl = ttl, .token = ""}));
}

HttpAnswer Enqueue(HttpClient& c) {
  return c.Request("POST", api::OutboxPath("outbox", "mail"),
                   api::EnqueueBody("m1", json::object{}, ""));
}

// How many messages `consumer` could claim now (at most one).
std::size_t Claim(HttpClient& c, const std::string& consumer,
                  milliseconds lease) {
  const auto got = c.Request("POST", api::OutboxPath("outbox", "mail", "claim"),
                             api::ClaimBody(consumer, 1, lease));
  EXPECT_EQ(got.status, 200u) << got.body;
  return got.json.at("messages").as_array().size();
}

class ClockRestartTest : public ClockStepTest {
 protected:
  // Stops the server (SIGTERM); everything acknowledged is on disk.
  void Stop() { EXPECT_EQ(server_->Terminate(), 0); }

  // Starts it again on the same data with its wall clock at `offset`; the
  // moment just before it was started.
  Steady::time_point StartAt(const std::string& offset) {
    SetWallClock(offset);
    const Steady::time_point started = Steady::now();
    StartFaked();
    return started;
  }

  // A session holding "kept" exclusively.
  std::string Holder(HttpClient& c) {
    const std::string id = OpenSession(c, "Asha", kSessionTtl.count());
    EXPECT_EQ(Acquire(c, id, "kept", "Exclusive").status, 200u);
    return id;
  }

  // The session and its lock are back; once no longer kept alive, it ends
  // its ttl after the restart (at `restarted`), not an hour early or late.
  void ExpectRestoredWithAFreshTtl(HttpClient& c, const std::string& id,
                                   Steady::time_point restarted) {
    EXPECT_EQ(ModeOf(c, id, "kept"), "Exclusive");
    const auto gone = AwaitSessionGone(c, id, kSessionTtl + kLate);
    ASSERT_NE(gone, Steady::time_point::max()) << "lives on past its ttl";
    EXPECT_GE(gone - restarted, kSessionTtl - kRounding);
  }
};

TEST_F(ClockRestartTest, AheadAnHourALeasePastItsStoredExpiryIsFree) {
  HttpClient before(port());
  const std::string holder = Holder(before);
  const auto asha = CheckOut(before, "Asha", minutes(5));
  ASSERT_EQ(asha.status, 200u) << asha.body;
  ASSERT_EQ(Enqueue(before).status, 201u);
  ASSERT_EQ(Claim(before, "mailer-1", minutes(5)), 1u);

  Stop();
  const auto restarted = StartAt("+1h");
  HttpClient c(port());
  EXPECT_LT(Apart(ServerNow(c), RealNow() + hours(1)), seconds(5))
      << "the restart did not read the stepped wall clock";
  const auto record = c.Request("GET", api::RecordPath("docs", "17"));
  EXPECT_EQ(Str(record.json, "state"), "free") << record.body;
  EXPECT_EQ(Str(record.json, "lock_expires_at"), Str(asha.json, "expires_at"));
  const auto ravi = CheckOut(c, "Ravi", minutes(5));
  ASSERT_EQ(ravi.status, 200u) << "still held: " << ravi.body;
  EXPECT_GT(Int(ravi.json, "fence"), Int(asha.json, "fence"));
  EXPECT_EQ(Claim(c, "mailer-2", minutes(5)), 1u) << "claim still held";
  const auto again = Enqueue(c);
  EXPECT_EQ(again.status, 200u) << again.body;
  EXPECT_TRUE(again.json.at("duplicate").as_bool());
  ExpectRestoredWithAFreshTtl(c, holder, restarted);
}

TEST_F(ClockRestartTest, BehindAnHourALeaseIsHeldUntilItsStoredExpiry) {
  HttpClient before(port());
  const std::string holder = Holder(before);
  const auto asha = CheckOut(before, "Asha", milliseconds(1000));
  ASSERT_EQ(asha.status, 200u) << asha.body;
  ASSERT_EQ(Enqueue(before).status, 201u);
  ASSERT_EQ(Claim(before, "mailer-1", milliseconds(1000)), 1u);
  const SysTime expires = TimeOf(asha.json, "expires_at");
  Stop();
  // Run out in real time while the server is down, but not by the clock
  // an hour behind that it restarts with.
  while (RealNow() < expires + milliseconds(500)) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  const auto restarted = StartAt("-1h");
  HttpClient c(port());
  const SysTime now = ServerNow(c);
  EXPECT_LT(Apart(now, RealNow() - hours(1)), seconds(5))
      << "the restart did not read the stepped wall clock";
  const auto record = c.Request("GET", api::RecordPath("docs", "17"));
  EXPECT_EQ(Str(record.json, "state"), "locked") << record.body;
  EXPECT_EQ(Str(record.json, "lock_expires_at"), Str(asha.json, "expires_at"));
  EXPECT_GT(TimeOf(record.json, "lock_expires_at") - now, minutes(59));
  const auto ravi = CheckOut(c, "Ravi", minutes(5));
  EXPECT_EQ(ravi.status, 423u) << ravi.body;
  EXPECT_EQ(Claim(c, "mailer-2", minutes(5)), 0u) << "claim freed";
  ExpectRestoredWithAFreshTtl(c, holder, restarted);

  // Free once the clock is past it.
  Stop();
  StartAt("+0");
  HttpClient after(port());
  const auto taken = CheckOut(after, "Ravi", minutes(5));
  EXPECT_EQ(taken.status, 200u) << taken.body;
  EXPECT_EQ(Claim(after, "mailer-2", minutes(5)), 1u);
}

}  // namespace
}  // namespace leasehold::testing
