// /v1/semaphores through Api::Handle: acquire, release, the listings, a
// parked request answered when permits come back, and every refusal.
#include <future>
#include <memory>

#include "server/api_test_fixture.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

class SemaphoreApiTest : public ApiTest {
 protected:
  static std::string Body(const std::string& session, json::object fields) {
    fields["session"] = session;
    if (!fields.contains("owner")) fields["owner"] = "Session";
    return json::serialize(fields);
  }
  Answer Acquire(const std::string& session, json::object fields,
                 const std::string& name = "payments") {
    return Call("POST", "/v1/semaphores/app/" + name + "/acquire",
                Body(session, std::move(fields)));
  }
  Answer Release(const std::string& session, json::object fields = {},
                 const std::string& name = "payments") {
    return Call("POST", "/v1/semaphores/app/" + name + "/release",
                Body(session, std::move(fields)));
  }
  std::string Message(const Answer& a) {
    return std::string(a.body.at("error").at("message").as_string());
  }
};

TEST_F(SemaphoreApiTest, AcquireReleaseAndTheListings) {
  const std::string a = OpenSession("Asha"), b = OpenSession("Ravi");
  auto first = Acquire(a, {{"permits", 2}, {"limit", 3}});
  ASSERT_EQ(first.status, 200u) << json::serialize(first.body);
  EXPECT_EQ(first.body.at("result").as_int64(), 0);
  EXPECT_EQ(first.body.at("status").as_string(), "granted");
  EXPECT_EQ(first.body.at("permits").as_int64(), 2);
  const auto fence = first.body.at("fence").as_int64();
  auto second = Acquire(b, {{"limit", 3}});  // permits default to 1
  ASSERT_EQ(second.status, 200u);
  EXPECT_EQ(second.body.at("permits").as_int64(), 1);
  EXPECT_GT(second.body.at("fence").as_int64(), fence);
  auto full = Acquire(b, {{"limit", 3}, {"timeout_ms", 0}});
  EXPECT_EQ(full.status, 409u);
  EXPECT_EQ(full.body.at("result").as_int64(), -1);

  auto list = Call("GET", "/v1/semaphores/app");
  ASSERT_EQ(list.status, 200u);
  const auto& sems = list.body.at("semaphores").as_array();
  ASSERT_EQ(sems.size(), 1u);
  EXPECT_EQ(sems[0].at("name").as_string(), "payments");
  EXPECT_EQ(sems[0].at("limit").as_int64(), 3);
  EXPECT_EQ(sems[0].at("held").as_int64(), 3);
  ASSERT_EQ(sems[0].at("holders").as_array().size(), 2u);
  EXPECT_EQ(sems[0].at("holders").as_array()[0].at("session_name").as_string(),
            "Asha");
  EXPECT_EQ(sems[0].at("holders").as_array()[0].at("permits").as_int64(), 2);
  auto one = Call("GET", "/v1/semaphores/app/payments");
  ASSERT_EQ(one.status, 200u);
  EXPECT_EQ(one.body.at("held").as_int64(), 3);
  // Semaphores are not application locks.
  EXPECT_TRUE(
      Call("GET", "/v1/applocks/app").body.at("locks").as_array().empty());

  auto some = Release(a, {{"permits", 1}});
  ASSERT_EQ(some.status, 200u) << json::serialize(some.body);
  EXPECT_EQ(some.body.at("permits").as_int64(), 1);
  auto rest = Release(a);
  ASSERT_EQ(rest.status, 200u);
  EXPECT_EQ(rest.body.at("permits").as_int64(), 0);
  ASSERT_EQ(Release(b).status, 200u);
  auto gone = Call("GET", "/v1/semaphores/app/payments");
  EXPECT_EQ(gone.status, 404u);
  EXPECT_EQ(gone.code(), "not_found");
}

TEST_F(SemaphoreApiTest, AParkedRequestIsAnsweredWhenPermitsComeBack) {
  const std::string a = OpenSession("Asha"), b = OpenSession("Ravi");
  ASSERT_EQ(Acquire(a, {{"permits", 1}, {"limit", 1}}).status, 200u);
  auto parked = std::make_shared<std::promise<WaitId>>();
  auto answer = std::make_shared<std::promise<ApiResponse>>();
  api_->Handle({"POST", "/v1/semaphores/app/payments/acquire",
                Body(b, {{"limit", 1}, {"timeout_ms", 30000}}), "",
                [parked](WaitId w) { parked->set_value(w); }},
               [answer](ApiResponse r) { answer->set_value(std::move(r)); });
  parked->get_future().get();
  auto list = Call("GET", "/v1/semaphores/app/payments");
  ASSERT_EQ(list.body.at("waiting").as_array().size(), 1u);
  EXPECT_EQ(list.body.at("waiting").as_array()[0].at("permits").as_int64(), 1);
  ASSERT_EQ(Release(a).status, 200u);
  ApiResponse r = answer->get_future().get();
  EXPECT_EQ(r.status, 200u) << r.body;
  auto body = json::parse(r.body);
  EXPECT_EQ(body.at("result").as_int64(), 1);
  EXPECT_EQ(body.at("status").as_string(), "granted_after_wait");
  EXPECT_EQ(body.at("permits").as_int64(), 1);
}

TEST_F(SemaphoreApiTest, RefusalsSayWhy) {
  const std::string a = OpenSession("Asha"), b = OpenSession("Ravi");
  auto no_limit = Acquire(a, {});
  EXPECT_EQ(no_limit.status, 400u);
  EXPECT_EQ(no_limit.code(), "bad_request");
  EXPECT_NE(Message(no_limit).find("limit is required"), std::string::npos);
  EXPECT_EQ(Acquire(a, {{"limit", 0}}).code(), "bad_request");
  EXPECT_EQ(Acquire(a, {{"limit", "3"}}).code(), "bad_request");
  EXPECT_EQ(Acquire(a, {{"limit", 4294967297LL}}).code(), "bad_request");
  EXPECT_EQ(Acquire(a, {{"limit", 2}, {"permits", 3}}).code(), "bad_request");
  EXPECT_EQ(Acquire(a, {{"limit", 2}, {"permits", -1}}).code(), "bad_request");
  EXPECT_EQ(Acquire(a, {{"limit", 2}, {"timeout_ms", -5}}).code(),
            "bad_timeout");
  EXPECT_EQ(Acquire(a, {{"limit", 2}, {"owner", "Nobody"}}).code(),
            "bad_owner");
  EXPECT_EQ(Acquire(a, {{"limit", 2}, {"owner", "Transaction"}}).code(),
            "no_transaction");
  EXPECT_EQ(Acquire("999", {{"limit", 2}}).code(), "session_not_found");
  EXPECT_EQ(Call("POST", "/v1/semaphores/app/payments/acquire", "[1]").code(),
            "bad_json");

  ASSERT_EQ(Acquire(a, {{"limit", 2}}).status, 200u);
  auto mismatch = Acquire(b, {{"limit", 5}});
  EXPECT_EQ(mismatch.status, 409u);
  EXPECT_EQ(mismatch.code(), "limit_mismatch");
  EXPECT_NE(Message(mismatch).find("limit 2, not 5"), std::string::npos);

  auto lock = Call("POST", "/v1/applocks/app/acquire",
                   Body(b, {{"resource", "payments"}, {"mode", "Exclusive"}}));
  EXPECT_EQ(lock.status, 409u);
  EXPECT_EQ(lock.code(), "wrong_kind");
  EXPECT_NE(Message(lock).find("semaphore"), std::string::npos);

  EXPECT_EQ(Release(b).code(), "not_held");
  EXPECT_EQ(Release(a, {{"permits", 2}}).code(), "bad_request");
  EXPECT_EQ(Release(a, {{"permits", 0}}).code(), "bad_request");
  EXPECT_EQ(Release(a, {{"permits", "all"}}).code(), "bad_request");
  EXPECT_EQ(Call("GET", "/v1/semaphores/app/x?principal=%FF").status, 404u);
}

}  // namespace
}  // namespace leasehold::server
