// The server over real TLS on loopback: a real `leasehold serve` with
// certificates made for this run by scripts/test-certs, probed by a TLS
// client of the test's own (tls_probe.h) that can offer what a good client
// never does.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <signal.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "http/spawned_server.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/tls/tls_probe.h"

namespace leasehold::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using std::chrono::milliseconds;

constexpr char kOpsToken[] = "ops-token-tls-0000000001";

// The certificates, made once for the whole run.
class Certificates {
 public:
  static const Certificates& Get() {
    static Certificates certs;
    return certs;
  }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  Certificates() {
    const std::string command = std::string(LEASEHOLD_SOURCE_DIR) +
                                "/scripts/test-certs " + dir_.path() +
                                " >/dev/null";
    if (std::system(command.c_str()) != 0) std::abort();
  }
  TempDir dir_;
};

std::string Cert(const std::string& name) {
  return Certificates::Get().File(name);
}

json::value Json(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return ec ? json::value() : v;
}

// `leasehold serve` run with `args` until it ends or `seconds` pass (then
// SIGTERM, and the code is 124): its exit code and output.
std::pair<int, std::string> RunServe(const std::string& args,
                                     int seconds = 20) {
  const std::string command = "timeout " + std::to_string(seconds) + " " +
                              LeaseholdBinary() + " serve --store memory " +
                              args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char chunk[4096];
  while (const std::size_t n = std::fread(chunk, 1, sizeof(chunk), pipe)) {
    output.append(chunk, n);
  }
  const int status = ::pclose(pipe);
  return {WEXITSTATUS(status), output};
}

class TlsTest : public ::testing::Test {
 protected:
  // A server with TLS flags for `cert` (a name in the certificates'
  // directory, copied so that a test may replace it), and `config` when
  // not empty.
  void Serve(const std::string& config = "",
             std::vector<std::string> more = {}) {
    fs::copy_file(Cert("server.pem"), cert_path_,
                  fs::copy_options::overwrite_existing);
    fs::copy_file(Cert("server.key"), key_path_,
                  fs::copy_options::overwrite_existing);
    http::SpawnOptions options;
    options.binary = LeaseholdBinary();
    options.data_dir = dir_.File("data");
    options.log_to_file = true;
    if (!config.empty()) {
      std::ofstream(dir_.File("config.json")) << config;
      options.config = dir_.File("config.json");
    }
    options.extra_args = {"--tls-cert", cert_path_, "--tls-key", key_path_};
    for (auto& arg : more) options.extra_args.push_back(std::move(arg));
    auto started = http::SpawnedServer::Start(std::move(options));
    ASSERT_TRUE(started.has_value()) << started.error();
    server_ = std::move(*started);
  }

  TlsProbeOptions Trusting() const {
    TlsProbeOptions o;
    o.ca_file = Cert("ca.pem");
    return o;
  }
  TlsProbeOptions WithClient(const std::string& name) const {
    TlsProbeOptions o = Trusting();
    o.cert_file = Cert(name + ".pem");
    o.key_file = Cert(name + ".key");
    return o;
  }

  // Replaces the served files with `name`.pem/.key (each by a rename, as a
  // certificate manager does).
  void Install(const std::string& cert, const std::string& key) {
    fs::copy_file(Cert(cert), cert_path_ + ".new",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(Cert(key), key_path_ + ".new",
                  fs::copy_options::overwrite_existing);
    fs::rename(cert_path_ + ".new", cert_path_);
    fs::rename(key_path_ + ".new", key_path_);
  }

  std::string Log() const {
    std::ifstream in(dir_.File("data.serve.log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::uint16_t port() const { return server_->port(); }

  TempDir dir_;
  std::string cert_path_ = dir_.File("served.pem");
  std::string key_path_ = dir_.File("served.key");
  std::unique_ptr<http::SpawnedServer> server_;
};

TEST_F(TlsTest, ServesTheApiOverKeptAliveTls13) {
  Serve();
  TlsProbe probe(port(), Trusting());
  ASSERT_EQ(probe.Connect(), "");
  EXPECT_EQ(probe.version(), "TLSv1.3");
  auto opened = probe.Request("POST", "/v1/sessions", R"({"ttl_ms":60000})");
  ASSERT_EQ(opened.status, 201u) << opened.error << opened.body;
  const std::string session(Json(opened.body).at("id").as_string());
  for (int i = 0; i < 50; ++i) {  // one connection, kept alive
    auto lock = probe.Request("POST", "/v1/applocks/app/acquire",
                              R"({"session":")" + session +
                                  R"(","resource":"r","mode":"Exclusive",)"
                                  R"("owner":"Session","timeout_ms":0})");
    ASSERT_EQ(lock.status, 200u) << lock.error << lock.body;
    auto release = probe.Request(
        "POST", "/v1/applocks/app/release",
        R"({"session":")" + session + R"(","resource":"r","owner":"Session"})");
    ASSERT_EQ(release.status, 200u) << release.body;
  }
}

TEST_F(TlsTest, AcceptsTls12AndTls13AndNothingOlder) {
  Serve();
  struct Case {
    int version;
    bool accepted;
  } cases[] = {{TLS1_VERSION, false},
               {TLS1_1_VERSION, false},
               {TLS1_2_VERSION, true},
               {TLS1_3_VERSION, true}};
  for (const Case& c : cases) {
    TlsProbeOptions o = Trusting();
    o.security_level = 0;  // lets the probe offer 1.0 and 1.1 at all
    o.min_version = c.version;
    o.max_version = c.version;
    TlsProbe probe(port(), o);
    const std::string error = probe.Connect();
    EXPECT_EQ(error.empty(), c.accepted) << c.version << ": " << error;
    if (c.accepted) {
      EXPECT_EQ(probe.Request("GET", "/healthz").status, 200u);
    }
  }
}

TEST_F(TlsTest, RefusesWeakTls12Suites) {
  Serve();
  struct Case {
    const char* ciphers;
    bool accepted;
  } cases[] = {
      {"AES128-SHA:AES256-SHA", false},         // no forward secrecy
      {"AES128-GCM-SHA256", false},             // RSA key exchange
      {"ECDHE-ECDSA-AES128-SHA", false},        // CBC
      {"ECDHE-ECDSA-AES256-SHA384", false},     // CBC
      {"ECDHE-ECDSA-AES128-GCM-SHA256", true},  // AEAD, ECDHE
      {"ECDHE-ECDSA-CHACHA20-POLY1305", true},
  };
  for (const Case& c : cases) {
    TlsProbeOptions o = Trusting();
    o.security_level = 0;
    o.max_version = TLS1_2_VERSION;
    o.tls12_ciphers = c.ciphers;
    TlsProbe probe(port(), o);
    const std::string error = probe.Connect();
    EXPECT_EQ(error.empty(), c.accepted) << c.ciphers << ": " << error;
  }
}

TEST_F(TlsTest, APlaintextRequestIsAnsweredInCleartextAndClosed) {
  Serve();
  const std::string got = RawExchange(
      port(), "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", 10);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 400 Bad Request")) << got;
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
  EXPECT_NE(got.find("use an https:// URL"), std::string::npos) << got;
  EXPECT_EQ(got.find("<timeout>"), std::string::npos) << "not closed: " << got;
  // And the server goes on serving TLS.
  TlsProbe probe(port(), Trusting());
  ASSERT_EQ(probe.Connect(), "");
  EXPECT_EQ(probe.Request("GET", "/healthz").status, 200u);
}

TEST_F(TlsTest, AStalledHandshakeIsDroppedWithinTheRequestTimeout) {
  Serve(R"({"request_timeout_ms": 1000})");
  const auto start = std::chrono::steady_clock::now();
  // Nothing at all, then the first bytes of a ClientHello and no more.
  EXPECT_EQ(RawExchange(port(), "", 20), "");
  EXPECT_EQ(RawExchange(port(), std::string("\x16\x03\x01\x02", 4), 20), "");
  const auto took = std::chrono::steady_clock::now() - start;
  // Closed by the server (RawExchange would say <timeout> after 20 s).
  EXPECT_LT(took, std::chrono::seconds(20));
}

TEST_F(TlsTest, TheConnectionCapCountsHandshakes) {
  Serve(R"({"max_connections": 3, "request_timeout_ms": 60000})");
  std::vector<std::unique_ptr<TlsProbe>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<TlsProbe>(port(), Trusting()));
    ASSERT_EQ(held.back()->Connect(), "");
  }
  // A fourth is closed unanswered, in the middle of its handshake.
  TlsProbe fourth(port(), Trusting());
  EXPECT_NE(fourth.Connect(), "");
  held.pop_back();  // frees a place
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    TlsProbe again(port(), Trusting());
    served = again.Connect().empty() &&
             again.Request("GET", "/healthz").status == 200u;
    if (!served) std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(served);
}

TEST_F(TlsTest, TheEventStreamTheDashboardAndBackupsGoOverHttps) {
  Serve();
  TlsProbe probe(port(), Trusting());
  ASSERT_EQ(probe.Connect(), "");
  auto page = probe.Request("GET", "/");
  EXPECT_EQ(page.status, 200u);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  auto backup = probe.Request("GET", "/v1/admin/backup");
  EXPECT_EQ(backup.status, 200u) << backup.body.substr(0, 200);
  EXPECT_GT(backup.body.size(), 0u);
  TlsProbe watcher(port(), Trusting());
  ASSERT_EQ(watcher.Connect(), "");
  auto events = watcher.Stream("/v1/events", 12);
  EXPECT_EQ(events.status, 200u) << events.error;
  EXPECT_NE(events.head.find("text/event-stream"), std::string::npos);
  EXPECT_NE(events.body.find("retry: 2000"), std::string::npos);
}

// --- mutual TLS ------------------------------------------------------------

std::string MutualConfig(bool required) {
  return R"({"tls": {"client_ca": ")" + Cert("ca.pem") +
         R"(", "require_client_certificate": )" +
         (required ? "true" : "false") + R"(},
    "tokens": [
      {"token": ")" +
         kOpsToken +
         R"(", "principal": "ops", "namespaces": ["*"], "role": "admin"},
      {"subject": "worker.billing", "principal": "billing",
       "namespaces": ["billing"], "role": "write"},
      {"subject": "spiffe://leasehold.test/reporter", "principal": "reporter",
       "namespaces": ["reports"], "role": "write"},
      {"subject": "cn.only", "principal": "cnonly", "namespaces": ["misc"],
       "role": "write"}]})";
}

// Who the server takes the caller for: the opener of a new session.
std::string OpenedBy(TlsProbe& probe, const std::string& token = "") {
  auto opened =
      probe.Request("POST", "/v1/sessions", R"({"ttl_ms":60000})", token);
  if (opened.status != 201) {
    return "status " + std::to_string(opened.status) + ": " + opened.error +
           opened.body;
  }
  return std::string(Json(opened.body).at("opened_by").as_string());
}

TEST_F(TlsTest, AClientCertificateStandsForTheTokenEntryOfItsSubject) {
  Serve(MutualConfig(false));
  struct Case {
    const char* client;
    const char* principal;
  } cases[] = {{"client-billing", "billing"},  // a DNS SAN
               {"client-uri", "reporter"},     // a URI SAN (its CN differs)
               {"client-cn-only", "cnonly"}};  // no SAN: the CN
  for (const Case& c : cases) {
    TlsProbe probe(port(), WithClient(c.client));
    ASSERT_EQ(probe.Connect(), "") << c.client;
    EXPECT_EQ(OpenedBy(probe), c.principal) << c.client;
  }
  // Only its namespaces and role.
  TlsProbe billing(port(), WithClient("client-billing"));
  ASSERT_EQ(billing.Connect(), "");
  auto opened = billing.Request("POST", "/v1/sessions", R"({"ttl_ms":60000})");
  const std::string id(Json(opened.body).at("id").as_string());
  const std::string lock = R"({"session":")" + id +
                           R"(","resource":"r","mode":"Exclusive",)"
                           R"("owner":"Session","timeout_ms":0})";
  EXPECT_EQ(
      billing.Request("POST", "/v1/applocks/billing/acquire", lock).status,
      200u);
  EXPECT_EQ(billing.Request("POST", "/v1/applocks/other/acquire", lock).status,
            403u);
  EXPECT_EQ(billing.Request("GET", "/v1/admin/backup").status, 403u);
  // The event stream too.
  TlsProbe watcher(port(), WithClient("client-billing"));
  ASSERT_EQ(watcher.Connect(), "");
  EXPECT_EQ(watcher.Stream("/v1/events?ns=billing", 12).status, 200u);
  // A bearer token, when sent, is what the request is checked by.
  EXPECT_EQ(OpenedBy(billing, kOpsToken), "ops");
}

TEST_F(TlsTest, ACertificateOfNoEntryOrAnotherCaOrExpiredGetsNothing) {
  Serve(MutualConfig(false));
  {
    TlsProbe unknown(port(), WithClient("client-unknown"));
    ASSERT_EQ(unknown.Connect(), "");  // a valid certificate, of nobody
    auto opened =
        unknown.Request("POST", "/v1/sessions", R"({"ttl_ms":60000})");
    EXPECT_EQ(opened.status, 401u);
    EXPECT_NE(opened.body.find("unknown.worker"), std::string::npos)
        << opened.body;
    EXPECT_EQ(unknown.Stream("/v1/events?ns=billing", 0).status, 401u);
  }
  {
    TlsProbe none(port(), Trusting());
    ASSERT_EQ(none.Connect(), "");
    EXPECT_EQ(none.Request("POST", "/v1/sessions", "{}").status, 401u);
  }
  // Same subject as a known entry, but not from the client CA, or expired:
  // the handshake is refused.
  for (const char* client : {"client-other-ca", "client-expired"}) {
    TlsProbe probe(port(), WithClient(client));
    const std::string error = probe.Connect();
    const bool refused =
        !error.empty() || probe.Request("GET", "/healthz").status == 0;
    EXPECT_TRUE(refused) << client;
  }
}

TEST_F(TlsTest, RequireClientCertificateRefusesAHandshakeWithoutOne) {
  Serve(MutualConfig(true));
  TlsProbe none(port(), Trusting());
  // TLS 1.3 finishes the client's side first: the refusal comes as an alert
  // on the first read, so no answer ever arrives.
  const std::string error = none.Connect();
  if (error.empty()) {
    auto answer = none.Request("GET", "/healthz");
    EXPECT_EQ(answer.status, 0u) << answer.head;
    EXPECT_NE(answer.error, "");
  }
  TlsProbe billing(port(), WithClient("client-billing"));
  ASSERT_EQ(billing.Connect(), "");
  EXPECT_EQ(OpenedBy(billing), "billing");
}

// --- certificates renewed while serving ------------------------------------

TEST_F(TlsTest, SighupRotatesTheCertificateUnderLoadWithNoFailedRequest) {
  Serve();
  const std::string old_serial = SerialOf(Cert("server.pem"));
  const std::string new_serial = SerialOf(Cert("server-renewed.pem"));
  ASSERT_NE(old_serial, new_serial);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::string first_failure;
  // Two callers: one on a kept-alive connection, one handshaking anew for
  // every request.
  std::thread kept([&] {
    TlsProbe probe(port(), Trusting());
    if (!probe.Connect().empty()) ++failed;
    while (!stop) {
      (probe.Request("GET", "/healthz").status == 200u ? ok : failed)++;
    }
  });
  std::thread fresh([&] {
    while (!stop) {
      TlsProbe probe(port(), Trusting());
      const std::string error = probe.Connect();
      const bool good =
          error.empty() && probe.Request("GET", "/healthz").status == 200u;
      (good ? ok : failed)++;
      if (!good && first_failure.empty()) first_failure = error;
    }
  });
  std::this_thread::sleep_for(milliseconds(300));
  Install("server-renewed.pem", "server-renewed.key");
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  std::string serial;
  for (int i = 0; i < 200 && serial != new_serial; ++i) {
    std::this_thread::sleep_for(milliseconds(25));
    TlsProbe probe(port(), Trusting());
    if (probe.Connect().empty()) serial = probe.peer_serial();
  }
  std::this_thread::sleep_for(milliseconds(300));
  stop = true;
  kept.join();
  fresh.join();
  EXPECT_EQ(serial, new_serial) << Log();
  EXPECT_EQ(failed.load(), 0) << first_failure;
  EXPECT_GT(ok.load(), 20);
  EXPECT_NE(Log().find("config reloaded"), std::string::npos);
}

TEST_F(TlsTest, ABadPairIsRefusedWholeAndTheOldOneStays) {
  Serve();
  const std::string serial = SerialOf(Cert("server.pem"));
  struct Case {
    const char* cert;
    const char* key;
    const char* reason;
  } cases[] = {{"server-renewed.pem", "client-billing.key", "does not match"},
               {"server-expired.pem", "server-expired.key", "expired"},
               {"ca.pem", "missing.key", "cannot read"}};
  for (const Case& c : cases) {
    if (std::string(c.key) == "missing.key") {
      fs::copy_file(Cert(c.cert), cert_path_,
                    fs::copy_options::overwrite_existing);
      fs::remove(key_path_);
    } else {
      Install(c.cert, c.key);
    }
    TlsProbe probe(port(), Trusting());
    ASSERT_EQ(probe.Connect(), "");
    auto answer = probe.Request("POST", "/v1/admin/reload");
    EXPECT_EQ(answer.status, 400u) << answer.body;
    EXPECT_NE(answer.body.find(c.reason), std::string::npos) << answer.body;
    TlsProbe after(port(), Trusting());
    ASSERT_EQ(after.Connect(), "");
    EXPECT_EQ(after.peer_serial(), serial) << c.cert;
  }
  // And a good pair is taken by POST /v1/admin/reload as by SIGHUP.
  Install("server-renewed.pem", "server-renewed.key");
  TlsProbe probe(port(), Trusting());
  ASSERT_EQ(probe.Connect(), "");
  EXPECT_EQ(probe.Request("POST", "/v1/admin/reload").status, 200u);
  TlsProbe after(port(), Trusting());
  ASSERT_EQ(after.Connect(), "");
  EXPECT_EQ(after.peer_serial(), SerialOf(Cert("server-renewed.pem")));
  // The connection from before the reload goes on.
  EXPECT_EQ(probe.Request("GET", "/healthz").status, 200u);
}

TEST_F(TlsTest, MetricsShowTheServedCertificatesExpiry) {
  Serve();
  auto expiry_in_metrics = [&] {
    TlsProbe probe(port(), Trusting());
    if (!probe.Connect().empty()) return std::int64_t{-1};
    const std::string text = probe.Request("GET", "/metrics").body;
    const std::string name =
        "\nleasehold_tls_certificate_expiry_timestamp_seconds ";
    const auto at = text.find(name);
    if (at == std::string::npos) return std::int64_t{-2};
    return static_cast<std::int64_t>(std::stoll(text.substr(at + name.size())));
  };
  EXPECT_EQ(expiry_in_metrics(), ExpiryOf(Cert("server.pem")));
  Install("server-renewed.pem", "server-renewed.key");
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  std::int64_t seen = 0;
  const std::int64_t renewed = ExpiryOf(Cert("server-renewed.pem"));
  for (int i = 0; i < 200 && seen != renewed; ++i) {
    std::this_thread::sleep_for(milliseconds(25));
    seen = expiry_in_metrics();
  }
  EXPECT_EQ(seen, renewed);
}

// --- refusals at start ---------------------------------------------------

TEST(TlsStartTest, RefusesABadPairNamingTheReason) {
  const std::string flags = "--listen 127.0.0.1:0 --tls-cert ";
  auto [code, out] = RunServe(flags + Cert("server-expired.pem") +
                              " --tls-key " + Cert("server-expired.key"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("expired"), std::string::npos) << out;
  std::tie(code, out) = RunServe(flags + Cert("server.pem") + " --tls-key " +
                                 Cert("server-renewed.key"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("does not match"), std::string::npos) << out;
  std::tie(code, out) =
      RunServe("--listen 127.0.0.1:0 --tls-cert " + Cert("server.pem"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("key"), std::string::npos) << out;
}

TEST(TlsStartTest, BeyondLoopbackTokensNeedTlsOrAllowPlaintext) {
  TempDir dir;
  std::ofstream(dir.File("tokens.json"))
      << R"({"tokens": [{"token": ")" << kOpsToken
      << R"(", "principal": "ops", "namespaces": ["*"], "role": "admin"}]})";
  const std::string config = " --config " + dir.File("tokens.json");
  auto [code, out] = RunServe("--listen 0.0.0.0:0" + config);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("without TLS"), std::string::npos) << out;
  EXPECT_NE(out.find("--allow-plaintext"), std::string::npos) << out;
  // With TLS, or knowingly without, it serves (until `timeout` stops it).
  for (const std::string& more : {std::string(" --allow-plaintext"),
                                  " --tls-cert " + Cert("server.pem") +
                                      " --tls-key " + Cert("server.key")}) {
    std::tie(code, out) = RunServe("--listen 0.0.0.0:0" + config + more, 2);
    EXPECT_EQ(code, 124) << more << ": " << out;
    EXPECT_NE(out.find("serving"), std::string::npos) << more << ": " << out;
  }
}

TEST(TlsStartTest, ASubjectEntryNeedsAClientCa) {
  TempDir dir;
  std::ofstream(dir.File("subjects.json"))
      << R"({"tokens": [{"subject": "worker.billing", "principal": "b",)"
      << R"( "namespaces": ["*"], "role": "write"}]})";
  auto [code, out] = RunServe(
      "--listen 127.0.0.1:0 --config " + dir.File("subjects.json") +
      " --tls-cert " + Cert("server.pem") + " --tls-key " + Cert("server.key"));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("client CA"), std::string::npos) << out;
}

}  // namespace
}  // namespace leasehold::testing
