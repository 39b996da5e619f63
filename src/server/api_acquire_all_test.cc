// POST /v1/applocks/{ns}/acquire-all through Api::Handle: canonical order,
// all or nothing, one timeout, and the refusals.
#include <chrono>
#include <future>
#include <memory>

#include "server/api_test_fixture.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

class AcquireAllTest : public ApiTest {
 protected:
  Answer AcquireAll(const std::string& session, json::array locks,
                    int timeout_ms = 0, const std::string& owner = "Session") {
    return Call("POST", "/v1/applocks/app/acquire-all",
                json::serialize(json::object{{"session", session},
                                             {"locks", std::move(locks)},
                                             {"owner", owner},
                                             {"timeout_ms", timeout_ms}}));
  }

  // A call whose answer is awaited later; `parked` gets its wait id once
  // the engine has parked it.
  struct Pending {
    std::future<WaitId> parked;
    std::future<ApiResponse> answer;
    Answer Get() {
      ApiResponse r = answer.get();
      return {r.status, json::parse(r.body)};
    }
  };
  Pending StartAcquireAll(const std::string& session, json::array locks,
                          int timeout_ms) {
    auto parked = std::make_shared<std::promise<WaitId>>();
    auto answer = std::make_shared<std::promise<ApiResponse>>();
    Pending p{parked->get_future(), answer->get_future()};
    api_->Handle({"POST", "/v1/applocks/app/acquire-all",
                  json::serialize(json::object{{"session", session},
                                               {"locks", std::move(locks)},
                                               {"owner", "Session"},
                                               {"timeout_ms", timeout_ms}}),
                  "", [parked](WaitId w) { parked->set_value(w); }},
                 [answer](ApiResponse r) { answer->set_value(std::move(r)); });
    return p;
  }

  static json::object Lock(const std::string& resource,
                           const std::string& mode = "Exclusive") {
    return json::object{{"resource", resource}, {"mode", mode}};
  }

  Answer Acquire(const std::string& session, const std::string& resource,
                 const std::string& mode = "Exclusive", int timeout_ms = 0) {
    return Call("POST", "/v1/applocks/app/acquire",
                json::serialize(json::object{{"session", session},
                                             {"resource", resource},
                                             {"mode", mode},
                                             {"owner", "Session"},
                                             {"timeout_ms", timeout_ms}}));
  }

  std::string ModeOf(const std::string& session, const std::string& resource) {
    auto a = Call("GET", "/v1/applocks/app/mode?session=" + session +
                             "&resource=" + resource + "&owner=Session");
    EXPECT_EQ(a.status, 200u);
    return std::string(a.body.at("mode").as_string());
  }
};

TEST_F(AcquireAllTest, GrantsEveryLockAndAnswersInCanonicalOrder) {
  const std::string s = OpenSession("Asha");
  auto a = AcquireAll(s, {Lock("invoice:9"), Lock("account:B", "Shared"),
                          Lock("account:A", "Update")});
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("result").as_int64(), 0);
  EXPECT_EQ(a.body.at("status").as_string(), "granted");
  const auto& locks = a.body.at("locks").as_array();
  ASSERT_EQ(locks.size(), 3u);
  EXPECT_EQ(locks[0].at("resource").as_string(), "account:A");
  EXPECT_EQ(locks[0].at("mode").as_string(), "Update");
  EXPECT_EQ(locks[1].at("resource").as_string(), "account:B");
  EXPECT_EQ(locks[2].at("resource").as_string(), "invoice:9");
  // Fences rise in the order the locks were taken.
  EXPECT_LT(locks[0].at("fence").to_number<std::uint64_t>(),
            locks[1].at("fence").to_number<std::uint64_t>());
  EXPECT_LT(locks[1].at("fence").to_number<std::uint64_t>(),
            locks[2].at("fence").to_number<std::uint64_t>());
  EXPECT_EQ(ModeOf(s, "account:B"), "Shared");
}

TEST_F(AcquireAllTest, OrderIsBytewiseNotLocaleOrCase) {
  const std::string s = OpenSession("Asha");
  // 'B' (0x42) < 'a' (0x61) < 0xC3 (the first byte of "é").
  auto a = AcquireAll(s, {Lock("\xC3\xA9t\xC3\xA9"), Lock("a"), Lock("B")});
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  const auto& locks = a.body.at("locks").as_array();
  EXPECT_EQ(locks[0].at("resource").as_string(), "B");
  EXPECT_EQ(locks[1].at("resource").as_string(), "a");
  EXPECT_EQ(locks[2].at("resource").as_string(), "\xC3\xA9t\xC3\xA9");
}

TEST_F(AcquireAllTest, ARefusalReleasesWhatTheCallTook) {
  const std::string holder = OpenSession("Ravi");
  ASSERT_EQ(Acquire(holder, "b").status, 200u);
  const std::string s = OpenSession("Asha");
  auto a = AcquireAll(s, {Lock("c"), Lock("a"), Lock("b")});
  EXPECT_EQ(a.status, 409u);
  EXPECT_EQ(a.body.at("result").as_int64(), -1);
  EXPECT_EQ(a.body.at("status").as_string(), "timeout");
  EXPECT_EQ(a.body.at("resource").as_string(), "b");
  EXPECT_EQ(a.body.at("released").as_int64(), 1);  // "a" was taken first
  EXPECT_EQ(ModeOf(s, "a"), "NoLock");
  EXPECT_EQ(ModeOf(s, "c"), "NoLock");
  EXPECT_EQ(ModeOf(holder, "b"), "Exclusive");
}

TEST_F(AcquireAllTest, CountedLocksHeldBeforeStayHeld) {
  const std::string holder = OpenSession("Ravi");
  ASSERT_EQ(Acquire(holder, "z").status, 200u);
  const std::string s = OpenSession("Asha");
  ASSERT_EQ(Acquire(s, "a").status, 200u);
  auto a = AcquireAll(s, {Lock("a"), Lock("z")});
  EXPECT_EQ(a.status, 409u);
  // The call's own reference on "a" went; the earlier one is still there.
  EXPECT_EQ(ModeOf(s, "a"), "Exclusive");
  EXPECT_EQ(
      Call("POST", "/v1/applocks/app/release",
           R"({"session":")" + s + R"(","resource":"a","owner":"Session"})")
          .status,
      200u);
  EXPECT_EQ(ModeOf(s, "a"), "NoLock");
}

TEST_F(AcquireAllTest, OneTimeoutCoversTheWholeCall) {
  const std::string holder = OpenSession("Ravi");
  ASSERT_EQ(Acquire(holder, "b").status, 200u);
  const std::string s = OpenSession("Asha");
  const auto start = SteadyClock::now();
  auto a = AcquireAll(s, {Lock("a"), Lock("b")}, 150);
  const auto took = SteadyClock::now() - start;
  EXPECT_EQ(a.body.at("status").as_string(), "timeout");
  EXPECT_GE(took, milliseconds(140));
  EXPECT_LT(took, milliseconds(5000));
  EXPECT_EQ(ModeOf(s, "a"), "NoLock");
}

TEST_F(AcquireAllTest, WaitsAndIsGrantedWhenTheHolderLetsGo) {
  const std::string holder = OpenSession("Ravi");
  ASSERT_EQ(Acquire(holder, "b").status, 200u);
  const std::string s = OpenSession("Asha");
  auto waiting = StartAcquireAll(s, {Lock("a"), Lock("b")}, 10'000);
  // The engine parked the call on "b" (one wait id for the whole call).
  waiting.parked.get();
  ASSERT_EQ(Call("POST", "/v1/applocks/app/release",
                 R"({"session":")" + holder +
                     R"(","resource":"b","owner":"Session"})")
                .status,
            200u);
  auto a = waiting.Get();
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("result").as_int64(), 1);
  EXPECT_EQ(a.body.at("status").as_string(), "granted_after_wait");
}

TEST_F(AcquireAllTest, HangingUpCancelsTheWaitingCall) {
  const std::string holder = OpenSession("Ravi");
  ASSERT_EQ(Acquire(holder, "b").status, 200u);
  const std::string s = OpenSession("Asha");
  auto waiting = StartAcquireAll(s, {Lock("a"), Lock("b")}, -1);
  // What the connection does when its client goes away.
  service_->CancelWait(waiting.parked.get());
  auto a = waiting.Get();
  EXPECT_EQ(a.status, 409u);
  EXPECT_EQ(a.body.at("status").as_string(), "cancelled");
  EXPECT_EQ(a.body.at("resource").as_string(), "b");
  EXPECT_EQ(a.body.at("released").as_int64(), 1);
  EXPECT_EQ(ModeOf(s, "a"), "NoLock");
}

TEST_F(AcquireAllTest, BadInputIsRefusedBeforeAnythingIsTaken) {
  const std::string s = OpenSession("Asha");
  EXPECT_EQ(AcquireAll(s, {}).code(), "bad_request");
  EXPECT_EQ(AcquireAll(s, {Lock("a"), Lock("a", "Shared")}).code(),
            "bad_request");
  EXPECT_EQ(
      AcquireAll(s, {Lock("a"), Lock("b", "SharedIntentExclusive")}).code(),
      "bad_mode");
  EXPECT_EQ(AcquireAll(s, {Lock("a"), Lock("")}).code(), "name_empty");
  EXPECT_EQ(AcquireAll(s, {Lock("a"), Lock(std::string(256, 'x'))}).code(),
            "name_too_long");
  EXPECT_EQ(AcquireAll(s, {json::value(7)}).code(), "bad_request");
  json::array many;
  for (int i = 0; i < 1001; ++i) many.push_back(Lock("r" + std::to_string(i)));
  EXPECT_EQ(AcquireAll(s, many).code(), "bad_request");
  EXPECT_EQ(AcquireAll(s, {Lock("a")}, -2).code(), "bad_timeout");
  EXPECT_EQ(AcquireAll(s, {Lock("a")}, 0, "Transaction").code(),
            "no_transaction");
  EXPECT_EQ(AcquireAll("999999", {Lock("a")}).code(), "session_not_found");
  EXPECT_EQ(Call("POST", "/v1/applocks/app/acquire-all", "[1]").code(),
            "bad_json");
  EXPECT_EQ(ModeOf(s, "a"), "NoLock");
}

TEST_F(AcquireAllTest, AConversionIsRefusedBecauseItCouldNotBeUndone) {
  const std::string s = OpenSession("Asha");
  ASSERT_EQ(Acquire(s, "a", "Shared").status, 200u);
  auto a = AcquireAll(s, {Lock("a", "Exclusive"), Lock("b")});
  EXPECT_EQ(a.code(), "bad_request");
  EXPECT_EQ(ModeOf(s, "a"), "Shared");
  EXPECT_EQ(ModeOf(s, "b"), "NoLock");
  // The same or a weaker mode is a counted re-acquisition: fine.
  EXPECT_EQ(AcquireAll(s, {Lock("a", "IntentShared"), Lock("b")}).status, 200u);
}

TEST_F(AcquireAllTest, TransactionOwnedLocksGoAtCommit) {
  const std::string s = OpenSession("Asha");
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
  ASSERT_EQ(AcquireAll(s, {Lock("a"), Lock("b")}, 0, "Transaction").status,
            200u);
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction/commit").status,
            200u);
  EXPECT_TRUE(
      Call("GET", "/v1/applocks/app").body.at("locks").as_array().empty());
}

}  // namespace
}  // namespace leasehold::server
