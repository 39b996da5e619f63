// `leasehold bench` against a real server, briefly: every scenario runs
// for a second with few connections and must report positive figures and
// no errors in its --json output. Correctness only; no figure is judged.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;

struct BenchRun {
  int exit_code = -1;
  std::string output;
  json::value report;  // the parsed --json output, or null
};

// Runs `leasehold bench <args> --json` and collects what it prints.
BenchRun RunBench(const std::vector<std::string>& args) {
  std::string command = std::string(LEASEHOLD_BINARY) + " bench --json";
  for (const auto& a : args) command += " " + a;
  BenchRun run;
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) return run;
  std::array<char, 4096> buffer;
  while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), out)) {
    run.output.append(buffer.data(), n);
  }
  const int status = pclose(out);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  boost::system::error_code ec;
  run.report = json::parse(run.output, ec);
  return run;
}

std::vector<std::string> Short(const std::string& scenario,
                               const std::string& url) {
  return {"--url",      url,  "--scenario", scenario, "--connections", "4",
          "--duration", "1s", "--warmup",   "200ms",  "--keys",        "1000"};
}

std::int64_t Int(const json::value& v, const char* key) {
  return v.at(key).to_number<std::int64_t>();
}

// Every phase did work, nothing failed.
void ExpectHealthy(const BenchRun& run) {
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(Int(run.report, "errors"), 0) << run.output;
  EXPECT_TRUE(run.report.at("ok").as_bool());
  EXPECT_GT(Int(run.report, "pairs_per_s"), 0) << run.output;
  const json::array& phases = run.report.at("phases").as_array();
  ASSERT_FALSE(phases.empty());
  for (const json::value& p : phases) {
    EXPECT_EQ(Int(p, "errors"), 0) << p;
    EXPECT_GT(Int(p, "requests"), 0) << p;
    if (p.at("timed").as_bool()) {
      EXPECT_GT(Int(p, "pairs"), 0) << p;
      const json::value& pair = p.at("latency_us").at("pair");
      EXPECT_LE(Int(pair, "p50"), Int(pair, "p99")) << p;
      EXPECT_LE(Int(pair, "p99"), Int(pair, "max")) << p;
    }
  }
}

class BenchSmokeTest : public ::testing::Test {
 protected:
  BenchSmokeTest() : server_(dir_.File("data")) {}
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server_.port());
  }

  TempDir dir_;
  ServerProcess server_;
};

TEST_F(BenchSmokeTest, Applock) {
  const BenchRun run = RunBench(Short("applock", url()));
  ExpectHealthy(run);
  // The server was found by its port, so its memory is reported.
  EXPECT_GT(Int(run.report.at("server"), "rss_bytes"), 0) << run.output;
}

TEST_F(BenchSmokeTest, Checkout) {
  ExpectHealthy(RunBench(Short("checkout", url())));
}

TEST_F(BenchSmokeTest, HotReportsFairness) {
  const BenchRun run = RunBench(Short("hot", url()));
  ExpectHealthy(run);
  const json::value& phase = run.report.at("phases").at(0);
  const json::value& fairness = phase.at("fairness");
  EXPECT_LE(Int(fairness, "min"), Int(fairness, "max"));
  // Grants per connection add up to the pairs counted.
  const std::int64_t pairs = Int(phase, "pairs");
  EXPECT_LE(Int(fairness, "min") * 4, pairs) << phase;
  EXPECT_GE(Int(fairness, "max") * 4, pairs) << phase;
}

TEST_F(BenchSmokeTest, IdleHoldsLocksThenEndsItsSessions) {
  auto args = Short("idle", url());
  args.insert(args.end(),
              {"--idle-sessions", "20", "--locks-per-session", "5"});
  const BenchRun run = RunBench(args);
  ExpectHealthy(run);
  const json::value& idle = run.report.at("idle");
  EXPECT_EQ(Int(idle, "locks"), 100);
  EXPECT_GT(Int(idle, "rss_bytes_after"), 0);
  // Build (20 sessions + 100 acquires) and tear-down (20 ends) measured.
  const json::array& phases = run.report.at("phases").as_array();
  ASSERT_EQ(phases.size(), 4u);
  EXPECT_EQ(Int(phases[1], "requests"), 120);
  EXPECT_EQ(Int(phases[3], "requests"), 20);
  // Nothing is left behind: no session, no lock.
  HttpClient client(server_.port());
  const HttpAnswer sessions = client.Request("GET", "/v1/sessions");
  EXPECT_TRUE(sessions.json.at("sessions").as_array().empty()) << sessions.body;
  const HttpAnswer locks = client.Request("GET", "/v1/applocks/bench");
  EXPECT_TRUE(locks.json.at("locks").as_array().empty()) << locks.body;
}

TEST(BenchSmoke, ServerWithOneIoThread) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"io_threads": 1})";
  ServerProcess server(dir.File("data"), config);
  ExpectHealthy(RunBench(
      Short("applock", "http://127.0.0.1:" + std::to_string(server.port()))));
}

TEST(BenchSmoke, SpawnsItsOwnServer) {
  const BenchRun run =
      RunBench({"--spawn", "--scenario", "applock", "--connections", "2",
                "--duration", "500ms", "--warmup", "100ms"});
  ExpectHealthy(run);
  EXPECT_TRUE(run.report.at("spawned").as_bool());
  EXPECT_GT(Int(run.report.at("server"), "rss_bytes"), 0);
}

TEST(BenchSmoke, UnreachableServerIsAFailure) {
  // Port 1 on loopback: nothing listens there in a test environment.
  const BenchRun run = RunBench({"--url", "http://127.0.0.1:1", "--connections",
                                 "2", "--duration", "200ms", "--warmup", "0s"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_GT(Int(run.report, "errors"), 0);
  EXPECT_FALSE(run.report.at("ok").as_bool());
}

TEST(BenchSmoke, BadDurationIsAUsageError) {
  EXPECT_EQ(RunBench({"--duration", "soon"}).exit_code, 2);
}

}  // namespace
}  // namespace leasehold::testing
