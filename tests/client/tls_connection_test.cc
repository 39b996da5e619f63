// http::Connection over real TLS on loopback, against TlsTestServer: every
// call of the transport (blocking with and without a deadline, awaitable,
// halves, streams, raw bytes, PeerClosed), and each way a handshake fails,
// with the message that names it.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "http/connection.h"
#include "http/tls_client.h"
#include "tests/client/tls_test_server.h"

namespace leasehold::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using http::Connection;
using http::Stage;

std::shared_ptr<const http::TlsClientContext> Trusting(
    const std::string& ca = "ca.pem", const std::string& client = "") {
  const TestCertificates& certs = TestCertificates::Get();
  http::TlsFiles files;
  if (!ca.empty()) files.ca_file = certs.File(ca);
  if (!client.empty()) {
    files.cert_file = certs.File(client + ".pem");
    files.key_file = certs.File(client + ".key");
  }
  auto made = http::TlsClientContext::Create(files);
  EXPECT_TRUE(made) << made.error();
  return made ? *made : nullptr;
}

http::Address At(const TlsTestServer& server, const std::string& host,
                 std::shared_ptr<const http::TlsClientContext> tls) {
  return http::Address{.host = host,
                       .port = server.port(),
                       .token = "",
                       .host_header = "",
                       .user_agent = "",
                       .tls = std::move(tls)};
}

http::Deadline Soon() { return std::chrono::steady_clock::now() + 5s; }

Reply Ok(const SeenRequest& r) {
  return Reply::Json(200, R"({"target":")" + r.target + R"("})");
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool BecomesTrue(const std::function<bool()>& check) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    if (check()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(TlsConnection, KeepAliveReusesOneTlsSession) {
  TlsTestServer server({}, Ok);
  http::Address address = At(server, "localhost", Trusting());
  address.token = "secret";
  Connection c(address);
  auto first = c.Request(http::Method::kGet, "/v1/a", "", Soon());
  ASSERT_FALSE(first.error) << first.error.message();
  EXPECT_EQ(first.status, 200u);
  EXPECT_EQ(first.body, R"({"target":"/v1/a"})");
  EXPECT_TRUE(first.keep_alive);
  auto second = c.Request(http::Method::kPost, "/v1/b", "{}", Soon());
  ASSERT_FALSE(second.error) << second.error.message();
  EXPECT_EQ(second.status, 200u);
  EXPECT_TRUE(c.used());
  EXPECT_FALSE(c.PeerClosed());

  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(server.handshakes(), 1);
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].host, "localhost:" + std::to_string(server.port()));
  EXPECT_EQ(seen[0].authorization, "Bearer secret");
  EXPECT_EQ(seen[0].server_name, "localhost") << "SNI for a DNS name";
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].body, "{}");
  EXPECT_EQ(seen[1].connection, 1);
}

TEST(TlsConnection, BlockingWithoutDeadlineAndInHalves) {
  TlsTestServer server({}, Ok);
  Connection c(At(server, "127.0.0.1", Trusting()));
  auto plain = c.Request(http::Method::kGet, "/no-deadline", "");
  ASSERT_FALSE(plain.error) << plain.error.message();
  EXPECT_EQ(plain.status, 200u);
  auto sent = c.Send(http::Method::kGet, "/half", "");
  ASSERT_FALSE(sent.error) << sent.error.message();
  auto received = c.Receive();
  ASSERT_FALSE(received.error) << received.error.message();
  EXPECT_EQ(received.body, R"({"target":"/half"})");
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].server_name, "") << "no SNI for an IP address";
  EXPECT_EQ(server.handshakes(), 1);
}

TEST(TlsConnection, AnIPv6LiteralIsMatchedAgainstTheCertificate) {
  std::unique_ptr<TlsTestServer> server;
  try {
    server = std::make_unique<TlsTestServer>(
        TlsServerOptions::ListeningOn("::1"), Ok);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  Connection c(At(*server, "::1", Trusting()));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_FALSE(answer.error) << answer.error.message();
  EXPECT_EQ(server->requests().at(0).server_name, "");
}

struct Refusal {
  std::string certificate;  // the server's
  std::string host;         // the client's Address::host
  std::string why;          // in the message
};

class TlsRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(TlsRefusal, HandshakeFailsNamingWhyAndNothingIsSent) {
  const Refusal& p = GetParam();
  TlsTestServer server(TlsServerOptions::Presenting(p.certificate), Ok);
  Connection c(At(server, p.host, Trusting()));
  auto answer = c.Request(http::Method::kPost, "/v1/sessions", "{}", Soon());
  ASSERT_TRUE(answer.error);
  EXPECT_EQ(answer.failed_in, Stage::kHandshaking);
  EXPECT_EQ(http::StageName(answer.failed_in), "handshaking with");
  EXPECT_TRUE(
      Contains(answer.error.message(), "certificate verify failed: " + p.why))
      << answer.error.message();
  EXPECT_FALSE(http::IsTimeout(answer.error));
  EXPECT_TRUE(c.failed_while_writing()) << "nothing was sent: safe to resend";
  EXPECT_TRUE(server.requests().empty());
  EXPECT_TRUE(c.PeerClosed()) << "closed after the failure";
}

INSTANTIATE_TEST_SUITE_P(
    EachReason, TlsRefusal,
    ::testing::Values(
        Refusal{"server-other-ca", "localhost",
                "unable to get local issuer certificate"},
        Refusal{"server-expired", "localhost", "certificate has expired"},
        Refusal{"server-wrong-host", "localhost", "hostname mismatch"},
        Refusal{"server-wrong-host", "127.0.0.1", "IP address mismatch"}));

TEST(TlsConnection, TheSystemStoreDoesNotTrustTheTestCa) {
  TlsTestServer server({}, Ok);
  Connection c(At(server, "localhost", Trusting(/*ca=*/"")));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_TRUE(answer.error);
  EXPECT_TRUE(Contains(answer.error.message(),
                       "unable to get local issuer certificate"))
      << answer.error.message();
}

TEST(TlsConnection, ClientCertificateIsPresentedWhenAskedFor) {
  TlsTestServer server(TlsServerOptions::AskingForAClientCertificate(true), Ok);
  Connection c(At(server, "localhost", Trusting("ca.pem", "client-billing")));
  auto answer = c.Request(http::Method::kGet, "/v1/whoami", "", Soon());
  ASSERT_FALSE(answer.error) << answer.error.message();
  EXPECT_EQ(answer.status, 200u);
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].client_subject, "worker.billing");
}

TEST(TlsConnection, NoCertificateWhereOneIsOptionalIsNone) {
  TlsTestServer server(TlsServerOptions::AskingForAClientCertificate(false),
                       Ok);
  Connection c(At(server, "localhost", Trusting()));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_FALSE(answer.error) << answer.error.message();
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].client_subject, "");
}

struct ClientRefusal {
  std::string client;  // "" for none
  std::string why;     // in the client's message
};

class TlsClientRefusal : public ::testing::TestWithParam<ClientRefusal> {};

// With TLS 1.3 the client's side of the handshake ends before the server
// has judged its certificate: the server's alert arrives in the answer's
// place, and names why.
TEST_P(TlsClientRefusal, ServerRefusesTheClientCertificate) {
  const ClientRefusal& p = GetParam();
  TlsTestServer server(TlsServerOptions::AskingForAClientCertificate(true), Ok);
  Connection c(At(server, "localhost", Trusting("ca.pem", p.client)));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_TRUE(answer.error);
  EXPECT_TRUE(Contains(answer.error.message(), p.why))
      << answer.error.message();
  EXPECT_TRUE(server.requests().empty());
  // The server records its side after sending the alert.
  EXPECT_TRUE(
      BecomesTrue([&] { return server.handshake_errors().size() == 1; }));
}

INSTANTIATE_TEST_SUITE_P(
    EachReason, TlsClientRefusal,
    ::testing::Values(ClientRefusal{"", "certificate required"},
                      ClientRefusal{"client-other-ca", "unknown ca"},
                      ClientRefusal{"client-expired", "certificate expired"}));

TEST(TlsConnection, AServerThatClosesAfterTheHandshakeIsExplained) {
  TlsServerOptions options;
  options.close_after_handshake = true;
  TlsTestServer server(options, Ok);
  Connection c(At(server, "localhost", Trusting()));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_TRUE(answer.error);
  EXPECT_EQ(answer.failed_in, Stage::kReading);
  EXPECT_TRUE(Contains(answer.error.message(),
                       "closed the connection after the TLS handshake"))
      << answer.error.message();
  EXPECT_FALSE(c.failed_while_writing()) << "the request was written";
}

TEST(TlsConnection, AwaitableRequestsOverTls) {
  TlsTestServer server({}, Ok);
  asio::io_context io(1);
  Connection c(io.get_executor(), At(server, "localhost", Trusting()));
  std::vector<http::Answer> answers;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        answers.push_back(co_await c.AsyncRequest("GET", "/one", ""));
        answers.push_back(co_await c.AsyncRequest("POST", "/two", "{}"));
      },
      asio::detached);
  io.run();
  ASSERT_EQ(answers.size(), 2u);
  for (const auto& a : answers) {
    ASSERT_FALSE(a.error) << a.error.message();
    EXPECT_EQ(a.status, 200u);
  }
  EXPECT_EQ(answers[1].body, R"({"target":"/two"})");
  EXPECT_EQ(server.handshakes(), 1);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(TlsConnection, AwaitableHandshakeFailureIsNamed) {
  TlsTestServer server(TlsServerOptions::Presenting("server-expired"), Ok);
  asio::io_context io(1);
  Connection c(io.get_executor(), At(server, "localhost", Trusting()));
  http::Answer answer;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        answer = co_await c.AsyncRequest("GET", "/", "");
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(answer.error);
  EXPECT_EQ(answer.failed_in, Stage::kHandshaking);
  EXPECT_TRUE(c.failed_while_writing());
  EXPECT_TRUE(Contains(answer.error.message(), "certificate has expired"))
      << answer.error.message();
}

TEST(TlsConnection, StreamOverTls) {
  TlsTestServer server({}, [](const SeenRequest&) {
    return Reply{{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n",
                  Reply::Chunk("event: a\ndata: {}\n\n"),
                  Reply::Chunk("event: b\ndata: {}\n\n"), Reply::Chunk("")},
                 20ms,
                 std::nullopt};
  });
  Connection c(At(server, "localhost", Trusting()));
  auto started = c.StartStream(http::Method::kGet, "/v1/events/x", Soon());
  ASSERT_FALSE(started.error) << started.error.message();
  EXPECT_EQ(started.status, 200u);
  std::string body;
  char buffer[7];  // small: events arrive in several reads
  while (true) {
    auto n = c.ReadBody(buffer, sizeof buffer, Soon());
    ASSERT_FALSE(n.error) << n.error.message();
    if (n.size == 0) break;
    body.append(buffer, n.size);
  }
  EXPECT_EQ(body, "event: a\ndata: {}\n\nevent: b\ndata: {}\n\n");
}

TEST(TlsConnection, RawBytesOverTls) {
  TlsTestServer server({}, Ok);
  Connection c(At(server, "localhost", Trusting()));
  ASSERT_FALSE(c.WriteRaw("GET /raw HTTP/1.1\r\nHost: x\r\n\r\n", Soon()));
  std::string got;
  char buffer[64];
  while (!Contains(got, R"({"target":"/raw"})")) {
    auto n = c.ReadRaw(buffer, sizeof buffer, Soon());
    ASSERT_FALSE(n.error) << n.error.message() << " after " << got;
    got.append(buffer, n.size);
  }
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
}

TEST(TlsConnection, PeerClosedSeesTheServersCloseNotifyThenReconnects) {
  // The first answer says keep-alive; the server closes the connection
  // (close_notify, then FIN) 100 ms later, while it is idle.
  TlsTestServer server({}, [](const SeenRequest& r) {
    Reply reply = Ok(r);
    if (r.connection == 1) reply.close_after = 100ms;
    return reply;
  });
  Connection c(At(server, "localhost", Trusting()));
  auto first = c.Request(http::Method::kGet, "/first", "", Soon());
  ASSERT_FALSE(first.error) << first.error.message();
  ASSERT_TRUE(first.keep_alive);
  EXPECT_FALSE(c.PeerClosed()) << "still open right after the answer";
  EXPECT_TRUE(BecomesTrue([&] { return c.PeerClosed(); }));
  // The caller (the client's pool) closes it and connects again: a new
  // TLS session on the same Connection.
  c.Close();
  auto second = c.Request(http::Method::kGet, "/second", "", Soon());
  ASSERT_FALSE(second.error) << second.error.message();
  EXPECT_EQ(second.status, 200u);
  EXPECT_EQ(server.handshakes(), 2);
  EXPECT_FALSE(c.PeerClosed());
}

TEST(TlsConnection, CloseNotifyWithTheAnswerIsSeenToo) {
  // The close_notify follows the answer at once: it may arrive with it and
  // wait in OpenSSL's buffers rather than on the socket.
  TlsTestServer server({}, [](const SeenRequest& r) {
    Reply reply = Ok(r);
    reply.close_after = 0ms;
    return reply;
  });
  Connection c(At(server, "localhost", Trusting()));
  auto first = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_FALSE(first.error) << first.error.message();
  EXPECT_TRUE(BecomesTrue([&] { return c.PeerClosed(); }));
}

TEST(TlsConnection, HandshakeIsWithinTheConnectDeadline) {
  TlsTestServer silent(TlsServerOptions::Silent(), Ok);
  Connection c(At(silent, "localhost", Trusting()));
  const auto start = std::chrono::steady_clock::now();
  http::Stage stage = Stage::kNone;
  const auto ec = c.Connect(start + 300ms, &stage);
  EXPECT_TRUE(http::IsTimeout(ec)) << ec.message();
  EXPECT_EQ(stage, Stage::kHandshaking);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(TlsConnection, TlsToAPlaintextServerFailsInTheHandshake) {
  TlsTestServer plain(TlsServerOptions::Plaintext(), Ok);
  Connection c(At(plain, "localhost", Trusting()));
  auto answer = c.Request(http::Method::kGet, "/", "", Soon());
  ASSERT_TRUE(answer.error);
  EXPECT_EQ(answer.failed_in, Stage::kHandshaking) << answer.error.message();
  EXPECT_TRUE(c.failed_while_writing());
}

TEST(TlsConnection, PlaintextStaysPlaintext) {
  TlsTestServer plain(TlsServerOptions::Plaintext(), Ok);
  Connection c(At(plain, "127.0.0.1", nullptr));
  auto answer = c.Request(http::Method::kGet, "/plain", "", Soon());
  ASSERT_FALSE(answer.error) << answer.error.message();
  EXPECT_EQ(answer.body, R"({"target":"/plain"})");
}

}  // namespace
}  // namespace leasehold::testing
