#include "server/auth.h"

#include <algorithm>
#include <set>

namespace leasehold::server {
namespace {

constexpr std::size_t kMinTokenLength = 16;

// Equal bytes, in time that depends on the lengths only.
bool SameBytes(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kWrite:
      return "write";
    case Role::kAdmin:
      return "admin";
  }
  return "read";
}

Result<Role> ParseRole(std::string_view text) {
  if (text == "read") return Role::kRead;
  if (text == "write") return Role::kWrite;
  if (text == "admin") return Role::kAdmin;
  return Error(StatusCode::kBadRequest,
               "role must be \"read\", \"write\" or \"admin\", not \"" +
                   std::string(text) + "\"");
}

bool TokenGrant::AllNamespaces() const {
  return std::ranges::find(namespaces, "*") != namespaces.end();
}

bool TokenGrant::Allows(std::string_view ns) const {
  return AllNamespaces() ||
         std::ranges::find(namespaces, ns) != namespaces.end();
}

Result<Authenticator> Authenticator::Create(std::vector<TokenGrant> grants) {
  std::set<std::string_view> seen, subjects;
  for (const TokenGrant& g : grants) {
    if (!g.subject.empty()) {
      if (!g.token.empty()) {
        return Error(StatusCode::kBadRequest,
                     "the entry of principal \"" + g.principal +
                         "\" has both a token and a subject: give one");
      }
      if (!subjects.insert(g.subject).second) {
        return Error(StatusCode::kBadRequest,
                     "subject \"" + g.subject + "\" is given twice");
      }
    } else if (g.token.size() < kMinTokenLength) {
      return Error(StatusCode::kBadRequest,
                   "the token of principal \"" + g.principal +
                       "\" is shorter than " + std::to_string(kMinTokenLength) +
                       " characters; use a long random secret");
    }
    if (g.subject.empty() && !seen.insert(g.token).second) {
      return Error(
          StatusCode::kBadRequest,
          "a token is given twice (principal \"" + g.principal + "\")");
    }
    if (g.principal.empty()) {
      return Error(StatusCode::kBadRequest, "every token needs a principal");
    }
    if (g.namespaces.empty()) {
      return Error(StatusCode::kBadRequest,
                   "principal \"" + g.principal +
                       "\" has no namespaces; list them, or \"*\" for all");
    }
  }
  Authenticator a;
  a.grants_ = std::move(grants);
  return a;
}

bool Authenticator::HasSubjects() const {
  return std::ranges::any_of(
      grants_, [](const TokenGrant& g) { return !g.subject.empty(); });
}

Result<const TokenGrant*> Authenticator::Authenticate(
    std::string_view authorization, const PeerCertificate* peer) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.empty() && peer != nullptr) {
    const TokenGrant* found = nullptr;
    for (const TokenGrant& g : grants_) {
      if (g.subject.empty() ||
          std::ranges::find(peer->names, g.subject) == peer->names.end()) {
        continue;
      }
      if (found != nullptr) {
        return Error(StatusCode::kUnauthorized,
                     "the client certificate names subjects \"" +
                         found->subject + "\" and \"" + g.subject +
                         "\" of two entries: it stands for neither");
      }
      found = &g;
    }
    if (found == nullptr) {
      std::string names;
      for (const std::string& n : peer->names) {
        names += (names.empty() ? "\"" : ", \"") + n + "\"";
      }
      return Error(StatusCode::kUnauthorized,
                   "the client certificate (" +
                       (names.empty() ? std::string("no names") : names) +
                       ") matches no token entry's subject");
    }
    return found;
  }
  if (authorization.empty()) {
    return Error(
        StatusCode::kUnauthorized,
        "this server needs \"Authorization: Bearer <token>\"" +
            std::string(HasSubjects() ? " or a client certificate of a "
                                        "known subject"
                                      : ""));
  }
  if (!authorization.starts_with(kBearer)) {
    return Error(StatusCode::kUnauthorized,
                 "the Authorization header must be \"Bearer <token>\"");
  }
  const std::string_view token = authorization.substr(kBearer.size());
  const TokenGrant* found = nullptr;
  for (const TokenGrant& g : grants_) {  // no early exit: see header
    // (A subject's entry has no token; an empty one must not match it.)
    if (!g.token.empty() && SameBytes(g.token, token)) found = &g;
  }
  if (found == nullptr) {
    return Error(StatusCode::kUnauthorized, "the bearer token is not known");
  }
  return found;
}

Status Authorize(const TokenGrant& who, std::string_view ns, Role needed) {
  if (!ns.empty() && !who.Allows(ns)) {
    return Status(StatusCode::kForbidden, "principal \"" + who.principal +
                                              "\" may not use namespace \"" +
                                              std::string(ns) + "\"");
  }
  if (who.role < needed) {
    return Status(StatusCode::kForbidden,
                  "principal \"" + who.principal + "\" has role " +
                      std::string(RoleName(who.role)) + "; this needs " +
                      std::string(RoleName(needed)));
  }
  return Status::Ok();
}

}  // namespace leasehold::server
