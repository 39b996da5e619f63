// The answers sent most often (a lock granted or released, a checkout, a
// save, an error), written straight to text instead of built as a JSON
// value and then serialized, which cost 5,200 instructions per acquire
// where a lock request averaged 28,600 (docs/benchmarks.md, "Profiles,
// round 3"). Every other answer is a boost::json value.
#ifndef LEASEHOLD_SERVER_ANSWER_TEXT_H_
#define LEASEHOLD_SERVER_ANSWER_TEXT_H_

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace leasehold::server {

// One flat JSON object, member by member, in the order added. Strings are
// escaped as boost::json::serialize escapes them (it does the work for any
// that is not plain printable ASCII); keys must be plain ASCII literals.
class AnswerText {
 public:
  AnswerText();

  AnswerText& Int(std::string_view key, std::int64_t value);
  AnswerText& Uint(std::string_view key, std::uint64_t value);
  AnswerText& Bool(std::string_view key, bool value);
  AnswerText& String(std::string_view key, std::string_view value);
  AnswerText& Null(std::string_view key);
  // RFC 3339 UTC with milliseconds, as TimeJson; null if empty.
  AnswerText& Instant(std::string_view key, const std::optional<Time>& at);
  // Any JSON value, serialized by Boost (for the rare nested member).
  AnswerText& Value(std::string_view key, const boost::json::value& value);
  // A nested object written the same way.
  AnswerText& Object(std::string_view key, AnswerText&& object);

  // The object's text; the writer is spent.
  std::string Take() &&;

 private:
  void Key(std::string_view key);

  std::string text_;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_ANSWER_TEXT_H_
