// AnswerReader: typed, non-throwing access to the fields of a server answer.
// A required field that is missing or of the wrong type makes the whole
// answer a "bad_response" rather than a half-filled struct.
#ifndef LEASEHOLD_SRC_CLIENT_ANSWER_READER_H_
#define LEASEHOLD_SRC_CLIENT_ANSWER_READER_H_

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/client.h"

namespace leasehold::client::detail {

class AnswerReader {
 public:
  // `what` names the answer in error messages, e.g. "POST /v1/sessions".
  AnswerReader(const boost::json::value& answer, std::string_view what);

  std::string String(std::string_view key);
  std::optional<std::string> OptionalString(std::string_view key);  // or null
  std::int64_t Int(std::string_view key);
  std::int64_t IntOr(std::string_view key, std::int64_t fallback);
  std::uint64_t Uint(std::string_view key);
  std::uint64_t UintOr(std::string_view key, std::uint64_t fallback);
  bool Bool(std::string_view key);
  bool BoolOr(std::string_view key, bool fallback);
  // The field, or nullptr when absent.
  const boost::json::value* Find(std::string_view key) const;
  // The field as an array; a missing or non-array field is a failure.
  const boost::json::array& Array(std::string_view key);

  bool ok() const { return problem_.empty(); }
  // Takes the first problem of a reader of one of this answer's parts.
  void Adopt(const AnswerReader& part) {
    if (problem_.empty()) problem_ = part.problem_;
  }
  // `value` if every required field was there, else "bad_response".
  template <typename T>
  Result<T> Finish(T value) const {
    if (!ok()) return std::unexpected(Failure());
    return value;
  }
  Error Failure() const;

 private:
  void Missing(std::string_view key, const char* type);

  const boost::json::object* object_ = nullptr;
  std::string what_;
  std::string problem_;
};

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_ANSWER_READER_H_
