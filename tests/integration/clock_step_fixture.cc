#include "tests/integration/clock_step_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "client/api_codec.h"

namespace leasehold::testing {

namespace api = client::api;
using std::chrono::milliseconds;

namespace {

// The multiarch libfaketime.so.1 that CMake found, or "".
constexpr const char* kLibfaketime = LEASEHOLD_LIBFAKETIME;
// The server these tests start: `leasehold`, or where that links jemalloc
// (a Release build), `leasehold_system_malloc`: libfaketime preloaded
// beside jemalloc stops the process at its first clock_gettime().
constexpr const char* kServer = LEASEHOLD_CLOCK_STEP_SERVER;

}  // namespace

void ClockStepTest::SetUp() {
  ASSERT_NE(std::string(kLibfaketime), "")
      << "libfaketime.so.1 was not found at configure time: install Debian's "
         "libfaketime (scripts/install-deps) and configure again";
  SetWallClock("+0");
  StartFaked();
}

void ClockStepTest::StartFaked() {
  std::ofstream(dir_.File("config.json")) << Config();
  server_ = ServerProcess::OfBinary(kServer, dir_.File("data"),
                                    dir_.File("config.json"),
                                    FakedClockEnvironment());
}

void ClockStepTest::SetWallClock(const std::string& offset) {
  const std::string next = dir_.File("faketime.next");
  std::ofstream(next) << offset << "\n";
  ASSERT_EQ(std::rename(next.c_str(), dir_.File("faketime").c_str()), 0);
}

std::vector<std::string> ClockStepTest::FakedClockEnvironment() const {
  // ASan insists on coming first among the loaded libraries; a preloaded
  // libfaketime comes before it, which is harmless here.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string asan_options = asan != nullptr ? asan : "";
  if (!asan_options.empty()) asan_options += ":";
  asan_options += "verify_asan_link_order=0";
  return {std::string("LD_PRELOAD=") + kLibfaketime,
          "FAKETIME_TIMESTAMP_FILE=" + dir_.File("faketime"),
          "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1",
          // File times stay real: only the clock is at fault.
          "NO_FAKE_STAT=1", "ASAN_OPTIONS=" + asan_options};
}

SysTime ClockStepTest::ServerNow(HttpClient& c) {
  const auto a = c.Request("GET", "/v1/whoami");
  EXPECT_EQ(a.status, 200u) << a.body;
  return TimeOf(a.json, "now");
}

bool ClockStepTest::SessionAlive(HttpClient& c, const std::string& id) {
  const auto list = c.Request("GET", api::SessionsPath());
  EXPECT_EQ(list.status, 200u) << list.body;
  for (const auto& s : list.json.at("sessions").as_array()) {
    if (Str(s, "id") == id) return true;
  }
  return false;
}

Steady::time_point ClockStepTest::AwaitSessionGone(HttpClient& c,
                                                   const std::string& id,
                                                   milliseconds within) {
  const auto give_up = Steady::now() + within;
  while (Steady::now() < give_up) {
    if (!SessionAlive(c, id)) return Steady::now();
    std::this_thread::sleep_for(milliseconds(20));
  }
  return Steady::time_point::max();
}

}  // namespace leasehold::testing
