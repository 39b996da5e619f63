// leasehold::client over https:// against TlsTestServer: ClientOptions'
// TLS files (and how a bad one is reported at Create), verification
// failures as the caller sees them, mutual TLS, keep-alive through the
// pool, the stream of Watch, and which redirects are followed (to https://
// always, to http:// only from http://).
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <string>

#include "leasehold/client.h"
#include "tests/client/tls_test_server.h"

namespace leasehold::testing {
namespace {

namespace lh = leasehold::client;
using namespace std::chrono_literals;

std::string Cert(const std::string& name) {
  return TestCertificates::Get().File(name);
}

std::string Https(const TlsTestServer& s,
                  const std::string& host = "localhost") {
  return "https://" + host + ":" + std::to_string(s.port());
}
std::string Http(const TlsTestServer& s) {
  return "http://127.0.0.1:" + std::to_string(s.port());
}

lh::ClientOptions Options(std::string url) {
  lh::ClientOptions o;
  o.url = std::move(url);
  o.ca_file = Cert("ca.pem");
  o.io_timeout = 5s;
  return o;
}

Reply Whoami(const SeenRequest& r) {
  return Reply::Json(200,
                     R"({"principal":"p","target":")" + r.target + R"("})");
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TlsClient, HttpsUrlWithItsCaFile) {
  TlsTestServer server({}, Whoami);
  lh::ClientOptions options = Options(Https(server));
  options.token = "secret";
  auto client = lh::Client::Create(options);
  ASSERT_TRUE(client) << client.error().message;
  for (int i = 0; i < 3; ++i) {
    auto who = client->Call("GET", "/v1/whoami");
    ASSERT_TRUE(who) << who.error().message;
    EXPECT_EQ(who->at("target"), "/v1/whoami");
  }
  EXPECT_EQ(server.handshakes(), 1) << "one pooled keep-alive connection";
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].server_name, "localhost");
  EXPECT_EQ(seen[0].host, "localhost:" + std::to_string(server.port()));
  EXPECT_EQ(seen[0].authorization, "Bearer secret");
}

TEST(TlsClient, AClientCertificateIsPresented) {
  TlsTestServer server(TlsServerOptions::AskingForAClientCertificate(true),
                       Whoami);
  lh::ClientOptions options = Options(Https(server, "127.0.0.1"));
  options.cert_file = Cert("client-billing.pem");
  options.key_file = Cert("client-billing.key");
  auto client = lh::Client::Create(options);
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_TRUE(who) << who.error().message;
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].client_subject, "worker.billing");
}

TEST(TlsClient, AServerCertificateThatFailsIsUnreachableAndNamed) {
  TlsTestServer server(TlsServerOptions::Presenting("server-expired"), Whoami);
  auto client = lh::Client::Create(Options(Https(server)));
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_FALSE(who);
  EXPECT_EQ(who.error().code, "unreachable");
  EXPECT_EQ(who.error().http_status, 0u);
  EXPECT_TRUE(
      Contains(who.error().message,
               "handshaking with localhost:" + std::to_string(server.port()) +
                   ": certificate verify failed: certificate has "
                   "expired"))
      << who.error().message;
  EXPECT_TRUE(server.requests().empty());
}

struct BadFiles {
  std::string ca, cert, key;  // names in TestCertificates; "/…" as is
  std::string named;          // the file the message must name
  std::string why;
};

class TlsClientFiles : public ::testing::TestWithParam<BadFiles> {};

std::string Path(const std::string& name) {
  return name.empty() || name.starts_with('/') ? name : Cert(name);
}

TEST_P(TlsClientFiles, ABadFileIsBadUrlAtCreateNamingIt) {
  const BadFiles& p = GetParam();
  for (const std::string url :
       {"https://localhost:7443", "http://127.0.0.1:7070"}) {
    lh::ClientOptions o;
    o.url = url;
    o.ca_file = Path(p.ca);
    o.cert_file = Path(p.cert);
    o.key_file = Path(p.key);
    auto client = lh::Client::Create(o);
    ASSERT_FALSE(client) << url;
    EXPECT_EQ(client.error().code, "bad_url");
    EXPECT_TRUE(Contains(client.error().message, "\"" + Path(p.named) + "\""))
        << client.error().message;
    EXPECT_TRUE(Contains(client.error().message, p.why))
        << client.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EachFile, TlsClientFiles,
    ::testing::Values(
        BadFiles{"/nonexistent/ca.pem", "", "", "/nonexistent/ca.pem",
                 "cannot be read: No such file or directory"},
        BadFiles{"server.key", "", "", "server.key",
                 "holds no usable certificate"},
        BadFiles{"ca.pem", "/nonexistent/c.pem", "", "/nonexistent/c.pem",
                 "cannot be read"},
        BadFiles{"ca.pem", "client-billing.pem", "client-unknown.key",
                 "client-unknown.key", "does not match the certificate"},
        BadFiles{"ca.pem", "client-billing.pem", "", "client-billing.pem",
                 "holds no usable private key"},
        BadFiles{"ca.pem", "client-billing.pem", "/nonexistent/k.key",
                 "/nonexistent/k.key", "cannot be read"},
        BadFiles{"ca.pem", "", "client-billing.key", "client-billing.key",
                 "without a certificate file"}));

TEST(TlsClient, FilesAreLoadedOnceAtCreate) {
  // A plaintext URL without files needs no TLS; with https:// and no CA
  // file, the system's CAs are used (and do not know the test CA).
  lh::ClientOptions plain;
  plain.url = "http://127.0.0.1:7070";
  EXPECT_TRUE(lh::Client::Create(plain));
  TlsTestServer server({}, Whoami);
  lh::ClientOptions system;
  system.url = Https(server);
  system.io_timeout = 5s;
  auto client = lh::Client::Create(system);
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_FALSE(who);
  EXPECT_TRUE(
      Contains(who.error().message, "unable to get local issuer certificate"))
      << who.error().message;
}

TEST(TlsClient, HttpsToHttpRedirectIsNeverFollowed) {
  TlsTestServer plain(TlsServerOptions::Plaintext(), Whoami);
  TlsTestServer tls({}, [&](const SeenRequest& r) {
    return Reply::Redirect(Http(plain) + r.target);
  });
  auto client = lh::Client::Create(Options(Https(tls)));
  ASSERT_TRUE(client) << client.error().message;
  auto opened = client->Call("POST", "/v1/sessions");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, "bad_response");
  EXPECT_EQ(opened.error().http_status, 307u);
  EXPECT_TRUE(Contains(opened.error().message,
                       "from https:// down to "
                       "cleartext http://"))
      << opened.error().message;
  EXPECT_TRUE(Contains(opened.error().message, Http(plain)))
      << opened.error().message;
  EXPECT_TRUE(plain.requests().empty()) << "nothing sent in cleartext";
}

TEST(TlsClient, HttpToHttpsAndHttpsToHttpsRedirectsAreFollowed) {
  TlsTestServer leader({}, Whoami);
  TlsTestServer tls_standby({}, [&](const SeenRequest& r) {
    return Reply::Redirect(Https(leader) + r.target);
  });
  TlsTestServer plain_standby(
      TlsServerOptions::Plaintext(), [&](const SeenRequest& r) {
        return Reply::Redirect(Https(leader) + r.target);
      });
  for (const std::string& url : {Http(plain_standby), Https(tls_standby)}) {
    auto client = lh::Client::Create(Options(url));
    ASSERT_TRUE(client) << client.error().message;
    boost::json::value body = {{"name", "worker"}};
    auto answer = client->Call("POST", "/v1/sessions", &body);
    ASSERT_TRUE(answer) << url << ": " << answer.error().message;
    EXPECT_EQ(answer->at("target"), "/v1/sessions");
  }
  const auto seen = leader.requests();
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& r : seen) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.body, R"({"name":"worker"})") << "the same method and body";
  }
}

TEST(TlsClient, AnHttpClusterLearnsAnHttpsLeaderWithTheSystemsCas) {
  // No TLS file was given and every URL is http://: TLS is set up when a
  // redirect first names an https:// node, with the system's CAs.
  TlsTestServer leader({}, Whoami);
  TlsTestServer plain(TlsServerOptions::Plaintext(), [&](const SeenRequest& r) {
    return Reply::Redirect(Https(leader) + r.target);
  });
  lh::ClientOptions options;
  options.url = Http(plain);
  // Two nodes, one of which answered: the client asks again until then.
  // Known race (not yet fixed): when that deadline passes during a
  // handshake, the call answers "timeout" rather than the verification
  // failure every earlier round saw (Client::Impl::AcrossNodes).
  options.io_timeout = 5s;
  auto client = lh::Client::Create(options);
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_FALSE(who);
  EXPECT_EQ(who.error().code, "unreachable");
  EXPECT_TRUE(
      Contains(who.error().message, "unable to get local issuer certificate"))
      << who.error().message;
}

TEST(TlsClient, AMixedListPassesOverANodeItCannotReach) {
  TlsTestServer leader({}, Whoami);
  // A port nobody listens on any more.
  std::string url;
  {
    TlsTestServer closed(TlsServerOptions::Plaintext(), Whoami);
    url = Http(closed);
  }
  auto client = lh::Client::Create(Options(url + "," + Https(leader)));
  ASSERT_TRUE(client) << client.error().message;
  auto who = client->Call("GET", "/v1/whoami");
  ASSERT_TRUE(who) << who.error().message;
  EXPECT_EQ(leader.requests().size(), 1u);
}

TEST(TlsClient, WatchReadsItsStreamOverTls) {
  TlsTestServer server({}, [](const SeenRequest&) {
    return Reply{{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n",
                  Reply::Chunk("event: applock.granted\ndata: {}\n\n"),
                  Reply::Chunk("event: applock.release\ndata: {}\n\n")},
                 20ms,
                 std::nullopt};
  });
  auto client = lh::Client::Create(Options(Https(server)));
  ASSERT_TRUE(client) << client.error().message;
  std::vector<std::string> types;
  auto watched = client->Watch("app", [&](const lh::Event& e) {
    types.push_back(e.type);
    return types.size() < 2;
  });
  ASSERT_TRUE(watched) << watched.error().message;
  EXPECT_EQ(types,
            (std::vector<std::string>{"applock.granted", "applock.release"}));
}

}  // namespace
}  // namespace leasehold::testing
