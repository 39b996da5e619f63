// The `leasehold` client subcommands, run as a script would run them,
// against a real server on an ephemeral loopback port.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
namespace api = client::api;
using std::chrono::milliseconds;

class CliTest : public ::testing::Test {
 protected:
  CliTest() : server_(dir_.File("data")) {}

  // Runs `leasehold ARGS` against the server; stdout captured, stderr to
  // a file shown on failure.
  CommandRun Leasehold(const std::string& args) {
    const std::string command =
        "LEASEHOLD_URL=http://127.0.0.1:" + std::to_string(server_.port()) +
        " " + LeaseholdBinary() + " " + args + " 2>>" + dir_.File("stderr");
    return RunShell(command);
  }

  std::string Stderr() {
    std::ifstream in(dir_.File("stderr"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_;
  ServerProcess server_;
};

TEST_F(CliTest, CheckoutSaveCheckinGetAndLs) {
  auto put = Leasehold("put note-17 --ns docs --body 'First draft' --json");
  ASSERT_EQ(put.code, 0) << Stderr();
  EXPECT_EQ(put.json().at("version"), 1);
  EXPECT_EQ(Leasehold("put note-17 --ns docs --body again").code, 1);

  auto checkout =
      Leasehold("checkout note-17 --ns docs --owner Asha --ttl 5m --json");
  ASSERT_EQ(checkout.code, 0) << Stderr();
  const std::string token(checkout.json().at("token").as_string());
  auto refused = Leasehold("checkout note-17 --ns docs --owner Bram");
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(Stderr().find("note-17 is held by Asha, 4:5"), std::string::npos)
      << Stderr();

  EXPECT_EQ(Leasehold("save note-17 --ns docs --owner Bram --body x").code, 1);
  auto saved = Leasehold("save note-17 --ns docs --token " + token +
                         " --body 'Second draft' --if-version 1");
  EXPECT_EQ(saved.code, 0) << Stderr();
  EXPECT_NE(saved.out.find("version 2"), std::string::npos) << saved.out;
  EXPECT_EQ(Leasehold("save note-17 --ns docs --owner Asha --body y "
                      "--if-version 1")
                .code,
            1);

  auto ls = Leasehold("ls --ns docs");
  EXPECT_EQ(ls.code, 0);
  EXPECT_NE(ls.out.find("KEY"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("note-17  locked  Asha"), std::string::npos) << ls.out;
  auto get = Leasehold("get note-17 --ns docs --json");
  EXPECT_EQ(get.json().at("body"), "Second draft");
  EXPECT_EQ(get.json().at("locked_by"), "Asha");

  EXPECT_EQ(Leasehold("checkin note-17 --ns docs --owner Bram").code, 1);
  EXPECT_EQ(Leasehold("checkin note-17 --ns docs --token " + token).code, 0);
  EXPECT_EQ(Leasehold("ls --ns docs --state locked --json")
                .json()
                .at("records")
                .as_array()
                .size(),
            0u);
  EXPECT_EQ(Leasehold("get nothing --ns docs").code, 1);
}

TEST_F(CliTest, RefusedSavesCheckinsAndDeletesSayWhyAndExit1) {
  ASSERT_EQ(Leasehold("put k --ns docs --body v1").code, 0) << Stderr();
  auto checkout = Leasehold("checkout k --ns docs --owner Asha --json");
  ASSERT_EQ(checkout.code, 0) << Stderr();
  const std::string token(checkout.json().at("token").as_string());

  // 423: the lease is someone else's.
  EXPECT_EQ(Leasehold("save k --ns docs --owner Bram --body x").code, 1);
  EXPECT_NE(Stderr().find("refused: not_owner (docs/k)\n"), std::string::npos)
      << Stderr();
  auto save = Leasehold("save k --ns docs --owner Bram --body x --json");
  EXPECT_EQ(save.code, 1);
  EXPECT_EQ(save.json(),
            json::parse(R"({"saved":false,"reason":"not_owner"})"));
  // 412: the record is not at the version the caller expects.
  auto stale = Leasehold("save k --ns docs --token " + token +
                         " --body x --if-version 7");
  EXPECT_EQ(stale.code, 1);
  EXPECT_EQ(stale.out, "");
  EXPECT_NE(Stderr().find("refused: version_mismatch (docs/k)\n"),
            std::string::npos)
      << Stderr();
  auto stale_json = Leasehold("save k --ns docs --token " + token +
                              " --body x --if-version 7 --json");
  EXPECT_EQ(stale_json.code, 1);
  EXPECT_EQ(stale_json.json(),
            json::parse(R"({"saved":false,"reason":"version_mismatch"})"));

  auto checkin = Leasehold("checkin k --ns docs --owner Bram --json");
  EXPECT_EQ(checkin.code, 1);
  EXPECT_EQ(checkin.json(),
            json::parse(R"({"released":false,"reason":"not_owner"})"));
  EXPECT_EQ(Leasehold("delete k --ns docs --owner Bram").code, 1);
  auto del = Leasehold("delete k --ns docs --owner Bram --json");
  EXPECT_EQ(del.code, 1);
  EXPECT_EQ(del.json(),
            json::parse(R"({"deleted":false,"reason":"not_owner"})"));

  // The holder's proof deletes it; then there is nothing left.
  auto deleted = Leasehold("delete k --ns docs --token " + token);
  EXPECT_EQ(deleted.code, 0) << Stderr();
  EXPECT_EQ(deleted.out, "deleted k\n");
  EXPECT_EQ(Leasehold("get k --ns docs").code, 1);
  EXPECT_EQ(Leasehold("delete k --ns docs --token " + token).code, 1);
  EXPECT_EQ(Leasehold("delete k --ns docs").code, 2) << "no proof";
}

// docs/api.md, "Fenced writes": `lock NAME -- CMD` hands CMD its fence,
// and a save with a fence that a newer holder's has passed is refused.
TEST_F(CliTest, FencedWritesFromUnderALock) {
  ASSERT_EQ(Leasehold("put 481 --ns billing --body draft").code, 0) << Stderr();
  const std::string save_under_lock =
      "lock invoice:481 --ns app -- sh -c '" + LeaseholdBinary() +
      " save 481 --ns billing --fence \"$LEASEHOLD_FENCE\" --body \"$0\" && "
      "echo \"$LEASEHOLD_FENCE\"' ";
  auto first = Leasehold(save_under_lock + "first");
  ASSERT_EQ(first.code, 0) << Stderr();
  // COMMAND's last line is the fence it wrote with.
  std::string old_fence = first.out;
  while (!old_fence.empty() && old_fence.back() == '\n') old_fence.pop_back();
  old_fence = old_fence.substr(old_fence.rfind('\n') + 1);
  ASSERT_FALSE(old_fence.empty());
  auto second = Leasehold(save_under_lock + "second");
  ASSERT_EQ(second.code, 0) << Stderr();
  auto got = Leasehold("get 481 --ns billing --json");
  ASSERT_EQ(got.code, 0);
  EXPECT_EQ(got.json().at("body").as_string(), "second");
  const auto write_fence = got.json().at("write_fence").to_number<long long>();
  EXPECT_GT(write_fence, std::stoll(old_fence));
  EXPECT_NE(Leasehold("get 481 --ns billing")
                .out.find("write fence " + std::to_string(write_fence)),
            std::string::npos);

  // The first holder, late: refused (exit 1), saying why, nothing written.
  auto stale =
      Leasehold("save 481 --ns billing --body late --fence " + old_fence);
  EXPECT_EQ(stale.code, 1);
  EXPECT_NE(Stderr().find("stale_fence"), std::string::npos) << Stderr();
  EXPECT_EQ(Leasehold("delete 481 --ns billing --fence " + old_fence).code, 1);
  EXPECT_EQ(Leasehold("get 481 --ns billing --json").json().at("body"),
            "second");
  EXPECT_EQ(Leasehold("save 481 --ns billing --body x --fence 0").code, 2)
      << "a fence is 1 or more";
  EXPECT_EQ(Leasehold("delete 481 --ns billing --fence " +
                      std::to_string(write_fence))
                .code,
            0)
      << Stderr();
  EXPECT_EQ(
      Leasehold("put 481 --ns billing --body back --fence " + old_fence).code,
      1);
}

TEST_F(CliTest, RecordCommandsWordTheirOutcomes) {
  auto put = Leasehold("put k --ns docs --body 'the text'");
  EXPECT_EQ(put.out, "created k, version 1\n");
  auto first = Leasehold("checkout k --ns docs --owner Asha --ttl 5m");
  ASSERT_EQ(first.code, 0) << Stderr();
  EXPECT_EQ(first.out.rfind("checked out k as Asha, ", 0), 0u) << first.out;
  EXPECT_NE(first.out.find(" left\ntoken "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("  fence "), std::string::npos) << first.out;
  auto again = Leasehold("checkout k --ns docs --owner Asha --ttl 5m");
  EXPECT_EQ(again.out.rfind("renewed k as Asha, ", 0), 0u) << again.out;

  auto get = Leasehold("get k --ns docs");
  EXPECT_EQ(get.out.rfind("k  locked by Asha, ", 0), 0u) << get.out;
  EXPECT_NE(get.out.find(" left  version 1  fence "), std::string::npos)
      << get.out;
  EXPECT_EQ(get.out.substr(get.out.size() - 10), "\nthe text\n") << get.out;

  EXPECT_EQ(Leasehold("break k --ns docs").out, "broke the lease on k\n");
  EXPECT_EQ(Leasehold("break k --ns docs").code, 1);
  EXPECT_NE(Stderr().find("k had no lease\n"), std::string::npos) << Stderr();
  auto freed = Leasehold("get k --ns docs");
  EXPECT_EQ(freed.out.rfind("k  free", 0), 0u) << freed.out;
  EXPECT_NE(freed.out.find("  version 1  fence "), std::string::npos)
      << freed.out;
  EXPECT_EQ(Leasehold("purge --ns docs --older-than 1h").out,
            "purged 0 leases\n");
}

TEST_F(CliTest, LsWalksEveryPageUnlessLimited) {
  HttpClient http(server_.port());
  // One more than the server's page of 100.
  for (int i = 0; i < 101; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%03d", i);
    ASSERT_EQ(
        http.Request("PUT", api::RecordPath("docs", key), api::PutBody("x"))
            .status,
        201u);
  }
  auto all = Leasehold("ls --ns docs");
  ASSERT_EQ(all.code, 0) << Stderr();
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 102)
      << "the header and every record";
  EXPECT_NE(all.out.find("\nk100  free"), std::string::npos) << all.out;

  auto page = Leasehold("ls --ns docs --limit 2");
  EXPECT_EQ(page.out.substr(page.out.find('\n') + 1, 4), "k000") << page.out;
  EXPECT_EQ(std::count(page.out.begin(), page.out.end(), '\n'), 3) << page.out;
  auto next = Leasehold("ls --ns docs --limit 2 --after k001 --json");
  EXPECT_EQ(next.json().at("records").as_array().size(), 2u);
  EXPECT_EQ(next.json().at("next"), "k003");
  auto first_page = Leasehold("ls --ns docs --json");
  EXPECT_EQ(first_page.json().at("records").as_array().size(), 100u)
      << "--json prints one page, as the server sent it";
  EXPECT_EQ(Leasehold("ls --ns empty").out,
            "KEY  STATE  HOLDER  EXPIRES  "
            "VERSION\n(none)\n");
}

TEST_F(CliTest, SessionsAndLocksListHoldersWaitersAndTransactions) {
  auto held = Leasehold("lock job:1 --ns app --ttl 60s --json");
  ASSERT_EQ(held.code, 0) << Stderr();
  const std::string session(held.json().at("session").as_string());
  ASSERT_EQ(Leasehold("lock job:2 --ns app --principal ops --session " +
                      session + " --json")
                .code,
            0)
      << Stderr();
  HttpClient http(server_.port());
  auto txn = http.Request("POST", api::TransactionPath(session));
  ASSERT_EQ(txn.status, 201u) << txn.body;
  const std::string txn_id =
      std::to_string(txn.json.at("transaction").to_number<std::int64_t>());

  auto sessions = Leasehold("sessions");
  ASSERT_EQ(sessions.code, 0) << Stderr();
  EXPECT_EQ(sessions.out.rfind("ID", 0), 0u) << sessions.out;
  const std::size_t row = sessions.out.find("\n" + session + "  ");
  ASSERT_NE(row, std::string::npos) << sessions.out;
  const std::string line =
      sessions.out.substr(row + 1, sessions.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" left  2  "), std::string::npos) << line;
  EXPECT_EQ(line.substr(line.size() - txn_id.size()), txn_id) << line;

  // A second session waits for job:1 while the table is printed.
  CommandRun waited;
  std::thread waiter([&] {
    waited = Leasehold(
        "lock job:1 --ns app --session-name Ravi --timeout 20s "
        "-- true");
  });
  std::string locks;
  for (int i = 0; i < 250 && locks.find("waiting 1") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    locks = Leasehold("locks --ns app").out;
  }
  EXPECT_EQ(locks.rfind("RESOURCE     STATE      SESSION", 0), 0u) << locks;
  EXPECT_NE(locks.find("job:1        granted    "), std::string::npos) << locks;
  EXPECT_NE(locks.find("job:1        waiting 1  Ravi #"), std::string::npos)
      << locks;
  EXPECT_NE(locks.find("job:2 (ops)  granted    "), std::string::npos) << locks;
  EXPECT_NE(locks.find("#" + session + "  Exclusive  Session  1  "),
            std::string::npos)
      << locks;
  EXPECT_EQ(Leasehold("unlock job:1 --ns app --session " + session).code, 0);
  waiter.join();
  EXPECT_EQ(waited.code, 0) << Stderr();
}

TEST_F(CliTest, BreakAndPurge) {
  ASSERT_EQ(Leasehold("checkout k --ns ops --owner Asha --ttl 1s").code, 0);
  EXPECT_EQ(Leasehold("break k --ns ops --json").json().at("broken"), true);
  ASSERT_EQ(Leasehold("checkout k --ns ops --owner Bram --ttl 1ms").code, 0);
  std::this_thread::sleep_for(milliseconds(20));
  auto purged = Leasehold("purge --ns ops --older-than 0 --json");
  EXPECT_EQ(purged.code, 0);
  EXPECT_EQ(purged.json().at("purged"), 1);
}

TEST_F(CliTest, LockRunsTheCommandWhileHoldingTheLock) {
  // The command sees its fence and lock; its exit status is passed on.
  auto run = Leasehold(
      "lock invoice:481 --ns app -- sh -c 'echo $LEASEHOLD_LOCK "
      "$LEASEHOLD_FENCE; exit 7'");
  EXPECT_EQ(run.code, 7) << Stderr();
  EXPECT_EQ(run.out.rfind("app/invoice:481 ", 0), 0u) << run.out;
  EXPECT_GT(std::stoull(run.out.substr(16)), 0u) << run.out;

  // While one command holds it, another is refused after its timeout.
  const std::string started = dir_.File("started");
  std::thread holder([&] {
    Leasehold("lock invoice:481 --ns app -- sh -c 'touch " + started +
              "; sleep 2'");
  });
  for (int i = 0; i < 200 && !std::ifstream(started); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(std::ifstream(started).good()) << Stderr();
  EXPECT_EQ(Leasehold("lock invoice:481 --ns app --timeout 100ms -- true").code,
            1);
  EXPECT_EQ(Leasehold("lock invoice:481 --ns app --timeout 0 "
                      "--conflict-exit-code 75 -- true")
                .code,
            75);
  // A shared request waits for the holder, then runs.
  EXPECT_EQ(Leasehold("lock invoice:481 --ns app --mode Shared --timeout 10s "
                      "-- true")
                .code,
            0);
  holder.join();
  EXPECT_EQ(Leasehold("lock invoice:481 --ns app -- no-such-command-xyz").code,
            127);
  // Nothing is left behind: no session, no lock.
  EXPECT_EQ(
      Leasehold("locks --ns app --json").json().at("locks").as_array().size(),
      0u);
}

TEST_F(CliTest, ALockLostWhileTheCommandRunsStopsItAndExits4) {
  const std::string session_file = dir_.File("session");
  CommandRun run;
  std::thread locked([&] {
    run = Leasehold(
        "lock job --ns app --ttl 600ms -- sh -c 'echo "
        "$LEASEHOLD_SESSION > " +
        session_file + "; exec sleep 30'");
  });
  std::string session;
  for (int i = 0; i < 250 && session.empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    std::ifstream(session_file) >> session;
  }
  ASSERT_FALSE(session.empty()) << Stderr();
  HttpClient http(server_.port());  // the operator ends the session
  EXPECT_EQ(http.Request("DELETE", api::SessionPath(session)).status, 204u);
  const auto start = std::chrono::steady_clock::now();
  locked.join();
  EXPECT_EQ(run.code, 4) << Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20))
      << "the command was not stopped";
  EXPECT_NE(Stderr().find("lost the lock on job"), std::string::npos);
}

TEST_F(CliTest, ALockPastItsHoldLimitStopsTheCommandAndExits4) {
  const auto start = std::chrono::steady_clock::now();
  const CommandRun run = Leasehold(
      "lock nightly --ns app --ttl 600ms --max-hold 300ms -- sleep 30");
  EXPECT_EQ(run.code, 4) << Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20))
      << "the command was not stopped";
  EXPECT_NE(Stderr().find("expired: its hold limit passed"), std::string::npos)
      << Stderr();
  EXPECT_EQ(Leasehold("lock x --ns app --max-hold -1 -- true").code, 2)
      << Stderr();
}

TEST_F(CliTest, LockWithoutCommandStaysWithTheSessionUntilUnlock) {
  auto locked = Leasehold("lock job:1 --ns app --ttl 60s --json");
  ASSERT_EQ(locked.code, 0) << Stderr();
  const std::string session(locked.json().at("session").as_string());
  auto locks = Leasehold("locks --ns app");
  EXPECT_NE(locks.out.find("job:1"), std::string::npos) << locks.out;
  EXPECT_NE(locks.out.find("Exclusive"), std::string::npos) << locks.out;
  EXPECT_EQ(Leasehold("lock job:1 --ns app --timeout 0").code, 1);
  auto sessions = Leasehold("sessions --json");
  EXPECT_EQ(sessions.json().at("sessions").as_array().size(), 1u)
      << "a refused lock must not leave its new session behind";
  EXPECT_EQ(Leasehold("unlock job:1 --ns app --session " + session).code, 0);
  EXPECT_EQ(Leasehold("unlock job:1 --ns app --session " + session).code, 1);
  EXPECT_EQ(
      Leasehold("lock job:1 --ns app --timeout 0 --session " + session).code,
      0);
}

TEST_F(CliTest, LockAndTakesSeveralLocksAllOrNothing) {
  // With a command: every lock is held while it runs, fences in the env.
  auto run = Leasehold(
      "lock account:B --and account:A --ns app -- sh -c "
      "'echo $LEASEHOLD_FENCES'");
  EXPECT_EQ(run.code, 0) << Stderr();
  EXPECT_EQ(run.out.rfind("account:A=", 0), 0u)
      << "canonical order: " << run.out;
  EXPECT_NE(run.out.find(" account:B="), std::string::npos) << run.out;

  // Without a command: held by the session; a refusal takes nothing.
  auto held = Leasehold("lock b --and c --ns app --ttl 60s --json");
  ASSERT_EQ(held.code, 0) << Stderr();
  ASSERT_EQ(held.json().at("locks").as_array().size(), 2u);
  auto refused = Leasehold("lock a --and c --ns app --timeout 0 --json");
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(refused.json().at("resource"), "c");
  auto locks = Leasehold("locks --ns app --json").json().at("locks");
  ASSERT_EQ(locks.as_array().size(), 2u) << "a was not left behind";
  EXPECT_EQ(locks.at(0).at("resource"), "b");
  EXPECT_EQ(Leasehold("lock a --and a --ns app").code, 3) << "listed twice";
}

// Semaphores: `lock NAME --limit N --permits K -- COMMAND`. Each command
// notes its start in a log, then holds on until the file "go" exists, so
// that which commands ran at once is read from the log, not from a clock.
class CliSemaphoreTest : public CliTest {
 protected:
  // `lock pool --ns app FLAGS -- COMMAND` for the command named `who`.
  std::string HoldPermits(const std::string& who, const std::string& flags) {
    return "lock pool --ns app " + flags + " -- sh -c 'echo start " + who +
           " $LEASEHOLD_PERMITS >> " + log_ + "; while [ ! -e " + go_ +
           " ]; do sleep 0.02; done; echo end " + who + " >> " + log_ + "'";
  }
  std::string Log() {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Polls until `done` holds, for 10 s at most (a bound, not a measure:
  // what ran at once is read from the log).
  static bool Eventually(const std::function<bool()>& done) {
    const auto give_up =
        std::chrono::steady_clock::now() + milliseconds(10'000);
    while (!done()) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return true;
  }
  std::size_t Waiters() {
    auto listed = Leasehold("semaphores --ns app --json");
    if (listed.code != 0) return 0;
    const json::value answer = listed.json();
    std::size_t n = 0;
    for (const auto& s : answer.at("semaphores").as_array()) {
      n += s.at("waiting").as_array().size();
    }
    return n;
  }

  const std::string log_ = dir_.File("log");
  const std::string go_ = dir_.File("go");
};

TEST_F(CliSemaphoreTest, OnePermitOfOneRunsTheCommandsOneAfterTheOther) {
  CommandRun a, b;
  std::thread first(
      [&] { a = Leasehold(HoldPermits("A", "--limit 1 --permits 1")); });
  ASSERT_TRUE(Eventually([&] { return !Log().empty(); })) << Stderr();
  std::thread second([&] {
    b = Leasehold(HoldPermits("B", "--limit 1 --permits 1 --session-name B"));
  });
  const bool b_waits = Eventually([&] { return Waiters() == 1; });
  auto table = Leasehold("semaphores --ns app");
  std::ofstream(go_).put('\n');
  first.join();
  second.join();
  ASSERT_TRUE(b_waits) << "B did not wait for A: " << Log();
  EXPECT_EQ(Log(), "start A 1\nend A\nstart B 1\nend B\n");
  EXPECT_EQ(a.code, 0) << Stderr();
  EXPECT_EQ(b.code, 0) << Stderr();

  // `semaphores` showed A holding and B waiting.
  EXPECT_EQ(table.code, 0) << Stderr();
  EXPECT_EQ(table.out.rfind("NAME  LIMIT  STATE      SESSION", 0), 0u)
      << table.out;
  EXPECT_NE(table.out.find("\npool  1      granted    "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("\npool  1      waiting 1  B #"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("  1        Session  "), std::string::npos)
      << table.out;
  // Nothing is left behind.
  EXPECT_EQ(Leasehold("semaphores --ns app").out,
            "NAME  LIMIT  STATE  SESSION  PERMITS  OWNER  SINCE\n(none)\n");
}

TEST_F(CliSemaphoreTest, OnePermitOfTwoLetsTwoCommandsRunAtOnce) {
  CommandRun a, b;
  std::thread first(
      [&] { a = Leasehold(HoldPermits("A", "--limit 2 --permits 1")); });
  ASSERT_TRUE(Eventually([&] { return !Log().empty(); })) << Stderr();
  std::thread second(
      [&] { b = Leasehold(HoldPermits("B", "--limit 2 --permits 1")); });
  // B starts while A still runs (A cannot end before "go").
  const bool overlapped =
      Eventually([&] { return Log().find("start B") != std::string::npos; });
  std::ofstream(go_).put('\n');
  first.join();
  second.join();
  ASSERT_TRUE(overlapped) << "B did not start while A ran: " << Log();
  EXPECT_EQ(Log().rfind("start A 1\nstart B 1\n", 0), 0u) << Log();
  EXPECT_EQ(a.code, 0) << Stderr();
  EXPECT_EQ(b.code, 0) << Stderr();
}

TEST_F(CliSemaphoreTest, BadFlagsAndAnotherLimitAreRefused) {
  const auto usage = [&](const std::string& flags) {
    return Leasehold("lock pool --ns app " + flags).code;
  };
  EXPECT_EQ(usage("--permits 2 -- true"), 2);
  EXPECT_NE(Stderr().find("--permits needs --limit"), std::string::npos);
  EXPECT_EQ(usage("--limit 2 --mode Shared -- true"), 2);
  EXPECT_NE(Stderr().find("--mode is for locks"), std::string::npos);
  EXPECT_EQ(usage("--limit 2 --and other -- true"), 2);
  EXPECT_EQ(usage("--limit 2 --permits 3 -- true"), 2);
  EXPECT_NE(Stderr().find("more than --limit 2"), std::string::npos);
  EXPECT_EQ(usage("--limit 0 -- true"), 2);

  // While A holds it with limit 1, another limit is an error (3), a full
  // semaphore a refusal (1, or --conflict-exit-code).
  CommandRun a;
  std::thread first([&] { a = Leasehold(HoldPermits("A", "--limit 1")); });
  ASSERT_TRUE(Eventually([&] { return !Log().empty(); })) << Stderr();
  EXPECT_EQ(usage("--limit 2 --timeout 0 -- true"), 3);
  EXPECT_NE(Stderr().find("leasehold: limit_mismatch: "), std::string::npos)
      << Stderr();
  EXPECT_EQ(usage("--limit 1 --timeout 0 -- true"), 1);
  EXPECT_NE(Stderr().find("1 of 1 permits of pool not granted: timeout"),
            std::string::npos)
      << Stderr();
  EXPECT_EQ(usage("--limit 1 --timeout 0 --conflict-exit-code 75 -- true"), 75);
  std::ofstream(go_).put('\n');
  first.join();
  EXPECT_EQ(a.code, 0) << Stderr();
}

TEST_F(CliSemaphoreTest, PermitsWithoutCommandStayWithTheSessionUntilUnlock) {
  auto held = Leasehold("lock pool --ns app --limit 3 --permits 2 --json");
  ASSERT_EQ(held.code, 0) << Stderr();
  const std::string session(held.json().at("session").as_string());
  EXPECT_EQ(held.json().at("permits"), 2);
  EXPECT_EQ(
      Leasehold("lock pool --ns app --limit 3 --permits 2 --timeout 0").code,
      1);
  EXPECT_EQ(
      Leasehold("sessions --json").json().at("sessions").as_array().size(), 1u)
      << "a refused request must not leave its new session behind";
  auto listed = Leasehold("semaphores --ns app --json").json();
  EXPECT_EQ(listed.at("semaphores").at(0).at("held"), 2);

  EXPECT_EQ(
      Leasehold("unlock pool --ns app --permits 1 --session " + session).code,
      2)
      << "--permits without --semaphore";
  auto one = Leasehold(
      "unlock pool --ns app --semaphore --permits 1 --json "
      "--session " +
      session);
  ASSERT_EQ(one.code, 0) << Stderr();
  EXPECT_EQ(one.json().at("permits"), 1);
  auto rest =
      Leasehold("unlock pool --ns app --semaphore --session " + session);
  EXPECT_EQ(rest.code, 0) << Stderr();
  EXPECT_EQ(rest.out, "released permits of app/pool; the session holds 0\n");
  EXPECT_EQ(
      Leasehold("unlock pool --ns app --semaphore --session " + session).code,
      1)
      << "not_held";
}

TEST_F(CliTest, WatchPrintsEventsAsTheyHappen) {
  CommandRun watched;
  std::thread watcher(
      [&] { watched = Leasehold("watch --ns live --count 2 --json"); });
  // Events before the subscription reaches the server are not seen, so
  // keep making them until the watcher has its two.
  for (int i = 0; i < 100 && watched.code == -1; ++i) {
    Leasehold("checkout k" + std::to_string(i) + " --ns live --owner Asha");
    std::this_thread::sleep_for(milliseconds(50));
  }
  watcher.join();
  ASSERT_EQ(watched.code, 0) << Stderr();
  std::size_t lines = 0;
  for (std::size_t at = 0;
       (at = watched.out.find('\n', at)) != std::string::npos; ++at) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u) << watched.out;
  EXPECT_NE(watched.out.find("\"type\":\"checkout.granted\""),
            std::string::npos)
      << watched.out;
}

TEST_F(CliTest, ExitCodesTellScriptsWhatHappened) {
  EXPECT_EQ(Leasehold("checkout").code, 2);               // missing key
  EXPECT_EQ(Leasehold("lock x --timeout soon").code, 2);  // bad duration
  EXPECT_EQ(Leasehold("save k --body x").code, 2);        // no proof
  // Unreachable: a port nobody listens on.
  EXPECT_EQ(
      RunShell(LeaseholdBinary() + " ls --url http://127.0.0.1:1 2>/dev/null")
          .code,
      3);
  auto bad =
      Leasehold("put " + std::string(256, 'k') + " --ns docs --body x --json");
  EXPECT_EQ(bad.code, 3);
  auto help = RunShell(LeaseholdBinary() + " --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos) << help.out;
}

// --version prints one line, "leasehold VERSION" (help2man makes the
// package's man page of it), naming the build the server reports.
TEST_F(CliTest, VersionIsTheOneTheServerReports) {
  const CommandRun printed = RunShell(LeaseholdBinary() + " --version");
  EXPECT_EQ(printed.code, 0);
  ASSERT_TRUE(printed.out.starts_with("leasehold ")) << printed.out;
  ASSERT_TRUE(printed.out.ends_with("\n")) << printed.out;
  const std::string version = printed.out.substr(10, printed.out.size() - 11);
  ASSERT_FALSE(version.empty());
  EXPECT_TRUE(version[0] >= '0' && version[0] <= '9') << version;
  EXPECT_EQ(version.find_first_of(" \n"), std::string::npos) << version;
  HttpClient c(server_.port());
  for (const char* path : {"/healthz", "/v1/cluster"}) {
    const HttpAnswer a = c.Request("GET", path);
    ASSERT_EQ(a.status, 200u) << path;
    EXPECT_EQ(json::value_to<std::string>(a.json.at("version")), version)
        << path << " " << a.body;
  }
  const HttpAnswer metrics = c.Request("GET", "/metrics");
  EXPECT_NE(metrics.body.find("\nleasehold_build_info{version=\"" + version +
                              "\"} 1\n"),
            std::string::npos)
      << metrics.body;
}

TEST(CliAuthTest, TheTokenComesFromTheFlagOrTheEnvironment) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"tokens": [{"token": "docs-writer-token-01",
      "principal": "docs", "namespaces": ["docs"], "role": "write"}]})";
  ServerProcess server(dir.File("data"), config);
  const std::string run =
      "LEASEHOLD_URL=http://127.0.0.1:" + std::to_string(server.port()) + " ";
  const std::string binary = LeaseholdBinary() + " ";
  auto code = [](const std::string& command) {
    const int status = std::system((command + " >/dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(code(run + binary + "ls --ns docs"), 3);  // 401
  EXPECT_EQ(
      code(run + binary + "ls --ns docs --auth-token docs-writer-token-01"), 0);
  EXPECT_EQ(code(run + "LEASEHOLD_TOKEN=docs-writer-token-01 " + binary +
                 "checkout k --ns docs --owner Asha"),
            0);
  EXPECT_EQ(code(run + "LEASEHOLD_TOKEN=docs-writer-token-01 " + binary +
                 "ls --ns other"),
            3);  // 403
  EXPECT_EQ(code(run + "LEASEHOLD_TOKEN=docs-writer-token-01 " + binary +
                 "lock job --ns docs -- true"),
            0);
}

// Whether `port`'s server lists a waiter in "app", polled for about 10 s.
bool SomeoneWaitsIn(std::uint16_t port) {
  HttpClient http(port);
  for (int i = 0; i < 1000; ++i) {
    auto locks = http.Request("GET", api::ApplockPath("app"));
    for (const auto& lock : locks.json.at("locks").as_array()) {
      if (!lock.at("waiting").as_array().empty()) return true;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

// `lock ARGS -- COMMAND` for ARGS that name b (held by another session when
// the command starts) and maybe more: the server is killed while the
// command waits for b and restarted on the same data and port.
struct LockAcrossRestart {
  std::string args;                    // after `lock`
  std::vector<std::string> resources;  // what the command must hold
};

class CliRestartTest : public ::testing::TestWithParam<LockAcrossRestart> {};

TEST_P(CliRestartTest, ALockWaitRidesThroughARestart) {
  TempDir dir;
  auto first = std::make_unique<ServerProcess>(dir.File("data"));
  const std::uint16_t port = first->port();
  std::string holder;
  {
    HttpClient http(port);
    auto opened =
        http.Request("POST", api::SessionsPath(),
                     api::OpenSessionBody("holder", milliseconds(60'000)));
    ASSERT_EQ(opened.status, 201u) << opened.body;
    holder = std::string(opened.json.at("id").as_string());
    client::AcquireOptions now;
    now.owner = "Session";
    now.timeout = milliseconds(0);
    auto held = http.Request("POST", api::ApplockPath("app", "acquire"),
                             api::AcquireBody(holder, "b", now));
    ASSERT_EQ(held.status, 200u) << held.body;
  }
  // The command prints the locks as it sees them.
  const std::string stderr_file = dir.File("stderr");
  CommandRun run;
  std::thread locked([&] {
    run = RunShell("LEASEHOLD_URL=http://127.0.0.1:" + std::to_string(port) +
                   " " + LeaseholdBinary() + " lock " + GetParam().args +
                   " --ns app --timeout 60s -- " + LeaseholdBinary() +
                   " locks --ns app --json 2>>" + stderr_file);
  });
  EXPECT_TRUE(SomeoneWaitsIn(port));  // not ASSERT: `locked` must be joined

  first->Kill();  // a lock taken before the wait is on disk: it comes back
  ServerProcess second(dir.File("data"), "", {}, port);
  HttpClient http(port);
  auto released =
      http.Request("POST", api::ApplockPath("app", "release"),
                   api::ReleaseBody(holder, "b", "Session", "public"));
  EXPECT_EQ(released.status, 200u) << released.body;
  locked.join();
  std::ifstream errors(stderr_file);
  const std::string stderr_text(std::istreambuf_iterator<char>(errors), {});
  ASSERT_EQ(run.code, 0) << stderr_text;
  std::vector<std::string> held;
  const json::value seen = run.json();
  for (const auto& lock : seen.at("locks").as_array()) {
    held.emplace_back(lock.at("resource").as_string());
    const auto& holders = lock.at("granted").as_array();
    ASSERT_EQ(holders.size(), 1u) << run.out;
    EXPECT_EQ(holders[0].at("count"), 1) << "taken twice: " << run.out;
  }
  EXPECT_EQ(held, GetParam().resources) << run.out;
  // The command's session ended with it: nothing is held any more.
  auto locks = http.Request("GET", api::ApplockPath("app"));
  EXPECT_TRUE(locks.json.at("locks").as_array().empty()) << locks.body;
}

INSTANTIATE_TEST_SUITE_P(OneLockAndSeveral, CliRestartTest,
                         ::testing::Values(LockAcrossRestart{"b", {"b"}},
                                           LockAcrossRestart{"b --and a",
                                                             {"a", "b"}}),
                         [](const auto& test) {
                           return test.param.resources.size() == 1
                                      ? std::string("Lock")
                                      : std::string("LockAnd");
                         });

}  // namespace
}  // namespace leasehold::testing
