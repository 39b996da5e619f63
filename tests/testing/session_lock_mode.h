// What a real server says a session holds, for tests over HTTP.
#ifndef LEASEHOLD_TESTS_TESTING_SESSION_LOCK_MODE_H_
#define LEASEHOLD_TESTS_TESTING_SESSION_LOCK_MODE_H_

#include <string>

#include "client/api_codec.h"
#include "tests/testing/server_process.h"

namespace leasehold::testing {

// The mode that session `session` holds on `resource` in `ns` (owner
// Session, principal public), as GET /v1/applocks/NS/mode answers it;
// "HTTP <status>: <body>" when it does not answer 200.
inline std::string SessionLockMode(HttpClient& c, const std::string& ns,
                                   const std::string& session,
                                   const std::string& resource) {
  const HttpAnswer a = c.Request(
      "GET", client::api::ModePath(ns, session, resource, "Session", "public"));
  if (a.status != 200 || !a.json.is_object()) {
    return "HTTP " + std::to_string(a.status) + ": " + a.body;
  }
  const auto* mode = a.json.as_object().if_contains("mode");
  return mode != nullptr && mode->is_string() ? std::string(mode->as_string())
                                              : a.body;
}

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_SESSION_LOCK_MODE_H_
