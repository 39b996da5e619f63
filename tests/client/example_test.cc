// Runs examples/checkout-editor against a real server: the example a user
// copies must work, not only compile.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "leasehold/client.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

extern char** environ;

namespace leasehold::client {
namespace {

// Runs the example with `args`; returns its exit status.
int RunExample(std::vector<std::string> args) {
  args.insert(args.begin(), CHECKOUT_EDITOR_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Example, CheckoutEditorSavesTwiceAndLeavesNothingHeld) {
  testing::TempDir dir;
  testing::ServerProcess server(dir.File("data"));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  ASSERT_EQ(RunExample({"--url", url, "--key", "k"}), 0);
  ASSERT_EQ(RunExample({"--url", url, "--key", "k"}), 0);

  auto client = Client::Create({url, "", std::chrono::milliseconds(5000)});
  ASSERT_TRUE(client);
  auto rec = client->Get("docs", "k");
  ASSERT_TRUE(rec) << rec.error().message;
  EXPECT_EQ(rec->body, "(empty)\nedited\nedited");
  EXPECT_EQ(rec->version, 3);
  EXPECT_EQ(rec->state, "free");  // checked in
  auto sessions = client->ListSessions();
  ASSERT_TRUE(sessions);
  EXPECT_TRUE(sessions->empty());  // ended, with its lock
}

TEST(Example, CheckoutEditorFailsWithoutAServer) {
  EXPECT_EQ(RunExample({"--url", "http://127.0.0.1:1"}), 1);
}

// Workers race for the same invoices, throw commit answers away and retry;
// consumers crash before acking. The example checks exactly-once itself,
// from the server's events and its fake gateway's ledger.
TEST(Example, InvoiceFinalizerFinalizesAndChargesEachInvoiceOnce) {
  testing::TempDir dir;
  testing::ServerProcess server(dir.File("data"));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  auto run = testing::RunShell(std::string(INVOICE_FINALIZER_BINARY) +
                               " --url " + url +
                               " --invoices 30 --workers 3 --consumers 2 "
                               "--lose 0.4 --crash 0.3 --seed 7 2>&1");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("OK: every invoice was finalized exactly once"),
            std::string::npos)
      << run.out;
  // The run did meet lost answers and crashed consumers, not a calm sea.
  EXPECT_EQ(run.out.find("commit answers thrown away      0\n"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("(0 consumer crashes"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("operation.completed events      30 (30 invoices"),
            std::string::npos)
      << run.out;
}

// Without the operation record and a stable message key, the same run
// charges invoices twice, and the example's checks say so.
TEST(Example, InvoiceFinalizerCatchesDoubleChargesWhenUnsafe) {
  testing::TempDir dir;
  testing::ServerProcess server(dir.File("data"));
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  auto run = testing::RunShell(std::string(INVOICE_FINALIZER_BINARY) +
                               " --url " + url +
                               " --invoices 20 --workers 2 --lose 0.5 "
                               "--crash 0 --seed 11 --unsafe 2>&1");
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_NE(run.out.find("FAILED"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace leasehold::client
