// Sessions survive a SIGKILL of a real `leasehold serve`: over HTTP, the
// old session is kept alive and listed after the restart, a new session's
// id is higher, and a transaction open at the kill is reported lost.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

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

TEST(SessionRestart, SessionsSurviveSigkill) {
  TempDir dir;
  const std::string data = dir.File("data");
  std::string asha;
  std::string bo;
  {
    ServerProcess server(data);
    HttpClient c(server.port());
    asha = OpenSession(c, "Asha");
    bo = OpenSession(c, "Bo");
    const std::string ended = OpenSession(c, "ended");
    ASSERT_EQ(c.Request("DELETE", api::SessionPath(ended)).status, 204u);
    ASSERT_EQ(c.Request("POST", api::TransactionPath(bo)).status, 201u);
    server.Kill();
  }
  ServerProcess server(data);
  HttpClient c(server.port());
  EXPECT_EQ(c.Request("POST", api::SessionPath(asha, "keepalive")).status,
            200u);

  auto list = c.Request("GET", api::SessionsPath());
  ASSERT_EQ(list.status, 200u) << list.body;
  std::vector<std::string> names;
  for (const auto& s : list.json.at("sessions").as_array()) {
    names.emplace_back(s.at("name").as_string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Asha", "Bo"})) << list.body;

  // Bo's transaction died with the process: told once, then it is gone.
  auto lost = c.Request("POST", api::TransactionPath(bo, "commit"));
  EXPECT_EQ(lost.status, 409u) << lost.body;
  EXPECT_EQ(lost.error_code(), "transaction_lost") << lost.body;
  EXPECT_EQ(c.Request("POST", api::TransactionPath(bo)).status, 201u);

  const std::string fresh = OpenSession(c, "new");
  EXPECT_GT(std::stoull(fresh), std::stoull(bo));
}

}  // namespace
}  // namespace leasehold::testing
