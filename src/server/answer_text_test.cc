// AnswerText writes what boost::json::serialize writes for the same object
// (every other answer is written by it), whatever the strings hold.
#include "server/answer_text.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "common/clock.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

TEST(AnswerText, AnEmptyObject) { EXPECT_EQ(AnswerText().Take(), "{}"); }

TEST(AnswerText, WritesWhatSerializeWritesForTheSameMembers) {
  const Time at = ParseTime("2026-12-05T22:58:01.250Z").value();
  AnswerText text;
  text.Int("result", -1)
      .String("status", "Granted")
      .Uint("fence", std::numeric_limits<std::uint64_t>::max())
      .Int("least", std::numeric_limits<std::int64_t>::min())
      .Bool("granted", true)
      .Bool("renewed", false)
      .Null("nothing")
      .Instant("expires_at", at)
      .Instant("never", std::nullopt)
      .Value("deadlock", json::object{{"cycle", json::array{1, "two"}}});
  const json::object same{
      {"result", -1},
      {"status", "Granted"},
      {"fence", std::numeric_limits<std::uint64_t>::max()},
      {"least", std::numeric_limits<std::int64_t>::min()},
      {"granted", true},
      {"renewed", false},
      {"nothing", nullptr},
      {"expires_at", "2026-12-05T22:58:01.250Z"},
      {"never", nullptr},
      {"deadlock", json::object{{"cycle", json::array{1, "two"}}}}};
  const std::string written = std::move(text).Take();
  EXPECT_EQ(written, json::serialize(same));
  EXPECT_EQ(json::parse(written), json::value(same));
}

TEST(AnswerText, NestsAnObjectAsSerializeDoes) {
  AnswerText inner;
  inner.String("code", "not_held").String("message", "\xc3\xa9 \"x\"\n");
  AnswerText outer;
  outer.Object("error", std::move(inner)).Int("after", 1);
  EXPECT_EQ(std::move(outer).Take(),
            json::serialize(json::object{
                {"error", json::object{{"code", "not_held"},
                                       {"message", "\xc3\xa9 \"x\"\n"}}},
                {"after", 1}}));
}

TEST(AnswerText, EscapesEveryStringAsSerializeDoes) {
  // Quotes, backslashes, every control character, DEL, and UTF-8 text.
  std::string awkward = "a \"quoted\" \\path\\ ";
  for (char c = 0; c < 0x20; ++c) awkward.push_back(c);
  awkward += "\x7f Asha \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92 /";
  for (const std::string& s :
       {awkward, std::string(), std::string("plain"), std::string("\n")}) {
    AnswerText text;
    text.String("locked_by", s);
    const std::string written = std::move(text).Take();
    EXPECT_EQ(written, json::serialize(json::object{{"locked_by", s}})) << s;
    EXPECT_EQ(json::parse(written).at("locked_by").as_string(), s);
  }
}

}  // namespace
}  // namespace leasehold::server
