#include "common/status.h"

namespace leasehold {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kBadJson:
      return "bad_json";
    case StatusCode::kBadRequest:
      return "bad_request";
    case StatusCode::kNameTooLong:
      return "name_too_long";
    case StatusCode::kNameEmpty:
      return "name_empty";
    case StatusCode::kBadMode:
      return "bad_mode";
    case StatusCode::kBadOwner:
      return "bad_owner";
    case StatusCode::kBadTimeout:
      return "bad_timeout";
    case StatusCode::kSessionNotFound:
      return "session_not_found";
    case StatusCode::kNoTransaction:
      return "no_transaction";
    case StatusCode::kTransactionOpen:
      return "transaction_open";
    case StatusCode::kNotHeld:
      return "not_held";
    case StatusCode::kExists:
      return "exists";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kBodyTooLarge:
      return "body_too_large";
    case StatusCode::kUnauthorized:
      return "unauthorized";
    case StatusCode::kForbidden:
      return "forbidden";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kWaitPending:
      return "wait_pending";
    case StatusCode::kTransactionTooLarge:
      return "transaction_too_large";
    case StatusCode::kTransactionAborted:
      return "transaction_aborted";
    case StatusCode::kTransactionExpired:
      return "transaction_expired";
    case StatusCode::kTransactionLost:
      return "transaction_lost";
    case StatusCode::kWrongKind:
      return "wrong_kind";
    case StatusCode::kLimitMismatch:
      return "limit_mismatch";
    case StatusCode::kStaleFence:
      return "stale_fence";
    case StatusCode::kNotSupported:
      return "not_supported";
    case StatusCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace leasehold
