// Authentication and access rules: bearer tokens, or the subjects of
// verified client certificates (mutual TLS), that name a principal, the
// namespaces it may use and its role. Off (every caller may do everything)
// when no tokens are configured, which the server allows only on loopback.
#ifndef LEASEHOLD_SERVER_AUTH_H_
#define LEASEHOLD_SERVER_AUTH_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "server/tls_context.h"

namespace leasehold::server {

// Ordered: each role may do what the ones before it may.
enum class Role { kRead = 1, kWrite = 2, kAdmin = 3 };

std::string_view RoleName(Role role);
Result<Role> ParseRole(std::string_view text);

// One entry of "tokens": a secret (`token`) or a certificate `subject`,
// exactly one of the two.
struct TokenGrant {
  std::string token;
  std::string principal;
  // The namespaces it may use; "*" means every namespace.
  std::vector<std::string> namespaces;
  Role role = Role::kRead;
  // A name of a client certificate the server's client CA verified (a DNS
  // or URI subject alternative name, else its CN): PeerCertificate::names.
  std::string subject = {};

  bool AllNamespaces() const;
  bool Allows(std::string_view ns) const;
};

class Authenticator {
 public:
  Authenticator() = default;  // no tokens: authentication is off

  // Refuses short tokens (under 16 characters), an entry with both a
  // token and a subject or neither, a token or subject given twice, an
  // empty principal and an empty namespace list.
  static Result<Authenticator> Create(std::vector<TokenGrant> grants);

  bool enabled() const { return !grants_.empty(); }
  std::size_t size() const { return grants_.size(); }  // how many tokens
  // Whether an entry names a certificate subject (then the server needs a
  // client CA to verify certificates with).
  bool HasSubjects() const;

  // The grant an `Authorization` header value ("Bearer <token>") names;
  // without one, the grant whose subject is a name of `peer`, the client's
  // verified certificate (may be null). 401 unauthorized when the header
  // is malformed or its token unknown, when neither is given, and when the
  // certificate matches no entry or more than one (it never stands for a
  // principal it does not name alone). Compares tokens in time
  // independent of where a wrong token differs.
  Result<const TokenGrant*> Authenticate(
      std::string_view authorization,
      const PeerCertificate* peer = nullptr) const;

 private:
  std::vector<TokenGrant> grants_;
};

// 403 forbidden unless `who` may act as `needed` in `ns` (empty `ns`: an
// act that belongs to no namespace, which any grant's role covers).
Status Authorize(const TokenGrant& who, std::string_view ns, Role needed);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_AUTH_H_
