// Fuzz target api_body: the JSON body (for GET, the query string) of any
// endpoint, handed to the real Api over a fresh engine (FuzzServer), with
// the path's parameters filled in: {ns} "app", {id} "1" (a session opened
// first), {key} "k", {topic} "t", {op_id} "op".
//
// An input is one line naming the route as the route table does, with
// optional setup words, then the body:
//   POST /v1/applocks/{ns}/acquire held txn
//   {"session":"1","resource":"r","mode":"Exclusive","timeout_ms":100}
// Setup words: `held` (session "2" holds "r" Exclusive, so that a request
// for it waits), `txn` (session 1 has a transaction open), `record`
// (record "k" exists). After the request the listings are read back, so
// that whatever the body left in the engine is also written out as JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_server.h"
#include "server/routes.h"

namespace {

using leasehold::fuzz::FuzzServer;
using leasehold::fuzz::Violated;
using leasehold::server::ApiRequest;
using leasehold::server::Route;
using leasehold::server::Routes;

const Route* FindRoute(std::string_view method, std::string_view pattern) {
  for (const Route& r : Routes()) {
    if (r.method == method && r.pattern.text() == pattern) return &r;
  }
  return nullptr;
}

// The route's path with its parameters filled in.
std::string PathOf(const Route& route) {
  std::string path;
  for (std::size_t i = 0; i < route.pattern.size(); ++i) {
    const std::string_view s = route.pattern.segment(i);
    path += '/';
    if (s == "{ns}") {
      path += "app";
    } else if (s == "{id}") {
      path += "1";
    } else if (s == "{key}") {
      path += "k";
    } else if (s == "{topic}") {
      path += "t";
    } else if (s == "{op_id}") {
      path += "op";
    } else {
      path += s;
    }
  }
  return path;
}

void Call(FuzzServer& server, std::string method, std::string target,
          std::string body = "") {
  server.Send(ApiRequest{std::move(method), std::move(target), std::move(body),
                         "", nullptr});
}

void SetUp(FuzzServer& server, std::string_view words) {
  const auto* opened = server.Send(
      ApiRequest{"POST", "/v1/sessions", R"({"name":"fuzz"})", "", nullptr});
  if (opened == nullptr ||
      opened->body.find(R"("id":"1")") == std::string::npos) {
    Violated("the first session is not 1", opened ? opened->body : "parked");
  }
  if (words.find("held") != words.npos) {
    Call(server, "POST", "/v1/sessions", R"({"name":"holder"})");
    Call(server, "POST", "/v1/applocks/app/acquire",
         R"({"session":"2","resource":"r","mode":"Exclusive",)"
         R"("owner":"Session"})");
  }
  if (words.find("txn") != words.npos) {
    Call(server, "POST", "/v1/sessions/1/transaction");
  }
  if (words.find("record") != words.npos) {
    Call(server, "PUT", "/v1/records/app/k", R"({"body":"seed"})");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t eol = input.find('\n');
  if (eol == input.npos) return -1;  // not an input of this shape
  const std::string_view line = input.substr(0, eol);
  const std::string_view body = input.substr(eol + 1);
  const std::size_t space = line.find(' ');
  if (space == line.npos) return -1;
  const std::string_view method = line.substr(0, space);
  std::string_view rest = line.substr(space + 1);
  const std::string_view pattern = rest.substr(0, rest.find(' '));
  const Route* route = FindRoute(method, pattern);
  if (route == nullptr) return -1;
  const std::string_view words = rest.substr(pattern.size());

  FuzzServer server;
  SetUp(server, words);
  std::string target = PathOf(*route);
  if (method == "GET") {
    target += '?';
    target += body;
    Call(server, std::string(method), std::move(target));
  } else {
    Call(server, std::string(method), std::move(target), std::string(body));
  }
  for (const char* listing :
       {"/v1/applocks/app", "/v1/records/app", "/v1/sessions",
        "/v1/outbox/app/t", "/v1/namespaces", "/v1/stats", "/metrics"}) {
    Call(server, "GET", listing);
  }
  server.Finish();
  return 0;
}
