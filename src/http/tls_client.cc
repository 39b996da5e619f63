#include "http/tls_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <system_error>

namespace leasehold::http {

namespace ssl = boost::asio::ssl;
using boost::system::error_code;

namespace {

// Why `path` cannot be read, or "" when it can. Checked before OpenSSL
// reads it, whose message for a missing file says only "system lib".
std::string Unreadable(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    return "cannot be read: " +
           std::error_code(errno, std::generic_category()).message();
  }
  const int first = std::fgetc(f);
  const int error = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (first != EOF) return "";
  if (error != 0) {
    return "cannot be read: " +
           std::error_code(error, std::generic_category()).message();
  }
  return "is empty";
}

std::string Quoted(const std::string& path) { return "\"" + path + "\""; }

// "CA file "ca.pem" cannot be read: …", or "" when it loads.
std::string LoadCa(ssl::context& context, const std::string& ca_file) {
  error_code ec;
  if (ca_file.empty()) {
    context.set_default_verify_paths(ec);
    return ec ? "the system's CA certificates cannot be used: " + ec.message()
              : "";
  }
  const std::string what = "CA file " + Quoted(ca_file);
  if (std::string why = Unreadable(ca_file); !why.empty()) {
    return what + " " + why;
  }
  context.load_verify_file(ca_file, ec);
  if (ec) return what + " holds no usable certificate: " + ec.message();
  return "";
}

std::string LoadIdentity(ssl::context& context, const TlsFiles& files) {
  if (files.cert_file.empty()) {
    if (files.key_file.empty()) return "";
    return "private key file " + Quoted(files.key_file) +
           " given without a certificate file";
  }
  const std::string cert = "certificate file " + Quoted(files.cert_file);
  if (std::string why = Unreadable(files.cert_file); !why.empty()) {
    return cert + " " + why;
  }
  error_code ec;
  context.use_certificate_chain_file(files.cert_file, ec);
  if (ec) return cert + " holds no usable certificate: " + ec.message();

  const std::string& key_file =
      files.key_file.empty() ? files.cert_file : files.key_file;
  const std::string key = "private key file " + Quoted(key_file);
  if (std::string why = Unreadable(key_file); !why.empty()) {
    return key + " " + why;
  }
  context.use_private_key_file(key_file, ssl::context::pem, ec);
  const std::string mismatch =
      key + " does not match the certificate in " + Quoted(files.cert_file);
  if (ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
                X509_R_KEY_VALUES_MISMATCH) {
    return mismatch;
  }
  if (ec) {
    return key + " holds no usable private key" +
           (files.key_file.empty() ? " (none given apart)" : "") + ": " +
           ec.message();
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) return mismatch;
  return "";
}

// GCC finds boost::system::error_category's non-virtual destructor
// accessible here; each instance is a function's static, never deleted
// through a base pointer.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class CertificateCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "leasehold.certificate"; }
  std::string message(int value) const override {
    return std::string("certificate verify failed: ") +
           X509_verify_cert_error_string(value);
  }
};

class TlsCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "leasehold.tls"; }
  std::string message(int) const override {
    return "the server closed the connection after the TLS handshake "
           "without answering (it may have refused this client's "
           "certificate, or the lack of one, without saying so)";
  }
};
#pragma GCC diagnostic pop

}  // namespace

std::expected<std::shared_ptr<const TlsClientContext>, std::string>
TlsClientContext::Create(const TlsFiles& files) {
  try {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX* native = context->native_handle();
    if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
      return std::unexpected("TLS 1.2 cannot be required");
    }
    context->set_options(ssl::context::default_workarounds |
                         ssl::context::no_compression);
    context->set_verify_mode(ssl::verify_peer);
    // An encrypted key is refused, never asked for on a terminal.
    context->set_password_callback(
        [](std::size_t, ssl::context::password_purpose) {
          return std::string();
        });
    if (std::string why = LoadCa(*context, files.ca_file); !why.empty()) {
      return std::unexpected(std::move(why));
    }
    if (std::string why = LoadIdentity(*context, files); !why.empty()) {
      return std::unexpected(std::move(why));
    }
    return std::shared_ptr<const TlsClientContext>(
        new TlsClientContext(std::move(context)));
  } catch (const std::exception& e) {  // SSL_CTX_new failed, bad_alloc
    return std::unexpected(std::string("TLS cannot be set up: ") + e.what());
  }
}

TlsClientContext::TlsClientContext(std::unique_ptr<ssl::context> c)
    : context_(std::move(c)) {}

TlsClientContext::~TlsClientContext() = default;

ssl::context& TlsClientContext::native() const { return *context_; }

error_code CertificateError(long x509_result) {
  static const CertificateCategory category;
  return error_code(static_cast<int>(x509_result), category);
}

error_code ClosedAfterHandshakeError() {
  static const TlsCategory category;
  return error_code(1, category);
}

}  // namespace leasehold::http
