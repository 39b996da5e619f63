// docs/api.md "Transactions" over real HTTP: Transaction-owned locks end at
// commit and rollback; record writes in a transaction are staged, re-checked
// at commit and durable once the commit is answered.
#include <gtest/gtest.h>

#include <string>

#include "client/api_codec.h"
#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;

// /v1/sessions/{id}/transaction (handlers_sessions.cc).
class TransactionsApiTest : public ApiContractTest {};

TEST_F(TransactionsApiTest, TransactionOwnedLocksEndAtCommitAndAtRollback) {
  HttpClient a(port()), b(port());
  const std::string sa = OpenSession(a, "Asha"), sb = OpenSession(b, "Ravi");
  const std::string txn = "/v1/sessions/" + sa + "/transaction";
  // Transaction is the default owner, and needs an open transaction.
  EXPECT_TRUE(IsError(a.Request("POST", "/v1/applocks/app/acquire",
                                R"({"session":")" + sa +
                                    R"(","resource":"t1","mode":"Shared"})"),
                      400, "no_transaction"));
  EXPECT_TRUE(
      IsError(a.Request("POST", txn + "/commit"), 400, "no_transaction"));
  EXPECT_TRUE(
      IsError(a.Request("POST", txn + "/rollback"), 400, "no_transaction"));

  auto begun = a.Request("POST", txn);
  ASSERT_EQ(begun.status, 201u) << begun.body;
  EXPECT_TRUE(Has(begun.json, "transaction", Kind::kInt));
  EXPECT_TRUE(Has(begun.json, "started_at", Kind::kTime));
  EXPECT_TRUE(IsError(a.Request("POST", txn), 409, "transaction_open"));

  auto t1 = a.Request(
      "POST", "/v1/applocks/app/acquire",
      R"({"session":")" + sa + R"(","resource":"t1","mode":"Exclusive"})");
  ASSERT_EQ(t1.status, 200u) << t1.body;
  ASSERT_EQ(Acquire(a, sa, "s1", "Exclusive", "Session").status, 200u);
  EXPECT_EQ(ModeOf(a, sa, "t1", "Transaction"), "Exclusive");
  EXPECT_EQ(ModeOf(a, sa, "t1", "Session"), "NoLock");
  EXPECT_EQ(Test(b, sb, "t1", "Shared"), false);

  EXPECT_EQ(a.Request("POST", txn + "/commit").status, 200u);
  EXPECT_TRUE(IsError(
      a.Request("GET", api::ModePath("app", sa, "t1", "Transaction", "public")),
      400, "no_transaction"));
  EXPECT_EQ(ModeOf(a, sa, "s1", "Session"), "Exclusive")
      << "a Session-owned lock survives the commit";
  EXPECT_EQ(Acquire(b, sb, "t1", "Exclusive", "Session", 0).status, 200u);
  EXPECT_TRUE(
      IsError(a.Request("POST", txn + "/commit"), 400, "no_transaction"));

  auto again = a.Request("POST", txn);
  ASSERT_EQ(again.status, 201u) << again.body;
  ASSERT_EQ(Acquire(a, sa, "t2", "Update", "Transaction").status, 200u);
  EXPECT_EQ(Test(b, sb, "t2", "Update"), false);
  EXPECT_EQ(a.Request("POST", txn + "/rollback").status, 200u);
  EXPECT_EQ(Test(b, sb, "t2", "Exclusive"), true) << "released by the rollback";
  EXPECT_EQ(ModeOf(a, sa, "s1", "Session"), "Exclusive")
      << "a Session-owned lock survives the rollback";
  EXPECT_EQ(Acquire(b, sb, "t2", "Update", "Session", 0).status, 200u);
  EXPECT_TRUE(
      IsError(a.Request("POST", txn + "/rollback"), 400, "no_transaction"));
}

// docs/api.md, "Transactions": in a transaction ("session" field with an
// open transaction), save, PUT and DELETE are staged and applied at commit,
// and a staged write answers 202 {"staged":true,"staged_writes":n}:
// accepted, not yet applied, so no
// "version" and no "saved"/"deleted" (an earlier draft of this test expected
// 201 and 200, the answers of an applied write, which would tell a client
// that checks the status that its write is done when it is not). Refusals
// at staging answer as the direct write does (423 with a reason, 409
// exists, 404). The commit's 200 lists what it applied, with versions.
TEST_F(TransactionsApiTest, RecordWritesInATransactionAreStaged) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "Asha");
  const std::string txn = "/v1/sessions/" + s + "/transaction";
  ASSERT_EQ(c.Request("PUT", "/v1/records/tx/kept", R"({"body":"v1"})").status,
            201u);
  ASSERT_EQ(
      c.Request("PUT", "/v1/records/tx/doomed", R"({"body":"v1"})").status,
      201u);
  for (const std::string k : {"kept", "doomed"}) {
    ASSERT_EQ(c.Request("POST", "/v1/records/tx/" + k + "/checkout",
                        R"({"owner":"Asha"})")
                  .status,
              200u);
  }
  // A "session" without an open transaction is refused, not applied.
  EXPECT_TRUE(IsError(c.Request("PUT", "/v1/records/tx/new",
                                J({{"session", s}, {"body", "fresh"}})),
                      400, "no_transaction"));
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/new").status, 404u);

  // Commit: staged PUT, save and DELETE are invisible until the commit.
  ASSERT_EQ(c.Request("POST", txn).status, 201u);
  auto put = c.Request("PUT", "/v1/records/tx/new",
                       J({{"session", s}, {"body", "fresh"}}));
  EXPECT_EQ(put.status, 202u) << put.body;
  EXPECT_TRUE(Has(put.json, "staged", Kind::kBool));
  EXPECT_EQ(Int(put.json, "staged_writes"), 1);
  EXPECT_FALSE(put.json.as_object().contains("version"));
  auto save = c.Request("POST", "/v1/records/tx/kept/save",
                        J({{"session", s}, {"owner", "Asha"}, {"body", "v2"}}));
  EXPECT_EQ(save.status, 202u) << save.body;
  EXPECT_FALSE(save.json.as_object().contains("version"));
  EXPECT_EQ(c.Request("DELETE", "/v1/records/tx/doomed",
                      J({{"session", s}, {"owner", "Asha"}}))
                .status,
            202u);
  EXPECT_TRUE(IsError(c.Request("PUT", "/v1/records/tx/kept",
                                J({{"session", s}, {"body", "dup"}})),
                      409, "exists"));
  auto sessions = c.Request("GET", "/v1/sessions");
  EXPECT_EQ(Int(sessions.json.at("sessions").at(0).at("transaction"),
                "staged_writes"),
            3);
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/new").status, 404u);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/tx/kept").json, "body"), "v1");
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/doomed").status, 200u);
  auto committed = c.Request("POST", txn + "/commit");
  ASSERT_EQ(committed.status, 200u) << committed.body;
  const auto& applied = committed.json.at("applied").as_array();
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(Str(applied[0], "op"), "insert");
  EXPECT_EQ(Str(applied[0], "key"), "new");
  EXPECT_EQ(Int(applied[0], "version"), 1);
  EXPECT_EQ(Str(applied[1], "op"), "save");
  EXPECT_EQ(Int(applied[1], "version"), 2);
  EXPECT_EQ(Str(applied[2], "op"), "delete");
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/tx/new").json, "body"), "fresh");
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/tx/kept").json, "body"), "v2");
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/doomed").status, 404u);

  // Rollback: staged writes are discarded.
  ASSERT_EQ(c.Request("POST", txn).status, 201u);
  EXPECT_EQ(c.Request("PUT", "/v1/records/tx/never",
                      J({{"session", s}, {"body", "x"}}))
                .status,
            202u);
  EXPECT_EQ(c.Request("POST", "/v1/records/tx/kept/save",
                      J({{"session", s}, {"owner", "Asha"}, {"body", "v3"}}))
                .status,
            202u);
  auto refused = c.Request("DELETE", "/v1/records/tx/new",
                           J({{"session", s}, {"owner", "Asha"}}));
  EXPECT_EQ(refused.status, 423u)
      << "not checked out: refused even when staged";
  EXPECT_EQ(Str(refused.json, "reason"), "not_owner");
  ASSERT_EQ(c.Request("POST", txn + "/rollback").status, 200u);
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/never").status, 404u);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/tx/kept").json, "body"), "v2");
}

// Commit re-checks every staged write; one that can no longer apply (here:
// its lease was broken) refuses the commit with 409 transaction_aborted,
// applies nothing and rolls the transaction back.
TEST_F(TransactionsApiTest, ACommitWhoseLeaseWasLostAppliesNothing) {
  HttpClient c(port());
  const std::string s = OpenSession(c, "Asha");
  const std::string txn = "/v1/sessions/" + s + "/transaction";
  ASSERT_EQ(c.Request("PUT", "/v1/records/tx/doc", R"({"body":"v1"})").status,
            201u);
  ASSERT_EQ(
      c.Request("POST", "/v1/records/tx/doc/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  ASSERT_EQ(c.Request("POST", txn).status, 201u);
  ASSERT_EQ(c.Request("PUT", "/v1/records/tx/other",
                      J({{"session", s}, {"body", "x"}}))
                .status,
            202u);
  ASSERT_EQ(c.Request("POST", "/v1/records/tx/doc/save",
                      J({{"session", s}, {"owner", "Asha"}, {"body", "v2"}}))
                .status,
            202u);
  ASSERT_EQ(c.Request("POST", "/v1/records/tx/doc/break").status, 200u);
  auto commit = c.Request("POST", txn + "/commit");
  EXPECT_TRUE(IsError(commit, 409, "transaction_aborted"));
  EXPECT_NE(commit.body.find("lease_lost"), std::string::npos) << commit.body;
  EXPECT_EQ(c.Request("GET", "/v1/records/tx/other").status, 404u);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/tx/doc").json, "body"), "v1");
  EXPECT_TRUE(
      IsError(c.Request("POST", txn + "/rollback"), 400, "no_transaction"))
      << "the refused commit rolled the transaction back";
}

// Acknowledged means durable: kill -9 right after the commit's answer keeps
// every staged write; kill -9 before the commit keeps none (a restart
// keeps sessions but loses their open transactions).
TEST_F(TransactionsApiTest,
       ACommittedTransactionSurvivesKill9AndAnOpenOneDoesNot) {
  {
    HttpClient c(port());
    const std::string s = OpenSession(c, "Asha");
    const std::string txn = "/v1/sessions/" + s + "/transaction";
    ASSERT_EQ(
        c.Request("PUT", "/v1/records/k9/kept", R"({"body":"v1"})").status,
        201u);
    ASSERT_EQ(c.Request("POST", "/v1/records/k9/kept/checkout",
                        R"({"owner":"Asha","ttl_ms":600000})")
                  .status,
              200u);
    ASSERT_EQ(c.Request("POST", txn).status, 201u);
    for (int i = 0; i < 20; ++i) {
      ASSERT_EQ(c.Request("PUT", "/v1/records/k9/n" + std::to_string(i),
                          J({{"session", s}, {"body", "b"}}))
                    .status,
                202u);
    }
    ASSERT_EQ(c.Request("POST", "/v1/records/k9/kept/save",
                        J({{"session", s}, {"owner", "Asha"}, {"body", "v2"}}))
                  .status,
              202u);
    ASSERT_EQ(c.Request("POST", txn + "/commit").status, 200u);
    server_->Kill();
  }
  Start();
  {
    HttpClient c(port());
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(c.Request("GET", "/v1/records/k9/n" + std::to_string(i)).status,
                200u)
          << i;
    }
    auto kept = c.Request("GET", "/v1/records/k9/kept");
    EXPECT_EQ(Str(kept.json, "body"), "v2");
    EXPECT_EQ(Int(kept.json, "version"), 2);

    const std::string s = OpenSession(c, "Asha");
    const std::string txn = "/v1/sessions/" + s + "/transaction";
    ASSERT_EQ(c.Request("POST", txn).status, 201u);
    ASSERT_EQ(c.Request("PUT", "/v1/records/k9/uncommitted",
                        J({{"session", s}, {"body", "x"}}))
                  .status,
              202u);
    ASSERT_EQ(c.Request("POST", "/v1/records/k9/kept/save",
                        J({{"session", s}, {"owner", "Asha"}, {"body", "v3"}}))
                  .status,
              202u);
    server_->Kill();
  }
  Start();
  HttpClient c(port());
  EXPECT_EQ(c.Request("GET", "/v1/records/k9/uncommitted").status, 404u);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/k9/kept").json, "body"), "v2");
}

}  // namespace
}  // namespace leasehold::testing
