// Lock and semaphore waits across a restart of the server, or a failover to
// another node
// of a cluster. A session and its locks (and permits) survive both; a waiting
// request's connection does not, so the request breaks (Error "unreachable", or
// "unavailable" from a leader that stepped down or a node that does not
// serve) although the session may still get, or already have, what it asked
// for. The functions here run such a request again once a server answers
// /healthz (the client's nodes are asked in turn: the same one back, or the
// new leader), within what is left of the timeout, after reading what the
// session holds of the locks asked for:
// - every one, in the mode asked: the grant reached the disk before the
//   break; it is adopted (result 1), not taken twice;
// - none: the request is asked again;
// - some (acquire-all only; a server that journals a call's locks only
//   when it answers never leaves a part, an earlier one could): they are
//   released, then the request is asked again, so that the call stays all
//   or nothing.
// A semaphore request is read the same way: the permits asked for are held
// (adopted), none are (asked again), or another number (reported).
// That reading is right only for a call whose session held none of its
// locks (as owner Session) when the call began: the caller makes sure of
// that (HoldsNoneOf, or a Session's own bookkeeping of its guards) and
// otherwise sends the request once. Transaction-owned locks are not asked
// again: a transaction does not survive a restart.
#ifndef LEASEHOLD_SRC_CLIENT_ACROSS_RESTARTS_H_
#define LEASEHOLD_SRC_CLIENT_ACROSS_RESTARTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/client.h"

namespace leasehold::client::detail {

// A Session-owned lock request of one session: one lock (acquire) or
// several (acquire-all).
struct SessionLockRequest {
  std::string ns;
  std::string session;
  std::string principal;
  std::vector<LockSpec> locks;  // as asked
};

// A Session-owned request of one session for permits of a semaphore.
struct SessionSemaphoreRequest {
  std::string ns;
  std::string session;
  std::string principal;
  std::string name;
  std::int64_t permits = 1;
};

// Sends the request once with the timeout given (Retry::kNever: never
// again after a node may have acted on it); its answer, or Error
// "unreachable" when the connection broke, "unavailable" when the node
// did not serve.
template <typename Outcome>
using SendOnce = std::function<Result<Outcome>(Milliseconds timeout)>;

// The SendOnce of a call with `options` (AcquireOptions, AcquireAllOptions,
// SemaphoreOptions):
// `send_with` given a copy of them with the timeout asked for. `options` is
// read when it is called: it must outlive the function returned.
template <typename Options, typename SendWith>
auto WithTimeout(const Options& options, SendWith send_with) {
  return [&options, send_with](Milliseconds timeout) {
    Options asked = options;
    asked.timeout = timeout;
    return send_with(asked);
  };
}

// `send` until it is answered, across restarts of the server, as said at
// the top, for a request whose session held none of its locks when the
// call began. An adopted grant is result 1 ("granted_after_wait") with the
// listing's fences and counts, its locks in canonical order. For Outcome
// AcquireOutcome (one lock) and AcquireAllOutcome.
template <typename Outcome>
Result<Outcome> SendAcrossRestarts(Client& client,
                                   const SessionLockRequest& request,
                                   Milliseconds timeout,
                                   const SendOnce<Outcome>& send);

// The same for permits of a semaphore: an adopted grant is result 1 with
// the listing's fence and permits.
Result<SemaphoreOutcome> SendAcrossRestarts(
    Client& client, const SessionSemaphoreRequest& request,
    Milliseconds timeout, const SendOnce<SemaphoreOutcome>& send);

// A call of the Client's own (Acquire, AcquireAll): SendAcrossRestarts
// where that is safe, else `send` once. Safe means owner Session (in any
// case, as the server reads it), a timeout other than 0 (a request that
// never waits is one quick step, not worth a look first) and a session
// holding none of request.locks now, which costs one GET .../mode per lock
// (stopping at the first held one; a failed look sends once, and the
// request reports what is wrong).
template <typename Outcome>
Result<Outcome> SendAcrossRestartsIfSafe(Client& client,
                                         const SessionLockRequest& request,
                                         std::string_view owner,
                                         Milliseconds timeout,
                                         const SendOnce<Outcome>& send);

// The same for AcquireSemaphore: safe means owner Session, a timeout other
// than 0 and a session holding no permits of the semaphore now (one
// GetSemaphore).
Result<SemaphoreOutcome> SendAcrossRestartsIfSafe(
    Client& client, const SessionSemaphoreRequest& request,
    std::string_view owner, Milliseconds timeout,
    const SendOnce<SemaphoreOutcome>& send);

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_ACROSS_RESTARTS_H_
