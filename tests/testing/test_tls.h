// The multi-process tests over TLS: when LEASEHOLD_TEST_TLS_CERTS names a
// directory of scripts/test-certs' certificates (CTest sets it for the
// TLS runs, e.g. failover_over_tls), servers are started with its server
// certificate and every test client trusts its CA; otherwise both are
// plaintext. One switch, so the same test runs either way.
#ifndef LEASEHOLD_TESTS_TESTING_TEST_TLS_H_
#define LEASEHOLD_TESTS_TESTING_TEST_TLS_H_

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "http/tls_client.h"

namespace leasehold::testing {

// The certificates' directory; empty: plaintext.
inline std::string TestTlsCertificates() {
  const char* dir = std::getenv("LEASEHOLD_TEST_TLS_CERTS");
  return dir != nullptr ? dir : "";
}

// What a test client connects with (Address::tls); null: plaintext.
inline std::shared_ptr<const http::TlsClientContext> TestTlsClient() {
  static const std::shared_ptr<const http::TlsClientContext> context = [] {
    const std::string dir = TestTlsCertificates();
    if (dir.empty()) return std::shared_ptr<const http::TlsClientContext>();
    auto made = http::TlsClientContext::Create({.ca_file = dir + "/ca.pem"});
    if (!made) throw std::runtime_error(made.error());
    return *made;
  }();
  return context;
}

// The `serve` flags of a server the test clients can reach; none for
// plaintext.
inline std::vector<std::string> TestTlsServeFlags() {
  const std::string dir = TestTlsCertificates();
  if (dir.empty()) return {};
  return {"--tls-cert", dir + "/server.pem", "--tls-key", dir + "/server.key"};
}

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_TEST_TLS_H_
