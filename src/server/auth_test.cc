// Authentication and access rules: the Authenticator on its own, then the
// whole Api with tokens configured — 401, 403, namespace isolation and
// sessions bound to the principal that opened them.
#include "server/auth.h"

#include <gtest/gtest.h>

#include "server/api_test_fixture.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

TokenGrant Grant(std::string token, std::string principal,
                 std::vector<std::string> namespaces, Role role) {
  return TokenGrant{std::move(token), std::move(principal),
                    std::move(namespaces), role};
}

TEST(AuthenticatorTest, RefusesWeakOrAmbiguousConfigurations) {
  EXPECT_FALSE(
      Authenticator::Create({Grant("short", "a", {"x"}, Role::kRead)}));
  EXPECT_FALSE(Authenticator::Create(
      {Grant("0123456789abcdef", "a", {"x"}, Role::kRead),
       Grant("0123456789abcdef", "b", {"y"}, Role::kRead)}));
  EXPECT_FALSE(Authenticator::Create(
      {Grant("0123456789abcdef", "", {"x"}, Role::kRead)}));
  EXPECT_FALSE(
      Authenticator::Create({Grant("0123456789abcdef", "a", {}, Role::kRead)}));
  EXPECT_FALSE(ParseRole("owner"));
  EXPECT_EQ(*ParseRole("admin"), Role::kAdmin);
}

TEST(AuthenticatorTest, NamesTheGrantOfAValidBearerToken) {
  auto auth = Authenticator::Create(
      {Grant("aaaaaaaaaaaaaaaa1", "billing", {"billing"}, Role::kWrite),
       Grant("bbbbbbbbbbbbbbbb2", "ops", {"*"}, Role::kAdmin)});
  ASSERT_TRUE(auth);
  EXPECT_FALSE(Authenticator().enabled());
  EXPECT_TRUE(auth->enabled());
  auto who = auth->Authenticate("Bearer bbbbbbbbbbbbbbbb2");
  ASSERT_TRUE(who);
  EXPECT_EQ((*who)->principal, "ops");
  for (const char* bad :
       {"", "bbbbbbbbbbbbbbbb2", "Basic bbbbbbbbbbbbbbbb2",
        "Bearer bbbbbbbbbbbbbbbb", "Bearer ", "Bearer bbbbbbbbbbbbbbbb22"}) {
    auto r = auth->Authenticate(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kUnauthorized) << bad;
  }
}

TokenGrant SubjectGrant(std::string subject, std::string principal,
                        std::vector<std::string> namespaces, Role role) {
  TokenGrant g = Grant("", std::move(principal), std::move(namespaces), role);
  g.subject = std::move(subject);
  return g;
}

TEST(AuthenticatorTest, RefusesAmbiguousSubjectEntries) {
  // A subject given twice, and an entry with both a subject and a token.
  EXPECT_FALSE(Authenticator::Create(
      {SubjectGrant("worker.billing", "a", {"x"}, Role::kRead),
       SubjectGrant("worker.billing", "b", {"y"}, Role::kRead)}));
  TokenGrant both = SubjectGrant("worker.billing", "a", {"x"}, Role::kRead);
  both.token = "0123456789abcdef";
  EXPECT_FALSE(Authenticator::Create({both}));
  auto ok = Authenticator::Create(
      {SubjectGrant("worker.billing", "a", {"x"}, Role::kRead)});
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->HasSubjects());
}

TEST(AuthenticatorTest, AVerifiedCertificateStandsForItsSubjectsEntryOnly) {
  auto auth = Authenticator::Create(
      {Grant("aaaaaaaaaaaaaaaa1", "ops", {"*"}, Role::kAdmin),
       SubjectGrant("worker.billing", "billing", {"billing"}, Role::kWrite),
       SubjectGrant("spiffe://t/reporter", "reporter", {"r"}, Role::kRead),
       SubjectGrant("other.name", "other", {"o"}, Role::kRead)});
  ASSERT_TRUE(auth);
  auto as = [&](std::vector<std::string> names,
                std::string_view authorization = "") {
    PeerCertificate peer{std::move(names)};
    return auth->Authenticate(authorization, &peer);
  };
  ASSERT_TRUE(as({"worker.billing"}));
  EXPECT_EQ((*as({"worker.billing"}))->principal, "billing");
  EXPECT_EQ((*as({"x.example", "spiffe://t/reporter"}))->principal, "reporter");
  // No entry, or two: nobody.
  for (const auto& names : std::vector<std::vector<std::string>>{
           {}, {"unknown"}, {"worker.billing", "other.name"}}) {
    auto r = as(names);
    ASSERT_FALSE(r) << names.size();
    EXPECT_EQ(r.error().code(), StatusCode::kUnauthorized);
  }
  // A token sent with a certificate is what counts; a bad one fails.
  EXPECT_EQ((*as({"worker.billing"}, "Bearer aaaaaaaaaaaaaaaa1"))->principal,
            "ops");
  EXPECT_FALSE(as({"worker.billing"}, "Bearer wrong-token-000000"));
  // An empty bearer token never matches a subject's entry (it has none).
  EXPECT_FALSE(auth->Authenticate("Bearer "));
  EXPECT_FALSE(auth->Authenticate(""));
}

TEST(AuthenticatorTest, AuthorizeChecksNamespaceThenRole) {
  const TokenGrant reader = Grant("r", "r", {"app"}, Role::kRead);
  EXPECT_TRUE(Authorize(reader, "app", Role::kRead).ok());
  EXPECT_EQ(Authorize(reader, "app", Role::kWrite).code(),
            StatusCode::kForbidden);
  EXPECT_EQ(Authorize(reader, "other", Role::kRead).code(),
            StatusCode::kForbidden);
  EXPECT_TRUE(Authorize(reader, "", Role::kRead).ok());
  const TokenGrant admin = Grant("a", "a", {"*"}, Role::kAdmin);
  EXPECT_TRUE(Authorize(admin, "anything", Role::kAdmin).ok());
}

constexpr const char* kBilling = "Bearer billing-token-0001";
constexpr const char* kBillingReader = "Bearer billing-reader-0002";
constexpr const char* kShipping = "Bearer shipping-token-0003";
constexpr const char* kOps = "Bearer ops-admin-token-0004";
constexpr const char* kBillingAdmin = "Bearer billing-admin-0005";

ApiOptions WithTokens() {
  ApiOptions o;
  o.auth = *Authenticator::Create(
      {Grant("billing-token-0001", "billing", {"billing"}, Role::kWrite),
       Grant("billing-reader-0002", "auditor", {"billing"}, Role::kRead),
       Grant("shipping-token-0003", "shipping", {"shipping"}, Role::kWrite),
       Grant("ops-admin-token-0004", "ops", {"*"}, Role::kAdmin),
       Grant("billing-admin-0005", "billing-admin", {"billing"},
             Role::kAdmin)});
  return o;
}

class ApiAuthTest : public ApiTest {
 protected:
  ApiAuthTest() : ApiTest(WithTokens()) {}

  Answer Acquire(const std::string& ns, const std::string& session,
                 const char* token) {
    return Call("POST", "/v1/applocks/" + ns + "/acquire",
                R"({"session":")" + session +
                    R"(","resource":"invoice:481","mode":"Exclusive",)"
                    R"("owner":"Session","timeout_ms":0})",
                token);
  }
};

// Lock-delay: an administrator ending another principal's session holds
// its locks back; a session ended by its own client frees them at once.
TEST_F(ApiAuthTest, AnAdministratorsEndHoldsLocksBackAClientsDoesNot) {
  NamespaceOptions delayed;
  delayed.lock_delay = std::chrono::milliseconds(60'000);
  service_->SetNamespaceOptions("billing", delayed);
  const auto open = [&](const char* token) {
    auto a =
        Call("POST", "/v1/sessions", R"({"name":"x","ttl_ms":60000})", token);
    EXPECT_EQ(a.status, 201u);
    return std::string(a.body.at("id").as_string());
  };
  const std::string lost = open(kBilling), other = open(kBilling);
  ASSERT_EQ(Acquire("billing", lost, kBilling).status, 200u);
  ASSERT_EQ(Call("DELETE", "/v1/sessions/" + lost, "", kOps).status, 204u);
  auto refused = Acquire("billing", other, kBilling);
  EXPECT_EQ(refused.status, 409u);
  EXPECT_EQ(refused.body.at("result").as_int64(), -1);
  auto listed = Call("GET", "/v1/applocks/billing", "", kBilling);
  ASSERT_EQ(listed.body.at("locks").as_array().size(), 1u);
  EXPECT_TRUE(
      listed.body.at("locks").as_array()[0].at("lock_delay_until").is_string());

  const std::string own = open(kBilling), next = open(kBilling);
  const std::string body =
      R"({"session":")" + own +
      R"(","resource":"report","mode":"Exclusive","owner":"Session",)"
      R"("timeout_ms":0})";
  ASSERT_EQ(Call("POST", "/v1/applocks/billing/acquire", body, kBilling).status,
            200u);
  ASSERT_EQ(Call("DELETE", "/v1/sessions/" + own, "", kBilling).status, 204u);
  std::string again = body;
  again.replace(again.find(own), own.size(), next);
  EXPECT_EQ(
      Call("POST", "/v1/applocks/billing/acquire", again, kBilling).status,
      200u);
}

TEST_F(ApiAuthTest, NoOrUnknownTokenIs401ButHealthStaysOpen) {
  EXPECT_EQ(Call("GET", "/healthz").status, 200u);
  auto a = Call("GET", "/v1/sessions");
  EXPECT_EQ(a.status, 401u);
  EXPECT_EQ(a.code(), "unauthorized");
  EXPECT_EQ(
      Call("GET", "/v1/sessions", "", "Bearer nope-nope-nope-nope").code(),
      "unauthorized");
  EXPECT_EQ(Call("GET", "/metrics").status, 401u);
  EXPECT_EQ(Call("GET", "/v1/nothing").status, 401u);  // no route probing
  EXPECT_EQ(Call("GET", "/v1/sessions", "", kBilling).status, 200u);
}

TEST_F(ApiAuthTest, ANamespaceOutsideTheGrantsIs403) {
  EXPECT_EQ(Call("GET", "/v1/applocks/shipping", "", kBilling).code(),
            "forbidden");
  EXPECT_EQ(Call("GET", "/v1/records/shipping/k", "", kBilling).status, 403u);
  EXPECT_EQ(
      Call("PUT", "/v1/records/shipping/k", R"({"body":"x"})", kBilling).status,
      403u);
  EXPECT_EQ(Call("GET", "/v1/applocks/billing", "", kBilling).status, 200u);
  EXPECT_EQ(Call("GET", "/v1/applocks/anything", "", kOps).status, 200u);
}

TEST_F(ApiAuthTest, RolesGateReadsWritesAndForcedActs) {
  const std::string checkout = R"({"owner":"Asha","ttl_ms":60000})";
  EXPECT_EQ(
      Call("POST", "/v1/records/billing/k/checkout", checkout, kBillingReader)
          .code(),
      "forbidden");
  EXPECT_EQ(
      Call("POST", "/v1/records/billing/k/checkout", checkout, kBilling).status,
      200u);
  EXPECT_EQ(Call("GET", "/v1/records/billing/k", "", kBillingReader).status,
            200u);
  EXPECT_EQ(Call("GET", "/v1/records/billing", "", kBillingReader).status,
            200u);
  // break and purge are the administrator's.
  EXPECT_EQ(Call("POST", "/v1/records/billing/k/break", "", kBilling).code(),
            "forbidden");
  EXPECT_EQ(Call("POST", "/v1/records/billing/purge", "{}", kBilling).code(),
            "forbidden");
  EXPECT_EQ(
      Call("POST", "/v1/records/billing/k/break", "", kBillingAdmin).status,
      200u);
  EXPECT_EQ(
      Call("POST", "/v1/records/billing/purge", "{}", kBillingAdmin).status,
      200u);
  // An admin of one namespace administers only that one.
  EXPECT_EQ(
      Call("POST", "/v1/records/shipping/k/break", "", kBillingAdmin).code(),
      "forbidden");
  // A key may be named "purge": writing it is a write, not a purge.
  EXPECT_EQ(
      Call("PUT", "/v1/records/billing/purge", R"({"body":"x"})", kBilling)
          .status,
      201u);
  EXPECT_EQ(
      Call("POST", "/v1/sessions", R"({"ttl_ms":1000})", kBillingReader).code(),
      "forbidden");
}

TEST_F(ApiAuthTest, SessionsBelongToThePrincipalThatOpenedThem) {
  const std::string mine = OpenSession("Asha", kBilling);
  const std::string theirs = OpenSession("Bram", kShipping);
  // Another principal can neither act through a session nor end it.
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{
           {"POST", "/v1/sessions/" + mine + "/keepalive"},
           {"POST", "/v1/sessions/" + mine + "/transaction"},
           {"POST", "/v1/sessions/" + mine + "/cancel"},
           {"DELETE", "/v1/sessions/" + mine}}) {
    EXPECT_EQ(Call(method, path, "", kShipping).code(), "forbidden") << path;
  }
  // Nor take a lock in its own namespace through someone else's session.
  EXPECT_EQ(Acquire("shipping", mine, kShipping).code(), "forbidden");
  EXPECT_EQ(Call("GET",
                 "/v1/applocks/billing/mode?session=" + theirs +
                     "&resource=invoice:481&owner=Session",
                 "", kBilling)
                .code(),
            "forbidden");
  EXPECT_EQ(Acquire("billing", mine, kBilling).status, 200u);
  // An unknown session is still session_not_found, not a leak of rights.
  EXPECT_EQ(Acquire("billing", "12345", kBilling).code(), "session_not_found");
  // Each principal lists only its own sessions; an all-namespace admin all.
  auto list = [&](const char* token) {
    std::vector<std::string> ids;
    auto a = Call("GET", "/v1/sessions", "", token);
    for (const auto& s : a.body.at("sessions").as_array()) {
      ids.emplace_back(s.at("id").as_string());
      EXPECT_TRUE(s.as_object().contains("opened_by"));
    }
    return ids;
  };
  EXPECT_EQ(list(kBilling), std::vector<std::string>{mine});
  EXPECT_EQ(list(kShipping), std::vector<std::string>{theirs});
  EXPECT_EQ(list(kOps).size(), 2u);
  // The operator may end anyone's session (the dashboard's "end session").
  EXPECT_EQ(Call("DELETE", "/v1/sessions/" + mine, "", kOps).status, 204u);
  EXPECT_EQ(
      Call("POST", "/v1/sessions/" + mine + "/keepalive", "", kBilling).code(),
      "session_not_found");
}

TEST_F(ApiAuthTest, NoPrincipalSeesOrTakesAnotherNamespacesLocks) {
  const std::string billing = OpenSession("Asha", kBilling);
  const std::string shipping = OpenSession("Bram", kShipping);
  ASSERT_EQ(Acquire("billing", billing, kBilling).status, 200u);
  // The same resource name in another namespace is another lock.
  EXPECT_EQ(Acquire("shipping", shipping, kShipping).body.at("result"), 0);
  EXPECT_EQ(Call("GET", "/v1/applocks/billing", "", kShipping).status, 403u);
  EXPECT_EQ(Call("POST", "/v1/applocks/billing/release",
                 R"({"session":")" + shipping +
                     R"(","resource":"invoice:481","owner":"Session"})",
                 kShipping)
                .status,
            403u);
  auto locks = Call("GET", "/v1/applocks/billing", "", kBilling);
  ASSERT_EQ(locks.body.at("locks").as_array().size(), 1u);
}

TEST_F(ApiAuthTest, EventsNeedReadOnTheNamespaceWatched) {
  EXPECT_EQ(api_->AuthorizeEvents("", "/v1/events?ns=billing").error().code(),
            StatusCode::kUnauthorized);
  EXPECT_EQ(
      api_->AuthorizeEvents(kBilling, "/v1/events?ns=shipping").error().code(),
      StatusCode::kForbidden);
  EXPECT_EQ(api_->AuthorizeEvents(kBilling, "/v1/events").error().code(),
            StatusCode::kForbidden);
  auto mine = api_->AuthorizeEvents(kBillingReader, "/v1/events?ns=billing");
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->ns, "billing");
  EXPECT_FALSE(mine->unscoped);  // other principals' session events stay out
  auto all = api_->AuthorizeEvents(kOps, "/v1/events");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->ns.empty());
  EXPECT_TRUE(all->unscoped);
}

TEST_F(ApiTest, WithoutTokensEveryCallerMayDoEverything) {
  EXPECT_TRUE(api_->AuthorizeEvents("", "/v1/events").has_value());
  ASSERT_EQ(
      Call("POST", "/v1/records/x/k/checkout", R"({"owner":"Asha"})").status,
      200u);
  EXPECT_EQ(Call("POST", "/v1/records/x/k/break", "").status, 200u);
  EXPECT_EQ(Call("GET", "/metrics", "").status, 404u);  // no metrics here
}

}  // namespace
}  // namespace leasehold::server
