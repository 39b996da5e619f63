#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/real_clock.h"
#include "common/status.h"
#include "common/token.h"

namespace leasehold {
namespace {

TEST(Token, Is128RandomBitsInHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string t = NewLeaseToken();
    ASSERT_EQ(t.size(), 32u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

// Each thread draws from its own pool of kernel randomness; across threads
// and across refills (256 tokens per pool) no token repeats.
TEST(Token, ThreadsNeverShareATokenAcrossRefills) {
  constexpr int kThreads = 4, kEach = 1000;
  std::vector<std::vector<std::string>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&made, t] {
      for (int i = 0; i < kEach; ++i) made[t].push_back(NewLeaseToken());
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> seen;
  for (const auto& tokens : made) seen.insert(tokens.begin(), tokens.end());
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kEach));
}

TEST(Time, FormatsRfc3339WithMilliseconds) {
  using namespace std::chrono;
  const Time t = time_point_cast<microseconds>(sys_days{2026y / 11 / 30}) +
                 hours(3) + minutes(24) + seconds(53) + microseconds(123'999);
  EXPECT_EQ(FormatTime(t), "2026-11-30T03:24:53.123Z");
  // Every field at its edges: zero padding, the last millisecond of a year,
  // before 1970, and the epoch itself.
  EXPECT_EQ(
      FormatTime(time_point_cast<microseconds>(sys_days{1999y / 12 / 31}) +
                 hours(23) + minutes(59) + seconds(59) + milliseconds(999)),
      "1999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatTime(time_point_cast<microseconds>(sys_days{1969y / 7 / 20}) +
                       hours(20) + minutes(17) + milliseconds(40)),
            "1969-07-20T20:17:00.040Z");
  EXPECT_EQ(FormatTime(Time{}), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTime(time_point_cast<microseconds>(sys_days{2000y / 2 / 29}) +
                       milliseconds(7)),
            "2000-02-29T00:00:00.007Z");
}

TEST(Time, ParsesWhatItFormatsAndNothingElse) {
  using namespace std::chrono;
  const Time t = time_point_cast<microseconds>(sys_days{2026y / 11 / 30}) +
                 hours(3) + minutes(24) + seconds(53) + milliseconds(123);
  EXPECT_EQ(ParseTime(FormatTime(t)), t);
  EXPECT_EQ(ParseTime("2026-11-30T03:24:53Z"), t - milliseconds(123));
  for (const char* bad :
       {"", "2026-11-30", "2026-11-30T03:24:53.123", "2026-11-30T03:24:53.Z",
        "2026-02-30T00:00:00Z", "2026-11-30T03:24:53.123+01:00",
        "x2026-11-30T03:24:53Z", "2026-11-30T25:00:00Z"}) {
    EXPECT_FALSE(ParseTime(bad).has_value()) << bad;
  }
}

TEST(RealClock, NeverGoesBack) {
  RealClock clock;
  Time last = clock.Now();
  for (int i = 0; i < 10000; ++i) {
    const Time now = clock.Now();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(Status, NamesMatchTheApi) {
  EXPECT_EQ(StatusCodeName(StatusCode::kNameTooLong), "name_too_long");
  EXPECT_EQ(StatusCodeName(StatusCode::kSessionNotFound), "session_not_found");
  EXPECT_EQ(Status(StatusCode::kNotHeld, "x").ToString(), "not_held: x");
  EXPECT_TRUE(Status().ok());
}

TEST(LogTest, ATextLineHasTimeLevelMessageAndFields) {
  const Time at = *ParseTime("2026-12-05T11:02:03.123Z");
  EXPECT_EQ(log::FormatLine(at, log::Level::kInfo, log::Format::kText,
                            "config reloaded",
                            {{"by", "SIGHUP"}, {"config", "/etc/a b.json"}}),
            "2026-12-05T11:02:03.123Z info leasehold: config reloaded "
            "by=SIGHUP config=\"/etc/a b.json\"\n");
  // One event, one line, whatever the message holds.
  EXPECT_EQ(log::FormatLine(at, log::Level::kWarn, log::Format::kText,
                            "two\nlines", {}),
            "2026-12-05T11:02:03.123Z warn leasehold: two\\nlines\n");
}

TEST(LogTest, AJsonLineEscapesAndReplacesInvalidUtf8) {
  const Time at = *ParseTime("2026-12-05T11:02:03.123Z");
  EXPECT_EQ(log::FormatLine(at, log::Level::kError, log::Format::kJson,
                            "say \"hi\"\\\x01", {{"path", "caf\xc3\xa9\xff"}}),
            "{\"ts\":\"2026-12-05T11:02:03.123Z\",\"level\":\"error\","
            "\"msg\":\"say \\\"hi\\\"\\\\\\u0001\",\"fields\":{\"path\":"
            "\"caf\xc3\xa9\xef\xbf\xbd\"}}\n");
  EXPECT_EQ(
      log::FormatLine(at, log::Level::kDebug, log::Format::kJson, "m", {}),
      "{\"ts\":\"2026-12-05T11:02:03.123Z\",\"level\":\"debug\","
      "\"msg\":\"m\",\"fields\":{}}\n");
}

TEST(LogTest, LevelsAndFormatsParseByName) {
  EXPECT_EQ(*log::ParseLevel("warn"), log::Level::kWarn);
  EXPECT_EQ(*log::ParseFormat("json"), log::Format::kJson);
  EXPECT_EQ(log::ParseLevel("loud").error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(log::ParseFormat("xml").error().code(), StatusCode::kBadRequest);
}

TEST(LogTest, ABurstIsReportedFirstThenSummedPerPeriod) {
  using std::chrono::seconds;
  log::BurstCounter refused(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point() + seconds(100);
  EXPECT_EQ(refused.Count(t0), 1u);
  EXPECT_EQ(refused.Count(t0 + seconds(1)), std::nullopt);
  EXPECT_EQ(refused.Count(t0 + seconds(9)), std::nullopt);
  EXPECT_EQ(refused.Count(t0 + seconds(10)), 3u);
  EXPECT_EQ(refused.Count(t0 + seconds(11)), std::nullopt);
}

}  // namespace
}  // namespace leasehold
