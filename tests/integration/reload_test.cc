// `serve --config` reloaded while it runs (SIGHUP, POST /v1/admin/reload),
// and its JSON log: a real server process over real HTTP on loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "http/spawned_server.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

using std::chrono::milliseconds;

// Tokens of at least 16 characters; none may ever show in the log.
constexpr char kOpsA[] = "ops-token-AAAA-000001";
constexpr char kOpsB[] = "ops-token-BBBB-000002";
constexpr char kAppB[] = "app-token-BBBB-000003";

std::string Config(const std::string& ops_token, int lock_delay_ms) {
  return R"({"tokens": [
      {"token": ")" +
         ops_token + R"(", "principal": "ops", "namespaces": ["*"],
       "role": "admin"},
      {"token": ")" +
         kAppB + R"(", "principal": "app", "namespaces": ["app"],
       "role": "write"}],
    "namespaces": {"app": {"lock_delay_ms": )" +
         std::to_string(lock_delay_ms) + "}}}";
}

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write(Config(kOpsA, 0));
    http::SpawnOptions options;
    options.binary = LeaseholdBinary();
    options.data_dir = dir_.File("data");
    options.config = config_;
    options.log_to_file = true;
    options.extra_args = {"--log-format", "json"};
    auto started = http::SpawnedServer::Start(std::move(options));
    ASSERT_TRUE(started.has_value()) << started.error();
    server_ = std::move(*started);
  }

  void Write(const std::string& text) {
    std::ofstream(config_ + ".tmp") << text;
    std::rename((config_ + ".tmp").c_str(), config_.c_str());
  }

  std::string Log() const {
    std::ifstream in(dir_.File("data.serve.log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  int Count(const std::string& needle) const {
    const std::string log = Log();
    int n = 0;
    for (auto at = log.find(needle); at != std::string::npos;
         at = log.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }
  // SIGHUP, then waits for the log line it causes (`needle`, one more).
  void HangUp(const std::string& needle) {
    const int before = Count(needle);
    ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
    for (int i = 0; i < 1000 && Count(needle) == before; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_EQ(Count(needle), before + 1) << Log();
  }

  HttpAnswer As(const char* token, const std::string& method,
                const std::string& target, const std::string& body = "") {
    HttpClient c(server_->port());
    c.SetBearerToken(token);
    return c.Request(method, target, body);
  }

  // Takes a lock in "app" as the app principal and has ops end its session
  // (lock-delay applies to an administrator's end); says whether the lock
  // is then held back.
  bool AnEndedSessionsLockIsHeldBack(const std::string& resource) {
    auto opened = As(kAppB, "POST", "/v1/sessions",
                     R"({"name":"worker","ttl_ms":60000})");
    EXPECT_EQ(opened.status, 201u) << opened.body;
    const std::string id(opened.json.at("id").as_string());
    auto locked = As(kAppB, "POST", "/v1/applocks/app/acquire",
                     R"({"session":")" + id + R"(","resource":")" + resource +
                         R"(","mode":"Exclusive","owner":"Session"})");
    EXPECT_EQ(locked.status, 200u) << locked.body;
    EXPECT_EQ(As(ops_, "DELETE", "/v1/sessions/" + id).status, 204u);
    auto listed = As(kAppB, "GET", "/v1/applocks/app");
    for (const auto& l : listed.json.at("locks").as_array()) {
      if (l.at("resource").as_string() == resource) {
        return l.at("lock_delay_until").is_string();
      }
    }
    return false;
  }

  TempDir dir_;
  std::string config_ = dir_.File("leasehold.json");
  std::unique_ptr<http::SpawnedServer> server_;
  const char* ops_ = kOpsA;  // the administrator's token now
};

TEST_F(ReloadTest, SighupSwapsTokensAndNamespaceOptionsWithoutARestart) {
  const int pid = server_->pid();
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 200u);
  EXPECT_FALSE(AnEndedSessionsLockIsHeldBack("before"));

  Write(Config(kOpsB, 600'000));
  HangUp("\"msg\":\"config reloaded\"");
  ops_ = kOpsB;
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").error_code(), "unauthorized");
  auto whoami = As(kOpsB, "GET", "/v1/whoami");
  ASSERT_EQ(whoami.status, 200u) << whoami.body;
  EXPECT_EQ(whoami.json.at("principal"), "ops");
  EXPECT_TRUE(AnEndedSessionsLockIsHeldBack("after"));
  EXPECT_EQ(server_->pid(), pid);
  EXPECT_EQ(kill(pid, 0), 0) << "the same process serves on";

  // A config that is no JSON is refused whole: B still works, A does not.
  Write("{\"tokens\": [");
  HangUp("config reload refused");
  EXPECT_EQ(As(kOpsB, "GET", "/v1/whoami").status, 200u);
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 401u);
  EXPECT_NE(Log().find("is not a JSON object"), std::string::npos) << Log();

  // Valid JSON with a value out of range: the answer says which and why.
  Write(Config(kOpsA, 99'999'999));
  auto refused = As(kOpsB, "POST", "/v1/admin/reload");
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_EQ(refused.error_code(), "bad_request");
  const std::string why(refused.json.at("error").at("message").as_string());
  EXPECT_NE(why.find("\"lock_delay_ms\" must be 0..3600000"), std::string::npos)
      << why;
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 401u) << "nothing changed";

  // An option that needs a restart refuses the whole config.
  std::string restart = Config(kOpsA, 0);
  restart.insert(1, R"("io_threads": 3, )");
  Write(restart);
  refused = As(kOpsB, "POST", "/v1/admin/reload");
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_NE(refused.body.find("io_threads needs a restart"), std::string::npos)
      << refused.body;
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 401u) << "nothing changed";

  // Only an administrator of every namespace may reload.
  Write(Config(kOpsA, 0));
  auto forbidden = As(kAppB, "POST", "/v1/admin/reload");
  EXPECT_EQ(forbidden.status, 403u) << forbidden.body;
  HttpClient anonymous(server_->port());
  EXPECT_EQ(anonymous.Request("POST", "/v1/admin/reload").status, 401u);
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 401u);

  auto reloaded = As(kOpsB, "POST", "/v1/admin/reload");
  EXPECT_EQ(reloaded.status, 200u) << reloaded.body;
  EXPECT_EQ(reloaded.json.at("reloaded"), true);
  EXPECT_EQ(As(kOpsA, "GET", "/v1/whoami").status, 200u);
  EXPECT_EQ(As(kOpsB, "GET", "/v1/whoami").status, 401u);
  EXPECT_EQ(kill(pid, 0), 0);
}

TEST_F(ReloadTest, TheJsonLogParsesLineByLineAndNeverShowsAToken) {
  Write(Config(kOpsB, 1000));
  HangUp("\"msg\":\"config reloaded\"");
  Write("not json");
  HangUp("config reload refused");
  ASSERT_EQ(server_->Terminate(), 0);

  const std::string log = Log();
  for (const char* token : {kOpsA, kOpsB, kAppB}) {
    EXPECT_EQ(log.find(token), std::string::npos) << token << " in\n" << log;
  }
  std::istringstream lines(log);
  std::string line;
  int n = 0;
  std::vector<std::string> messages;
  while (std::getline(lines, line)) {
    ++n;
    boost::system::error_code ec;
    const auto v = boost::json::parse(line, ec);
    ASSERT_FALSE(ec) << "line " << n << " is no JSON: " << line;
    const auto& o = v.as_object();
    EXPECT_TRUE(o.at("ts").is_string()) << line;
    EXPECT_TRUE(o.at("level").is_string()) << line;
    EXPECT_TRUE(o.at("fields").is_object()) << line;
    messages.emplace_back(o.at("msg").as_string());
  }
  ASSERT_GE(messages.size(), 5u) << log;
  EXPECT_TRUE(messages.front().starts_with("serving ")) << log;
  EXPECT_EQ(std::ranges::count(messages, "config reloaded"), 1) << log;
  EXPECT_EQ(std::ranges::count(messages,
                               "config reload refused; the running config "
                               "stays"),
            1)
      << log;
  EXPECT_TRUE(messages.back().starts_with("stopped")) << log;
}

// Connections past max_connections are closed at once, and logged: the
// first of a burst at once, the rest summed at most every 10 s.
TEST(ServeLogTest, RefusedConnectionsAreLogged) {
  TempDir dir;
  std::ofstream(dir.File("c.json")) << R"({"max_connections": 1})";
  http::SpawnOptions options;
  options.binary = LeaseholdBinary();
  options.data_dir = dir.File("data");
  options.config = dir.File("c.json");
  options.log_to_file = true;
  auto server = http::SpawnedServer::Start(std::move(options));
  ASSERT_TRUE(server.has_value()) << server.error();
  HttpClient first((*server)->port());
  ASSERT_EQ(first.Request("GET", "/healthz").status, 200u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_ANY_THROW({
      HttpClient refused((*server)->port());
      refused.Request("GET", "/healthz");
    });
  }
  EXPECT_EQ(first.Request("GET", "/healthz").status, 200u);
  ASSERT_EQ((*server)->Terminate(), 0);
  std::ifstream in(dir.File("data.serve.log"));
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_NE(log.str().find(" warn leasehold: refused 1 connection(s) since "
                           "the last such line"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("max_connections=1"), std::string::npos)
      << log.str();
}

TEST(ReloadWithoutConfigTest, AReloadSaysThereIsNoConfigFile) {
  TempDir dir;
  ServerProcess server(dir.File("data"));
  HttpClient c(server.port());
  auto refused = c.Request("POST", "/v1/admin/reload");
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_NE(refused.body.find("without --config"), std::string::npos)
      << refused.body;
  // A SIGHUP is no reason to stop.
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  EXPECT_EQ(c.Request("GET", "/healthz").status, 200u);
}

}  // namespace
}  // namespace leasehold::testing
