#include "client/answer_reader.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace leasehold::client::detail {

namespace json = boost::json;

AnswerReader::AnswerReader(const json::value& answer, std::string_view what)
    : object_(answer.if_object()), what_(what) {
  if (object_ == nullptr) problem_ = "is not a JSON object";
}

const json::value* AnswerReader::Find(std::string_view key) const {
  return object_ == nullptr ? nullptr : object_->if_contains(key);
}

void AnswerReader::Missing(std::string_view key, const char* type) {
  if (problem_.empty()) {
    problem_ =
        "lacks " + std::string(type) + " field \"" + std::string(key) + "\"";
  }
}

std::string AnswerReader::String(std::string_view key) {
  const json::value* v = Find(key);
  if (v == nullptr || !v->is_string()) {
    Missing(key, "string");
    return {};
  }
  return std::string(v->get_string());
}

std::optional<std::string> AnswerReader::OptionalString(std::string_view key) {
  const json::value* v = Find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) {
    Missing(key, "string or null");
    return std::nullopt;
  }
  return std::string(v->get_string());
}

std::int64_t AnswerReader::IntOr(std::string_view key, std::int64_t fallback) {
  const json::value* v = Find(key);
  if (v == nullptr) return fallback;
  boost::system::error_code ec;
  const auto n = v->to_number<std::int64_t>(ec);
  if (ec) {
    Missing(key, "integer");
    return fallback;
  }
  return n;
}

std::int64_t AnswerReader::Int(std::string_view key) {
  if (Find(key) == nullptr) Missing(key, "integer");
  return IntOr(key, 0);
}

std::uint64_t AnswerReader::UintOr(std::string_view key,
                                   std::uint64_t fallback) {
  const json::value* v = Find(key);
  if (v == nullptr) return fallback;
  boost::system::error_code ec;
  const auto n = v->to_number<std::uint64_t>(ec);
  if (ec) {
    Missing(key, "unsigned integer");
    return fallback;
  }
  return n;
}

std::uint64_t AnswerReader::Uint(std::string_view key) {
  if (Find(key) == nullptr) Missing(key, "unsigned integer");
  return UintOr(key, 0);
}

bool AnswerReader::BoolOr(std::string_view key, bool fallback) {
  const json::value* v = Find(key);
  if (v == nullptr) return fallback;
  if (!v->is_bool()) {
    Missing(key, "boolean");
    return fallback;
  }
  return v->get_bool();
}

bool AnswerReader::Bool(std::string_view key) {
  if (Find(key) == nullptr) Missing(key, "boolean");
  return BoolOr(key, false);
}

const json::array& AnswerReader::Array(std::string_view key) {
  static const json::array kEmpty;
  const json::value* v = Find(key);
  if (v == nullptr || !v->is_array()) {
    Missing(key, "array");
    return kEmpty;
  }
  return v->get_array();
}

Error AnswerReader::Failure() const {
  return Error{"bad_response",
               "the answer to " + what_ + " " + problem_ +
                   " (is the server a leasehold of API version 1?)",
               0};
}

}  // namespace leasehold::client::detail
