// `leasehold-peers bench --target` against each kind of target, briefly: every
// scenario runs for half a second with three clients and must report
// positive figures, no errors, and what the target guarantees. SQLite, a
// leasehold server and the throwaway PostgreSQL cluster always run; Redis
// and etcd from Debian (scripts/install-deps installs them, so their absence
// fails rather than skips). Correctness only; no figure is judged.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <thread>

#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;

const std::vector<std::string> kScenarios = {"applock", "checkout", "hot",
                                             "idle"};

// `extra`: more flags, e.g. "--ns NS".
CommandRun Bench(const std::string& target, const std::string& scenario,
                 const std::string& extra = "") {
  return RunShell(std::string(LEASEHOLD_PEERS_BINARY) +
                  " bench --json --target '" + target + "' --scenario " +
                  scenario +
                  " --connections 3 --duration 500ms --warmup 100ms"
                  " --keys 100 --hot-timeout 2s --idle-sessions 4"
                  " --locks-per-session 5 " +
                  extra + " 2>&1");
}

std::int64_t Int(const json::value& v, const char* key) {
  return v.at(key).to_number<std::int64_t>();
}

// Runs every scenario against `target`; returns the reports by scenario.
std::map<std::string, json::value> RunAll(const std::string& target,
                                          const std::string& kind) {
  std::map<std::string, json::value> reports;
  for (const std::string& scenario : kScenarios) {
    SCOPED_TRACE(scenario);
    const CommandRun run = Bench(target, scenario);
    EXPECT_EQ(run.code, 0) << run.out;
    boost::system::error_code ec;
    const json::value report = json::parse(run.out, ec);
    if (ec || !report.is_object()) {
      ADD_FAILURE() << "not JSON: " << run.out;
      continue;
    }
    EXPECT_EQ(Int(report, "errors"), 0) << run.out;
    EXPECT_TRUE(report.at("ok").as_bool()) << run.out;
    EXPECT_GT(Int(report, "pairs_per_s"), 0) << run.out;
    EXPECT_EQ(report.at("target").at("kind").as_string(), kind);
    for (const json::value& p : report.at("phases").as_array()) {
      EXPECT_GT(Int(p, "pairs"), 0) << p;
    }
    reports[scenario] = report;
  }
  if (reports.contains("hot")) {
    const json::value& hot = reports["hot"].at("phases").at(0);
    EXPECT_LE(Int(hot.at("fairness"), "min"), Int(hot.at("fairness"), "max"));
  }
  if (reports.contains("idle")) {
    EXPECT_EQ(Int(reports["idle"].at("idle"), "locks"), 20);
  }
  return reports;
}

bool Durable(const json::value& report) {
  return report.at("target").at("durable").as_bool();
}
std::string Durability(const json::value& report) {
  return std::string(report.at("target").at("durability").as_string());
}

// A TCP port nothing listens on now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// A server started in the background by the shell; killed at the end.
class Background {
 public:
  // Runs `command` (output to `log`) and waits until `port` accepts.
  Background(const std::string& command, const std::string& log, int port) {
    const CommandRun run = RunShell(command + " >" + log + " 2>&1 & echo $!");
    pid_ = std::atoi(run.out.c_str());
    for (int i = 0; i < 200 && !Accepts(port); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Background() {
    if (pid_ > 0) kill(pid_, SIGKILL);
  }

 private:
  static bool Accepts(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok =
        connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    return ok;
  }
  int pid_ = -1;
};

bool Installed(const std::string& program) {
  return RunShell("command -v " + program + " >/dev/null").code == 0;
}

TEST(TargetBench, Sqlite) {
  TempDir dir;
  auto reports = RunAll("sqlite:" + dir.File("bench.db"), "sqlite");
  for (auto& [scenario, report] : reports) {
    EXPECT_TRUE(Durable(report)) << scenario;
    EXPECT_NE(Durability(report).find("synchronous=FULL"), std::string::npos);
  }
}

TEST(TargetBench, LeaseholdServer) {
  TempDir dir;
  const std::string config = dir.File("config.json");
  std::ofstream(config) << R"({"namespaces": {"mem": {"locks": "memory"}}})";
  ServerProcess server(dir.File("data"), config);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  auto reports = RunAll(url, "leasehold");
  ASSERT_TRUE(reports.contains("checkout") && reports.contains("applock"));
  EXPECT_TRUE(Durable(reports["checkout"]));
  // Locks are journaled by default; the report says so, as asked of the
  // server, and says not for a namespace that keeps them in memory.
  EXPECT_TRUE(Durable(reports["applock"])) << Durability(reports["applock"]);
  const CommandRun memory = Bench(url, "applock", "--ns mem");
  ASSERT_EQ(memory.code, 0) << memory.out;
  EXPECT_FALSE(Durable(memory.json())) << memory.out;
  EXPECT_NE(Durability(memory.json()).find("in memory"), std::string::npos)
      << memory.out;
  // The server's FIFO queue hands the hot lock to every client in turn.
  ASSERT_TRUE(reports.contains("hot"));
  EXPECT_GT(Int(reports["hot"].at("phases").at(0).at("fairness"), "min"), 0);
  // Nothing is left behind.
  HttpClient client(server.port());
  const HttpAnswer sessions = client.Request("GET", "/v1/sessions");
  EXPECT_TRUE(sessions.json.at("sessions").as_array().empty()) << sessions.body;
}

TEST(TargetBench, Postgres) {
  const char* file = std::getenv("LEASEHOLD_TEST_PG_URL_FILE");
  ASSERT_NE(file, nullptr) << "no PostgreSQL test cluster; run through CTest";
  std::ifstream in(file);
  std::string url;
  std::getline(in, url);
  auto reports = RunAll(url, "postgresql");
  ASSERT_TRUE(reports.contains("checkout") && reports.contains("applock"));
  // Advisory locks are never durable; the test cluster runs with fsync=off,
  // so its checkouts are not either, and the report says so.
  EXPECT_FALSE(Durable(reports["applock"]));
  EXPECT_FALSE(Durable(reports["checkout"]));
  EXPECT_NE(Durability(reports["checkout"]).find("fsync=off"),
            std::string::npos)
      << Durability(reports["checkout"]);
  // The one-UPDATE for application locks too, when asked.
  const CommandRun update = Bench(url + "?mode=update", "applock");
  EXPECT_EQ(update.code, 0) << update.out;
}

TEST(TargetBench, Redis) {
  ASSERT_TRUE(Installed("redis-server"))
      << "redis-server is not installed (scripts/install-deps installs it)";
  TempDir dir;
  const int port = FreePort();
  Background redis("redis-server --bind 127.0.0.1 --port " +
                       std::to_string(port) + " --dir " + dir.path() +
                       " --save '' --appendonly yes --appendfsync always",
                   dir.File("redis.log"), port);
  auto reports = RunAll("redis://127.0.0.1:" + std::to_string(port), "redis");
  for (auto& [scenario, report] : reports) {
    EXPECT_TRUE(Durable(report)) << Durability(report);
  }
}

TEST(TargetBench, Etcd) {
  ASSERT_TRUE(Installed("etcd"))
      << "etcd is not installed (scripts/install-deps installs etcd-server)";
  TempDir dir;
  const int port = FreePort(), peer = FreePort();
  const std::string client_url = "http://127.0.0.1:" + std::to_string(port);
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer);
  Background etcd("etcd --name t --data-dir " + dir.File("etcd") +
                      " --listen-client-urls " + client_url +
                      " --advertise-client-urls " + client_url +
                      " --listen-peer-urls " + peer_url +
                      " --initial-advertise-peer-urls " + peer_url +
                      " --initial-cluster t=" + peer_url,
                  dir.File("etcd.log"), port);
  RunAll("etcd://127.0.0.1:" + std::to_string(port), "etcd");
}

TEST(TargetBench, UnknownSchemeFails) {
  const CommandRun run = Bench("ftp://127.0.0.1:1", "applock");
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_NE(run.out.find("unknown target 'ftp://127.0.0.1:1'"),
            std::string::npos)
      << run.out;
}

// The server binary loads only a leasehold server; it names the tool that
// loads the others.
TEST(TargetBench, ServerBinarySaysWhereTargetsWent) {
  const CommandRun run =
      RunShell(std::string(LEASEHOLD_BINARY) +
               " bench --target redis://127.0.0.1:1 --duration 1s 2>&1");
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.out.find("run `leasehold-peers bench --target "
                         "redis://127.0.0.1:1 …`"),
            std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace leasehold::testing
