// `leasehold serve --store postgresql://…`, as an operator runs it: a real
// server on a fresh database of the test cluster keeps sessions, records
// and locks across a SIGKILL; and --data with --store is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_postgres.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using std::chrono::milliseconds;

TEST(ServePostgres, SessionsRecordsAndLocksSurviveSigkill) {
  TestDatabase db("serve");
  ASSERT_FALSE(db.url().empty());
  TempDir dir;
  std::string session;
  {
    auto server = ServerProcess::WithStore(db.url(), dir.path());
    HttpClient c(server->port());
    auto opened = c.Request("POST", api::SessionsPath(),
                            api::OpenSessionBody("Asha", milliseconds(60'000)));
    ASSERT_EQ(opened.status, 201u) << opened.body;
    session = std::string(opened.json.at("id").as_string());
    auto put = c.Request("PUT", api::RecordPath("docs", "note"),
                         api::PutBody("kept in PostgreSQL"));
    ASSERT_LT(put.status, 300u) << put.body;
    auto lock = c.Request("POST", api::ApplockPath("app", "acquire"),
                          api::AcquireBody(session, "invoice-7", {}));
    ASSERT_EQ(lock.status, 200u) << lock.body;
    server->Kill();
  }
  auto server = ServerProcess::WithStore(db.url(), dir.path());
  HttpClient c(server->port());
  EXPECT_EQ(c.Request("POST", api::SessionPath(session, "keepalive")).status,
            200u);
  auto note = c.Request("GET", api::RecordPath("docs", "note"));
  ASSERT_EQ(note.status, 200u) << note.body;
  EXPECT_NE(note.body.find("kept in PostgreSQL"), std::string::npos)
      << note.body;
  auto locks = c.Request("GET", api::ApplockPath("app"));
  EXPECT_NE(locks.body.find("invoice-7"), std::string::npos) << locks.body;
  EXPECT_NE(locks.body.find(session), std::string::npos) << locks.body;
}

TEST(ServePostgres, DataAndStoreTogetherAreRefused) {
  TempDir dir;
  const CommandRun run =
      RunShell(LeaseholdBinary() + " serve --data " + dir.File("data") +
               " --store postgresql://postgres@127.0.0.1:1/db 2>&1");
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_NE(run.out.find("give one of them"), std::string::npos) << run.out;
  const CommandRun not_a_url = RunShell(LeaseholdBinary() + " serve --store " +
                                        dir.File("data") + " 2>&1");
  EXPECT_EQ(not_a_url.code, 1) << not_a_url.out;
  EXPECT_NE(not_a_url.out.find("PostgreSQL URL"), std::string::npos)
      << not_a_url.out;
}

}  // namespace
}  // namespace leasehold::testing
