// docs/api.md "Records and checkouts" over real HTTP: put and get, checkout,
// tokens, save, check-in, delete, expiry, list paging, purge, break, fences
// across restarts, and the seed's two walkthroughs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using SysTime = std::chrono::system_clock::time_point;

// /v1/records/{ns}/... (handlers_records.cc).
class RecordsApiTest : public ApiContractTest {};

TEST_F(RecordsApiTest, PutAndGetAnswerEveryDocumentedField) {
  HttpClient c(port());
  auto put =
      c.Request("PUT", "/v1/records/docs/17", R"({"body":"First draft"})");
  ASSERT_EQ(put.status, 201u) << put.body;
  EXPECT_EQ(Int(put.json, "version"), 1);
  EXPECT_TRUE(
      IsError(c.Request("PUT", "/v1/records/docs/17", R"({"body":"again"})"),
              409, "exists"));
  auto got = c.Request("GET", "/v1/records/docs/17");
  ASSERT_EQ(got.status, 200u);
  EXPECT_EQ(Str(got.json, "key"), "17");
  EXPECT_EQ(Str(got.json, "body"), "First draft");
  EXPECT_EQ(Int(got.json, "version"), 1);
  EXPECT_TRUE(Has(got.json, "locked_by", Kind::kNull));
  EXPECT_TRUE(Has(got.json, "lock_expires_at", Kind::kNull));
  EXPECT_EQ(Str(got.json, "state"), "free");
  EXPECT_TRUE(Has(got.json, "fence", Kind::kInt));
  EXPECT_EQ(Int(got.json, "write_fence"), 0);

  auto co = c.Request("POST", "/v1/records/docs/17/checkout",
                      R"({"owner":"Asha","ttl_ms":60000})");
  ASSERT_EQ(co.status, 200u);
  got = c.Request("GET", "/v1/records/docs/17");
  EXPECT_EQ(Str(got.json, "locked_by"), "Asha");
  EXPECT_TRUE(Has(got.json, "lock_expires_at", Kind::kTime));
  EXPECT_EQ(Str(got.json, "lock_expires_at"), Str(co.json, "expires_at"));
  EXPECT_EQ(Str(got.json, "state"), "locked");
  EXPECT_EQ(Int(got.json, "fence"), Int(co.json, "fence"));
  EXPECT_EQ(Str(got.json, "body"), "First draft");

  EXPECT_TRUE(
      IsError(c.Request("GET", "/v1/records/docs/18"), 404, "not_found"));
  EXPECT_TRUE(
      IsError(c.Request("GET", "/v1/records/never/17"), 404, "not_found"));
  // A checkout on a key without a record is a plain visible lock.
  ASSERT_EQ(
      c.Request("POST", "/v1/records/docs/bare/checkout", R"({"owner":"Ravi"})")
          .status,
      200u);
  auto bare = c.Request("GET", "/v1/records/docs/bare");
  ASSERT_EQ(bare.status, 200u) << bare.body;
  EXPECT_EQ(Str(bare.json, "locked_by"), "Ravi");
  EXPECT_EQ(Str(bare.json, "state"), "locked");
  EXPECT_EQ(
      c.Request("PUT", "/v1/records/docs/bare", R"({"body":"now a record"})")
          .status,
      201u)
      << "a lease without a record does not make PUT answer exists";
}

TEST_F(RecordsApiTest, CheckoutGrantsRefusesAndRenews) {
  HttpClient c(port());
  const SysTime before = std::chrono::system_clock::now();
  auto first = c.Request("POST", "/v1/records/docs/1/checkout",
                         R"({"owner":"Asha","ttl_ms":60000})");
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(first.json.at("granted"), json::value(true));
  EXPECT_TRUE(Has(first.json, "token", Kind::kString));
  EXPECT_FALSE(Str(first.json, "token").empty());
  EXPECT_TRUE(Has(first.json, "fence", Kind::kInt));
  ASSERT_TRUE(Has(first.json, "expires_at", Kind::kTime));
  const SysTime expires = TimeOf(first.json, "expires_at");
  EXPECT_GE(expires, before + milliseconds(59'000));
  EXPECT_LE(expires, before + milliseconds(70'000));

  auto refused = c.Request("POST", "/v1/records/docs/1/checkout",
                           R"({"owner":"Ravi","ttl_ms":60000})");
  EXPECT_EQ(refused.status, 423u);
  EXPECT_EQ(refused.json.at("granted"), json::value(false));
  EXPECT_EQ(Str(refused.json, "locked_by"), "Asha");
  EXPECT_EQ(Str(refused.json, "lock_expires_at"),
            Str(first.json, "expires_at"));
  EXPECT_FALSE(refused.json.as_object().contains("token"));

  // Renewal by the holder: same token and fence, new expiry.
  auto renewed = c.Request("POST", "/v1/records/docs/1/checkout",
                           R"({"owner":"Asha","ttl_ms":120000})");
  ASSERT_EQ(renewed.status, 200u) << renewed.body;
  EXPECT_EQ(renewed.json.at("granted"), json::value(true));
  EXPECT_EQ(Str(renewed.json, "token"), Str(first.json, "token"));
  EXPECT_EQ(Int(renewed.json, "fence"), Int(first.json, "fence"));
  EXPECT_GT(TimeOf(renewed.json, "expires_at"), expires);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/1").json, "lock_expires_at"),
            Str(renewed.json, "expires_at"));

  // Bad ttl_ms.
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/2/checkout",
                                R"({"owner":"Asha","ttl_ms":0})"),
                      400, "bad_request"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/2/checkout",
                                R"({"owner":"Asha","ttl_ms":-1})"),
                      400, "bad_request"));
}

TEST_F(RecordsApiTest, AClientTokenMakesARetriedCheckoutIdempotent) {
  HttpClient c(port());
  const std::string body =
      R"({"owner":"Asha","ttl_ms":60000,"token":"asha-retry-1"})";
  auto first = c.Request("POST", "/v1/records/docs/t/checkout", body);
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(Str(first.json, "token"), "asha-retry-1");
  auto retry = c.Request("POST", "/v1/records/docs/t/checkout", body);
  ASSERT_EQ(retry.status, 200u) << retry.body;
  EXPECT_EQ(Str(retry.json, "token"), "asha-retry-1");
  EXPECT_EQ(Int(retry.json, "fence"), Int(first.json, "fence"));
  // Another token, even under the same name, is someone else.
  auto other = c.Request("POST", "/v1/records/docs/t/checkout",
                         R"({"owner":"Asha","token":"another"})");
  EXPECT_EQ(other.status, 423u) << other.body;
  EXPECT_EQ(Str(other.json, "locked_by"), "Asha");
  // The token proves ownership for the writes.
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/t", R"({"body":"v1"})").status,
            201u);
  EXPECT_EQ(c.Request("POST", "/v1/records/docs/t/save",
                      R"({"token":"another","body":"x"})")
                .status,
            423u);
  auto saved = c.Request("POST", "/v1/records/docs/t/save",
                         R"({"token":"asha-retry-1","body":"v2"})");
  EXPECT_EQ(saved.status, 200u) << saved.body;
  EXPECT_EQ(c.Request("POST", "/v1/records/docs/t/checkin",
                      R"({"token":"asha-retry-1"})")
                .status,
            200u);
}

TEST_F(RecordsApiTest, RequireTokenNamespaceRefusesNameOnlyProof) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/secure/k", R"({"body":"v1"})").status,
            201u);
  auto co =
      c.Request("POST", "/v1/records/secure/k/checkout", R"({"owner":"Asha"})");
  ASSERT_EQ(co.status, 200u) << co.body;
  const std::string token = Str(co.json, "token");
  auto by_name = c.Request("POST", "/v1/records/secure/k/save",
                           R"({"owner":"Asha","body":"v2"})");
  EXPECT_EQ(by_name.status, 423u) << by_name.body;
  EXPECT_EQ(by_name.json.at("saved"), json::value(false));
  // Besides not_owner and expired, docs/api.md names this refusal.
  EXPECT_EQ(Str(by_name.json, "reason"), "token_required");
  EXPECT_EQ(
      c.Request("POST", "/v1/records/secure/k/checkout", R"({"owner":"Asha"})")
          .status,
      423u)
      << "no renewal by name either";
  EXPECT_EQ(
      c.Request("POST", "/v1/records/secure/k/checkin", R"({"owner":"Asha"})")
          .status,
      423u);
  EXPECT_EQ(
      c.Request("DELETE", "/v1/records/secure/k", R"({"owner":"Asha"})").status,
      423u);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/secure/k").json, "body"), "v1");
  auto by_token = c.Request("POST", "/v1/records/secure/k/save",
                            J({{"token", token}, {"body", "v2"}}));
  EXPECT_EQ(by_token.status, 200u) << by_token.body;
  EXPECT_EQ(
      c.Request("POST", "/v1/records/secure/k/checkin", J({{"token", token}}))
          .status,
      200u);
  // Other namespaces still accept the name.
  ASSERT_EQ(
      c.Request("POST", "/v1/records/open/k/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  EXPECT_EQ(
      c.Request("POST", "/v1/records/open/k/checkin", R"({"owner":"Asha"})")
          .status,
      200u);
}

TEST_F(RecordsApiTest, SaveCheckinAndDeleteNeedTheHolder) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/d", R"({"body":"v1"})").status,
            201u);
  // Nobody holds it: refused.
  auto unheld = c.Request("POST", "/v1/records/docs/d/save",
                          R"({"owner":"Asha","body":"x"})");
  EXPECT_EQ(unheld.status, 423u);
  EXPECT_EQ(Str(unheld.json, "reason"), "not_owner");
  ASSERT_EQ(
      c.Request("POST", "/v1/records/docs/d/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  auto saved = c.Request("POST", "/v1/records/docs/d/save",
                         R"({"owner":"Asha","body":"v2"})");
  ASSERT_EQ(saved.status, 200u) << saved.body;
  EXPECT_EQ(saved.json.at("saved"), json::value(true));
  EXPECT_EQ(Int(saved.json, "version"), 2);
  auto stranger = c.Request("POST", "/v1/records/docs/d/save",
                            R"({"owner":"Ravi","body":"x"})");
  EXPECT_EQ(stranger.status, 423u);
  EXPECT_EQ(stranger.json.at("saved"), json::value(false));
  EXPECT_EQ(Str(stranger.json, "reason"), "not_owner");
  auto stale = c.Request("POST", "/v1/records/docs/d/save",
                         R"({"owner":"Asha","body":"x","if_version":1})");
  EXPECT_EQ(stale.status, 412u);
  EXPECT_EQ(stale.json.at("saved"), json::value(false));
  EXPECT_EQ(Str(stale.json, "reason"), "version_mismatch");
  auto matched = c.Request("POST", "/v1/records/docs/d/save",
                           R"({"owner":"Asha","body":"v3","if_version":2})");
  EXPECT_EQ(matched.status, 200u);
  EXPECT_EQ(Int(matched.json, "version"), 3);
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/d").json, "body"), "v3");
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/docs/d/save", R"({"body":"no proof"})"),
      400, "bad_request"));
  // Save needs a record: a bare lease is not one.
  ASSERT_EQ(
      c.Request("POST", "/v1/records/docs/bare/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/bare/save",
                                R"({"owner":"Asha","body":"x"})"),
                      404, "not_found"));
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/none/save",
                                R"({"owner":"Asha","body":"x"})"),
                      404, "not_found"));

  // Check-in.
  auto wrong =
      c.Request("POST", "/v1/records/docs/d/checkin", R"({"owner":"Ravi"})");
  EXPECT_EQ(wrong.status, 423u);
  EXPECT_EQ(wrong.json.at("released"), json::value(false));
  EXPECT_EQ(Str(wrong.json, "reason"), "not_owner");
  auto in =
      c.Request("POST", "/v1/records/docs/d/checkin", R"({"owner":"Asha"})");
  EXPECT_EQ(in.status, 200u);
  EXPECT_EQ(in.json.at("released"), json::value(true));
  auto row = c.Request("GET", "/v1/records/docs/d");
  EXPECT_TRUE(Has(row.json, "locked_by", Kind::kNull));
  EXPECT_EQ(Str(row.json, "state"), "free");
  EXPECT_EQ(c.Request("POST", "/v1/records/docs/d/save",
                      R"({"owner":"Asha","body":"late"})")
                .status,
            423u)
      << "checked in: no more saves";

  // Delete.
  ASSERT_EQ(
      c.Request("POST", "/v1/records/docs/d/checkout", R"({"owner":"Asha"})")
          .status,
      200u);
  auto refused =
      c.Request("DELETE", "/v1/records/docs/d", R"({"owner":"Ravi"})");
  EXPECT_EQ(refused.status, 423u);
  EXPECT_EQ(refused.json.at("deleted"), json::value(false));
  EXPECT_EQ(Str(refused.json, "reason"), "not_owner");
  auto deleted =
      c.Request("DELETE", "/v1/records/docs/d", R"({"owner":"Asha"})");
  EXPECT_EQ(deleted.status, 200u);
  EXPECT_EQ(deleted.json.at("deleted"), json::value(true));
  EXPECT_TRUE(
      IsError(c.Request("GET", "/v1/records/docs/d"), 404, "not_found"));
  EXPECT_TRUE(
      IsError(c.Request("DELETE", "/v1/records/docs/d", R"({"owner":"Asha"})"),
              404, "not_found"));
}

TEST_F(RecordsApiTest, AfterExpiryTheRowIsFreeKeepsLockedByAndRefusesSave) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/e", R"({"body":"v1"})").status,
            201u);
  auto co = c.Request("POST", "/v1/records/docs/e/checkout",
                      R"({"owner":"Asha","ttl_ms":200})");
  ASSERT_EQ(co.status, 200u);
  auto row = AwaitState(c, "/v1/records/docs/e", "free");
  ASSERT_EQ(Str(row.json, "state"), "free");
  EXPECT_EQ(Str(row.json, "locked_by"), "Asha") << "the row is not rewritten";
  EXPECT_EQ(Str(row.json, "lock_expires_at"), Str(co.json, "expires_at"));
  EXPECT_GE(std::chrono::system_clock::now(), TimeOf(co.json, "expires_at"));
  // Nobody took the key, yet the late writer is refused.
  auto late = c.Request("POST", "/v1/records/docs/e/save",
                        R"({"owner":"Asha","body":"late"})");
  EXPECT_EQ(late.status, 423u) << late.body;
  EXPECT_EQ(late.json.at("saved"), json::value(false));
  EXPECT_EQ(Str(late.json, "reason"), "expired");
  auto by_token =
      c.Request("POST", "/v1/records/docs/e/save",
                J({{"token", Str(co.json, "token")}, {"body", "late"}}));
  EXPECT_EQ(by_token.status, 423u);
  EXPECT_EQ(Str(by_token.json, "reason"), "expired");
  auto del = c.Request("DELETE", "/v1/records/docs/e", R"({"owner":"Asha"})");
  EXPECT_EQ(del.status, 423u);
  EXPECT_EQ(Str(del.json, "reason"), "expired");
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/e").json, "body"), "v1");
  // A new checkout (here by the same person) gets a new fence.
  auto again =
      c.Request("POST", "/v1/records/docs/e/checkout", R"({"owner":"Asha"})");
  ASSERT_EQ(again.status, 200u);
  EXPECT_GT(Int(again.json, "fence"), Int(co.json, "fence"));
  EXPECT_NE(Str(again.json, "token"), Str(co.json, "token"));
}

TEST_F(RecordsApiTest, ListPagesWithStatePrefixAfterLimitAndNext) {
  HttpClient c(port());
  for (const std::string k : {"a1", "a2", "a3", "a4", "a5", "b1"}) {
    ASSERT_EQ(
        c.Request("PUT", "/v1/records/list/" + k, J({{"body", "body of " + k}}))
            .status,
        201u);
  }
  for (const std::string k : {"a2", "a4", "b1"}) {
    ASSERT_EQ(c.Request("POST", "/v1/records/list/" + k + "/checkout",
                        R"({"owner":"Asha"})")
                  .status,
              200u);
  }
  auto keys = [](const HttpAnswer& a) {
    std::vector<std::string> out;
    for (const auto& r : a.json.at("records").as_array()) {
      out.push_back(Str(r, "key"));
    }
    return out;
  };
  using V = std::vector<std::string>;
  auto all = c.Request("GET", "/v1/records/list");
  ASSERT_EQ(all.status, 200u);
  EXPECT_EQ(keys(all), (V{"a1", "a2", "a3", "a4", "a5", "b1"}));
  EXPECT_TRUE(Has(all.json, "next", Kind::kNull));
  for (const auto& r : all.json.at("records").as_array()) {
    EXPECT_FALSE(r.as_object().contains("body")) << "lists leave bodies out";
    EXPECT_TRUE(Has(r, "version", Kind::kInt));
    EXPECT_TRUE(Has(r, "locked_by", Kind::kString, Kind::kNull));
    EXPECT_TRUE(Has(r, "lock_expires_at", Kind::kTime, Kind::kNull));
    EXPECT_TRUE(Has(r, "state", Kind::kString));
    EXPECT_TRUE(Has(r, "fence", Kind::kInt));
  }
  // Paging.
  auto p1 = c.Request("GET", "/v1/records/list?limit=2");
  EXPECT_EQ(keys(p1), (V{"a1", "a2"}));
  ASSERT_TRUE(Has(p1.json, "next", Kind::kString));
  auto p2 = c.Request("GET",
                      "/v1/records/list?limit=2&after=" + Str(p1.json, "next"));
  EXPECT_EQ(keys(p2), (V{"a3", "a4"}));
  ASSERT_TRUE(Has(p2.json, "next", Kind::kString));
  auto p3 = c.Request("GET",
                      "/v1/records/list?limit=2&after=" + Str(p2.json, "next"));
  EXPECT_EQ(keys(p3), (V{"a5", "b1"}));
  EXPECT_TRUE(Has(p3.json, "next", Kind::kNull)) << "no more: null";
  // Filters, alone and together with paging.
  EXPECT_EQ(keys(c.Request("GET", "/v1/records/list?prefix=a")),
            (V{"a1", "a2", "a3", "a4", "a5"}));
  auto locked = c.Request("GET", "/v1/records/list?state=locked");
  EXPECT_EQ(keys(locked), (V{"a2", "a4", "b1"}));
  for (const auto& r : locked.json.at("records").as_array()) {
    EXPECT_EQ(Str(r, "state"), "locked");
    EXPECT_EQ(Str(r, "locked_by"), "Asha");
  }
  EXPECT_EQ(keys(c.Request("GET", "/v1/records/list?state=free")),
            (V{"a1", "a3", "a5"}));
  auto lp = c.Request("GET", "/v1/records/list?state=locked&prefix=a&limit=1");
  EXPECT_EQ(keys(lp), (V{"a2"}));
  ASSERT_TRUE(Has(lp.json, "next", Kind::kString));
  auto lp2 =
      c.Request("GET", "/v1/records/list?state=locked&prefix=a&limit=1&after=" +
                           Str(lp.json, "next"));
  EXPECT_EQ(keys(lp2), (V{"a4"}));
  EXPECT_EQ(keys(c.Request("GET", "/v1/records/list?after=a3&prefix=a")),
            (V{"a4", "a5"}));
  EXPECT_EQ(keys(c.Request("GET", "/v1/records/list?prefix=zz")), V{});
  EXPECT_EQ(keys(c.Request("GET", "/v1/records/empty-namespace")), V{});
  // Bad parameters.
  for (const std::string q :
       {"state=busy", "limit=0", "limit=1001", "limit=-1", "limit=ten"}) {
    EXPECT_TRUE(
        IsError(c.Request("GET", "/v1/records/list?" + q), 400, "bad_request"))
        << q;
  }
}

TEST_F(RecordsApiTest, PurgeClearsLeasesExpiredLongerAgoThanAsked) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/p/short", R"({"body":"x"})").status,
            201u);
  ASSERT_EQ(c.Request("POST", "/v1/records/p/short/checkout",
                      R"({"owner":"Asha","ttl_ms":100})")
                .status,
            200u);
  ASSERT_EQ(c.Request("POST", "/v1/records/p/bare/checkout",
                      R"({"owner":"Asha","ttl_ms":100})")
                .status,
            200u);
  ASSERT_EQ(c.Request("POST", "/v1/records/p/long/checkout",
                      R"({"owner":"Ravi","ttl_ms":600000})")
                .status,
            200u);
  ASSERT_EQ(Str(AwaitState(c, "/v1/records/p/short", "free").json, "state"),
            "free");
  ASSERT_EQ(Str(AwaitState(c, "/v1/records/p/bare", "free").json, "state"),
            "free");
  auto huge = c.Request("POST", "/v1/records/p/purge",
                        R"({"older_than_ms":9223372036854775807})");
  ASSERT_EQ(huge.status, 200u) << huge.body;
  EXPECT_EQ(Int(huge.json, "purged"), 0) << "older_than_ms overflowed";
  auto none =
      c.Request("POST", "/v1/records/p/purge", R"({"older_than_ms":3600000})");
  ASSERT_EQ(none.status, 200u) << none.body;
  EXPECT_EQ(Int(none.json, "purged"), 0) << "expired less than an hour ago";
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/p/short").json, "locked_by"),
            "Asha");
  auto purged =
      c.Request("POST", "/v1/records/p/purge", R"({"older_than_ms":0})");
  ASSERT_EQ(purged.status, 200u);
  EXPECT_TRUE(Has(purged.json, "purged", Kind::kInt));
  EXPECT_EQ(Int(purged.json, "purged"), 2);
  auto row = c.Request("GET", "/v1/records/p/short");
  EXPECT_TRUE(Has(row.json, "locked_by", Kind::kNull));
  EXPECT_EQ(Str(row.json, "body"), "x") << "the record stays";
  EXPECT_TRUE(IsError(c.Request("GET", "/v1/records/p/bare"), 404, "not_found"))
      << "a purged bare lease leaves nothing";
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/p/long").json, "state"), "locked")
      << "live leases are never purged";
  EXPECT_EQ(Int(c.Request("POST", "/v1/records/p/purge", "{}").json, "purged"),
            0);
  EXPECT_TRUE(IsError(
      c.Request("POST", "/v1/records/p/purge", R"({"older_than_ms":-1})"), 400,
      "bad_request"));
}

TEST_F(RecordsApiTest, BreakReleasesAnyLeaseForTheAdministrator) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/b", R"({"body":"v1"})").status,
            201u);
  auto asha = c.Request("POST", "/v1/records/docs/b/checkout",
                        R"({"owner":"Asha","ttl_ms":600000})");
  ASSERT_EQ(asha.status, 200u);
  auto broken = c.Request("POST", "/v1/records/docs/b/break");
  ASSERT_EQ(broken.status, 200u) << broken.body;
  EXPECT_EQ(broken.json.at("broken"), json::value(true));
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/b").json, "state"), "free");
  auto ravi =
      c.Request("POST", "/v1/records/docs/b/checkout", R"({"owner":"Ravi"})");
  ASSERT_EQ(ravi.status, 200u);
  EXPECT_GT(Int(ravi.json, "fence"), Int(asha.json, "fence"));
  auto late = c.Request("POST", "/v1/records/docs/b/save",
                        J({{"token", Str(asha.json, "token")}, {"body", "x"}}));
  EXPECT_EQ(late.status, 423u);
  EXPECT_EQ(Str(late.json, "reason"), "not_owner");
  EXPECT_TRUE(IsError(c.Request("POST", "/v1/records/docs/none/break"), 404,
                      "not_found"));
}

TEST_F(RecordsApiTest, FencesIncreaseStrictlyAcrossGrantsAndRestarts) {
  std::vector<std::int64_t> fences;
  std::int64_t renewed_fence = 0;
  {
    HttpClient c(port());
    const std::string s = OpenSession(c, "Asha");
    for (int i = 0; i < 3; ++i) {
      auto lock = Acquire(c, s, "r" + std::to_string(i), "Exclusive");
      ASSERT_EQ(lock.status, 200u);
      fences.push_back(Int(lock.json, "fence"));
      auto co =
          c.Request("POST", "/v1/records/f/k" + std::to_string(i) + "/checkout",
                    R"({"owner":"Asha","ttl_ms":600000})");
      ASSERT_EQ(co.status, 200u);
      fences.push_back(Int(co.json, "fence"));
    }
    renewed_fence = Int(c.Request("POST", "/v1/records/f/k0/checkout",
                                  R"({"owner":"Asha","ttl_ms":600000})")
                            .json,
                        "fence");
  }
  EXPECT_EQ(renewed_fence, fences[1]) << "a renewal is not a new grant";
  for (std::size_t i = 1; i < fences.size(); ++i) {
    EXPECT_GT(fences[i], fences[i - 1]) << i;
  }
  EXPECT_EQ(server_->Terminate(), 0);
  Start();
  {
    HttpClient c(port());
    EXPECT_EQ(Int(c.Request("GET", "/v1/records/f/k2").json, "fence"),
              fences.back())
        << "fences are kept";
    const std::string s = OpenSession(c, "Ravi");
    auto lock = Acquire(c, s, "after-restart", "Exclusive");
    ASSERT_EQ(lock.status, 200u);
    EXPECT_GT(Int(lock.json, "fence"), fences.back());
    fences.push_back(Int(lock.json, "fence"));
  }
  // An acknowledged grant's fence is never handed out again, even after a
  // crash (kill -9).
  server_->Kill();
  Start();
  HttpClient c(port());
  auto co = c.Request("POST", "/v1/records/f/after-crash/checkout",
                      R"({"owner":"Ravi"})");
  ASSERT_EQ(co.status, 200u);
  EXPECT_GT(Int(co.json, "fence"), fences.back());
}

// docs/api.md, "Fenced writes": a record refuses the fence of a holder
// whose lock was taken over, and keeps refusing it after kill -9, as a
// fenced delete's tombstone does.
TEST_F(RecordsApiTest, AStaleFenceStaysRefusedAcrossAKill) {
  std::int64_t old_fence = 0, new_fence = 0;
  {
    HttpClient c(port());
    const std::string asha = OpenSession(c, "Asha");
    auto first = Acquire(c, asha, "invoice:481", "Exclusive");
    ASSERT_EQ(first.status, 200u);
    old_fence = Int(first.json, "fence");
    ASSERT_EQ(c.Request("PUT", "/v1/records/billing/481",
                        R"({"body":"draft","fence":)" +
                            std::to_string(old_fence) + "}")
                  .status,
              201u);
    ASSERT_EQ(c.Request("PUT", "/v1/records/billing/482",
                        R"({"body":"draft","fence":)" +
                            std::to_string(old_fence) + "}")
                  .status,
              201u);
    // Asha's session ends (as if it expired); Ravi takes the lock over.
    ASSERT_EQ(c.Request("DELETE", "/v1/sessions/" + asha).status, 204u);
    const std::string ravi = OpenSession(c, "Ravi");
    auto second = Acquire(c, ravi, "invoice:481", "Exclusive");
    ASSERT_EQ(second.status, 200u);
    new_fence = Int(second.json, "fence");
    ASSERT_GT(new_fence, old_fence);
    auto saved = c.Request(
        "POST", "/v1/records/billing/481/save",
        R"({"body":"paid","fence":)" + std::to_string(new_fence) + "}");
    ASSERT_EQ(saved.status, 200u) << saved.body;
    ASSERT_EQ(c.Request("DELETE", "/v1/records/billing/482",
                        R"({"fence":)" + std::to_string(new_fence) + "}")
                  .status,
              200u);
  }
  server_->Kill();
  Start();
  HttpClient c(port());
  auto stale = c.Request(
      "POST", "/v1/records/billing/481/save",
      R"({"body":"stale","fence":)" + std::to_string(old_fence) + "}");
  EXPECT_TRUE(IsError(stale, 409, "stale_fence")) << stale.body;
  EXPECT_TRUE(IsError(
      c.Request("PUT", "/v1/records/billing/482",
                R"({"body":"back","fence":)" + std::to_string(old_fence) + "}"),
      409, "stale_fence"));
  auto got = c.Request("GET", "/v1/records/billing/481");
  EXPECT_EQ(Str(got.json, "body"), "paid");
  EXPECT_EQ(Int(got.json, "write_fence"), new_fence);
  auto tomb = c.Request("GET", "/v1/records/billing/482");
  ASSERT_EQ(tomb.status, 200u);
  EXPECT_TRUE(Has(tomb.json, "body", Kind::kNull));
  EXPECT_EQ(Int(tomb.json, "write_fence"), new_fence);
  // The successor's fence, handed out before the crash, still writes.
  EXPECT_EQ(c.Request("POST", "/v1/records/billing/481/save",
                      R"({"body":"refunded","fence":)" +
                          std::to_string(new_fence) + "}")
                .status,
            200u);
}

TEST_F(RecordsApiTest, SeedWalkthroughATwoSecondCheckoutExpires) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/1", R"({"body":"First draft"})")
                .status,
            201u);
  auto asha = c.Request("POST", "/v1/records/docs/1/checkout",
                        R"({"owner":"Asha","ttl_ms":2000})");
  ASSERT_EQ(asha.status, 200u);
  auto row = c.Request("GET", "/v1/records/docs/1");
  EXPECT_EQ(Str(row.json, "state"), "locked");
  EXPECT_EQ(Str(row.json, "locked_by"), "Asha");
  auto listed = c.Request("GET", "/v1/records/docs?state=locked");
  ASSERT_EQ(listed.json.at("records").as_array().size(), 1u);
  auto ravi =
      c.Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"Ravi"})");
  EXPECT_EQ(ravi.status, 423u);
  EXPECT_EQ(Str(ravi.json, "locked_by"), "Asha");

  row = AwaitState(c, "/v1/records/docs/1", "free", milliseconds(6000));
  ASSERT_EQ(Str(row.json, "state"), "free");
  EXPECT_GE(std::chrono::system_clock::now(), TimeOf(asha.json, "expires_at"));
  EXPECT_EQ(Str(row.json, "locked_by"), "Asha") << "kept after expiry";
  EXPECT_TRUE(c.Request("GET", "/v1/records/docs?state=locked")
                  .json.at("records")
                  .as_array()
                  .empty());
  ravi =
      c.Request("POST", "/v1/records/docs/1/checkout", R"({"owner":"Ravi"})");
  ASSERT_EQ(ravi.status, 200u) << ravi.body;
  EXPECT_GT(Int(ravi.json, "fence"), Int(asha.json, "fence"));
  row = c.Request("GET", "/v1/records/docs/1");
  EXPECT_EQ(Str(row.json, "locked_by"), "Ravi");
  EXPECT_EQ(Str(row.json, "state"), "locked");
}

TEST_F(RecordsApiTest, SeedWalkthroughBCheckinOnlyFromTheHolder) {
  HttpClient c(port());
  ASSERT_EQ(c.Request("PUT", "/v1/records/docs/2", R"({"body":"First draft"})")
                .status,
            201u);
  ASSERT_EQ(c.Request("POST", "/v1/records/docs/2/checkout",
                      R"({"owner":"Asha","ttl_ms":2000})")
                .status,
            200u);
  auto wrong =
      c.Request("POST", "/v1/records/docs/2/checkin", R"({"owner":"Ravi"})");
  EXPECT_EQ(wrong.status, 423u);
  EXPECT_EQ(wrong.json.at("released"), json::value(false));
  EXPECT_EQ(Str(wrong.json, "reason"), "not_owner");
  EXPECT_EQ(Str(c.Request("GET", "/v1/records/docs/2").json, "locked_by"),
            "Asha");
  auto right =
      c.Request("POST", "/v1/records/docs/2/checkin", R"({"owner":"Asha"})");
  EXPECT_EQ(right.status, 200u);
  EXPECT_EQ(right.json.at("released"), json::value(true));
  auto row = c.Request("GET", "/v1/records/docs/2");
  EXPECT_EQ(Str(row.json, "state"), "free");
  EXPECT_TRUE(Has(row.json, "locked_by", Kind::kNull));
}

}  // namespace
}  // namespace leasehold::testing
