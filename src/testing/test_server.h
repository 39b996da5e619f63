// leasehold for your tests: the real server, in this process, on an
// ephemeral 127.0.0.1 port, with nothing on disk and a clock that moves only
// when the test says so. A lease that runs out after 5 minutes, a session
// that expires after 30 s, a lock wait that times out after a minute: the
// test moves the clock past them and sees its own code react, in
// milliseconds of real time. docs/testing.md shows it in use;
// examples/lease-loss-test.cc is a GoogleTest test written with it.
//
// Only the clock is faked: requests go over real HTTP through the real
// server (routes, engine, events); the data lives in memory (as
// `leasehold serve --store memory --clock manual`, which serves the same to
// tests in any language over HTTP).
//
// Link with the CMake target leasehold_testing.
#ifndef LEASEHOLD_TESTING_TEST_SERVER_H_
#define LEASEHOLD_TESTING_TEST_SERVER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "engine/records.h"
#include "leasehold/client.h"

namespace leasehold::testing {

struct TestServerOptions {
  // A session opened without a ttl_ms gets this one (serve's
  // default_session_ttl_ms).
  std::chrono::milliseconds default_session_ttl{30'000};
  // Threads that run HTTP and the engine, as serve's io_threads.
  int io_threads = 2;
  // Options of namespaces by name, as serve's config "namespaces" (e.g.
  // {.lock_delay = 15s} to test a lost lock held back, or
  // {.require_token = true}); every other namespace has the defaults.
  std::map<std::string, NamespaceOptions> namespaces;
};

// A running server. Starting it takes a few milliseconds; destroying it
// stops it (lock waits in flight are answered cancelled, -2) and discards
// its data. Thread-safe: Client copies and AdvanceClock may be used from
// any thread, except from a callback that the server itself runs (none of
// yours are: the client's on_lost callbacks run on the client's threads).
class TestServer {
 public:
  // Starts the server, or returns why it could not ("unreachable" when
  // no loopback port could be bound).
  static client::Result<std::unique_ptr<TestServer>> Start(
      TestServerOptions options = {});
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // "http://127.0.0.1:PORT".
  std::string url() const;
  std::uint16_t port() const;
  // A new Client of this server (include/leasehold/client.h).
  client::Client NewClient() const;

  // The server's time, RFC 3339 UTC with milliseconds. It starts at the
  // real time of Start() and then moves only by AdvanceClock.
  std::string Now() const;
  // Moves the server's clock forward by `by` and returns the new time
  // (RFC 3339). When it returns, every deadline up to the new time has
  // been applied (leases, sessions and outbox claims expired, lock waits
  // timed out, transactions past their limit rolled back, lock-delays
  // ended) and the events for them published on /v1/events. Error
  // "bad_request" for a negative `by` or one that would take the clock
  // past the year 9999. Background work of the client (a Session's
  // keepalives, a CheckoutGuard's renewals) runs on real time: it does not
  // run during the move.
  client::Result<std::string> AdvanceClock(std::chrono::milliseconds by);

 private:
  class Impl;
  explicit TestServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTING_TEST_SERVER_H_
