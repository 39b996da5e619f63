#include "server/answer_text.h"

#include <boost/json/serialize.hpp>
#include <charconv>

namespace leasehold::server {

namespace {

// Printable ASCII other than '"' and '\\' is written as it is; JSON and
// boost::json::serialize agree on that.
bool IsPlain(std::string_view s) {
  for (const char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

template <typename Number>
void AppendNumber(std::string& out, Number n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

}  // namespace

AnswerText::AnswerText() {
  text_.reserve(128);
  text_.push_back('{');
}

void AnswerText::Key(std::string_view key) {
  if (text_.size() > 1) text_.push_back(',');
  text_.push_back('"');
  text_.append(key);
  text_.append("\":");
}

AnswerText& AnswerText::Int(std::string_view key, std::int64_t value) {
  Key(key);
  AppendNumber(text_, value);
  return *this;
}

AnswerText& AnswerText::Uint(std::string_view key, std::uint64_t value) {
  Key(key);
  AppendNumber(text_, value);
  return *this;
}

AnswerText& AnswerText::Bool(std::string_view key, bool value) {
  Key(key);
  text_.append(value ? "true" : "false");
  return *this;
}

AnswerText& AnswerText::String(std::string_view key, std::string_view value) {
  Key(key);
  if (IsPlain(value)) {
    text_.push_back('"');
    text_.append(value);
    text_.push_back('"');
  } else {
    text_.append(boost::json::serialize(boost::json::string_view(value)));
  }
  return *this;
}

AnswerText& AnswerText::Null(std::string_view key) {
  Key(key);
  text_.append("null");
  return *this;
}

AnswerText& AnswerText::Instant(std::string_view key,
                                const std::optional<Time>& at) {
  return at ? String(key, FormatTime(*at)) : Null(key);
}

AnswerText& AnswerText::Value(std::string_view key,
                              const boost::json::value& value) {
  Key(key);
  text_.append(boost::json::serialize(value));
  return *this;
}

AnswerText& AnswerText::Object(std::string_view key, AnswerText&& object) {
  Key(key);
  text_.append(std::move(object).Take());
  return *this;
}

std::string AnswerText::Take() && {
  text_.push_back('}');
  return std::move(text_);
}

}  // namespace leasehold::server
