// The C++ client against a real `leasehold serve --tls-cert` (spawned
// through src/http, over TLS from its first health check): a session that
// keeps itself alive over TLS, a lock, the event stream, a client
// certificate standing for its principal, and a server certificate for
// another host refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "http/spawned_server.h"
#include "http/tls_client.h"
#include "leasehold/client.h"
#include "tests/client/tls_test_server.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

namespace lh = leasehold::client;
using namespace std::chrono_literals;

std::string Cert(const std::string& name) {
  return TestCertificates::Get().File(name);
}

class ClientServeTlsTest : public ::testing::Test {
 protected:
  // `leasehold serve --store memory` over TLS with server.pem (or
  // `certificate`), asking for client certificates by ca.pem, of which
  // worker.billing's stands for the principal "billing".
  void Serve(const std::string& certificate = "server") {
    std::ofstream(dir_.File("config.json"))
        << R"({"tls": {"client_ca": ")" << Cert("ca.pem")
        << R"("}, "tokens": [{"subject": "worker.billing",
             "principal": "billing", "namespaces": ["billing"],
             "role": "write"}]})";
    http::SpawnOptions options;
    options.binary = LeaseholdBinary();
    options.data_dir = dir_.File("data");
    options.store = "memory";
    options.config = dir_.File("config.json");
    options.log_to_file = true;
    options.extra_args = {"--tls-cert", Cert(certificate + ".pem"), "--tls-key",
                          Cert(certificate + ".key")};
    if (certificate == "server") {
      auto tls = http::TlsClientContext::Create(
          {.ca_file = Cert("ca.pem"),
           .cert_file = Cert("client-billing.pem"),
           .key_file = Cert("client-billing.key")});
      ASSERT_TRUE(tls) << tls.error();
      options.tls = *tls;
      options.wait_until_healthy = true;  // over TLS, as a client would
    }
    auto started = http::SpawnedServer::Start(std::move(options));
    ASSERT_TRUE(started) << started.error();
    server_ = std::move(*started);
  }

  lh::ClientOptions Options(const std::string& client = "client-billing") {
    lh::ClientOptions o;
    o.url = "https://localhost:" + std::to_string(server_->port());
    o.io_timeout = 10s;
    o.ca_file = Cert("ca.pem");
    if (!client.empty()) {
      o.cert_file = Cert(client + ".pem");
      o.key_file = Cert(client + ".key");
    }
    return o;
  }

  TempDir dir_;
  std::unique_ptr<http::SpawnedServer> server_;
};

TEST_F(ClientServeTlsTest, ACertificateIsItsPrincipal) {
  ASSERT_NO_FATAL_FAILURE(Serve());
  auto client = lh::Client::Create(Options());
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_TRUE(who) << who.error().message;
  EXPECT_EQ(who->at("principal"), "billing") << *who;
  auto anonymous = lh::Client::Create(Options(""));
  ASSERT_TRUE(anonymous) << anonymous.error().message;
  auto refused = anonymous->OpenSession("nobody", 10s);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "unauthorized") << refused.error().message;
}

TEST_F(ClientServeTlsTest, ASessionLivesLocksAndWatchesOverTls) {
  ASSERT_NO_FATAL_FAILURE(Serve());
  auto client = lh::Client::Create(Options());
  ASSERT_TRUE(client) << client.error().message;

  std::atomic<bool> granted_seen{false};
  std::thread watcher([&, c = *client]() mutable {
    auto watched = c.Watch("billing", [&](const lh::Event& e) {
      if (e.type != "applock.granted") return true;
      granted_seen = true;
      return false;
    });
    EXPECT_TRUE(watched) << watched.error().message;
  });
  std::this_thread::sleep_for(300ms);  // the stream subscribes first

  std::atomic<bool> lost{false};
  auto session = client->StartSession("worker", 1500ms,
                                      [&](const lh::Error&) { lost = true; });
  ASSERT_TRUE(session) << session.error().message;
  {
    auto lock = session->Lock("billing", "invoice:481");
    ASSERT_TRUE(lock) << lock.error().message;
    EXPECT_GT(lock->fence(), 0u);
    // Twice the ttl: only keepalives over TLS keep it.
    std::this_thread::sleep_for(3s);
    EXPECT_TRUE(lock->held());
  }
  EXPECT_FALSE(lost);
  watcher.join();
  EXPECT_TRUE(granted_seen);
}

// (A real server refuses to start with an expired certificate; the
// client's refusal of one is tls_client_test's.)
TEST_F(ClientServeTlsTest, AServerCertificateForAnotherHostIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Serve("server-wrong-host"));
  auto client = lh::Client::Create(Options());
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_FALSE(who);
  EXPECT_EQ(who.error().code, "unreachable");
  EXPECT_NE(
      who.error().message.find("certificate verify failed: hostname mismatch"),
      std::string::npos)
      << who.error().message;
}

}  // namespace
}  // namespace leasehold::testing
