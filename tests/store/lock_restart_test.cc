// Application locks survive a SIGKILL of a real `leasehold serve`, over
// HTTP: every holder keeps its mode, count and fence; others are refused
// exactly as before; a lost transaction's lock is freed once it is told;
// new fences are higher. A namespace with "locks": "memory" loses its locks
// instead, grants nothing until their holder is told, and says so once.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using std::chrono::milliseconds;

std::string OpenSession(HttpClient& c, const std::string& name) {
  auto a = c.Request("POST", api::SessionsPath(),
                     api::OpenSessionBody(name, milliseconds(60'000)));
  EXPECT_EQ(a.status, 201u) << a.body;
  return a.status == 201 ? std::string(a.json.at("id").as_string()) : "";
}

// Acquires without waiting; the whole answer (result, fence, mode, count).
HttpAnswer Acquire(HttpClient& c, const std::string& ns,
                   const std::string& session, const std::string& resource,
                   const std::string& mode,
                   const std::string& owner = "Session") {
  client::AcquireOptions o;
  o.mode = mode;
  o.owner = owner;
  o.timeout = milliseconds(0);
  return c.Request("POST", api::ApplockPath(ns, "acquire"),
                   api::AcquireBody(session, resource, o));
}

// An acquire's sp_getapplock code (0 granted, -1 timeout, ...); -100 when
// the answer is not JSON.
std::int64_t Code(const HttpAnswer& a) {
  return a.json.is_object() ? a.json.at("result").to_number<std::int64_t>()
                            : -100;
}

std::uint64_t FenceOf(const HttpAnswer& a) {
  return a.json.at("fence").to_number<std::uint64_t>();
}

unsigned Release(HttpClient& c, const std::string& ns,
                 const std::string& session, const std::string& resource,
                 const std::string& owner = "Session") {
  return c
      .Request("POST", api::ApplockPath(ns, "release"),
               api::ReleaseBody(session, resource, owner, "public"))
      .status;
}

// Every holder of `ns` as GET /v1/applocks/{ns} lists it.
using Holder = std::tuple<std::string, std::string, std::string, std::string,
                          std::int64_t, std::uint64_t, std::string>;
std::set<Holder> Holders(HttpClient& c, const std::string& ns) {
  auto a = c.Request("GET", api::ApplockPath(ns));
  EXPECT_EQ(a.status, 200u) << a.body;
  std::set<Holder> out;
  for (const auto& lock : a.json.at("locks").as_array()) {
    for (const auto& g : lock.at("granted").as_array()) {
      out.emplace(std::string(lock.at("resource").as_string()),
                  std::string(g.at("session").as_string()),
                  std::string(g.at("owner").as_string()),
                  std::string(g.at("mode").as_string()),
                  g.at("count").to_number<std::int64_t>(),
                  g.at("fence").to_number<std::uint64_t>(),
                  std::string(g.at("since").as_string()));
    }
  }
  return out;
}

// The keep-alive's locks_lost, or a failure when it does not answer 200.
bool LocksLost(HttpClient& c, const std::string& session) {
  auto a = c.Request("POST", api::SessionPath(session, "keepalive"));
  EXPECT_EQ(a.status, 200u) << a.body;
  return a.status == 200 && a.json.at("locks_lost").as_bool();
}

bool MetricIs(const std::string& metrics, const std::string& line) {
  return metrics.find("\n" + line + "\n") != std::string::npos;
}

TEST(LockRestart, EveryHolderKeepsItsModeCountAndFenceAcrossSigkill) {
  TempDir dir;
  const std::string data = dir.File("data");
  std::string asha, bo, cy, dee;
  std::uint64_t highest = 0;
  std::set<Holder> before;
  {
    ServerProcess server(data);
    HttpClient c(server.port());
    asha = OpenSession(c, "Asha");
    bo = OpenSession(c, "Bo");
    cy = OpenSession(c, "Cy");
    dee = OpenSession(c, "Dee");
    auto grant = [&](const std::string& s, const std::string& resource,
                     const std::string& mode, const std::string& held,
                     std::int64_t count, const std::string& owner) {
      auto a = Acquire(c, "app", s, resource, mode, owner);
      ASSERT_EQ(Code(a), 0) << a.body;
      EXPECT_EQ(a.json.at("mode").as_string(), held) << a.body;
      EXPECT_EQ(a.json.at("count").to_number<std::int64_t>(), count);
      highest = std::max(highest, FenceOf(a));
    };
    grant(asha, "shared", "Shared", "Shared", 1, "Session");
    grant(asha, "shared", "Shared", "Shared", 2, "Session");  // counted
    grant(bo, "shared", "IntentShared", "IntentShared", 1, "Session");
    grant(asha, "update", "Update", "Update", 1, "Session");
    grant(bo, "six", "IntentExclusive", "IntentExclusive", 1, "Session");
    grant(bo, "six", "Shared", "SharedIntentExclusive", 2, "Session");
    ASSERT_EQ(c.Request("POST", api::TransactionPath(cy)).status, 201u);
    grant(cy, "txn", "Exclusive", "Exclusive", 1, "Transaction");
    grant(dee, "exclusive", "Exclusive", "Exclusive", 1, "Session");
    ASSERT_FALSE(HasFailure());
    before = Holders(c, "app");
    ASSERT_EQ(before.size(), 6u);
    server.Kill();
  }
  ServerProcess server(data);
  HttpClient c(server.port());
  EXPECT_EQ(Holders(c, "app"), before);
  for (const std::string& s : {asha, bo, cy, dee}) {
    EXPECT_FALSE(LocksLost(c, s)) << s;
  }
  const std::string metrics = c.Request("GET", "/metrics").body;
  EXPECT_TRUE(MetricIs(metrics, "leasehold_sessions_restored 4")) << metrics;
  EXPECT_TRUE(MetricIs(metrics, "leasehold_locks_restored 6")) << metrics;

  // Others are refused where the modes conflict, granted where they do not.
  const std::string eve = OpenSession(c, "Eve");
  EXPECT_EQ(Code(Acquire(c, "app", eve, "shared", "Exclusive")), -1);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "shared", "Shared")), 0);
  EXPECT_EQ(Release(c, "app", eve, "shared"), 200u);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "update", "Update")), -1);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "update", "IntentShared")), 0);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "six", "IntentExclusive")), -1);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "six", "IntentShared")), 0);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "exclusive", "IntentShared")), -1);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "txn", "IntentShared")), -1);

  // Cy's transaction died with the process: told once, then its lock is free.
  auto lost = c.Request("POST", api::TransactionPath(cy, "commit"));
  EXPECT_EQ(lost.status, 409u) << lost.body;
  EXPECT_EQ(lost.error_code(), "transaction_lost") << lost.body;
  auto freed = Acquire(c, "app", eve, "txn", "Exclusive");
  ASSERT_EQ(Code(freed), 0) << freed.body;
  EXPECT_GT(FenceOf(freed), highest);

  // Releases are counted: Asha's two references, then Bo's.
  EXPECT_EQ(Release(c, "app", asha, "shared"), 200u);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "shared", "Exclusive")), -1);
  EXPECT_EQ(Release(c, "app", asha, "shared"), 200u);
  EXPECT_EQ(Release(c, "app", asha, "shared"), 409u);  // not_held
  EXPECT_EQ(Code(Acquire(c, "app", eve, "shared", "Exclusive")), -1);
  EXPECT_EQ(Release(c, "app", bo, "shared"), 200u);
  auto exclusive = Acquire(c, "app", eve, "shared", "Exclusive");
  ASSERT_EQ(Code(exclusive), 0) << exclusive.body;
  EXPECT_GT(FenceOf(exclusive), highest);
  EXPECT_EQ(Release(c, "app", bo, "six"), 200u);
  EXPECT_EQ(Release(c, "app", bo, "six"), 200u);
  EXPECT_EQ(Code(Acquire(c, "app", eve, "six", "IntentExclusive")), 0);
}

TEST(LockRestart, AMemoryNamespaceLosesItsLocksAndSaysSoOnce) {
  TempDir dir;
  const std::string data = dir.File("data");
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"namespaces": {"fast": {"locks": "memory"}}})";
  std::string mo;
  std::set<Holder> durable;
  {
    ServerProcess server(data, config);
    HttpClient c(server.port());
    mo = OpenSession(c, "Mo");
    ASSERT_EQ(Code(Acquire(c, "fast", mo, "m", "Exclusive")), 0);
    ASSERT_EQ(Code(Acquire(c, "app", mo, "d", "Exclusive")), 0);
    durable = Holders(c, "app");
    ASSERT_EQ(durable.size(), 1u);
    server.Kill();
  }
  ServerProcess server(data, config);
  HttpClient c(server.port());
  EXPECT_EQ(Holders(c, "app"), durable);
  EXPECT_TRUE(Holders(c, "fast").empty());
  const std::string ned = OpenSession(c, "Ned");
  EXPECT_EQ(Code(Acquire(c, "app", ned, "d", "IntentShared")), -1);
  // The quiet period: Mo still believes it holds "m"; nothing is granted.
  EXPECT_EQ(Code(Acquire(c, "fast", ned, "m", "Exclusive")), -1);
  EXPECT_EQ(Code(Acquire(c, "fast", ned, "other", "Shared")), -1);
  EXPECT_TRUE(LocksLost(c, mo));
  EXPECT_FALSE(LocksLost(c, mo));
  EXPECT_FALSE(LocksLost(c, ned));
  EXPECT_EQ(Code(Acquire(c, "fast", ned, "m", "Exclusive")), 0);
  EXPECT_EQ(Code(Acquire(c, "app", ned, "d", "IntentShared")), -1);
}

}  // namespace
}  // namespace leasehold::testing
