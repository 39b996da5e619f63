// LeaderClient: the failover and fault-soak tests' HTTP client. It sends each
// request to the node it believes leads, follows a 307 to the leader, and on a
// broken connection or a 503 moves on to the next node. Whether a request that
// ended that way took effect is unknown: the caller records it so.
#ifndef LEASEHOLD_TESTS_TESTING_LEADER_CLIENT_H_
#define LEASEHOLD_TESTS_TESTING_LEADER_CLIENT_H_

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/connection.h"
#include "tests/testing/lock_history.h"
#include "tests/testing/test_tls.h"

namespace leasehold::testing {

// The string member `key` of object `v`, or "".
inline std::string JsonString(const boost::json::value& v,
                              std::string_view key) {
  const boost::json::object* o = v.if_object();
  const boost::json::value* f = o != nullptr ? o->if_contains(key) : nullptr;
  return f != nullptr && f->is_string() ? std::string(f->as_string()) : "";
}
// The integer member `key` of object `v`, or nullopt.
inline std::optional<std::int64_t> JsonInt(const boost::json::value& v,
                                           std::string_view key) {
  const boost::json::object* o = v.if_object();
  const boost::json::value* f = o != nullptr ? o->if_contains(key) : nullptr;
  if (f == nullptr || !f->is_int64()) return std::nullopt;
  return f->as_int64();
}

class LeaderClient {
 public:
  using Clock = std::chrono::steady_clock;

  struct Reply {
    // False when the outcome is unknown: no answer, or 503 unavailable.
    bool answered = false;
    unsigned status = 0;
    boost::json::value json;
  };

  explicit LeaderClient(std::vector<std::uint16_t> ports)
      : ports_(std::move(ports)) {}

  // One attempt (plus redirects): the outcome as the node gave it.
  Reply Send(std::string_view method, std::string_view target,
             std::string_view body,
             std::chrono::milliseconds within = std::chrono::seconds(3)) {
    const auto deadline = Clock::now() + within;
    for (int hops = 0; hops < 4; ++hops) {
      http::Answer a = To(current_).Request(method, target, body, deadline);
      if (a.error) {
        Next();
        return {};
      }
      if (a.status == 307) {
        if (!FollowTo(a.body)) return {};
        continue;
      }
      Reply r;
      boost::system::error_code ec;
      r.json = boost::json::parse(a.body, ec);
      r.status = a.status;
      r.answered = a.status != 503;
      if (!r.answered) Next();
      return r;
    }
    return {};
  }

  // Send, again and again until answered or `within` has passed, for
  // requests that are safe to repeat (reads, idempotent writes).
  Reply Retry(std::string_view method, std::string_view target,
              std::string_view body, std::chrono::milliseconds within) {
    const auto until = Clock::now() + within;
    for (;;) {
      Reply r = Send(method, target, body);
      if (r.answered || Clock::now() >= until) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  http::Connection& To(std::size_t i) {
    auto& c = connections_[i];
    if (c == nullptr) {
      http::Address address;
      address.port = ports_[i];
      address.tls = TestTlsClient();  // over TLS in the TLS runs
      c = std::make_unique<http::Connection>(address);
    }
    return *c;
  }

  void Next() { current_ = (current_ + 1) % ports_.size(); }

  // The redirect's body names the leader ("http[s]://127.0.0.1:PORT").
  bool FollowTo(const std::string& body) {
    boost::system::error_code ec;
    auto v = boost::json::parse(body, ec);
    const std::string url = ec ? "" : JsonString(v, "leader");
    if (url.empty()) return false;
    const std::size_t colon = url.rfind(':');
    const int port = std::atoi(url.c_str() + colon + 1);
    for (std::size_t i = 0; i < ports_.size(); ++i) {
      if (ports_[i] == port) {
        current_ = i;
        return true;
      }
    }
    return false;
  }

  std::vector<std::uint16_t> ports_;
  std::size_t current_ = 0;
  std::map<std::size_t, std::unique_ptr<http::Connection>> connections_;
};

// The outcome of a call that changes something, for a HistoryRecorder:
// unknown without an answer to trust, kSessionLost for session_not_found,
// else kOk when the status is `ok_status` and kRefused otherwise.
inline Outcome OutcomeOf(const LeaderClient::Reply& r, unsigned ok_status) {
  if (!r.answered) return Outcome::kUnknown;
  const boost::json::object* o = r.json.if_object();
  const boost::json::value* error =
      o != nullptr ? o->if_contains("error") : nullptr;
  if (r.status == 404 && error != nullptr &&
      JsonString(*error, "code") == "session_not_found") {
    return Outcome::kSessionLost;
  }
  return r.status == ok_status ? Outcome::kOk : Outcome::kRefused;
}

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LEADER_CLIENT_H_
