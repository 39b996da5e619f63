// A real `leasehold serve` whose data directory is on a small tmpfs that
// fills up: the write that could not reach the disk is answered 503 and
// never acknowledged, /healthz says 503, reads show the last acknowledged
// state with outage_reads (never the refused write), else answer 503; once
// space returns
// the server recovers by itself, without a restart, with every
// acknowledged change and nothing else, also after a kill -9. Needs root
// to mount the tmpfs (CI runs as root); skipped, saying why, where
// mounting is not allowed.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"
#include "tests/testing/session_lock_mode.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace api = client::api;
using std::chrono::milliseconds;

// With the config's outage_reads (true) and without it (SQLite's default).
class DiskFullTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    mount_ = dir_.File("small");
    std::filesystem::create_directories(mount_);
    if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      GTEST_SKIP() << "cannot mount a 4 MiB tmpfs here ("
                   << std::strerror(errno) << "); CI runs this as root";
    }
    mounted_ = true;
  }
  void TearDown() override {
    server_.reset();
    if (mounted_) ::umount2(mount_.c_str(), MNT_DETACH);
  }

  // Writes a filler file until the filesystem has no room left.
  void FillTheDisk() {
    std::ofstream filler(mount_ + "/filler", std::ios::binary);
    const std::string chunk(64 * 1024, 'x');
    while (filler.write(chunk.data(), chunk.size()) && filler.flush()) {
    }
  }
  void FreeTheDisk() { std::filesystem::remove(mount_ + "/filler"); }

  TempDir dir_;
  std::string mount_;
  bool mounted_ = false;
  std::unique_ptr<ServerProcess> server_;
};

std::string Body(int i) {
  return "note " + std::to_string(i) + std::string(900, '.');
}

TEST_P(DiskFullTest, A503UntilSpaceReturnsThenEverythingAcknowledged) {
  const bool outage_reads = GetParam();
  const std::string config = dir_.File("config.json");
  std::ofstream(config) << (outage_reads ? R"({"outage_reads": true})" : "{}");
  server_ = std::make_unique<ServerProcess>(mount_ + "/data", config);
  HttpClient c(server_->port());
  auto session = c.Request("POST", api::SessionsPath(),
                           api::OpenSessionBody("Asha", milliseconds(60'000)));
  ASSERT_EQ(session.status, 201u) << session.body;
  const std::string s(session.json.at("id").as_string());
  client::AcquireOptions exclusive;
  exclusive.timeout = milliseconds(0);
  auto lock = c.Request("POST", api::ApplockPath("app", "acquire"),
                        api::AcquireBody(s, "job", exclusive));
  ASSERT_EQ(lock.status, 200u) << lock.body;
  auto before = c.Request("PUT", api::RecordPath("docs", "before"),
                          api::PutBody("written while there was room"));
  ASSERT_EQ(before.status, 201u) << before.body;

  FillTheDisk();
  // Some writes may still fit in pages the files already have; keep
  // writing until one does not.
  std::vector<int> acknowledged;
  int refused = -1;
  for (int i = 0; i < 5000 && refused < 0; ++i) {
    auto put =
        c.Request("PUT", api::RecordPath("docs", "k" + std::to_string(i)),
                  api::PutBody(Body(i)));
    if (put.status == 200 || put.status == 201) {
      acknowledged.push_back(i);
    } else {
      ASSERT_EQ(put.status, 503u) << put.body;
      EXPECT_EQ(put.error_code(), "unavailable");
      EXPECT_NE(put.body.find("full"), std::string::npos)
          << "the answer names the cause: " << put.body;
      refused = i;
    }
  }
  ASSERT_GE(refused, 0) << "the disk never filled up";

  // Until space returns: writes refused, health 503. Reads are answered
  // from the last acknowledged state (once it is loaded: soon) with outage
  // reads, else refused; never from the server's memory, which holds the
  // refused write until the recovery takes it back.
  auto health = c.Request("GET", api::HealthPath());
  EXPECT_EQ(health.status, 503u) << health.body;
  auto another = c.Request("POST", api::ApplockPath("app", "acquire"),
                           api::AcquireBody(s, "other", exclusive));
  EXPECT_EQ(another.status, 503u) << another.body;
  auto read_before = c.Request("GET", api::RecordPath("docs", "before"));
  for (int i = 0; i < 100 && outage_reads && read_before.status == 503; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    read_before = c.Request("GET", api::RecordPath("docs", "before"));
  }
  auto unwritten =
      c.Request("GET", api::RecordPath("docs", "k" + std::to_string(refused)));
  if (!outage_reads) {
    EXPECT_EQ(read_before.status, 503u) << read_before.body;
    EXPECT_EQ(unwritten.status, 503u) << unwritten.body;
  } else {
    ASSERT_EQ(read_before.status, 200u)
        << "no read served during the outage: " << read_before.body;
    for (int i : acknowledged) {
      auto read =
          c.Request("GET", api::RecordPath("docs", "k" + std::to_string(i)));
      ASSERT_EQ(read.status, 200u) << "k" << i << ": " << read.body;
      EXPECT_EQ(read.json.at("body").as_string(), Body(i));
    }
    EXPECT_EQ(unwritten.status, 404u)
        << "a read showed the write that was refused: " << unwritten.body;
    EXPECT_EQ(SessionLockMode(c, "app", s, "job"), "Exclusive");
    auto listed = c.Request("GET", api::ApplockPath("app"));
    ASSERT_EQ(listed.status, 200u) << listed.body;
    EXPECT_EQ(listed.json.at("locks").as_array().size(), 1u) << listed.body;
  }
  EXPECT_EQ(c.Request("GET", api::HealthPath()).status, 503u)
      << "reads may be served, writes still are not";

  FreeTheDisk();
  bool recovered = false;
  for (int i = 0; i < 300 && !recovered; ++i) {
    recovered = c.Request("GET", api::HealthPath()).status == 200;
    if (!recovered) std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(recovered) << "no recovery within 15 s of space returning";

  // Every acknowledged write, and not the refused one.
  for (int i : acknowledged) {
    auto read =
        c.Request("GET", api::RecordPath("docs", "k" + std::to_string(i)));
    ASSERT_EQ(read.status, 200u) << "k" << i << ": " << read.body;
    EXPECT_EQ(read.json.at("body").as_string(), Body(i));
  }
  auto gone =
      c.Request("GET", api::RecordPath("docs", "k" + std::to_string(refused)));
  EXPECT_EQ(gone.status, 404u) << gone.body;
  // The session lives on with its lock, as after a restart.
  EXPECT_EQ(c.Request("POST", api::SessionPath(s, "keepalive")).status, 200u);
  EXPECT_EQ(SessionLockMode(c, "app", s, "job"), "Exclusive");
  auto after = c.Request("PUT", api::RecordPath("docs", "after"),
                         api::PutBody("written after the recovery"));
  EXPECT_TRUE(after.status == 200 || after.status == 201) << after.body;
  auto metrics = c.Request("GET", "/metrics");
  EXPECT_NE(metrics.body.find("leasehold_store_recoveries_total 1"),
            std::string::npos);

  // And after a kill -9 and a restart on the same data.
  server_->Kill();
  server_ = std::make_unique<ServerProcess>(mount_ + "/data", config);
  HttpClient restarted(server_->port());
  for (int i : acknowledged) {
    auto read = restarted.Request(
        "GET", api::RecordPath("docs", "k" + std::to_string(i)));
    ASSERT_EQ(read.status, 200u) << "k" << i << ": " << read.body;
    EXPECT_EQ(read.json.at("body").as_string(), Body(i));
  }
  EXPECT_EQ(restarted
                .Request("GET",
                         api::RecordPath("docs", "k" + std::to_string(refused)))
                .status,
            404u);
  EXPECT_EQ(restarted.Request("GET", api::RecordPath("docs", "after")).status,
            200u);
}

INSTANTIATE_TEST_SUITE_P(OutageReads, DiskFullTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Served" : "Refused";
                         });

}  // namespace
}  // namespace leasehold::testing
