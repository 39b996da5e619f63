// The client's errors: one class per refusal a caller branches on
// (`instanceof`), all of them LeaseholdError with the API's `code` and the
// HTTP `status` (0 when no answer arrived).
import type { components } from "./generated/api.js";

/** One edge of a deadlock cycle, as the server reports it. */
export type WaitForEdge = components["schemas"]["WaitForEdge"];

/** Options every error takes: the API's code, the HTTP status, the cause. */
export interface ErrorDetails {
  code: string;
  /** HTTP status of the answer; 0 when none arrived. */
  status?: number;
  cause?: unknown;
}

/**
 * The base of every error this client throws. `code` is the API's error
 * code (`not_held`, `exists`, `wrong_kind`, …) or the client's own
 * (`unreachable`, `timeout`, `lost`, `bad_response`, `bad_url`);
 * `status` the HTTP status, 0 when no answer arrived.
 */
export class LeaseholdError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(message: string, details: ErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = details.code;
    this.status = details.status ?? 0;
  }
}

/** A lock or semaphore was not granted within its timeout (result -1). */
export class LockTimeoutError extends LeaseholdError {
  constructor(message = "not granted within the timeout", status = 409) {
    super(message, { code: "timeout", status });
  }
}

/** The wait was chosen as a deadlock victim (result -3); `cycle` says why. */
export class DeadlockError extends LeaseholdError {
  /** The session chosen as the victim (this one). */
  readonly victim: string;
  /** The wait-for edges of the cycle, as the server reported them. */
  readonly cycle: WaitForEdge[];
  constructor(victim: string, cycle: WaitForEdge[], status = 409) {
    const path = cycle.map((e) => `${e.waiter}->${e.holder} (${e.resource})`).join(", ");
    super(`chosen as a deadlock victim: ${path}`, { code: "deadlock", status });
    this.victim = victim;
    this.cycle = cycle;
  }
}

/** The wait was cancelled (result -2): the session was cancelled, or the caller's signal aborted. */
export class CancelledError extends LeaseholdError {
  constructor(message = "the wait was cancelled", status = 409, cause?: unknown) {
    super(message, { code: "cancelled", status, cause });
  }
}

/** A call its caller's signal ended, before an answer (`reason`: the signal's). */
export function cancelledByCaller(reason: unknown): CancelledError {
  return new CancelledError("cancelled by the caller's signal", 0, reason);
}

/** The session is gone (`session_not_found`), or was used after its loss. */
export class SessionLostError extends LeaseholdError {
  constructor(message = "the session is gone", status = 404) {
    super(message, { code: "session_not_found", status });
  }
}

/** A checkout (or a save under a lease) refused: someone else holds the key. */
export class LockedError extends LeaseholdError {
  /** Who holds it (null when the server did not say). */
  readonly lockedBy: string | null;
  /** Until when their lease runs (null when the server did not say). */
  readonly lockExpiresAt: string | null;
  constructor(lockedBy: string | null, lockExpiresAt: string | null, message?: string) {
    super(message ?? `held by ${lockedBy ?? "someone else"}${lockExpiresAt ? ` until ${lockExpiresAt}` : ""}`, {
      code: "locked",
      status: 423,
    });
    this.lockedBy = lockedBy;
    this.lockExpiresAt = lockExpiresAt;
  }
}

/** A fenced write refused: a newer fence already wrote the record (409 `stale_fence`). */
export class StaleFenceError extends LeaseholdError {
  constructor(message: string, status = 409) {
    super(message, { code: "stale_fence", status });
  }
}

/**
 * No server could be reached, none answered in time (`code` "timeout"),
 * none completed the TLS handshake (`code` "tls": a certificate refused,
 * the server's or this client's; nothing was done), or the connection broke
 * after a request that must not be sent twice was written: it may or may
 * not have been carried out.
 */
export class UnreachableError extends LeaseholdError {
  constructor(message: string, options: { code?: "unreachable" | "timeout" | "tls"; cause?: unknown } = {}) {
    super(message, { code: options.code ?? "unreachable", status: 0, cause: options.cause });
  }
}

/** A handle used after its lease or lock was lost (a save through a lost checkout). */
export class LostError extends LeaseholdError {
  constructor(message = "the lease was lost", status = 0) {
    super(message, { code: "lost", status });
  }
}

/** The record, semaphore or key does not exist (404 `not_found`). */
export class NotFoundError extends LeaseholdError {
  constructor(message: string) {
    super(message, { code: "not_found", status: 404 });
  }
}

/** A save with `ifVersion` found the record at another version (412). */
export class VersionMismatchError extends LeaseholdError {
  constructor(message = "the record is not at the version given") {
    super(message, { code: "version_mismatch", status: 412 });
  }
}

/** The API's error body, `{"error":{"code","message"}}`. */
export type ErrorBody = components["schemas"]["Error"];

/** The error an API error answer stands for, typed where a caller branches on it. */
export function errorFromAnswer(status: number, body: unknown): LeaseholdError {
  const error = (body as Partial<ErrorBody> | undefined)?.error;
  const code = typeof error?.code === "string" ? error.code : "bad_response";
  const message = typeof error?.message === "string" ? error.message : `HTTP ${status}`;
  switch (code) {
    case "session_not_found":
      return new SessionLostError(message, status);
    case "stale_fence":
      return new StaleFenceError(message, status);
    case "not_found":
      return new NotFoundError(message);
    default:
      return new LeaseholdError(message, { code, status });
  }
}
