// docs/api.md, "Idempotent operations and the outbox", through Api::Handle over
// a real engine service and SQLite file.
#include <gtest/gtest.h>

#include "server/api.h"
#include "server/api_test_fixture.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

class OutboxApiTest : public ApiTest {
 protected:
  std::string Begin(const std::string& name) {
    const std::string s = OpenSession(name);
    EXPECT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
    return s;
  }
  Answer BeginOp(const std::string& s, const std::string& op) {
    return Call("POST", "/v1/operations/pay/" + op + "/begin",
                R"({"session":")" + s + "\"}");
  }
  Answer Commit(const std::string& s) {
    return Call("POST", "/v1/sessions/" + s + "/transaction/commit");
  }
  Answer Claim(const std::string& consumer, int lease_ms = 30000) {
    return Call("POST", "/v1/outbox/pay/mail/claim",
                R"({"consumer":")" + consumer + R"(","max":10,"lease_ms":)" +
                    std::to_string(lease_ms) + "}");
  }
  Answer Ack(std::uint64_t id, const std::string& token) {
    return Call("POST", "/v1/outbox/pay/mail/ack",
                R"({"id":)" + std::to_string(id) + R"(,"claim_token":")" +
                    token + "\"}");
  }
};

TEST_F(OutboxApiTest, ARetriedOperationGetsTheStoredOutcome) {
  const std::string s = Begin("worker");
  auto first = BeginOp(s, "inv-481");
  ASSERT_EQ(first.status, 200u);
  EXPECT_EQ(first.body.at("state"), "new");
  auto done = Call("POST", "/v1/operations/pay/inv-481/complete",
                   R"({"session":")" + s +
                       R"(","outcome":{"invoice":481,"total":"12.50"}})");
  ASSERT_EQ(done.status, 200u) << json::serialize(done.body);
  auto enq = Call("POST", "/v1/outbox/pay/mail",
                  R"({"session":")" + s +
                      R"(","key":"receipt-481","payload":{"to":"a@b"}})");
  ASSERT_EQ(enq.status, 201u) << json::serialize(enq.body);
  EXPECT_EQ(enq.body.at("staged"), true);
  auto commit = Commit(s);
  ASSERT_EQ(commit.status, 200u);
  const auto& applied = commit.body.at("applied").as_array();
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0].at("op"), "complete");
  EXPECT_EQ(applied[1].at("op"), "enqueue");
  EXPECT_EQ(applied[1].at("id"), enq.body.at("id"));

  // The retry, in a new transaction: the stored outcome, as JSON.
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
  auto again = BeginOp(s, "inv-481");
  ASSERT_EQ(again.status, 200u);
  EXPECT_EQ(again.body.at("state"), "completed");
  EXPECT_EQ(again.body.at("outcome").at("invoice"), 481);
  EXPECT_TRUE(again.body.at("completed_at").is_string());
  auto twice = Call("POST", "/v1/operations/pay/inv-481/complete",
                    R"({"session":")" + s + R"(","outcome":{}})");
  EXPECT_EQ(twice.status, 409u);
  EXPECT_EQ(twice.code(), "exists");
}

TEST_F(OutboxApiTest, OperationErrors) {
  const std::string s = OpenSession("no-tx");
  EXPECT_EQ(BeginOp(s, "x").code(), "no_transaction");
  EXPECT_EQ(Call("POST", "/v1/operations/pay/x/begin", "{}").code(),
            "bad_request");
  EXPECT_EQ(BeginOp("999999", "x").code(), "session_not_found");
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
  EXPECT_EQ(Call("POST", "/v1/operations/pay/x/complete",
                 R"({"session":")" + s + "\"}")
                .code(),
            "bad_request")
      << "outcome is required";
  EXPECT_EQ(BeginOp(s, std::string(256, 'a')).code(), "name_too_long");
}

TEST_F(OutboxApiTest, EnqueueClaimAckAndCounts) {
  auto a =
      Call("POST", "/v1/outbox/pay/mail", R"({"key":"k1","payload":{"n":1}})");
  ASSERT_EQ(a.status, 201u) << json::serialize(a.body);
  const std::uint64_t id = a.body.at("id").to_number<std::uint64_t>();
  auto dup =
      Call("POST", "/v1/outbox/pay/mail", R"({"key":"k1","payload":{"n":2}})");
  EXPECT_EQ(dup.status, 200u);
  EXPECT_EQ(dup.body.at("duplicate"), true);
  EXPECT_EQ(dup.body.at("id").to_number<std::uint64_t>(), id);

  auto counts = Call("GET", "/v1/outbox/pay/mail");
  ASSERT_EQ(counts.status, 200u);
  EXPECT_EQ(counts.body.at("pending"), 1);

  auto c = Claim("worker-1");
  ASSERT_EQ(c.status, 200u);
  const auto& msgs = c.body.at("messages").as_array();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].at("payload").at("n"), 1);
  EXPECT_EQ(msgs[0].at("attempt"), 1);
  EXPECT_TRUE(msgs[0].at("lease_expires_at").is_string());
  const std::string token(msgs[0].at("claim_token").as_string());
  EXPECT_EQ(Call("GET", "/v1/outbox/pay/mail").body.at("claimed"), 1);

  auto foreign = Ack(id, "not-the-token");
  EXPECT_EQ(foreign.status, 423u);
  EXPECT_EQ(foreign.body.at("reason"), "not_owner");
  auto ok = Ack(id, token);
  ASSERT_EQ(ok.status, 200u);
  EXPECT_EQ(ok.body.at("acked"), true);
  EXPECT_EQ(ok.body.at("already"), false);
  EXPECT_EQ(Ack(id, token).body.at("already"), true);
  EXPECT_EQ(Ack(id + 100, token).status, 404u);
  auto after = Call("GET", "/v1/outbox/pay/mail");
  EXPECT_EQ(after.body.at("pending"), 0);
  EXPECT_EQ(after.body.at("claimed"), 0);
  EXPECT_EQ(after.body.at("dead"), 0);
}

TEST_F(OutboxApiTest, AnAckAfterTheClaimExpiredIsRefused) {
  ASSERT_EQ(
      Call("POST", "/v1/outbox/pay/mail", R"({"key":"k","payload":1})").status,
      201u);
  auto c = Claim("slow", 1);
  ASSERT_EQ(c.status, 200u);
  const auto& m = c.body.at("messages").as_array().at(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto late = Ack(m.at("id").to_number<std::uint64_t>(),
                  std::string(m.at("claim_token").as_string()));
  EXPECT_EQ(late.status, 423u);
  EXPECT_EQ(late.body.at("reason"), "expired");
  auto again = Claim("fast");
  ASSERT_EQ(again.body.at("messages").as_array().size(), 1u);
  EXPECT_EQ(again.body.at("messages").as_array()[0].at("attempt"), 2);
}

TEST_F(OutboxApiTest, ClaimAndEnqueueErrors) {
  EXPECT_EQ(Call("POST", "/v1/outbox/pay/mail", R"({"payload":{}})").code(),
            "bad_request");
  EXPECT_EQ(Call("POST", "/v1/outbox/pay/mail", R"({"key":"k"})").code(),
            "bad_request");
  const std::string s = OpenSession("no-tx");
  EXPECT_EQ(Call("POST", "/v1/outbox/pay/mail",
                 R"({"session":")" + s + R"(","key":"k","payload":{}})")
                .code(),
            "no_transaction");
  EXPECT_EQ(Call("POST", "/v1/outbox/pay/mail/claim", "{}").code(),
            "bad_request");
  EXPECT_EQ(
      Call("POST", "/v1/outbox/pay/mail/claim", R"({"consumer":"c","max":0})")
          .code(),
      "bad_request");
  EXPECT_EQ(Call("POST", "/v1/outbox/pay/mail/claim",
                 R"({"consumer":"c","lease_ms":0})")
                .code(),
            "bad_request");
  EXPECT_EQ(
      Call("POST", "/v1/outbox/pay/mail/ack", R"({"claim_token":"t"})").code(),
      "bad_request");
}

TEST_F(OutboxApiTest, RollbackDiscardsStagedMessages) {
  const std::string s = Begin("worker");
  auto enq = Call("POST", "/v1/outbox/pay/mail",
                  R"({"session":")" + s + R"(","key":"k","payload":{}})");
  ASSERT_EQ(enq.status, 201u);
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction/rollback").status,
            200u);
  EXPECT_EQ(Call("GET", "/v1/outbox/pay/mail").body.at("pending"), 0);
  EXPECT_TRUE(Claim("c").body.at("messages").as_array().empty());
}

}  // namespace
}  // namespace leasehold::server
