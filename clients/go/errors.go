package leasehold

import (
	"errors"
	"fmt"
)

// Sentinels to branch on with errors.Is. Every error the client returns is an
// *Error (or a *DeadlockError wrapping one) that matches at most one of them.
var (
	// ErrTimeout: a lock or semaphore was not granted within its timeout (result -1).
	ErrTimeout = errors.New("leasehold: not granted within the timeout")
	// ErrCancelled: the wait was cancelled, by the server (result -2) or by the
	// caller's context (then errors.Is(err, context.Canceled) holds too).
	ErrCancelled = errors.New("leasehold: the wait was cancelled")
	// ErrDeadlock: the session was chosen as a deadlock victim (result -3);
	// errors.As to *DeadlockError for the cycle.
	ErrDeadlock = errors.New("leasehold: chosen as the deadlock victim")
	// ErrSessionLost: the server no longer knows the session, or it was closed.
	ErrSessionLost = errors.New("leasehold: the session is lost")
	// ErrLocked: a checkout is held by someone else (423).
	ErrLocked = errors.New("leasehold: held by someone else")
	// ErrStaleFence: a fenced write was refused because a newer fence wrote the record.
	ErrStaleFence = errors.New("leasehold: stale fence")
	// ErrUnreachable: no server answered (Code "tls": the TLS handshake was
	// refused, by this client or by the server), or the connection broke after
	// the request was sent and it could not safely be sent again.
	ErrUnreachable = errors.New("leasehold: unreachable")
	// ErrLost: a handle was used after its lease or lock was lost.
	ErrLost = errors.New("leasehold: lost")
	// ErrRefused: a save, check-in or delete was refused (Code: not_owner,
	// expired, version_mismatch, token_required).
	ErrRefused = errors.New("leasehold: refused")
	// ErrNotFound: the record (or semaphore) does not exist.
	ErrNotFound = errors.New("leasehold: not found")
	// ErrExists: the record exists already (or an operation was completed already).
	ErrExists = errors.New("leasehold: exists")
	// ErrTransactionAborted: the transaction is over and nothing of it was
	// applied (Code transaction_aborted: a staged write no longer held at
	// commit; transaction_expired: past max_transaction_ms; transaction_lost:
	// a restart lost it). Begin a new one.
	ErrTransactionAborted = errors.New("leasehold: the transaction was aborted")
)

// Error is the base of every error the client returns: Code is the API's error
// code (session_not_found, not_held, exists, ...) or the client's own
// (bad_url, bad_tls, unreachable, tls, timeout, bad_response, cancelled, lost); Status is the
// HTTP status, 0 when no answer arrived.
type Error struct {
	Code    string
	Status  int
	Message string
	kind    error // one of the sentinels, or nil
	cause   error // what underlies it (a context error, a TLS error), or nil
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("leasehold: %s (%d): %s", e.Code, e.Status, e.Message)
	}
	return fmt.Sprintf("leasehold: %s: %s", e.Code, e.Message)
}

// Is reports whether target is the sentinel of this error's kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.kind }

// Unwrap answers the underlying cause (a context error, a TLS error), if any.
func (e *Error) Unwrap() error { return e.cause }

// CycleEdge is one edge of a deadlock cycle: Waiter waits for Holder on Resource.
type CycleEdge struct {
	Waiter     string `json:"waiter"`
	WaiterName string `json:"waiter_name,omitempty"`
	Holder     string `json:"holder"`
	HolderName string `json:"holder_name,omitempty"`
	NS         string `json:"ns,omitempty"`
	Principal  string `json:"principal,omitempty"`
	Resource   string `json:"resource"`
	Wanted     string `json:"wanted,omitempty"`
}

// DeadlockError is the error of a deadlock victim: Victim is its session id,
// Cycle the edges the server reported. errors.Is(err, ErrDeadlock) holds.
type DeadlockError struct {
	Err    *Error
	Victim string
	Cycle  []CycleEdge
}

func (d *DeadlockError) Error() string { return d.Err.Error() }

// Unwrap answers the *Error underneath (so errors.As to *Error works too).
func (d *DeadlockError) Unwrap() error { return d.Err }

func newError(kind error, code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Message: fmt.Sprintf(format, args...), kind: kind}
}

func unreachable(code, format string, args ...any) *Error {
	return newError(ErrUnreachable, code, 0, format, args...)
}

// kindOfCode maps the API's error codes to the sentinels.
var kindOfCode = map[string]error{
	"session_not_found":   ErrSessionLost,
	"stale_fence":         ErrStaleFence,
	"not_found":           ErrNotFound,
	"exists":              ErrExists,
	"locked":              ErrLocked,
	"transaction_aborted": ErrTransactionAborted,
	"transaction_expired": ErrTransactionAborted,
	"transaction_lost":    ErrTransactionAborted,
}

// apiError is the error for an answer in the API's error shape {"error":{"code","message"}}.
func apiError(status int, body []byte) *Error {
	var doc struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := unmarshal(body, &doc); err != nil || doc.Error == nil {
		text := string(body)
		if len(text) > 200 {
			text = text[:200]
		}
		return newError(nil, fmt.Sprintf("http_%d", status), status, "%s", text)
	}
	return newError(kindOfCode[doc.Error.Code], doc.Error.Code, status, "%s", doc.Error.Message)
}
