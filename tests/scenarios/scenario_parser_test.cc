#include "tests/scenarios/scenario_parser.h"

#include <gtest/gtest.h>

namespace leasehold::scenarios {
namespace {

using Kind = Expectation::Kind;

constexpr std::string_view kExample = R"(
# S held, X waiting: a new S waits behind X; when X times out, S is granted
session asha ttl=60000
session ravi ttl=60000 priority=-3
at 0    asha acquire doc Shared owner=Session           -> 0
at 0    ravi acquire doc Exclusive owner=Session timeout=100 -> waits
at 100  ravi finished -1
at 100  asha mode doc owner=Session -> Shared   # a trailing comment
)";

// The error for `text`, which must not parse.
ParseError ErrorOf(std::string_view text) {
  auto parsed = ParseScenario(text);
  EXPECT_FALSE(parsed.has_value()) << "parsed: " << text;
  return parsed ? ParseError{-1, "parsed"} : parsed.error();
}

TEST(ScenarioParser, ParsesTheExample) {
  auto parsed = ParseScenario(kExample);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const std::vector<Step>& steps = parsed->steps;
  ASSERT_EQ(steps.size(), 6u);

  EXPECT_EQ(steps[0].action, Action::kOpenSession);
  EXPECT_EQ(steps[0].line, 3);
  EXPECT_EQ(steps[0].session, "asha");
  EXPECT_EQ(steps[1].priority, -3);

  const Step& acquire = steps[3];
  EXPECT_EQ(acquire.action, Action::kAcquire);
  EXPECT_EQ(acquire.session, "ravi");
  EXPECT_EQ(acquire.target.resource, "doc");
  EXPECT_EQ(acquire.target.ns, kDefaultNamespace);
  EXPECT_EQ(acquire.target.principal, kDefaultPrincipal);
  EXPECT_EQ(acquire.mode, LockMode::kExclusive);
  EXPECT_EQ(acquire.owner, LockOwner::kSession);
  EXPECT_EQ(acquire.timeout_ms, 100);
  EXPECT_EQ(acquire.expect.kind, Kind::kWaits);

  EXPECT_EQ(steps[4].action, Action::kFinished);
  EXPECT_EQ(steps[4].at_ms, 100);
  EXPECT_EQ(steps[4].expect.kind, Kind::kResult);
  EXPECT_EQ(steps[4].expect.result, -1);

  EXPECT_EQ(steps[5].expect.kind, Kind::kMode);
  EXPECT_EQ(steps[5].expect.mode, LockMode::kShared);
  EXPECT_EQ(steps[5].text,
            "at 100  asha mode doc owner=Session -> Shared   # a trailing "
            "comment");
}

TEST(ScenarioParser, DefaultsAndShortForms) {
  auto parsed = ParseScenario(
      "session a\n"
      "a acquire r ix -> 0 held=SIX count=2\n"
      "a release r\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const Step& open = parsed->steps[0];
  EXPECT_EQ(open.ttl_ms, kDefaultTtlMs);
  EXPECT_EQ(open.at_ms, 0);
  const Step& acquire = parsed->steps[1];
  EXPECT_EQ(acquire.owner, LockOwner::kTransaction);
  EXPECT_EQ(acquire.timeout_ms, kDefaultTimeoutMs);
  EXPECT_EQ(acquire.mode, LockMode::kIntentExclusive);
  EXPECT_EQ(acquire.expect.held, LockMode::kSharedIntentExclusive);
  EXPECT_EQ(acquire.expect.count, 2);
  EXPECT_EQ(parsed->steps[2].expect.kind, Kind::kOk);
}

TEST(ScenarioParser, QuotedNamesKeepBlanksAndCase) {
  auto parsed = ParseScenario(
      "session a\n"
      "a acquire \"Doc \" Shared ns=\"my ns\" principal=\"x=y\" -> 0\n"
      "a acquire \"\" Shared -> error name_empty\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->steps[1].target.resource, "Doc ");
  EXPECT_EQ(parsed->steps[1].target.ns, "my ns");
  EXPECT_EQ(parsed->steps[1].target.principal, "x=y");
  EXPECT_EQ(parsed->steps[2].target.resource, "");
  EXPECT_EQ(parsed->steps[2].expect.kind, Kind::kError);
  EXPECT_EQ(parsed->steps[2].expect.error, "name_empty");
}

TEST(ScenarioParser, TimeAloneIsAStep) {
  auto parsed = ParseScenario("session a\nat 50\nat 70 # later\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  ASSERT_EQ(parsed->steps.size(), 3u);
  EXPECT_EQ(parsed->steps[1].action, Action::kAdvance);
  EXPECT_EQ(parsed->steps[2].at_ms, 70);
}

TEST(ScenarioParser, QueueAndCycle) {
  auto parsed = ParseScenario(
      "session a\nsession b\n"
      "queue doc -> a b\n"
      "queue doc ns=other -> none\n"
      "b finished -3 cycle=a,b\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->steps[2].expect.names,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(parsed->steps[3].expect.names.empty());
  EXPECT_EQ(parsed->steps[3].target.ns, "other");
  EXPECT_EQ(parsed->steps[4].expect.cycle,
            (std::vector<std::string>{"a", "b"}));
}

TEST(ScenarioParser, SemaphoreSteps) {
  auto parsed = ParseScenario(
      "session a\n"
      "a take pay 2 limit=3 owner=Session timeout=50 ns=n -> 0 permits=2\n"
      "a give pay permits=1 owner=Session ns=n -> 1\n"
      "a give pay\n"
      "a permits pay -> 0\n"
      "held pay principal=p -> 3\n"
      "a finished 1 permits=4\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const Step& take = parsed->steps[1];
  EXPECT_EQ(take.action, Action::kTake);
  EXPECT_EQ(take.target.resource, "pay");
  EXPECT_EQ(take.target.ns, "n");
  EXPECT_EQ(take.permits, 2);
  EXPECT_EQ(take.limit, 3);
  EXPECT_EQ(take.owner, LockOwner::kSession);
  EXPECT_EQ(take.timeout_ms, 50);
  EXPECT_EQ(take.expect.permits, 2);
  const Step& give = parsed->steps[2];
  EXPECT_EQ(give.action, Action::kGive);
  EXPECT_EQ(give.permits, 1);
  EXPECT_EQ(give.expect.kind, Kind::kNumber);
  EXPECT_EQ(give.expect.number, 1);
  EXPECT_EQ(parsed->steps[3].permits, 0) << "0: all";
  EXPECT_EQ(parsed->steps[3].expect.kind, Kind::kOk);
  EXPECT_EQ(parsed->steps[4].action, Action::kPermits);
  EXPECT_EQ(parsed->steps[5].action, Action::kHeld);
  EXPECT_EQ(parsed->steps[5].target.principal, "p");
  EXPECT_EQ(parsed->steps[5].expect.number, 3);
  EXPECT_EQ(parsed->steps[6].expect.permits, 4);
}

TEST(ScenarioParser, LockDelaySteps) {
  auto parsed = ParseScenario(
      "namespace app lock_delay=5000\n"
      "session a\n"
      "a end by=admin\n"
      "delay job -> none\n"
      "delay pay ns=app -> until=6000 permits=2\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const Step& ns = parsed->steps[0];
  EXPECT_EQ(ns.action, Action::kNamespace);
  EXPECT_EQ(ns.target.ns, "app");
  EXPECT_EQ(ns.lock_delay_ms, 5000);
  EXPECT_TRUE(parsed->steps[2].ended_by_administrator);
  const Expectation& none = parsed->steps[3].expect;
  EXPECT_EQ(none.kind, Kind::kDelay);
  EXPECT_FALSE(none.until_ms.has_value());
  const Expectation& until = parsed->steps[4].expect;
  EXPECT_EQ(until.until_ms, 6000);
  EXPECT_EQ(until.permits, 2);
}

TEST(ScenarioParser, ErrorsNameTheLine) {
  EXPECT_EQ(ErrorOf("session a\n\n# x\nb begin\n").line, 4);
  EXPECT_EQ(ErrorOf("session a\na aquire doc Shared -> 0\n").line, 2);
  EXPECT_EQ(ErrorOf("").line, 0);
  EXPECT_EQ(ErrorOf("# only a comment\n").line, 0);
}

// Found by fuzz/scenario_fuzz.cc: `at 8888888882828888888` parsed, and the
// runner's ScenarioStart() + MS overflowed (undefined behaviour).
TEST(ScenarioParser, TimeIsAtMostAHundredYears) {
  auto latest = ParseScenario("at " + std::to_string(kLatestAtMs) + "\n");
  ASSERT_TRUE(latest.has_value()) << latest.error().message;
  EXPECT_EQ(latest->steps[0].at_ms, kLatestAtMs);
  const ParseError later =
      ErrorOf("at " + std::to_string(kLatestAtMs + 1) + "\n");
  EXPECT_EQ(later.line, 1);
  EXPECT_NE(later.message.find("100 years"), std::string::npos)
      << later.message;
  EXPECT_EQ(ErrorOf("at 8888888882828888888\n").line, 1);
}

TEST(ScenarioParser, ErrorsSayWhatIsWrong) {
  auto has = [](std::string_view text, std::string_view words) {
    std::string message = ErrorOf(text).message;
    EXPECT_NE(message.find(words), std::string::npos) << "message: " << message;
  };
  has("session a\nb begin\n", "unknown session `b`");
  has("session a\na aquire doc Shared -> 0\n", "unknown step `aquire`");
  has("at 10\nat 5\n", "time goes back");
  has("at soon\n", "`at` needs a time");
  has("session a\na mode doc\n", "needs `->`");
  has("session a\na acquire doc Shared\n", "needs `->`");
  has("session a\na acquire doc Shared -> 1\n", "1 and -2 come later");
  has("session a\na acquire doc Sharde -> 0\n", "unknown lock mode");
  has("session a\na acquire doc Shared tiemout=5 -> 0\n",
      "unknown option `tiemout=`");
  has("session a\na acquire doc Shared timeout=soon -> 0\n",
      "needs a whole number");
  has("session a\na acquire doc Shared owner=me -> 0\n",
      "Session or Transaction");
  has("session a\na acquire doc -> 0\n", "takes 2 word(s)");
  has("session a\na release doc -> error not_hled\n",
      "unknown error code `not_hled`");
  has("session a\na finished 0\n", "a wait finishes with 1, -1, -2 or -3");
  has("session a\na finished -1 -> 1\n", "takes no `->`");
  has("session a\na finished -1 held=Shared\n", "describe a grant");
  has("session a\na finished 1 cycle=a,a\n", "describes a deadlock");
  has("session a\na finished -3 cycle=a,zed\n", "unknown session `zed`");
  has("session a\nsession a\n", "already declared");
  has("session queue\n", "cannot name a session");
  has("session a\na acquire \"doc Shared -> 0\n", "no closing \"");
  has("session a\na begin -> ok -> ok\n", "only one `->`");
  has("session a\na begin ->\n", "nothing after `->`");
  has("session a\na begin now\n", "takes 0 word(s)");
  has("session a\na waiting -> maybe\n", "`-> true`, `-> false`");
  has("session a\na count doc -> -1\n", "expected a count");
  has("session a\nqueue doc -> a zed\n", "unknown session `zed`");
  has("session a\na take pay 1 -> 0\n", "needs the semaphore's `limit=N`");
  has("session a\na take pay -1 limit=2 -> 0\n", "needs a number of permits");
  has("session a\na take pay 1 limit=2 -> 1\n", "take answers at once");
  has("session a\na take pay 1 limit=2 -> 0 held=Shared\n",
      "a semaphore's has permits=");
  has("session a\na acquire doc Shared -> 0 permits=1\n", "a lock's has held=");
  has("session a\na finished -1 permits=1\n", "describe a grant");
  has("session a\na give pay -> some\n", "the permits left");
  has("session a\na give pay timeout=5\n", "unknown option `timeout=`");
  has("session a\na permits pay\n", "needs `->`");
  has("session a\nheld pay -> many\n", "expected a count");
  has("session a\ndelay job -> 6000\n", "`-> until=MS [permits=N]`");
  has("session a\ndelay job -> permits=2\n", "the instant it ends");
  has("namespace app\n", "needs an option");
  has("namespace app lock_delay=-1\n", "0 (none) or more");
  has("namespace app lock_delay=5 -> ok\n", "checks nothing");
  has("session a\na end by=me\n", "client or admin");
  has("session held\n", "cannot name a session");
}

TEST(ScenarioParser, ASessionExpectedNotToOpenCannotAct) {
  auto has_error = ErrorOf(
      "session a ttl=0 -> error bad_request\n"
      "a begin\n");
  EXPECT_EQ(has_error.line, 2);
}

TEST(ScenarioParser, ModeNames) {
  EXPECT_EQ(ParseModeName("shared"), LockMode::kShared);
  EXPECT_EQ(ParseModeName("UIX"), LockMode::kUpdateIntentExclusive);
  EXPECT_EQ(ParseModeName("nolock"), LockMode::kNoLock);
  EXPECT_EQ(ParseModeName("Shared "), std::nullopt);
  EXPECT_EQ(ModeName(LockMode::kSharedIntentExclusive),
            "SharedIntentExclusive");
}

}  // namespace
}  // namespace leasehold::scenarios
