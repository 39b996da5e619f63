// Authentication and access rules: bearer tokens that name a principal, the
// namespaces it may use and its role. Off (every caller may do everything)
// when no tokens are configured, which the server allows only on loopback.
#ifndef LEASEHOLD_SERVER_AUTH_H_
#define LEASEHOLD_SERVER_AUTH_H_

#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::server {

// Ordered: each role may do what the ones before it may.
enum class Role { kRead = 1, kWrite = 2, kAdmin = 3 };

std::string_view RoleName(Role role);
Result<Role> ParseRole(std::string_view text);

struct TokenGrant {
  std::string token;
  std::string principal;
  // The namespaces it may use; "*" means every namespace.
  std::vector<std::string> namespaces;
  Role role = Role::kRead;

  bool AllNamespaces() const;
  bool Allows(std::string_view ns) const;
};

class Authenticator {
 public:
  Authenticator() = default;  // no tokens: authentication is off

  // Refuses empty or short tokens (under 16 characters), a token given
  // twice, an empty principal and an empty namespace list.
  static Result<Authenticator> Create(std::vector<TokenGrant> grants);

  bool enabled() const { return !grants_.empty(); }
  std::size_t size() const { return grants_.size(); }  // how many tokens

  // The grant named by an `Authorization` header value ("Bearer <token>").
  // 401 unauthorized when it is missing, malformed or unknown. Compares in
  // time independent of where a wrong token differs.
  Result<const TokenGrant*> Authenticate(std::string_view authorization) const;

 private:
  std::vector<TokenGrant> grants_;
};

// 403 forbidden unless `who` may act as `needed` in `ns` (empty `ns`: an
// act that belongs to no namespace, which any grant's role covers).
Status Authorize(const TokenGrant& who, std::string_view ns, Role needed);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_AUTH_H_
