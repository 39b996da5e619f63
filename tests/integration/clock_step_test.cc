// The wall clock stepped an hour forward and an hour back while the server
// runs: nothing that has a duration (a session's ttl, a checkout's or an
// outbox claim's lease, a lock wait's timeout) ends early at the forward
// step or lives on late after the backward one, and the instants the API
// reports (`now`, `expires_at`) do not jump: the server reads the wall clock
// once, at start, and counts on from it with the monotonic clock
// (src/common/real_clock.h). Bounds are loose where a busy machine may be
// slow (an expiry may be seen up to 5 s late) and exact where causality
// makes them so (an expiry is never seen before its ttl has passed).
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <sstream>
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
using std::chrono::seconds;

constexpr milliseconds kTtl{4000};
// How often a live session is kept alive: a stall of most of a ttl is
// needed to lose it.
constexpr milliseconds kKeepaliveEvery{500};
// How late a busy machine may see an expiry; a step's hour is far beyond.
constexpr milliseconds kLate{5000};
// The server's clock counts milliseconds, rounded down.
constexpr milliseconds kRounding{5};

milliseconds Since(Steady::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Steady::now() - start);
}

// What file `path` holds.
std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The distance between two instants, whichever comes first.
milliseconds Apart(SysTime a, SysTime b) {
  return std::chrono::duration_cast<milliseconds>(a > b ? a - b : b - a);
}

// The test's own wall clock, which is never stepped.
SysTime RealNow() { return std::chrono::system_clock::now(); }

// The seconds of the first "M:SS left" or "H:MM:SS left" in `text`; -1 for
// none ("expired M:SS ago" is none).
long long SecondsLeft(const std::string& text) {
  const auto end = text.find(" left");
  if (end == std::string::npos) return -1;
  const auto start = text.rfind(' ', end - 1) + 1;
  long long total = 0;
  std::size_t at = start;
  while (at < end) {
    std::size_t used = 0;
    total = total * 60 + std::stoll(text.substr(at, end - at), &used);
    at += used + 1;  // past ':'
  }
  return total;
}

// --- the fault itself --------------------------------------------------------

// The server runs with libfaketime loaded and the test's ASAN_OPTIONS
// replaced (not followed) by the fixture's, and the offset file steps the
// wall clock of a process started as the server is.
TEST_F(ClockStepTest, TheServerRunsUnderAWallClockTheTestSteps) {
  const std::string proc = "/proc/" + std::to_string(server_->pid());
  EXPECT_NE(Slurp(proc + "/maps").find("libfaketime"), std::string::npos);
  const std::string environ = Slurp(proc + "/environ");
  std::size_t asan_options = 0;
  for (std::size_t at = 0;
       (at = environ.find("ASAN_OPTIONS=", at)) != std::string::npos; ++at) {
    ++asan_options;
  }
  EXPECT_EQ(asan_options, 1u);
  EXPECT_NE(environ.find("verify_asan_link_order=0"), std::string::npos);

  std::string env;
  for (const auto& e : FakedClockEnvironment()) env += "'" + e + "' ";
  const auto wall_seconds = [&] {
    const CommandRun date = RunShell("env " + env + "date +%s");
    EXPECT_EQ(date.code, 0);
    return SysTime(seconds(std::stoll(date.out)));
  };
  SetWallClock("+1h");
  EXPECT_LT(Apart(wall_seconds(), RealNow() + hours(1)), seconds(5));
  SetWallClock("-1h");
  EXPECT_LT(Apart(wall_seconds(), RealNow() - hours(1)), seconds(5));
}

// --- what the API reports ----------------------------------------------------

TEST_F(ClockStepTest, ReportedNowDoesNotJumpWithTheWallClock) {
  HttpClient c(port());
  const SysTime started = ServerNow(c);
  EXPECT_LT(Apart(started, RealNow()), seconds(5));
  SetWallClock("+1h");
  const SysTime ahead = ServerNow(c);
  EXPECT_GE(ahead, started);
  EXPECT_LT(Apart(ahead, RealNow()), seconds(5)) << "jumped forward";
  SetWallClock("-1h");
  const SysTime behind = ServerNow(c);
  EXPECT_GE(behind, ahead);
  EXPECT_LT(Apart(behind, RealNow()), seconds(5)) << "jumped back";
}

// The command line counts leases down against the server's clock, not the
// wall clock of the machine it runs on: run with that clock an hour off
// either way, it says a lease of 4 minutes has about 4 minutes left.
TEST_F(ClockStepTest, TheCliCountsDownAgainstTheServersClock) {
  HttpClient c(port());
  OpenSession(c, "Asha", 240'000);
  std::string cli = "env";
  for (const auto& e : FakedClockEnvironment()) cli += " '" + e + "'";
  // The build of the program the server runs as (see the fixture).
  cli += " LEASEHOLD_URL=http://127.0.0.1:" + std::to_string(port()) + " " +
         std::string(LEASEHOLD_CLOCK_STEP_SERVER) + " ";
  for (const char* offset : {"+1h", "-1h"}) {
    SCOPED_TRACE(offset);
    SetWallClock(offset);
    for (const char* command : {"checkout 17 --ns docs --owner Asha --ttl 4m",
                                "ls --ns docs", "sessions"}) {
      const CommandRun run = RunShell(cli + command + " 2>&1");
      EXPECT_EQ(run.code, 0) << command << ": " << run.out;
      const long long left = SecondsLeft(run.out);
      EXPECT_GE(left, 200) << command << ": " << run.out;
      EXPECT_LE(left, 240) << command << ": " << run.out;
    }
  }
}

// --- sessions ----------------------------------------------------------------

// Neither expired at the step nor moved by it; keep-alives go on working,
// and once they stop the session ends about its ttl later.
TEST_F(ClockStepTest,
       SessionOutlivesAForwardStepAndEndsItsTtlAfterItsLastKeepalive) {
  HttpClient c(port());
  const std::string id = OpenSession(c, "Asha", kTtl.count());
  auto kept = c.Request("POST", api::SessionPath(id, "keepalive"));
  ASSERT_EQ(kept.status, 200u) << kept.body;
  const SysTime expires = TimeOf(kept.json, "expires_at");

  SetWallClock("+1h");
  EXPECT_TRUE(SessionAlive(c, id)) << "expired at the forward step";
  const Steady::time_point stepped = Steady::now();
  Steady::time_point last_keepalive = stepped;
  while (Since(stepped) < kTtl + kKeepaliveEvery) {  // past its ttl
    last_keepalive = Steady::now();
    kept = c.Request("POST", api::SessionPath(id, "keepalive"));
    ASSERT_EQ(kept.status, 200u)
        << "lost " << Since(stepped).count() << " ms after the step";
    const SysTime now = ServerNow(c);
    const SysTime next = TimeOf(kept.json, "expires_at");
    EXPECT_GT(next, now);
    EXPECT_LE(next, now + kTtl);
    EXPECT_LT(next - expires, 2 * kTtl + kLate) << "moved by the step";
    std::this_thread::sleep_for(kKeepaliveEvery);
  }
  const auto gone = AwaitSessionGone(c, id, kTtl + kLate);
  ASSERT_NE(gone, Steady::time_point::max()) << "lives on past its ttl";
  EXPECT_GE(gone - last_keepalive, kTtl - kRounding);
}

TEST_F(ClockStepTest,
       SessionEndsItsTtlAfterItsLastKeepaliveDespiteABackwardStep) {
  HttpClient c(port());
  const std::string id = OpenSession(c, "Ravi", kTtl.count());
  SetWallClock("-1h");
  const Steady::time_point last_keepalive = Steady::now();
  const auto kept = c.Request("POST", api::SessionPath(id, "keepalive"));
  ASSERT_EQ(kept.status, 200u) << kept.body;
  const SysTime now = ServerNow(c);
  EXPECT_GT(TimeOf(kept.json, "expires_at"), now);
  EXPECT_LE(TimeOf(kept.json, "expires_at"), now + kTtl);
  const auto gone = AwaitSessionGone(c, id, kTtl + kLate);
  ASSERT_NE(gone, Steady::time_point::max())
      << "lives on past its ttl after the backward step";
  EXPECT_GE(gone - last_keepalive, kTtl - kRounding);
}

// --- checkout leases ---------------------------------------------------------

struct Lease {
  Steady::time_point asked;  // just before the checkout was sent
  std::string expires_at;
  std::int64_t fence = 0;
};

Lease CheckOut(HttpClient& c, const std::string& key, const std::string& owner,
               milliseconds ttl) {
  Lease lease{.asked = Steady::now(), .expires_at = "", .fence = 0};
  const auto a =
      c.Request("POST", api::RecordPath("docs", key, "checkout"),
                api::CheckoutBody({.owner = owner, .ttl = ttl, .token = ""}));
  EXPECT_EQ(a.status, 200u) << a.body;
  if (a.status != 200) return lease;
  lease.expires_at = Str(a.json, "expires_at");
  lease.fence = Int(a.json, "fence");
  return lease;
}

// How long the lease on `key` has left by the server's clock.
milliseconds LeftOn(HttpClient& c, const std::string& key) {
  const auto r = c.Request("GET", api::RecordPath("docs", key));
  EXPECT_EQ(r.status, 200u) << r.body;
  const SysTime expires = TimeOf(r.json, "lock_expires_at");
  const auto who = c.Request("GET", "/v1/whoami");
  return std::chrono::duration_cast<milliseconds>(expires -
                                                  TimeOf(who.json, "now"));
}

TEST_F(ClockStepTest, CheckoutIsStillHeldRightAfterAForwardStep) {
  HttpClient c(port());
  const Lease asha = CheckOut(c, "17", "Asha", kTtl);
  SetWallClock("+1h");
  const auto ravi =
      c.Request("POST", api::RecordPath("docs", "17", "checkout"),
                api::CheckoutBody({.owner = "Ravi", .ttl = kTtl, .token = ""}));
  EXPECT_EQ(ravi.status, 423u) << "granted at the forward step: " << ravi.body;
  const milliseconds left = LeftOn(c, "17");
  EXPECT_GT(left, milliseconds(0));
  EXPECT_LE(left, kTtl);
  const auto record = c.Request("GET", api::RecordPath("docs", "17"));
  EXPECT_EQ(Str(record.json, "state"), "locked");
  EXPECT_EQ(Str(record.json, "lock_expires_at"), asha.expires_at);
  const auto in = c.Request("POST", api::RecordPath("docs", "17", "checkin"),
                            api::ProofBody({.owner = "Asha", .token = ""}));
  EXPECT_EQ(in.status, 200u) << in.body;
}

TEST_F(ClockStepTest, CheckoutIsFreeItsTtlAfterItWasTakenDespiteABackwardStep) {
  HttpClient c(port());
  const Lease asha = CheckOut(c, "18", "Asha", kTtl);
  SetWallClock("-1h");
  const milliseconds left = LeftOn(c, "18");
  EXPECT_GT(left, milliseconds(0));
  EXPECT_LE(left, kTtl) << "the backward step lengthened the lease";
  HttpAnswer ravi;
  do {
    ravi = c.Request(
        "POST", api::RecordPath("docs", "18", "checkout"),
        api::CheckoutBody({.owner = "Ravi", .ttl = kTtl, .token = ""}));
    if (ravi.status == 200) break;
    ASSERT_EQ(ravi.status, 423u) << ravi.body;
    std::this_thread::sleep_for(milliseconds(20));
  } while (Since(asha.asked) < kTtl + kLate);
  ASSERT_EQ(ravi.status, 200u)
      << "still held " << Since(asha.asked).count()
      << " ms after it was taken for " << kTtl.count() << " ms";
  EXPECT_GE(Since(asha.asked), kTtl - kRounding);
  EXPECT_GT(Int(ravi.json, "fence"), asha.fence);
}

// --- lock waits --------------------------------------------------------------

// A session ("holder", ttl 60 s) holds "busy"; another asks for it with
// timeout_ms 2000 on its own connection. The step comes while it waits.
class LockWaitStepTest : public ClockStepTest {
 protected:
  static constexpr milliseconds kTimeout{2000};

  void Park(HttpClient& c, HttpClient& waiter) {
    std::tie(holder_, other_) = HolderOfBusyAnd(c, "Ravi");
    asked_ = Steady::now();
    waiter.Send("POST", api::ApplockPath("app", "acquire"),
                AcquireBody(other_, "busy", "Exclusive", "Session",
                            static_cast<int>(kTimeout.count())));
    ASSERT_EQ(AwaitWaiting(c, 1), 1u);
  }

  // The wait's answer: a timeout, between its timeout_ms and kLate after.
  void ExpectTimedOutOnTime(HttpClient& c, HttpClient& waiter) {
    // A command through the engine, so that a server whose clock jumped
    // would act on it now rather than at its next timer.
    EXPECT_EQ(c.Request("POST", api::SessionPath(holder_, "keepalive")).status,
              200u)
        << "the holder's session ended";
    HttpAnswer answer;
    try {
      answer = waiter.Receive(kTimeout + kLate);
    } catch (const std::exception& e) {
      FAIL() << "no answer " << Since(asked_).count() << " ms after asking, "
             << "with timeout_ms " << kTimeout.count() << ": " << e.what();
    }
    const milliseconds waited = Since(asked_);
    EXPECT_EQ(answer.status, 409u) << answer.body;
    EXPECT_EQ(Int(answer.json, "result"), -1) << answer.body;
    EXPECT_GE(waited, kTimeout - kRounding) << "ended early";
    EXPECT_LE(waited, kTimeout + kLate) << "ended late";
    EXPECT_EQ(ModeOf(c, holder_, "busy"), "Exclusive");
  }

  std::string holder_, other_;
  Steady::time_point asked_;
};

TEST_F(LockWaitStepTest, WaitDoesNotEndEarlyAtAForwardStep) {
  HttpClient c(port()), waiter(port());
  Park(c, waiter);
  SetWallClock("+1h");
  ExpectTimedOutOnTime(c, waiter);
}

TEST_F(LockWaitStepTest, WaitDoesNotHangAfterABackwardStep) {
  HttpClient c(port()), waiter(port());
  Park(c, waiter);
  SetWallClock("-1h");
  ExpectTimedOutOnTime(c, waiter);
}

// --- application locks -------------------------------------------------------

// A live session (kept alive well within its ttl) keeps every lock it
// holds, with its fence, through both steps.
TEST_F(ClockStepTest, LocksOfALiveSessionSurviveBothSteps) {
  HttpClient c(port());
  const std::string holder = OpenSession(c, "Asha", kTtl.count());
  const std::string other = OpenSession(c, "Ravi", 60'000);
  const auto x = Acquire(c, holder, "invoice:481", "Exclusive");
  ASSERT_EQ(x.status, 200u) << x.body;
  ASSERT_EQ(Acquire(c, holder, "ledger", "Shared").status, 200u);
  const auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    ASSERT_EQ(c.Request("POST", api::SessionPath(holder, "keepalive")).status,
              200u);
    EXPECT_EQ(ModeOf(c, holder, "invoice:481"), "Exclusive");
    EXPECT_EQ(ModeOf(c, holder, "ledger"), "Shared");
    EXPECT_EQ(Test(c, other, "invoice:481", "Shared"), false);
    EXPECT_EQ(Test(c, other, "ledger", "Exclusive"), false);
  };
  const auto hold_for = [&](milliseconds span, const char* when) {
    for (const auto until = Steady::now() + span; Steady::now() < until;) {
      check(when);
      std::this_thread::sleep_for(kKeepaliveEvery);
    }
  };
  SetWallClock("+1h");
  check("right after the forward step");
  hold_for(kTtl, "after the forward step");
  SetWallClock("-1h");
  check("right after the backward step");
  hold_for(kTtl, "after the backward step");
  const auto locks = c.Request("GET", api::ApplockPath("app"));
  for (const auto& l : locks.json.at("locks").as_array()) {
    if (Str(l, "resource") != "invoice:481") continue;
    const auto& granted = l.at("granted").as_array();
    ASSERT_EQ(granted.size(), 1u);
    EXPECT_EQ(Int(granted[0], "fence"), Int(x.json, "fence"));
  }
}

// --- transaction limits -----------------------------------------------------

// Namespace "app" limits transactions to 3 s (max_transaction_ms): one that
// holds a lock there is rolled back at the limit, and its lock freed.
class TransactionLimitStepTest : public ClockStepTest {
 protected:
  static constexpr milliseconds kLimit{3000};

  std::string Config() const override {
    return R"({"namespaces":{"app":{"max_transaction_ms":3000}}})";
  }

  // Holder_ opens a transaction that takes "ledger" (the limit runs from
  // there); other_ is there to test the lock.
  void Begin(HttpClient& c) {
    holder_ = OpenSession(c, "Asha", 60'000);
    other_ = OpenSession(c, "Ravi", 60'000);
    ASSERT_EQ(c.Request("POST", api::TransactionPath(holder_)).status, 201u);
    began_ = Steady::now();
    const auto a = Acquire(c, holder_, "ledger", "Exclusive", "Transaction");
    ASSERT_EQ(a.status, 200u) << a.body;
  }

  std::string holder_, other_;
  Steady::time_point began_;
};

TEST_F(TransactionLimitStepTest, TransactionIsNotRolledBackAtAForwardStep) {
  HttpClient c(port());
  Begin(c);
  SetWallClock("+1h");
  EXPECT_EQ(Test(c, other_, "ledger", "Exclusive"), false)
      << "rolled back at the forward step";
  const auto commit =
      c.Request("POST", api::TransactionPath(holder_, "commit"));
  EXPECT_EQ(commit.status, 200u) << commit.body;
}

TEST_F(TransactionLimitStepTest,
       TransactionIsRolledBackAtItsLimitDespiteABackwardStep) {
  HttpClient c(port());
  Begin(c);
  SetWallClock("-1h");
  bool freed = false;
  while (!freed && Since(began_) < kLimit + kLate) {
    freed = Test(c, other_, "ledger", "Exclusive").value_or(false);
    if (!freed) std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(freed) << "still open " << Since(began_).count()
                     << " ms after it began, past its limit";
  EXPECT_GE(Since(began_), kLimit - kRounding);
  const auto commit =
      c.Request("POST", api::TransactionPath(holder_, "commit"));
  EXPECT_TRUE(IsError(commit, 409, "transaction_expired")) << commit.body;
}

// --- outbox claim leases -----------------------------------------------------

// Enqueues one message on "outbox/mail" and claims it for `lease`; its id
// and claim token.
std::pair<std::int64_t, std::string> ClaimOne(HttpClient& c,
                                              const std::string& consumer,
                                              milliseconds lease) {
  const auto put = c.Request("POST", api::OutboxPath("outbox", "mail"),
                             api::EnqueueBody("m1", json::object{}, ""));
  EXPECT_EQ(put.status, 201u) << put.body;
  const auto got = c.Request("POST", api::OutboxPath("outbox", "mail", "claim"),
                             api::ClaimBody(consumer, 1, lease));
  EXPECT_EQ(got.status, 200u) << got.body;
  const auto& messages = got.json.at("messages").as_array();
  EXPECT_EQ(messages.size(), 1u) << got.body;
  if (messages.empty()) return {0, ""};
  return {Int(messages[0], "id"), Str(messages[0], "claim_token")};
}

TEST_F(ClockStepTest, OutboxClaimIsStillHeldRightAfterAForwardStep) {
  HttpClient c(port());
  const auto [id, token] = ClaimOne(c, "mailer-1", kTtl);
  SetWallClock("+1h");
  const auto again =
      c.Request("POST", api::OutboxPath("outbox", "mail", "claim"),
                api::ClaimBody("mailer-2", 1, kTtl));
  EXPECT_TRUE(again.json.at("messages").as_array().empty()) << again.body;
  const auto ack = c.Request("POST", api::OutboxPath("outbox", "mail", "ack"),
                             api::AckBody(id, token));
  EXPECT_EQ(ack.status, 200u) << "expired at the forward step: " << ack.body;
}

TEST_F(ClockStepTest, OutboxClaimRunsOutOnTimeDespiteABackwardStep) {
  HttpClient c(port());
  const Steady::time_point claimed = Steady::now();
  const auto [id, token] = ClaimOne(c, "mailer-1", kTtl);
  SetWallClock("-1h");
  std::size_t got = 0;
  do {
    const auto again =
        c.Request("POST", api::OutboxPath("outbox", "mail", "claim"),
                  api::ClaimBody("mailer-2", 1, kTtl));
    ASSERT_EQ(again.status, 200u) << again.body;
    got = again.json.at("messages").as_array().size();
    if (got == 0) std::this_thread::sleep_for(milliseconds(20));
  } while (got == 0 && Since(claimed) < kTtl + kLate);
  ASSERT_EQ(got, 1u) << "the claim lives on past its lease";
  EXPECT_GE(Since(claimed), kTtl - kRounding);
  const auto late = c.Request("POST", api::OutboxPath("outbox", "mail", "ack"),
                              api::AckBody(id, token));
  EXPECT_EQ(late.status, 423u) << late.body;
}

}  // namespace
}  // namespace leasehold::testing
