// How to test your own code's reaction to a lost lease or an expired
// session without waiting for real minutes: src/testing/test_server.h
// starts the real server in the test's process with a clock that moves only
// when told (docs/testing.md). Each test below moves it 10 minutes in a few
// milliseconds of real time.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "leasehold/client.h"
#include "testing/test_server.h"

namespace {

using leasehold::client::Client;
using std::chrono::minutes;
using std::chrono::seconds;

// --- the code under test, as an application would write it ---------------

// Edits a document under a 5-minute checkout. When its lease is gone (the
// user left the editor open over lunch), it stops and says why instead of
// overwriting someone else's work.
class DraftEditor {
 public:
  DraftEditor(Client client, std::string key)
      : client_(std::move(client)), key_(std::move(key)) {}

  bool Open(const std::string& who) {
    auto c = client_.Checkout("docs", key_,
                              {.owner = who, .ttl = minutes(5), .token = ""});
    if (!c || !c->granted) return false;
    token_ = c->token;
    return true;
  }

  // Saves the draft; false once the lease is lost, and the editor closes.
  bool Save(const std::string& text) {
    if (closed_) return false;
    auto saved =
        client_.Save("docs", key_, {.owner = "", .token = token_}, text);
    if (saved && saved->done) return true;
    closed_ = true;
    notice_ = "your lease on " + key_ + " ran out: reopen to edit (" +
              (saved ? saved->reason : saved.error().code) + ")";
    return false;
  }

  bool closed() const { return closed_; }
  const std::string& notice() const { return notice_; }

 private:
  Client client_;
  std::string key_;
  std::string token_;
  bool closed_ = false;
  std::string notice_;
};

// A worker that must stop when its session is gone: the locks it held are
// no longer its own.
class Worker {
 public:
  explicit Worker(Client client) : client_(std::move(client)) {}
  bool Start() {
    auto s = client_.OpenSession("worker", seconds(30));
    if (!s) return false;
    session_ = s->id;
    return true;
  }
  // One heartbeat of the worker's loop; false once it has stopped.
  bool Beat() {
    if (stopped_) return false;
    auto kept = client_.Keepalive(session_);
    if (!kept && kept.error().code == "session_not_found") stopped_ = true;
    return !stopped_;
  }
  bool stopped() const { return stopped_; }

 private:
  Client client_;
  std::string session_;
  bool stopped_ = false;
};

// --- the tests -------------------------------------------------------------

class LeaseLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = leasehold::testing::TestServer::Start();
    ASSERT_TRUE(started.has_value()) << started.error().message;
    server_ = std::move(*started);
    client_.emplace(server_->NewClient());
  }
  // Real time is only printed: a loaded machine may be slow, and the
  // test must not fail for it.
  void TearDown() override {
    std::cout << "real time: "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - began_)
                     .count()
              << " ms\n";
  }

  std::unique_ptr<leasehold::testing::TestServer> server_;
  std::optional<Client> client_;
  std::chrono::steady_clock::time_point began_ =
      std::chrono::steady_clock::now();
};

TEST_F(LeaseLossTest, TheEditorClosesWhenItsLeaseRunsOut) {
  ASSERT_TRUE(client_->Put("docs", "invoice-7", "draft 1").has_value());
  DraftEditor editor(*client_, "invoice-7");
  ASSERT_TRUE(editor.Open("Asha"));
  EXPECT_TRUE(editor.Save("draft 2"));

  ASSERT_TRUE(server_->AdvanceClock(minutes(10)).has_value());

  EXPECT_FALSE(editor.Save("draft 3"));
  EXPECT_TRUE(editor.closed());
  EXPECT_NE(editor.notice().find("ran out"), std::string::npos);
  // The document is free for the next editor, and holds what was saved.
  DraftEditor next(*client_, "invoice-7");
  EXPECT_TRUE(next.Open("Ravi"));
  EXPECT_EQ(client_->Get("docs", "invoice-7")->body, "draft 2");
}

TEST_F(LeaseLossTest, TheWorkerStopsWhenItsSessionExpires) {
  Worker worker(*client_);
  ASSERT_TRUE(worker.Start());
  ASSERT_TRUE(server_->AdvanceClock(seconds(29)).has_value());
  EXPECT_TRUE(worker.Beat());  // in time: the session lives 30 s more
  ASSERT_TRUE(server_->AdvanceClock(minutes(10)).has_value());
  EXPECT_FALSE(worker.Beat());
  EXPECT_TRUE(worker.stopped());
}

}  // namespace
