// docs/api.md "Application locks" over real HTTP: acquire (granted, waited,
// timeout, deadlock), release, mode, test and the list, with
// sp_getapplock's results and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "client/api_codec.h"
#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// /v1/applocks/{ns}/... (handlers_applocks.cc).
class ApplocksApiTest : public ApiContractTest {};

TEST_F(ApplocksApiTest, AcquireAnswersGrantedWaitedAndTimeout) {
  HttpClient a(port()), b(port()), w(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  auto granted = Acquire(a, sa, "doc", "Exclusive");
  ASSERT_EQ(granted.status, 200u) << granted.body;
  EXPECT_EQ(Int(granted.json, "result"), 0);
  EXPECT_EQ(Str(granted.json, "status"), "granted");
  ASSERT_TRUE(Has(granted.json, "fence", Kind::kInt));
  const std::int64_t first_fence = Int(granted.json, "fence");

  auto never = Acquire(b, sb, "doc", "Shared", "Session", 0);
  EXPECT_EQ(never.status, 409u);
  EXPECT_EQ(Int(never.json, "result"), -1);
  EXPECT_EQ(Str(never.json, "status"), "timeout");
  EXPECT_FALSE(never.json.as_object().contains("fence"));
  const auto start = Steady::now();
  auto waited = Acquire(b, sb, "doc", "Shared", "Session", 150);
  const auto took = Steady::now() - start;
  EXPECT_EQ(waited.status, 409u);
  EXPECT_EQ(Int(waited.json, "result"), -1);
  EXPECT_GE(took, milliseconds(140)) << "timeout_ms is a wait, not a poll";
  EXPECT_EQ(ModeOf(b, sb, "doc"), "NoLock")
      << "a timed-out request changes nothing";

  b.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sb, "doc", "Shared", "Session", 10'000));
  ASSERT_EQ(AwaitWaiting(w, 1), 1u);
  auto released = Release(a, sa, "doc");
  ASSERT_EQ(released.status, 200u) << released.body;
  EXPECT_EQ(Int(released.json, "result"), 0);
  auto after_wait = b.Receive();
  ASSERT_EQ(after_wait.status, 200u) << after_wait.body;
  EXPECT_EQ(Int(after_wait.json, "result"), 1);
  EXPECT_EQ(Str(after_wait.json, "status"), "granted_after_wait");
  ASSERT_TRUE(Has(after_wait.json, "fence", Kind::kInt));
  EXPECT_GT(Int(after_wait.json, "fence"), first_fence);

  // Mode and owner words ignore case and trailing blanks.
  auto loose = a.Request("POST", "/v1/applocks/app/acquire",
                         J({{"session", sa},
                            {"resource", "doc"},
                            {"mode", "shared  "},
                            {"owner", "SESSION"},
                            {"timeout_ms", 0}}));
  EXPECT_EQ(loose.status, 200u) << loose.body;
  EXPECT_EQ(ModeOf(a, sa, "doc"), "Shared");
}

// "n > 0 waits up to n ms", for every n a JSON integer can hold: a huge n
// waits (its deadline still an RFC 3339 instant), it does not overflow
// into an immediate timeout.
TEST_F(ApplocksApiTest, HugeTimeoutsWaitInsteadOfOverflowing) {
  HttpClient a(port()), b(port()), w(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  for (const char* huge : {"9223372036854775807", "9000000000000000"}) {
    b.Send("POST", "/v1/applocks/app/acquire",
           R"({"session":")" + sb +
               R"(","resource":"doc","mode":"Shared","owner":"Session",)"
               R"("timeout_ms":)" +
               huge + "}");
    ASSERT_EQ(AwaitWaiting(w, 1), 1u) << huge << " did not wait";
    auto list = w.Request("GET", "/v1/applocks/app");
    const auto& waiting =
        list.json.at("locks").as_array()[0].at("waiting").as_array();
    ASSERT_EQ(waiting.size(), 1u);
    EXPECT_TRUE(Has(waiting[0], "deadline", Kind::kTime, Kind::kNull)) << huge;
    ASSERT_EQ(w.Request("POST", "/v1/sessions/" + sb + "/cancel").status, 200u);
    EXPECT_EQ(Int(b.Receive().json, "result"), -2) << huge;
  }
}

TEST_F(ApplocksApiTest, PrincipalsAndNamespacesNeverConflict) {
  HttpClient c(port());
  const std::string sa = OpenSession(c, "Asha"), sb = OpenSession(c, "Ravi");
  auto body = [](const std::string& s, const std::string& principal) {
    return J({{"session", s},
              {"resource", "invoice:481"},
              {"mode", "Exclusive"},
              {"owner", "Session"},
              {"timeout_ms", 0},
              {"principal", principal}});
  };
  ASSERT_EQ(
      c.Request("POST", "/v1/applocks/app/acquire", body(sa, "public")).status,
      200u);
  EXPECT_EQ(
      c.Request("POST", "/v1/applocks/app/acquire", body(sb, "public")).status,
      409u);
  EXPECT_EQ(
      c.Request("POST", "/v1/applocks/app/acquire", body(sb, "billing")).status,
      200u);
  EXPECT_EQ(c.Request("POST", "/v1/applocks/other/acquire", body(sb, "public"))
                .status,
            200u);
  auto mode = c.Request("GET", "/v1/applocks/app/mode?session=" + sb +
                                   "&resource=invoice%3A481&owner=Session"
                                   "&principal=billing");
  EXPECT_EQ(Str(mode.json, "mode"), "Exclusive");
  auto release = c.Request("POST", "/v1/applocks/app/release",
                           J({{"session", sb},
                              {"resource", "invoice:481"},
                              {"owner", "Session"},
                              {"principal", "billing"}}));
  EXPECT_EQ(release.status, 200u) << release.body;
}

TEST_F(ApplocksApiTest, ReleaseOfALockNotHeldIs409NotHeld) {
  HttpClient c(port());
  const std::string sa = OpenSession(c, "Asha"), sb = OpenSession(c, "Ravi");
  EXPECT_TRUE(IsError(Release(c, sa, "nothing"), 409, "not_held"));
  ASSERT_EQ(Acquire(c, sa, "doc", "Shared").status, 200u);
  ASSERT_EQ(Acquire(c, sa, "doc", "Shared").status, 200u);
  EXPECT_TRUE(IsError(Release(c, sb, "doc"), 409, "not_held"))
      << "another session";
  ASSERT_EQ(c.Request("POST", "/v1/sessions/" + sa + "/transaction").status,
            201u);
  EXPECT_TRUE(IsError(Release(c, sa, "doc", "Transaction"), 409, "not_held"))
      << "the other owner of the same session";
  EXPECT_EQ(Release(c, sa, "doc").status, 200u);
  EXPECT_EQ(ModeOf(c, sa, "doc"), "Shared") << "one reference left";
  EXPECT_EQ(Release(c, sa, "doc").status, 200u);
  EXPECT_EQ(ModeOf(c, sa, "doc"), "NoLock");
  EXPECT_TRUE(IsError(Release(c, sa, "doc"), 409, "not_held"));
  EXPECT_TRUE(IsError(Release(c, sa, ""), 400, "name_empty"));
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/applocks/app/release",
                J({{"session", sa}, {"resource", "doc"}, {"owner", "Nobody"}})),
      400, "bad_owner"));
}

TEST_F(ApplocksApiTest, AcquireRefusesBadModeOwnerAndTimeout) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "Asha");
  auto acquire = [&](json::object extra) {
    json::object o{{"session", s}, {"resource", "r"}, {"owner", "Session"}};
    for (auto& [k, v] : extra) o[k] = v;
    return c.Request("POST", "/v1/applocks/app/acquire", J(o));
  };
  EXPECT_TRUE(IsError(acquire({}), 400, "bad_mode")) << "mode is required";
  for (const json::value& mode :
       {json::value("Exclusiv"), json::value("NoLock"),
        json::value("SharedIntentExclusive"),
        json::value("UpdateIntentExclusive"), json::value(""),
        json::value(5)}) {
    EXPECT_TRUE(IsError(acquire({{"mode", mode}}), 400, "bad_mode")) << mode;
  }
  for (const json::value& owner :
       {json::value("Nobody"), json::value(""), json::value(1)}) {
    EXPECT_TRUE(IsError(acquire({{"mode", "Shared"}, {"owner", owner}}), 400,
                        "bad_owner"))
        << owner;
  }
  for (const json::value& timeout :
       {json::value(-2), json::value("soon"), json::value(1.5)}) {
    EXPECT_TRUE(IsError(acquire({{"mode", "Shared"}, {"timeout_ms", timeout}}),
                        400, "bad_timeout"))
        << timeout;
  }
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/applocks/app/acquire",
                                J({{"session", s}, {"mode", "Shared"}})),
                      400, "bad_request"))
      << "resource is required";
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/applocks/app/acquire",
                                J({{"session", s},
                                   {"resource", 7},
                                   {"mode", "Shared"},
                                   {"owner", "Session"}})),
                      400, "bad_request"));
  EXPECT_TRUE(
      IsError(c.Request("POST", "/v1/applocks/app/acquire",
                        "{\"session\":\"" + s +
                            "\",\"resource\":\"\xff\",\"mode\":\"Shared\"}"),
              400, "bad_request"));
  EXPECT_EQ(ModeOf(c, s, "r"), "NoLock") << "refused requests hold nothing";
}

TEST_F(ApplocksApiTest, ModeReportsTheHeldCombinationLikeApplockMode) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "Asha");
  EXPECT_EQ(ModeOf(c, s, "r"), "NoLock");
  ASSERT_EQ(Acquire(c, s, "r", "IntentShared").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "r"), "IntentShared");
  ASSERT_EQ(Acquire(c, s, "r", "Shared").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "r"), "Shared");
  ASSERT_EQ(Acquire(c, s, "r", "IntentExclusive").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "r"), "SharedIntentExclusive");
  ASSERT_EQ(Acquire(c, s, "r", "Update").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "r"), "UpdateIntentExclusive");
  // Outside a transaction the Transaction owner has no mode: refused, as
  // APPLOCK_MODE refuses it (error 3918) and as /test does.
  EXPECT_TRUE(IsError(
      c.Request("GET", api::ModePath("app", s, "r", "Transaction", "public")),
      400, "no_transaction"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Release(c, s, "r").status, 200u);
    EXPECT_EQ(ModeOf(c, s, "r"), "UpdateIntentExclusive")
        << "never lowered while references remain";
  }
  ASSERT_EQ(Release(c, s, "r").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "r"), "NoLock");
  ASSERT_EQ(Acquire(c, s, "x", "Shared").status, 200u);
  ASSERT_EQ(Acquire(c, s, "x", "Exclusive").status, 200u);
  EXPECT_EQ(ModeOf(c, s, "x"), "Exclusive");
  // Query errors.
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/applocks/app/mode?session=" + s +
                                           "&resource=r&owner=Nobody"),
                      400, "bad_owner"));
  EXPECT_TRUE(IsError(
      c.Request("GET", "/v1/applocks/app/mode?session=" + s + "&owner=Session"),
      400, "name_empty"));
  EXPECT_TRUE(IsError(
      c.Request("GET", "/v1/applocks/app/mode?resource=r&owner=Session"), 404,
      "session_not_found"));
}

TEST_F(ApplocksApiTest, TestAnswersLikeApplockTestAndAcquiresNothing) {
  HttpClient a(port()), b(port()), c(port()), w(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi"),
                    sc = OpenSession(c, "Mei");
  EXPECT_EQ(Test(b, sb, "free", "Exclusive"), true);
  EXPECT_EQ(ModeOf(b, sb, "free"), "NoLock") << "test acquired something";
  EXPECT_TRUE(
      b.Request("GET", "/v1/applocks/app").json.at("locks").as_array().empty());
  EXPECT_EQ(Acquire(a, sa, "free", "Exclusive", "Session", 0).status, 200u);

  ASSERT_EQ(Acquire(a, sa, "doc", "Shared").status, 200u);
  EXPECT_EQ(Test(b, sb, "doc", "Shared"), true);
  EXPECT_EQ(Test(b, sb, "doc", "Update"), true);
  EXPECT_EQ(Test(b, sb, "doc", "IntentExclusive"), false);
  EXPECT_EQ(Test(b, sb, "doc", "Exclusive"), false);
  EXPECT_EQ(Test(a, sa, "doc", "Exclusive"), true)
      << "a holder's own lock does not block it";
  // Relaxed FIFO: a request that conflicts with a waiting one is not
  // grantable, though it is compatible with everything granted.
  b.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sb, "doc", "Exclusive", "Session", 10'000));
  ASSERT_EQ(AwaitWaiting(w, 1), 1u);
  EXPECT_EQ(Test(c, sc, "doc", "Shared"), false);
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/applocks/app/test?session=" + sc +
                                           "&resource=doc&mode=Shared"
                                           "&owner=Transaction"),
                      400, "no_transaction"));
  EXPECT_EQ(ModeOf(c, sc, "doc"), "NoLock");
  // Query errors.
  EXPECT_TRUE(IsError(
      c.Request("GET", "/v1/applocks/app/test?session=" + sc + "&resource=doc"),
      400, "bad_mode"));
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/applocks/app/test?session=" + sc +
                                           "&resource=doc&mode=Bogus"),
                      400, "bad_mode"));
  EXPECT_TRUE(
      IsError(c.Request("GET", "/v1/applocks/app/test?session=" + sc +
                                   "&resource=doc&mode=Shared&owner=Someone"),
              400, "bad_owner"));
  ASSERT_EQ(Release(a, sa, "doc").status, 200u);
  EXPECT_EQ(b.Receive().status, 200u);
}

TEST_F(ApplocksApiTest, ListShowsHoldersAndWaitersInQueueOrder) {
  HttpClient a(port()), b(port()), c(port()), d(port()), w(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi"),
                    sc = OpenSession(c, "Mei"), sd = OpenSession(d, "Olu");
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  ASSERT_EQ(Acquire(a, sa, "doc", "Exclusive").status, 200u);
  b.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sb, "doc", "Shared", "Session", 20'000));
  ASSERT_EQ(AwaitWaiting(w, 1), 1u);
  c.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sc, "doc", "Update", "Session", -1));
  ASSERT_EQ(AwaitWaiting(w, 2), 2u);
  d.Send("POST", "/v1/applocks/app/acquire",
         AcquireBody(sd, "doc", "IntentShared", "Session", -1));
  ASSERT_EQ(AwaitWaiting(w, 3), 3u);

  auto list = w.Request("GET", "/v1/applocks/app");
  ASSERT_EQ(list.status, 200u);
  const auto& locks = list.json.at("locks").as_array();
  ASSERT_EQ(locks.size(), 1u) << list.body;
  const auto& l = locks[0];
  EXPECT_EQ(Str(l, "resource"), "doc");
  EXPECT_EQ(Str(l, "principal"), "public");
  const auto& granted = l.at("granted").as_array();
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(Str(granted[0], "session"), sa);
  EXPECT_EQ(Str(granted[0], "session_name"), "Asha");
  EXPECT_EQ(Str(granted[0], "owner"), "Session");
  EXPECT_EQ(Str(granted[0], "mode"), "Exclusive");
  EXPECT_EQ(Int(granted[0], "count"), 2);
  EXPECT_TRUE(Has(granted[0], "since", Kind::kTime));
  const auto& waiting = l.at("waiting").as_array();
  ASSERT_EQ(waiting.size(), 3u);
  const std::vector<std::tuple<std::string, std::string, std::string>> order = {
      {sb, "Ravi", "Shared"},
      {sc, "Mei", "Update"},
      {sd, "Olu", "IntentShared"}};
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(Str(waiting[i], "session"), std::get<0>(order[i])) << i;
    EXPECT_EQ(Str(waiting[i], "session_name"), std::get<1>(order[i])) << i;
    EXPECT_EQ(Str(waiting[i], "mode"), std::get<2>(order[i])) << i;
    EXPECT_TRUE(Has(waiting[i], "since", Kind::kTime)) << i;
  }
  EXPECT_TRUE(Has(waiting[0], "deadline", Kind::kTime));
  EXPECT_TRUE(Has(waiting[1], "deadline", Kind::kNull)) << "waits forever";
  EXPECT_LE(Str(waiting[0], "since"), Str(waiting[1], "since"));
  EXPECT_LE(Str(waiting[1], "since"), Str(waiting[2], "since"));
  EXPECT_TRUE(w.Request("GET", "/v1/applocks/elsewhere")
                  .json.at("locks")
                  .as_array()
                  .empty());

  // Releasing both references grants all three waiters: Shared, Update and
  // IntentShared are compatible with one another.
  ASSERT_EQ(Release(a, sa, "doc").status, 200u);
  ASSERT_EQ(Release(a, sa, "doc").status, 200u);
  for (HttpClient* h : {&b, &c, &d}) {
    auto got = h->Receive();
    EXPECT_EQ(got.status, 200u) << got.body;
    EXPECT_EQ(Int(got.json, "result"), 1);
  }
}

// The issue asks for -3 within 100 ms of the cycle forming, measured from
// sending the closing request to receiving the answer. The best of three
// rounds is asserted, so one slow scheduling (or ASan) does not fail it.
TEST_F(ApplocksApiTest, DeadlockIsAnsweredWithin100MsOfTheCycle) {
  milliseconds best = milliseconds::max();
  for (int round = 0; round < 3; ++round) {
    HttpClient a(port()), b(port()), a_wait(port());
    const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
    const std::string r1 = "r1-" + std::to_string(round),
                      r2 = "r2-" + std::to_string(round);
    ASSERT_EQ(Acquire(a, sa, r1, "Exclusive").status, 200u);
    ASSERT_EQ(Acquire(b, sb, r2, "Exclusive").status, 200u);
    a_wait.Send("POST", "/v1/applocks/app/acquire",
                AcquireBody(sa, r2, "Exclusive"));
    ASSERT_EQ(AwaitWaiting(b, 1), 1u);
    const auto start = Steady::now();
    auto victim = Acquire(b, sb, r1, "Exclusive");
    const auto took =
        std::chrono::duration_cast<milliseconds>(Steady::now() - start);
    EXPECT_EQ(victim.status, 409u);
    EXPECT_EQ(Int(victim.json, "result"), -3);
    EXPECT_EQ(Str(victim.json, "status"), "deadlock");
    best = std::min(best, took);
    // Ravi leaves: Asha's wait is granted; then she leaves too.
    ASSERT_EQ(b.Request("DELETE", "/v1/sessions/" + sb).status, 204u);
    EXPECT_EQ(Int(a_wait.Receive().json, "result"), 1);
    ASSERT_EQ(a.Request("DELETE", "/v1/sessions/" + sa).status, 204u);
  }
  EXPECT_LT(best, milliseconds(100)) << "best of 3: " << best.count() << " ms";
}

// Principal scopes compare ignoring ASCII case, as SQL Server resolves
// @DbPrincipal: a lock taken under "DBO" is the one "dbo" asks about,
// releases and conflicts with. Resource names stay byte-exact.
TEST_F(ApplocksApiTest, PrincipalScopesIgnoreCaseResourcesDoNot) {
  HttpClient c(port());
  const std::string a = OpenSession(c, "Asha"), b = OpenSession(c, "Ravi");
  auto under = [](const std::string& principal, const std::string& mode,
                  std::chrono::milliseconds timeout) {
    client::AcquireOptions o;
    o.mode = mode;
    o.timeout = timeout;
    o.principal = principal;
    return o;
  };
  using std::chrono::milliseconds;
  auto taken = c.Request(
      "POST", api::ApplockPath("app", "acquire"),
      api::AcquireBody(a, "r", under("DBO", "Exclusive", milliseconds(0))));
  ASSERT_EQ(taken.status, 200u) << taken.body;
  auto mode = c.Request("GET", api::ModePath("app", a, "r", "Session", "dbo"));
  ASSERT_EQ(mode.status, 200u) << mode.body;
  EXPECT_EQ(Str(mode.json, "mode"), "Exclusive");
  auto other = c.Request(
      "POST", api::ApplockPath("app", "acquire"),
      api::AcquireBody(b, "r", under("Dbo", "Shared", milliseconds(0))));
  EXPECT_EQ(Int(other.json, "result"), -1) << other.body;
  auto listed = c.Request("GET", api::ApplockPath("app"));
  EXPECT_NE(listed.body.find(R"("principal":"dbo")"), std::string::npos)
      << listed.body;
  // "R" is another resource: granted.
  auto upper = c.Request(
      "POST", api::ApplockPath("app", "acquire"),
      api::AcquireBody(b, "R", under("dbo", "Exclusive", milliseconds(0))));
  EXPECT_EQ(Int(upper.json, "result"), 0) << upper.body;
  auto released = c.Request("POST", api::ApplockPath("app", "release"),
                            api::ReleaseBody(a, "r", "Session", "dBo"));
  EXPECT_EQ(released.status, 200u) << released.body;
}

}  // namespace
}  // namespace leasehold::testing
