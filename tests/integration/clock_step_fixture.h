// ClockStepTest: a real `leasehold serve` whose wall clock the test steps
// while it runs, with Debian's libfaketime (scripts/install-deps). The
// server is started with libfaketime preloaded and reads its offset from a
// file on every call (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1), so that
// SetWallClock("+1h") steps CLOCK_REALTIME (time, gettimeofday,
// std::chrono::system_clock) of the running server by an hour. Without
// FAKETIME_DONT_FAKE_MONOTONIC=1, libfaketime 0.9.10 moves CLOCK_MONOTONIC
// by the same offset (ReportedNowDoesNotJumpWithTheWallClock then fails);
// with it, CLOCK_MONOTONIC is left alone, as a real step (settimeofday, an
// NTP step) leaves it. The test's own clocks are real.
//
// What the steps must not change, and what they change after a restart:
// docs/api.md, "Time", and clock_step_test.cc, clock_restart_test.cc.
#ifndef LEASEHOLD_TESTS_INTEGRATION_CLOCK_STEP_FIXTURE_H_
#define LEASEHOLD_TESTS_INTEGRATION_CLOCK_STEP_FIXTURE_H_

#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {

using SysTime = std::chrono::system_clock::time_point;
using Steady = std::chrono::steady_clock;

class ClockStepTest : public ApiContractTest {
 protected:
  // Starts the server with its wall clock at the real time ("+0").
  void SetUp() override;

  // (Re)starts the server on the same data under libfaketime, its wall
  // clock at the offset SetWallClock wrote last.
  void StartFaked();

  // Steps the server's wall clock to `offset` from the real time, in
  // libfaketime's words: "+0", "+1h", "-1h". Takes effect at the server's
  // next read of the wall clock (the file is replaced whole, by rename).
  void SetWallClock(const std::string& offset);

  // The variables that put a process under the faked wall clock.
  std::vector<std::string> FakedClockEnvironment() const;

  // The server's clock: `now` of GET /v1/whoami.
  SysTime ServerNow(HttpClient& c);

  // Whether session `id` is listed (alive) now.
  static bool SessionAlive(HttpClient& c, const std::string& id);

  // Polls until session `id` is gone, for up to `within`; the moment it was
  // first seen gone (test's monotonic clock), or Steady::time_point::max().
  static Steady::time_point AwaitSessionGone(HttpClient& c,
                                             const std::string& id,
                                             std::chrono::milliseconds within);
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_INTEGRATION_CLOCK_STEP_FIXTURE_H_
