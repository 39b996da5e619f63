// docs/api.md, "Idempotent operations and the outbox", against a real
// `leasehold serve` over real HTTP on loopback: the retry after a lost
// response, SIGKILL between commit and answer, a consumer crash, a late ack,
// dead letters, the events and the metrics.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;

std::string Str(const json::value& v, std::string_view key) {
  return std::string(v.at(key).as_string());
}
std::int64_t Int(const json::value& v, std::string_view key) {
  return v.at(key).to_number<std::int64_t>();
}

class OutboxContractTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }

  void Start(const std::vector<std::string>& env = {}) {
    std::ofstream(dir_.File("config.json"))
        << R"({"namespaces":{"fragile":{"outbox_max_attempts":2}}})";
    server_ = std::make_unique<ServerProcess>(dir_.File("data"),
                                              dir_.File("config.json"), env);
  }

  std::uint16_t port() const { return server_->port(); }

  static std::string OpenSession(HttpClient& c, const std::string& name) {
    auto a = c.Request("POST", api::SessionsPath(),
                       api::OpenSessionBody(name, milliseconds(60'000)));
    EXPECT_EQ(a.status, 201u) << a.body;
    return a.status == 201 ? Str(a.json, "id") : "";
  }

  // One finalization as an application would run it: begin the operation;
  // if new, complete it and enqueue its effect in the same transaction.
  // Returns the begin answer.
  static HttpAnswer Finalize(HttpClient& c, const std::string& s,
                             const std::string& invoice, bool commit) {
    EXPECT_EQ(c.Request("POST", api::TransactionPath(s)).status, 201u);
    auto begin =
        c.Request("POST", api::OperationPath("billing", invoice, "begin"),
                  api::BeginOperationBody(s));
    EXPECT_EQ(begin.status, 200u) << begin.body;
    if (Str(begin.json, "state") == "new") {
      auto done = c.Request(
          "POST", api::OperationPath("billing", invoice, "complete"),
          api::CompleteOperationBody(
              s, json::object{{"invoice", invoice}, {"total", 1250}}));
      EXPECT_EQ(done.status, 200u) << done.body;
      auto enq =
          c.Request("POST", api::OutboxPath("billing", "mail"),
                    api::EnqueueBody("receipt-" + invoice,
                                     json::object{{"invoice", invoice}}, s));
      EXPECT_EQ(enq.status, 201u) << enq.body;
    }
    EXPECT_EQ(c.Request("POST",
                        api::TransactionPath(s, commit ? "commit" : "rollback"))
                  .status,
              200u);
    return begin;
  }

  static json::object Counts(HttpClient& c, const std::string& ns = "billing",
                             const std::string& topic = "mail") {
    auto a = c.Request("GET", api::OutboxPath(ns, topic));
    EXPECT_EQ(a.status, 200u) << a.body;
    return a.json.as_object();
  }

  static json::array Claim(HttpClient& c, const std::string& consumer,
                           int lease_ms, const std::string& ns = "billing") {
    auto a = c.Request("POST", api::OutboxPath(ns, "mail", "claim"),
                       api::ClaimBody(consumer, 10, milliseconds(lease_ms)));
    EXPECT_EQ(a.status, 200u) << a.body;
    return a.json.at("messages").as_array();
  }

  static HttpAnswer Ack(HttpClient& c, const json::value& m,
                        const std::string& ns = "billing") {
    return c.Request("POST", api::OutboxPath(ns, "mail", "ack"),
                     api::AckBody(m.at("id").to_number<std::int64_t>(),
                                  m.at("claim_token").as_string()));
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(OutboxContractTest, ARetryAfterALostResponseGetsTheStoredOutcome) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "worker");
  // The first attempt commits; its answers are "lost" (the worker retries).
  EXPECT_EQ(Str(Finalize(c, s, "481", true).json, "state"), "new");
  auto retry = Finalize(c, s, "481", true);
  EXPECT_EQ(Str(retry.json, "state"), "completed");
  EXPECT_EQ(Str(retry.json.at("outcome"), "invoice"), "481");
  EXPECT_EQ(Int(retry.json.at("outcome"), "total"), 1250);
  EXPECT_TRUE(retry.json.at("completed_at").is_string());
  json::object counts = Counts(c);
  EXPECT_EQ(Int(counts, "pending"), 1) << "one effect, not two";
}

TEST_F(OutboxContractTest, SigkillAfterCommitKeepsTheOutcomeAndTheMessage) {
  {
    HttpClient c(port());
    const std::string s = OpenSession(c, "worker");
    Finalize(c, s, "17", true);
    // An uncommitted attempt at another invoice is lost with the process.
    ASSERT_EQ(c.Request("POST", api::TransactionPath(s)).status, 201u);
    ASSERT_EQ(c.Request("POST", api::OutboxPath("billing", "mail"),
                        api::EnqueueBody("receipt-18",
                                         json::object{{"invoice", "18"}}, s))
                  .status,
              201u);
    server_->Kill();
  }
  Start();
  HttpClient c(port());
  const std::string s = OpenSession(c, "worker");
  EXPECT_EQ(Str(Finalize(c, s, "17", true).json, "state"), "completed");
  json::array got = Claim(c, "sender", 30'000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Str(got[0], "key"), "receipt-17");
  EXPECT_EQ(Ack(c, got[0]).status, 200u);
}

TEST_F(OutboxContractTest, SigkillBetweenCommitAndAnswerLosesOnlyTheAnswer) {
  // The fault point kills the server once the commit is on disk and before
  // its answer is written: the client sees a dropped connection, exactly
  // like a crash at the worst moment.
  server_.reset();
  Start({"LEASEHOLD_FAULT=commit.durable"});
  {
    HttpClient c(port());
    const std::string s = OpenSession(c, "worker");
    ASSERT_EQ(c.Request("POST", api::TransactionPath(s)).status, 201u);
    ASSERT_EQ(
        Str(c.Request("POST", api::OperationPath("billing", "77", "begin"),
                      api::BeginOperationBody(s))
                .json,
            "state"),
        "new");
    ASSERT_EQ(
        c.Request("POST", api::OperationPath("billing", "77", "complete"),
                  api::CompleteOperationBody(s, json::object{{"total", 77}}))
            .status,
        200u);
    ASSERT_EQ(c.Request("POST", api::OutboxPath("billing", "mail"),
                        api::EnqueueBody("receipt-77",
                                         json::object{{"invoice", "77"}}, s))
                  .status,
              201u);
    EXPECT_ANY_THROW(c.Request("POST", api::TransactionPath(s, "commit")))
        << "the commit was answered: the fault point did not fire";
  }
  const int status = server_->Wait();
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

  Start();
  HttpClient c(port());
  const std::string s = OpenSession(c, "worker");
  auto retry = Finalize(c, s, "77", true);
  EXPECT_EQ(Str(retry.json, "state"), "completed") << retry.body;
  EXPECT_EQ(Int(retry.json.at("outcome"), "total"), 77);
  EXPECT_EQ(Int(Counts(c), "pending"), 1) << "the effect is there, once";
  json::array got = Claim(c, "sender", 30'000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Str(got[0], "key"), "receipt-77");
}

TEST_F(OutboxContractTest, AConsumerCrashIsDeliveredAgainAndAckedOnce) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "worker");
  Finalize(c, s, "5", true);
  json::array first = Claim(c, "crashes", 200);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(Int(first[0], "attempt"), 1);
  EXPECT_TRUE(Claim(c, "other", 200).empty()) << "claimed until expiry";
  std::this_thread::sleep_for(milliseconds(300));
  json::array second = Claim(c, "recovers", 30'000);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(Int(second[0], "attempt"), 2);
  EXPECT_EQ(second[0].at("id"), first[0].at("id"));
  // The crashed consumer's late ack is refused; the second is taken once.
  auto late = Ack(c, first[0]);
  EXPECT_EQ(late.status, 423u) << late.body;
  EXPECT_EQ(Str(late.json, "reason"), "not_owner");
  auto ok = Ack(c, second[0]);
  ASSERT_EQ(ok.status, 200u);
  EXPECT_FALSE(ok.json.at("already").as_bool());
  EXPECT_TRUE(Ack(c, second[0]).json.at("already").as_bool());
  json::object counts = Counts(c);
  EXPECT_EQ(
      Int(counts, "pending") + Int(counts, "claimed") + Int(counts, "dead"), 0);
}

TEST_F(OutboxContractTest, AnAckAfterTheClaimExpiredIs423Expired) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("POST", api::OutboxPath("billing", "mail"),
                      api::EnqueueBody("k", json::object{{"n", 1}}, ""))
                .status,
            201u);
  json::array got = Claim(c, "slow", 100);
  ASSERT_EQ(got.size(), 1u);
  std::this_thread::sleep_for(milliseconds(200));
  auto late = Ack(c, got[0]);
  EXPECT_EQ(late.status, 423u);
  EXPECT_EQ(Str(late.json, "reason"), "expired");
  EXPECT_FALSE(late.json.at("acked").as_bool());
}

TEST_F(OutboxContractTest, AfterMaxAttemptsAMessageIsADeadLetter) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("POST", api::OutboxPath("fragile", "mail"),
                      api::EnqueueBody("k", json::object{{"n", 1}}, ""))
                .status,
            201u);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_EQ(Claim(c, "c", 50, "fragile").size(), 1u);
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(Claim(c, "c", 50, "fragile").empty());
  json::object counts = Counts(c, "fragile");
  EXPECT_EQ(Int(counts, "dead"), 1);
  EXPECT_EQ(Int(counts, "pending"), 0);
  const json::array& dead = counts.at("dead_letters").as_array();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(Str(dead[0], "key"), "k");
  EXPECT_EQ(Int(dead[0], "attempts"), 2);
  EXPECT_EQ(Int(dead[0].at("payload"), "n"), 1);
}

TEST_F(OutboxContractTest, EnqueueIsAnnouncedAsAnEvent) {
  HttpClient watcher(port());
  watcher.Send("GET", api::EventsPath("billing"));
  watcher.ReadStreamUntil("\n\n", milliseconds(500));
  HttpClient c(port());
  ASSERT_EQ(c.Request("POST", api::OutboxPath("billing", "mail"),
                      api::EnqueueBody("k", json::object{{"n", 1}}, ""))
                .status,
            201u);
  const std::string seen =
      watcher.ReadStreamUntil("outbox.enqueued", milliseconds(3000));
  EXPECT_NE(seen.find("event: outbox.enqueued"), std::string::npos) << seen;
  EXPECT_NE(seen.find(R"("topic":"mail")"), std::string::npos) << seen;
  const std::string metrics = c.Request("GET", "/metrics").body;
  EXPECT_NE(
      metrics.find(R"(leasehold_outbox_messages_total{event="enqueued"} 1)"),
      std::string::npos)
      << metrics;
}

}  // namespace
}  // namespace leasehold::testing
