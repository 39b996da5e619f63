#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>

namespace leasehold::server {
namespace ssl = boost::asio::ssl;

namespace {

// TLS 1.2's suites: ECDHE key exchange (forward secrecy) with AEAD
// ciphers, ECDSA and RSA certificates; TLS 1.3's are OpenSSL's defaults,
// all of that kind.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Client certificates may be verified on resumed sessions: OpenSSL then
// needs a context id to keep one server's sessions from another's.
constexpr unsigned char kSessionContext[] = "leasehold";

std::unexpected<Status> Refuse(const std::string& why) {
  return Error(StatusCode::kBadRequest, "tls: " + why);
}

// OpenSSL's most recent reason, or `fallback`; clears its queue.
std::string OpenSslReason(const std::string& fallback) {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : text;
}

// Whether `ec` (Asio takes OpenSSL's error code into it) says a key and
// certificate differ.
bool KeyMismatch(const boost::system::error_code& ec) {
  const auto code = static_cast<unsigned long>(ec.value());
  return ec.category() == boost::asio::error::get_ssl_category() &&
         ERR_GET_LIB(code) == ERR_LIB_X509 &&
         ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH;
}

bool Readable(const std::string& path) {
  std::ifstream in(path);
  return in.good();
}

std::string Utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  // Room for any int in each field: GCC's -Wformat-truncation counts so.
  char text[96];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec);
  return text;
}

std::string CommonName(X509* cert) {
  X509_NAME* subject = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at < 0) return "";
  ASN1_STRING* data =
      X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return "";
  std::string name(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  // A name with a NUL in it could pass for a shorter one: none at all.
  return name.find('\0') == std::string::npos ? name : "";
}

}  // namespace

ServerTls::~ServerTls() = default;

Result<std::shared_ptr<const ServerTls>> ServerTls::Load(
    const TlsFiles& files, std::chrono::system_clock::time_point now) {
  if (files.cert.empty() || files.key.empty()) {
    return Refuse("needs both a certificate (cert) and its key (key)");
  }
  if (files.require_client_certificate && files.client_ca.empty()) {
    return Refuse(
        "require_client_certificate needs client_ca: the CA that verifies "
        "client certificates");
  }
  for (const std::string* path : {&files.cert, &files.key, &files.client_ca}) {
    if (!path->empty() && !Readable(*path)) {
      return Refuse("cannot read " + *path);
    }
  }
  ERR_clear_error();
  std::shared_ptr<ServerTls> tls(new ServerTls());
  tls->files_ = files;
  tls->context_ = std::make_unique<ssl::context>(ssl::context::tls_server);
  ssl::context& ctx = *tls->context_;
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds |
                  ssl::context::no_compression | ssl::context::single_dh_use);
  SSL_CTX_set_options(
      native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return Refuse("OpenSSL has none of the TLS 1.2 cipher suites: " +
                  OpenSslReason("unknown"));
  }
  boost::system::error_code ec;
  ctx.use_certificate_chain_file(files.cert, ec);
  if (ec) {
    return Refuse(files.cert + " holds no PEM certificate chain: " +
                  OpenSslReason(ec.message()));
  }
  ctx.use_private_key_file(files.key, ssl::context::pem, ec);
  if (ec && KeyMismatch(ec)) {
    ERR_clear_error();
    return Refuse("the key in " + files.key +
                  " does not match the certificate in " + files.cert);
  }
  if (ec) {
    return Refuse(files.key +
                  " holds no PEM private key: " + OpenSslReason(ec.message()));
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return Refuse("the key in " + files.key +
                  " does not match the certificate in " + files.cert);
  }
  X509* leaf = SSL_CTX_get0_certificate(native);
  std::time_t at = std::chrono::system_clock::to_time_t(now);
  const ASN1_TIME* not_after = X509_get0_notAfter(leaf);
  const ASN1_TIME* not_before = X509_get0_notBefore(leaf);
  std::tm expiry{};
  if (ASN1_TIME_to_tm(not_after, &expiry) != 1) {
    return Refuse(files.cert + ": its expiry date cannot be read");
  }
  tls->expiry_ = std::chrono::system_clock::from_time_t(timegm(&expiry));
  const std::string subject = CommonName(leaf);
  if (X509_cmp_time(not_after, &at) <= 0) {
    return Refuse("the certificate in " + files.cert + " (CN=" + subject +
                  ") expired at " +
                  Utc(std::chrono::system_clock::to_time_t(tls->expiry_)));
  }
  if (X509_cmp_time(not_before, &at) > 0) {
    return Refuse("the certificate in " + files.cert + " (CN=" + subject +
                  ") is not valid yet");
  }
  if (!files.client_ca.empty()) {
    ctx.load_verify_file(files.client_ca, ec);
    STACK_OF(X509_NAME)* names =
        SSL_load_client_CA_file(files.client_ca.c_str());
    if (ec || names == nullptr) {
      return Refuse(files.client_ca + " holds no PEM CA certificate: " +
                    OpenSslReason(ec ? ec.message() : "no certificate"));
    }
    SSL_CTX_set_client_CA_list(native, names);  // takes ownership
    ctx.set_verify_mode(ssl::verify_peer |
                        (files.require_client_certificate
                             ? ssl::verify_fail_if_no_peer_cert
                             : 0));
    SSL_CTX_set_session_id_context(native, kSessionContext,
                                   sizeof(kSessionContext) - 1);
  }
  tls->description_ = "CN=" + subject + ", expires " +
                      Utc(std::chrono::system_clock::to_time_t(tls->expiry_));
  return std::shared_ptr<const ServerTls>(std::move(tls));
}

std::shared_ptr<const PeerCertificate> VerifiedPeer(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) {
    return nullptr;
  }
  auto peer = std::make_shared<PeerCertificate>();
  auto* sans = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* san = sk_GENERAL_NAME_value(sans, i);
      const ASN1_IA5STRING* text = nullptr;
      if (san->type == GEN_DNS) text = san->d.dNSName;
      if (san->type == GEN_URI) text = san->d.uniformResourceIdentifier;
      if (text == nullptr) continue;
      std::string name(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
          static_cast<std::size_t>(ASN1_STRING_length(text)));
      if (!name.empty() && name.find('\0') == std::string::npos) {
        peer->names.push_back(std::move(name));
      }
    }
    GENERAL_NAMES_free(sans);
  }
  if (peer->names.empty()) {
    std::string cn = CommonName(cert);
    if (!cn.empty()) peer->names.push_back(std::move(cn));
  }
  return peer;
}

}  // namespace leasehold::server
