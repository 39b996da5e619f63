#include "client/answer_conventions.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <string>

#include "common/wire_names.h"

namespace leasehold::client {

namespace json = boost::json;
using http::Answer;

Error ErrorFromAnswer(const Answer& answer, const json::value& body) {
  Error e{"bad_response",
          "HTTP " + std::to_string(answer.status) + " without an API error",
          answer.status};
  const json::object* o = body.if_object();
  const json::value* err =
      o == nullptr ? nullptr : o->if_contains(wire::kError);
  if (err == nullptr || !err->is_object()) return e;
  if (const auto* code = err->get_object().if_contains(wire::kCode);
      code != nullptr && code->is_string()) {
    e.code = std::string(code->get_string());
  }
  if (const auto* msg = err->get_object().if_contains(wire::kMessage);
      msg != nullptr && msg->is_string()) {
    e.message = std::string(msg->get_string());
  }
  return e;
}

namespace {

bool IsApiError(const json::value& body) {
  const json::object* o = body.if_object();
  return o != nullptr && o->contains(wire::kError);
}

}  // namespace

Result<json::value> InterpretAnswer(
    std::string_view method, std::string_view target, const Answer& answer,
    const std::vector<unsigned>& accept_status) {
  json::value parsed;
  if (!answer.body.empty()) {
    boost::system::error_code ec;
    parsed = json::parse(answer.body, ec);
    if (ec) {
      return std::unexpected(Error{
          "bad_response",
          "the answer to " + std::string(method) + " " + std::string(target) +
              " (HTTP " + std::to_string(answer.status) + ") is not JSON",
          answer.status});
    }
  }
  const unsigned s = answer.status;
  const bool accepted =
      (s >= 200 && s < 300) ||
      (std::ranges::find(accept_status, s) != accept_status.end() &&
       !IsApiError(parsed));
  if (accepted) return parsed;
  return std::unexpected(ErrorFromAnswer(answer, parsed));
}

bool IsUnavailableAnswer(const Answer& answer) {
  if (answer.status != 503) return false;
  if (answer.body.empty()) return true;
  boost::system::error_code ec;
  const json::value body = json::parse(answer.body, ec);
  return !ec && ErrorFromAnswer(answer, body).code == "unavailable";
}

}  // namespace leasehold::client
