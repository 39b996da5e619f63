// The `leasehold` client commands over https://, run as a script would run
// them: against the TLS test server of tests/client (tls_test_server.h),
// which answers every request with an empty session list, that --ca-file,
// --cert and --key and their variables (LEASEHOLD_CA_FILE, LEASEHOLD_CERT,
// LEASEHOLD_KEY) reach the connection, and that a server the command
// cannot trust is refused with exit 3 and a message that says why; then
// against a real `leasehold serve --tls-cert`, with mutual TLS standing for
// a principal.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "http/spawned_server.h"
#include "tests/client/tls_test_server.h"
#include "tests/testing/server_process.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::testing {
namespace {

std::string Cert(const std::string& name) {
  return TestCertificates::Get().File(name);
}

Reply NoSessions(const SeenRequest&) {
  return Reply::Json(200, R"({"sessions":[]})");
}

std::string Https(const TlsTestServer& s,
                  const std::string& host = "localhost") {
  return "https://" + host + ":" + std::to_string(s.port());
}

class CliTlsTest : public ::testing::Test {
 protected:
  // `env` (assignments) and `leasehold ARGS`; stdout captured, stderr to a
  // file (Stderr()).
  CommandRun Leasehold(const std::string& env, const std::string& args) {
    std::ofstream(dir_.File("stderr"), std::ios::trunc).close();
    return RunShell(
        "env -u LEASEHOLD_URL -u LEASEHOLD_CA_FILE -u "
        "LEASEHOLD_CERT -u LEASEHOLD_KEY " +
        env + " " + LeaseholdBinary() + " " + args + " 2>" +
        dir_.File("stderr"));
  }

  std::string Stderr() {
    std::ifstream in(dir_.File("stderr"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_;
};

TEST_F(CliTlsTest, CaFileFlagOrVariable) {
  TlsTestServer server({}, NoSessions);
  auto flag = Leasehold("", "sessions --json --url " + Https(server) +
                                " --ca-file " + Cert("ca.pem"));
  ASSERT_EQ(flag.code, 0) << Stderr();
  EXPECT_EQ(flag.out, "{\"sessions\":[]}\n");
  auto variable = Leasehold("LEASEHOLD_URL=" + Https(server, "127.0.0.1") +
                                " LEASEHOLD_CA_FILE=" + Cert("ca.pem"),
                            "sessions --json");
  ASSERT_EQ(variable.code, 0) << Stderr();
  // The flag wins over the variable.
  auto both = Leasehold("LEASEHOLD_CA_FILE=" + Cert("other-ca.pem"),
                        "sessions --json --url " + Https(server) +
                            " --ca-file " + Cert("ca.pem"));
  ASSERT_EQ(both.code, 0) << Stderr();
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].target, "/v1/sessions");
  EXPECT_EQ(seen[0].server_name, "localhost");
}

TEST_F(CliTlsTest, ClientCertificateFlagsOrVariables) {
  TlsTestServer server(TlsServerOptions::AskingForAClientCertificate(true),
                       NoSessions);
  auto flags = Leasehold("", "sessions --json --url " + Https(server) +
                                 " --ca-file " + Cert("ca.pem") + " --cert " +
                                 Cert("client-billing.pem") + " --key " +
                                 Cert("client-billing.key"));
  ASSERT_EQ(flags.code, 0) << Stderr();
  auto variables =
      Leasehold("LEASEHOLD_URL=" + Https(server) +
                    " LEASEHOLD_CA_FILE=" + Cert("ca.pem") +
                    " LEASEHOLD_CERT=" + Cert("client-billing.pem") +
                    " LEASEHOLD_KEY=" + Cert("client-billing.key"),
                "sessions --json");
  ASSERT_EQ(variables.code, 0) << Stderr();
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].client_subject, "worker.billing");
  EXPECT_EQ(seen[1].client_subject, "worker.billing");

  auto without = Leasehold(
      "", "sessions --url " + Https(server) + " --ca-file " + Cert("ca.pem"));
  EXPECT_EQ(without.code, 3);
  EXPECT_NE(Stderr().find("certificate required"), std::string::npos)
      << Stderr();
}

struct Refused {
  std::string certificate;  // the server's
  std::string ca;           // --ca-file
  std::string host;
  std::string why;
};

class CliTlsRefusal : public CliTlsTest,
                      public ::testing::WithParamInterface<Refused> {};

TEST_P(CliTlsRefusal, ExitsThreeSayingWhy) {
  const Refused& p = GetParam();
  TlsTestServer server(TlsServerOptions::Presenting(p.certificate), NoSessions);
  auto run = Leasehold("", "sessions --url " + Https(server, p.host) +
                               " --ca-file " + Cert(p.ca));
  EXPECT_EQ(run.code, 3);
  EXPECT_EQ(run.out, "");
  const std::string expected = "leasehold: unreachable: handshaking with " +
                               p.host + ":" + std::to_string(server.port()) +
                               ": certificate verify failed: " + p.why;
  EXPECT_NE(Stderr().find(expected), std::string::npos) << Stderr();
  EXPECT_TRUE(server.requests().empty());
}

INSTANTIATE_TEST_SUITE_P(
    EachReason, CliTlsRefusal,
    ::testing::Values(Refused{"server", "other-ca.pem", "localhost",
                              "unable to get local issuer certificate"},
                      Refused{"server-other-ca", "ca.pem", "localhost",
                              "unable to get local issuer certificate"},
                      Refused{"server-expired", "ca.pem", "localhost",
                              "certificate has expired"},
                      Refused{"server-wrong-host", "ca.pem", "localhost",
                              "hostname mismatch"},
                      Refused{"server-wrong-host", "ca.pem", "127.0.0.1",
                              "IP address mismatch"}));

TEST_F(CliTlsTest, AFileThatCannotBeUsedIsNamed) {
  auto missing = Leasehold("LEASEHOLD_CA_FILE=/nonexistent/ca.pem",
                           "sessions --url https://localhost:7443 --json");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(Stderr().find(R"("code":"bad_url")"), std::string::npos)
      << Stderr();
  EXPECT_NE(Stderr().find("/nonexistent/ca.pem"), std::string::npos)
      << Stderr();
  auto mismatch =
      Leasehold("", "sessions --url https://localhost:7443 --cert " +
                        Cert("client-billing.pem") + " --key " +
                        Cert("client-unknown.key"));
  EXPECT_EQ(mismatch.code, 3);
  EXPECT_NE(Stderr().find("does not match the certificate"), std::string::npos)
      << Stderr();
}

TEST_F(CliTlsTest, NoRedirectDownToCleartext) {
  TlsTestServer plain(TlsServerOptions::Plaintext(), NoSessions);
  TlsTestServer tls({}, [&](const SeenRequest& r) {
    return Reply::Redirect("http://127.0.0.1:" + std::to_string(plain.port()) +
                           r.target);
  });
  auto run = Leasehold(
      "", "sessions --url " + Https(tls) + " --ca-file " + Cert("ca.pem"));
  EXPECT_EQ(run.code, 3);
  EXPECT_NE(Stderr().find("from https:// down to cleartext http://"),
            std::string::npos)
      << Stderr();
  EXPECT_TRUE(plain.requests().empty());
}

// --- against a real `leasehold serve` over TLS
// --------------------------------

constexpr char kOpsToken[] = "ops-token-cli-tls-00000001";

class CliServeTlsTest : public CliTlsTest {
 protected:
  // `leasehold serve --store memory` presenting `certificate` (a name in
  // TestCertificates); with `mutual`, client certificates by ca.pem are
  // asked for and worker.billing's stands for the principal "billing".
  // With `required` too, a client without such a certificate is refused
  // in the handshake.
  std::unique_ptr<http::SpawnedServer> Serve(const std::string& certificate,
                                             bool mutual = false,
                                             bool required = false) {
    http::SpawnOptions options;
    options.binary = LeaseholdBinary();
    options.data_dir = dir_.File("data-" + certificate);
    options.store = "memory";
    options.log_to_file = true;
    if (mutual) {
      std::ofstream(dir_.File("mutual.json"))
          << R"({"tls": {"client_ca": ")" << Cert("ca.pem")
          << R"(", "require_client_certificate": )"
          << (required ? "true" : "false") << R"(}, "tokens": [{"token": ")"
          << kOpsToken
          << R"(", "principal": "ops", "namespaces": ["*"], "role": "admin"},
             {"subject": "worker.billing", "principal": "billing",
              "namespaces": ["billing"], "role": "write"}]})";
      options.config = dir_.File("mutual.json");
    }
    options.extra_args = {"--tls-cert", Cert(certificate + ".pem"), "--tls-key",
                          Cert(certificate + ".key")};
    auto started = http::SpawnedServer::Start(std::move(options));
    EXPECT_TRUE(started) << started.error();
    return started ? std::move(*started) : nullptr;
  }

  static std::string Url(const http::SpawnedServer& s,
                         const std::string& host = "localhost") {
    return "https://" + host + ":" + std::to_string(s.port());
  }
};

TEST_F(CliServeTlsTest, TheRightCaIsTrustedAndNoOtherOne) {
  auto server = Serve("server");
  ASSERT_TRUE(server);
  auto put = Leasehold("LEASEHOLD_CA_FILE=" + Cert("ca.pem"),
                       "put note --ns docs --body hi --url " + Url(*server));
  ASSERT_EQ(put.code, 0) << Stderr();
  auto get = Leasehold("LEASEHOLD_URL=" + Url(*server, "127.0.0.1"),
                       "get note --ns docs --json --ca-file " + Cert("ca.pem"));
  ASSERT_EQ(get.code, 0) << Stderr();
  EXPECT_NE(get.out.find("\"hi\""), std::string::npos) << get.out;
  for (const std::string ca : {"other-ca.pem", ""}) {  // "": the system's
    auto refused =
        Leasehold("", "get note --ns docs --url " + Url(*server) +
                          (ca.empty() ? "" : " --ca-file " + Cert(ca)));
    EXPECT_EQ(refused.code, 3) << ca;
    EXPECT_NE(Stderr().find("handshaking with localhost:" +
                            std::to_string(server->port()) +
                            ": certificate verify failed: unable to get "
                            "local issuer certificate"),
              std::string::npos)
        << Stderr();
  }
}

// (A real server refuses to start with an expired certificate: the
// client's side of that is CliTlsRefusal's, against the test server.)
TEST_F(CliServeTlsTest, AWrongHostCertificateIsRefused) {
  auto wrong_host = Serve("server-wrong-host");
  ASSERT_TRUE(wrong_host);
  const std::string ca = " --ca-file " + Cert("ca.pem");
  EXPECT_EQ(Leasehold("", "sessions --url " + Url(*wrong_host) + ca).code, 3);
  EXPECT_NE(Stderr().find("certificate verify failed: hostname mismatch"),
            std::string::npos)
      << Stderr();
  EXPECT_EQ(
      Leasehold("", "sessions --url " + Url(*wrong_host, "127.0.0.1") + ca)
          .code,
      3);
  EXPECT_NE(Stderr().find("certificate verify failed: IP address mismatch"),
            std::string::npos)
      << Stderr();
}

TEST_F(CliServeTlsTest, AClientCertificateOpensSessionsAsItsPrincipal) {
  auto server = Serve("server", /*mutual=*/true);
  ASSERT_TRUE(server);
  // `lock` opens a session with the certificate; its command lists the
  // sessions with the operators' token (and no certificate).
  const std::string listed = dir_.File("sessions.json");
  auto locked = Leasehold(
      "LEASEHOLD_URL=" + Url(*server) + " LEASEHOLD_CA_FILE=" + Cert("ca.pem") +
          " LEASEHOLD_CERT=" + Cert("client-billing.pem") +
          " LEASEHOLD_KEY=" + Cert("client-billing.key"),
      "lock invoice-481 --ns billing -- sh -c 'env -u LEASEHOLD_CERT -u "
      "LEASEHOLD_KEY " +
          LeaseholdBinary() + " sessions --json --auth-token " + kOpsToken +
          " > " + listed + "'");
  ASSERT_EQ(locked.code, 0) << Stderr();
  std::ifstream in(listed);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const boost::json::value sessions = boost::json::parse(text);
  ASSERT_EQ(sessions.at("sessions").as_array().size(), 1u) << text;
  EXPECT_EQ(sessions.at("sessions").at(0).at("opened_by"), "billing") << text;

  // Another namespace is not the certificate's.
  auto elsewhere =
      Leasehold("LEASEHOLD_CA_FILE=" + Cert("ca.pem"),
                "lock job --ns other --url " + Url(*server) + " --cert " +
                    Cert("client-billing.pem") + " --key " +
                    Cert("client-billing.key") + " -- true");
  EXPECT_EQ(elsewhere.code, 3);
  EXPECT_NE(Stderr().find("forbidden"), std::string::npos) << Stderr();
  // Without a certificate nor a token, nothing.
  auto anonymous = Leasehold("LEASEHOLD_CA_FILE=" + Cert("ca.pem"),
                             "sessions --url " + Url(*server));
  EXPECT_EQ(anonymous.code, 3);
  EXPECT_NE(Stderr().find("unauthorized"), std::string::npos) << Stderr();
}

TEST_F(CliServeTlsTest, ARequiredCertificateThatIsMissingOrUntrustedIsNamed) {
  auto server = Serve("server", /*mutual=*/true, /*required=*/true);
  ASSERT_TRUE(server);
  const std::string base =
      "sessions --url " + Url(*server) + " --ca-file " + Cert("ca.pem");
  EXPECT_EQ(Leasehold("", base).code, 3);
  EXPECT_NE(Stderr().find("certificate required"), std::string::npos)
      << Stderr();
  EXPECT_EQ(Leasehold("", base + " --cert " + Cert("client-other-ca.pem") +
                              " --key " + Cert("client-other-ca.key"))
                .code,
            3);
  EXPECT_NE(Stderr().find("unknown ca"), std::string::npos) << Stderr();
  EXPECT_EQ(Leasehold("", base + " --cert " + Cert("client-billing.pem") +
                              " --key " + Cert("client-billing.key"))
                .code,
            0)
      << Stderr();
}

}  // namespace
}  // namespace leasehold::testing
