// The API's conventions for an answer (docs/api.md, "Errors"): which
// answers carry a result, and the Error of those that do not. Every call of
// the client goes through InterpretAnswer; the client fuzzer
// (fuzz/client_answer_fuzz.cc) feeds it any status and body.
#ifndef LEASEHOLD_SRC_CLIENT_ANSWER_CONVENTIONS_H_
#define LEASEHOLD_SRC_CLIENT_ANSWER_CONVENTIONS_H_

#include <boost/json/value.hpp>
#include <string_view>
#include <vector>

#include "http/connection.h"
#include "leasehold/client.h"

namespace leasehold::client {

// The answer to `method target`: its body parsed as JSON (null when
// empty) for a 2xx, or for a status in `accept_status` that carries no
// API error; otherwise an Error: the API's code and message, or
// "bad_response" for a body that is not JSON or not an API error.
Result<boost::json::value> InterpretAnswer(
    std::string_view method, std::string_view target,
    const http::Answer& answer, const std::vector<unsigned>& accept_status);

// The Error of an answer that was not accepted: the API's
// {"error":{"code","message"}} in `body`, or "bad_response" without one.
Error ErrorFromAnswer(const http::Answer& answer,
                      const boost::json::value& body);

// Whether `answer` says its node does not serve now: 503 unavailable (a
// stream's answer carries no body to tell).
bool IsUnavailableAnswer(const http::Answer& answer);

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_ANSWER_CONVENTIONS_H_
