// Disk and I/O faults under a real `leasehold serve` on SQLite: fault_shim
// (preloaded into the server, fault_shim.cc) fails the WAL's fdatasync or
// write with EIO or ENOSPC while the test watches. Whatever fails, a write
// that did not reach the disk is answered 503 `unavailable` naming the
// cause, never 2xx; /healthz says 503; the server closes the failed store,
// opens it again (the shim logs each open) and reloads it before it
// acknowledges anything new, by itself; every acknowledged change is there
// afterwards, and after a kill -9 and a restart, and the refused one is
// not. A kill -9 during the fault loses nothing acknowledged either.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

bool Acknowledged(const HttpAnswer& a) {
  return a.status == 200 || a.status == 201;
}

std::string Body(const std::string& key) { return "body of " + key; }

class IoFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::filesystem::canonical(dir_.path()).string();
    data_ = dir + "/data";
    control_ = dir + "/fault-rule";
    StartServer(/*with_shim=*/true);
  }

  // The server, with the shim preloaded or without it.
  void StartServer(bool with_shim) {
    client_.reset();
    std::vector<std::string> env;
    if (with_shim) {
      const char* asan = std::getenv("ASAN_OPTIONS");
      env = {"LD_PRELOAD=" LEASEHOLD_FAULT_SHIM,
             "LEASEHOLD_FAULT_PREFIX=" + data_ + "/",
             "LEASEHOLD_FAULT_CONTROL=" + control_,
             // The shim comes before the sanitizer's runtime.
             "ASAN_OPTIONS=" + std::string(asan != nullptr ? asan : "") +
                 ":verify_asan_link_order=0"};
    }
    server_ = std::make_unique<ServerProcess>(data_, config_, env);
    client_ = std::make_unique<HttpClient>(server_->port());
  }

  // Replaces the shim's rule at once (a rename: never half written).
  void Arm(const std::string& rule) {
    std::ofstream(control_ + ".tmp") << rule << "\n";
    std::filesystem::rename(control_ + ".tmp", control_);
  }
  void Disarm() { Arm("off"); }

  // The calls the shim has failed so far, one line each.
  std::vector<std::string> Injected() {
    std::vector<std::string> lines;
    std::ifstream in(control_ + ".log");
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("open ")) lines.push_back(line);
    }
    return lines;
  }
  // How many times the server has opened its database file.
  int Opens() {
    int n = 0;
    std::ifstream in(control_ + ".log");
    for (std::string line; std::getline(in, line);) {
      n += line == "open " + data_ + "/leasehold.db";
    }
    return n;
  }

  HttpAnswer Put(const std::string& key) {
    return client_->Request("PUT", api::RecordPath("docs", key),
                            api::PutBody(Body(key)));
  }
  HttpAnswer Get(const std::string& key) {
    return client_->Request("GET", api::RecordPath("docs", key));
  }
  unsigned Health() {
    return client_->Request("GET", api::HealthPath()).status;
  }
  // A counter or gauge of /metrics (-1 if absent).
  long Metric(const std::string& name) {
    const std::string body = client_->Request("GET", "/metrics").body;
    const auto at = body.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stol(body.substr(at + name.size() + 2));
  }

  // A session holding an Exclusive session lock on "job", and records:
  // what must survive every fault.
  void WriteAcknowledgedState() {
    auto session =
        client_->Request("POST", api::SessionsPath(),
                         api::OpenSessionBody("Asha", milliseconds(60'000)));
    ASSERT_EQ(session.status, 201u) << session.body;
    session_ = std::string(session.json.at("id").as_string());
    client::AcquireOptions now;
    now.timeout = milliseconds(0);
    auto lock = client_->Request("POST", api::ApplockPath("app", "acquire"),
                                 api::AcquireBody(session_, "job", now));
    ASSERT_EQ(lock.status, 200u) << lock.body;
    for (int i = 0; i < 5; ++i) {
      const std::string key = "before-" + std::to_string(i);
      ASSERT_TRUE(Acknowledged(Put(key))) << key;
      acknowledged_.push_back(key);
    }
  }

  // Every acknowledged record with its body, the lock still held, and no
  // trace of the refused write.
  void ExpectAcknowledgedStateAndNotTheRefused(const std::string& refused) {
    for (const std::string& key : acknowledged_) {
      auto read = Get(key);
      ASSERT_EQ(read.status, 200u) << key << ": " << read.body;
      EXPECT_EQ(read.json.at("body").as_string(), Body(key));
    }
    auto gone = Get(refused);
    EXPECT_EQ(gone.status, 404u)
        << "the refused write came back: " << gone.body;
    auto mode = client_->Request(
        "GET", api::ModePath("app", session_, "job", "Session", "public"));
    ASSERT_EQ(mode.status, 200u) << mode.body;
    EXPECT_EQ(mode.json.at("mode").as_string(), "Exclusive");
  }

  // Writes until one is acknowledged (within 15 s); every other answer
  // must be 503. When the first is acknowledged, the store must already
  // have been opened again (more than `opens` times in all) and reloaded:
  // nothing is acknowledged before.
  void WriteUntilAcknowledged(int opens) {
    const auto give_up = Clock::now() + std::chrono::seconds(15);
    for (int i = 0; Clock::now() < give_up; ++i) {
      const std::string key = "after-" + std::to_string(i);
      auto put = Put(key);
      if (Acknowledged(put)) {
        acknowledged_.push_back(key);
        EXPECT_GT(Opens(), opens)
            << "a write was acknowledged before the store was opened again";
        EXPECT_GE(Metric("leasehold_store_recoveries_total"), 1)
            << "a write was acknowledged before the store was reloaded";
        return;
      }
      ASSERT_EQ(put.status, 503u) << put.body;
      std::this_thread::sleep_for(milliseconds(20));
    }
    FAIL() << "no write acknowledged within 15 s of the fault";
  }

  bool AwaitHealthy(std::chrono::seconds within) {
    const auto give_up = Clock::now() + within;
    while (Clock::now() < give_up) {
      if (Health() == 200) return true;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
  }

  // kill -9, then a restart on the same data without the shim.
  void KillAndRestart() {
    server_->Kill();
    StartServer(/*with_shim=*/false);
  }

  TempDir dir_;
  std::string data_, control_;
  std::string config_;  // a config file for StartServer ("" for none)
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<HttpClient> client_;
  std::string session_;
  std::vector<std::string> acknowledged_;
};

// One fault: the rule, the call the shim logs, what the 503 must say.
struct Fault {
  const char* name;
  const char* rule;
  const char* call;
  const char* message;
};

void PrintTo(const Fault& fault, std::ostream* os) { *os << fault.name; }

class OneFaultTest : public IoFaultsTest,
                     public ::testing::WithParamInterface<Fault> {};

TEST_P(OneFaultTest, RefusedNeverAcknowledgedRecoversLosesNothing) {
  const Fault& fault = GetParam();
  WriteAcknowledgedState();
  const int opens = Opens();
  ASSERT_EQ(opens, 1);
  Arm(fault.rule);

  auto refused = Put("refused");
  ASSERT_EQ(refused.status, 503u) << refused.body;
  EXPECT_EQ(refused.error_code(), "unavailable");
  EXPECT_NE(refused.body.find(fault.message), std::string::npos)
      << "the answer names the cause: " << refused.body;
  const auto injected = Injected();
  ASSERT_EQ(injected.size(), 1u) << "the shim failed one call";
  EXPECT_EQ(injected[0].rfind(fault.call, 0), 0u) << injected[0];
  EXPECT_NE(injected[0].find(data_ + "/leasehold.db-wal"), std::string::npos)
      << injected[0];
  // The recovery's first attempt comes 100 ms after the failure, so this
  // is nearly always before it; (armed_for_a_while below holds it off).
  if (Metric("leasehold_store_recoveries_total") == 0) {
    EXPECT_EQ(Health(), 503u);
  }

  WriteUntilAcknowledged(opens);
  EXPECT_EQ(Health(), 200u);
  EXPECT_EQ(Metric("leasehold_store_recoveries_total"), 1);
  EXPECT_EQ(Metric("leasehold_store_up"), 1);
  ExpectAcknowledgedStateAndNotTheRefused("refused");

  KillAndRestart();
  ExpectAcknowledgedStateAndNotTheRefused("refused");
  EXPECT_EQ(server_->Terminate(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, OneFaultTest,
    ::testing::Values(
        Fault{"FsyncEio", "ops=fdatasync errno=EIO count=1", "fdatasync",
              "fsync failed: Input/output error"},
        Fault{"FsyncEnospc", "ops=fdatasync errno=ENOSPC count=1", "fdatasync",
              "fsync failed: No space left on device"},
        Fault{"WalWriteEio", "ops=pwrite errno=EIO count=1 suffix=-wal",
              "pwrite", "write failed: Input/output error"},
        // SQLite reports a write's ENOSPC as SQLITE_FULL.
        Fault{"WalWriteEnospc", "ops=pwrite errno=ENOSPC count=1 suffix=-wal",
              "pwrite", "database or disk is full"}),
    [](const ::testing::TestParamInfo<Fault>& param) {
      return std::string(param.param.name);
    });

// A fault that lasts several seconds (every matching call fails): every
// write and /healthz answer 503 the whole time, the server retries with
// backoff (a handful of attempts, not a loop; none reported as a
// recovery), and recovers once, by itself, once the disk works again, with
// the refused write gone although the disk still failed when it was
// closed. The WAL-write fault spares the database file, so the failed
// store closes at once: only the write that proves a reopened store
// (SqliteStore's open) keeps the server from reporting itself healthy.
class ArmedForAWhileTest : public IoFaultsTest,
                           public ::testing::WithParamInterface<Fault> {};

TEST_P(ArmedForAWhileTest, Answers503WithBackoffThenRecoversOnce) {
  const Fault& fault = GetParam();
  WriteAcknowledgedState();
  const int opens = Opens();
  Arm(fault.rule);
  auto refused = Put("refused");
  ASSERT_EQ(refused.status, 503u) << refused.body;

  const auto until = Clock::now() + std::chrono::seconds(6);
  int checks = 0;
  for (int i = 0; Clock::now() < until; ++i) {
    ASSERT_EQ(Health(), 503u) << "healthy on a disk that fails";
    auto put = Put("while-" + std::to_string(i));
    ASSERT_EQ(put.status, 503u) << put.body;
    EXPECT_NE(put.body.find(fault.message), std::string::npos) << put.body;
    // Reads answer 503 too: the engine may hold the refused write.
    EXPECT_EQ(Get("before-0").status, 503u);
    ++checks;
    std::this_thread::sleep_for(milliseconds(250));
  }
  ASSERT_GE(checks, 10);
  // One failed call for the refused write, then one per recovery attempt:
  // after 100, 200, 400, 800, 1600, 3200 ms (doubling, up to 5 s).
  const std::size_t failed = Injected().size();
  EXPECT_GE(failed, 4u) << "the server stopped trying";
  EXPECT_LE(failed, 10u) << "the server retries without backing off";
  EXPECT_EQ(Metric("leasehold_store_recoveries_total"), 0);
  EXPECT_EQ(Metric("leasehold_store_up"), 0);

  Disarm();
  ASSERT_TRUE(AwaitHealthy(std::chrono::seconds(15)))
      << "no recovery within 15 s of the disk working again";
  EXPECT_EQ(Metric("leasehold_store_recoveries_total"), 1);
  WriteUntilAcknowledged(opens);
  ExpectAcknowledgedStateAndNotTheRefused("refused");

  KillAndRestart();
  ExpectAcknowledgedStateAndNotTheRefused("refused");
  // No crash, no sanitizer report: it stops cleanly.
  EXPECT_EQ(server_->Terminate(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ArmedForAWhileTest,
    ::testing::Values(Fault{"Fsync", "ops=fdatasync errno=EIO count=all",
                            "fdatasync", "fsync failed: Input/output error"},
                      Fault{"WalWrite",
                            "ops=pwrite errno=EIO count=all suffix=-wal",
                            "pwrite", "write failed: Input/output error"}),
    [](const ::testing::TestParamInfo<Fault>& param) {
      return std::string(param.param.name);
    });

// kill -9 while fdatasync still fails, before the server could close the
// failed store: the restart has every acknowledged change. The refused
// write is then in doubt, as after any crash between a write and its
// answer: its transaction is in the WAL, whole, and SQLite replays it if
// it reached the disk (here it did: the shim fails the call, not the
// disk). Never half of it.
TEST_F(IoFaultsTest, KilledDuringTheFaultLosesNothingAcknowledged) {
  WriteAcknowledgedState();
  Arm("ops=fdatasync errno=EIO count=all");
  auto refused = Put("refused");
  ASSERT_EQ(refused.status, 503u) << refused.body;
  KillAndRestart();
  for (const std::string& key : acknowledged_) {
    auto read = Get(key);
    ASSERT_EQ(read.status, 200u) << key << ": " << read.body;
    EXPECT_EQ(read.json.at("body").as_string(), Body(key));
  }
  auto in_doubt = Get("refused");
  if (in_doubt.status == 200) {
    EXPECT_EQ(in_doubt.json.at("body").as_string(), Body("refused"));
  } else {
    EXPECT_EQ(in_doubt.status, 404u) << in_doubt.body;
  }
  auto mode = client_->Request(
      "GET", api::ModePath("app", session_, "job", "Session", "public"));
  ASSERT_EQ(mode.status, 200u) << mode.body;
  EXPECT_EQ(mode.json.at("mode").as_string(), "Exclusive");
  EXPECT_TRUE(Acknowledged(Put("after-restart")));
}

// A disk that stalls (an fsync that does not return: a hung network mount,
// a dying disk) fails nothing, so the store stays "up" and every write
// just waits. /healthz answers 503 once a commit has been in flight past
// store_stall_ms, and leasehold_store_commit_in_flight_seconds says for
// how long; when the disk comes back the write is acknowledged and health
// returns.
TEST_F(IoFaultsTest, AStalledDiskTurnsHealthAwayUntilItComesBack) {
  config_ = dir_.File("stall.json");
  std::ofstream(config_) << R"({"store_stall_ms": 300})";
  server_.reset();
  StartServer(/*with_shim=*/true);
  ASSERT_EQ(Health(), 200u);
  Arm("ops=fdatasync errno=hang count=all");
  const std::uint16_t port = server_->port();
  auto stalled = std::async(std::launch::async, [port] {
    HttpClient c(port);
    return c.Request("PUT", api::RecordPath("docs", "stalled"),
                     api::PutBody(Body("stalled")));
  });
  HttpAnswer health;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    health = client_->Request("GET", api::HealthPath());
  } while (health.status == 200 && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(health.status, 503u) << "health stayed 200 on a stalled disk";
  EXPECT_NE(health.body.find("in flight"), std::string::npos) << health.body;
  const std::string metrics = client_->Request("GET", "/metrics").body;
  const std::string gauge = "\nleasehold_store_commit_in_flight_seconds ";
  const auto at = metrics.find(gauge);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_GT(std::stod(metrics.substr(at + gauge.size())), 0.3);
  EXPECT_EQ(stalled.wait_for(std::chrono::seconds(0)),
            std::future_status::timeout)
      << "the write was answered while its commit hung";
  Disarm();
  EXPECT_TRUE(Acknowledged(stalled.get()));
  EXPECT_EQ(Health(), 200u);
  auto read = Get("stalled");
  ASSERT_EQ(read.status, 200u) << read.body;
  EXPECT_EQ(read.json.at("body").as_string(), Body("stalled"));
}

}  // namespace
}  // namespace leasehold::testing
