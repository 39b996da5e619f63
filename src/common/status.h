// Status: the error value passed between leasehold's modules.
//
// Every fallible function returns a Status or a Result<T>. A Status carries a
// code (which maps 1:1 to the snake_case error codes of docs/api.md) and a
// message that says what is wrong and how to fix it. No exception crosses a
// module boundary.
#ifndef LEASEHOLD_COMMON_STATUS_H_
#define LEASEHOLD_COMMON_STATUS_H_

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace leasehold {

enum class StatusCode {
  kOk = 0,
  kBadJson,
  kBadRequest,
  kNameTooLong,
  kNameEmpty,
  kBadMode,
  kBadOwner,
  kBadTimeout,
  kSessionNotFound,
  kNoTransaction,
  kTransactionOpen,
  kNotHeld,
  kExists,
  kNotFound,
  kBodyTooLarge,
  kUnauthorized,
  kForbidden,
  kUnavailable,
  kWaitPending,  // the session already has a lock request waiting
  // A staged write would pass the transaction's limits (count or bytes).
  kTransactionTooLarge,
  // Commit found a staged write that can no longer be applied; the
  // transaction was rolled back and none of its writes were applied.
  kTransactionAborted,
  // The session's transaction stayed open longer than a namespace it used
  // allows (NamespaceOptions::max_transaction) and was rolled back.
  kTransactionExpired,
  // The session's transaction was open when the server restarted; it is
  // gone (said once, to the next call that needs it).
  kTransactionLost,
  // A name in use as a lock was asked for as a semaphore, or the reverse.
  kWrongKind,
  // A semaphore in use was asked for with another limit.
  kLimitMismatch,
  // A record write carried a fence lower than one that has already written
  // the record: its writer's lock was taken over (docs/api.md, "Fenced
  // writes").
  kStaleFence,
  // The server cannot do this with the store it runs on (a backup of the
  // PostgreSQL or memory store: docs/ha.md).
  kNotSupported,
  kInternal,
};

// The API's snake_case name of `code`, e.g. "name_too_long".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "code: message", for logs and test failure output.
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
using Result = std::expected<T, Status>;

// Shorthand for returning an error from a function that returns Result<T>.
inline std::unexpected<Status> Error(StatusCode code, std::string message) {
  return std::unexpected<Status>(Status(code, std::move(message)));
}

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_STATUS_H_
