// The runner must fail a scenario for the right reason and at the right
// line: these tests run small, deliberately wrong scenarios.
#include "tests/scenarios/scenario_runner.h"

#include <gtest/gtest.h>

namespace leasehold::scenarios {
namespace {

std::optional<ScenarioFailure> RunText(std::string_view text) {
  auto parsed = ParseScenario(text);
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message;
  if (!parsed) return ScenarioFailure{-1, "parse error"};
  return RunScenario(*parsed);
}

constexpr std::string_view kTwoSessions =
    "session asha\n"
    "session ravi\n"
    "at 0 asha acquire doc Exclusive owner=Session -> 0\n"
    "at 0 ravi acquire doc Exclusive owner=Session timeout=100 -> waits\n";

TEST(ScenarioRunner, AScenarioThatHoldsPasses) {
  auto failure = RunText(std::string(kTwoSessions) +
                         "at 100 ravi finished -1\n"
                         "at 100 ravi mode doc owner=Session -> NoLock\n");
  EXPECT_FALSE(failure.has_value()) << failure->message;
}

TEST(ScenarioRunner, AWrongAnswerFailsAtItsLine) {
  auto failure = RunText(std::string(kTwoSessions) +
                         "at 0 asha mode doc owner=Session -> Shared\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("expected: Shared\n     got: Exclusive"),
            std::string::npos)
      << failure->message;
  EXPECT_NE(failure->message.find("granted: asha Session Exclusive"),
            std::string::npos)
      << "the lock table is shown: " << failure->message;
}

TEST(ScenarioRunner, AnUnexpectedFinishFails) {
  // ravi times out at 100 but no `finished` line says so.
  auto failure = RunText(std::string(kTwoSessions) +
                         "at 150\n"
                         "at 150 asha mode doc owner=Session -> Exclusive\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5) << "the line during which it finished";
  EXPECT_NE(failure->message.find("ravi's wait finished"), std::string::npos)
      << failure->message;
  EXPECT_NE(failure->message.find("-1 (timed out)"), std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, AnUnexpectedFinishAtTheEndFails) {
  auto failure = RunText(std::string(kTwoSessions) + "at 100\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
}

TEST(ScenarioRunner, AnUnexpectedFinishDuringACommandFails) {
  auto failure = RunText(std::string(kTwoSessions) +
                         "at 10 asha release doc owner=Session\n"
                         "at 20 asha mode doc owner=Session -> NoLock\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("1 (granted after waiting)"),
            std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, AFinishThatDidNotHappenFails) {
  auto failure =
      RunText(std::string(kTwoSessions) + "at 99 ravi finished -1\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("it is still waiting"), std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, AFinishWithTheWrongResultFails) {
  auto failure =
      RunText(std::string(kTwoSessions) + "at 100 ravi finished 1\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("got: -1 (timed out)"), std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, AnUnexpectedErrorFails) {
  auto failure = RunText(
      "session asha\n"
      "asha release doc owner=Session\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 2);
  EXPECT_NE(failure->message.find("expected: ok\n     got: error not_held"),
            std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, AnExpectedErrorThatDoesNotHappenFails) {
  auto failure = RunText(
      "session asha\n"
      "asha acquire doc Shared owner=Session -> 0\n"
      "asha release doc owner=Session -> error not_held\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 3);
}

TEST(ScenarioRunner, GrantDetailsAreChecked) {
  auto failure = RunText(
      "session asha\n"
      "asha acquire doc Shared owner=Session -> 0 held=Shared count=1\n"
      "asha acquire doc IX owner=Session -> 0 held=SIX count=1\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 3);
  EXPECT_NE(failure->message.find("got: 0 (granted at once) "
                                  "held=SharedIntentExclusive count=2"),
            std::string::npos)
      << failure->message;
}

constexpr std::string_view kFullSemaphore =
    "session asha\n"
    "session ravi\n"
    "at 0 asha take pay 2 limit=2 owner=Session -> 0 permits=2\n"
    "at 0 ravi take pay 1 limit=2 owner=Session timeout=100 -> waits\n";

TEST(ScenarioRunner, ASemaphoreScenarioThatHoldsPasses) {
  auto failure = RunText(std::string(kFullSemaphore) +
                         "at 0 queue pay -> ravi\n"
                         "at 0 held pay -> 2\n"
                         "at 10 asha give pay permits=1 owner=Session -> 1\n"
                         "at 10 ravi finished 1 permits=1\n"
                         "at 10 ravi permits pay owner=Session -> 1\n");
  EXPECT_FALSE(failure.has_value()) << failure->message;
}

TEST(ScenarioRunner, AnUnexpectedSemaphoreFinishFails) {
  auto failure = RunText(std::string(kFullSemaphore) +
                         "at 10 asha give pay owner=Session\n"
                         "at 20 held pay -> 1\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("1 (granted after waiting) permits=1"),
            std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, ALocksDetailsDoNotMatchASemaphoresGrant) {
  auto failure = RunText(std::string(kFullSemaphore) +
                         "at 10 asha give pay owner=Session\n"
                         "at 10 ravi finished 1 count=1\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 6);
  EXPECT_NE(failure->message.find("got: 1 (granted after waiting) permits=1"),
            std::string::npos)
      << failure->message;
}

TEST(ScenarioRunner, WrongPermitsFail) {
  for (std::string_view step :
       {"at 0 asha permits pay owner=Session -> 1\n", "at 0 held pay -> 3\n",
        "at 0 queue pay -> none\n",
        "at 0 asha give pay owner=Session -> 1\n"}) {
    auto failure = RunText(std::string(kFullSemaphore) + std::string(step));
    ASSERT_TRUE(failure.has_value()) << step;
    EXPECT_EQ(failure->line, 5) << step;
    EXPECT_NE(failure->message.find("pay semaphore limit=2 held="),
              std::string::npos)
        << "the semaphore table is shown: " << failure->message;
  }
}

TEST(ScenarioRunner, AWrongLockDelayFails) {
  constexpr std::string_view kExpired =
      "namespace app lock_delay=5000\n"
      "session asha ttl=1000\n"
      "at 0 asha acquire job Exclusive owner=Session -> 0\n"
      "at 1000\n";
  EXPECT_FALSE(RunText(std::string(kExpired) + "delay job -> until=6000\n"));
  auto failure = RunText(std::string(kExpired) + "delay job -> none\n");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->line, 5);
  EXPECT_NE(failure->message.find("expected: none\n     got: until=6000"),
            std::string::npos)
      << failure->message;
  EXPECT_NE(failure->message.find("lock-delay until 6000 ms"),
            std::string::npos)
      << failure->message;
}

}  // namespace
}  // namespace leasehold::scenarios
