// The API's calls: paths, bodies and answers, each sent through the
// Transport with its retry rule. Typed refusals are thrown here, so that
// every handle raises the same error for the same answer.
import type { AnswerOf, LockEntry, RecordInfo, RequestOf, Schemas, SemaphoreEntry } from "./api_types.js";
import {
  CancelledError,
  DeadlockError,
  errorFromAnswer,
  LeaseholdError,
  LockedError,
  LockTimeoutError,
  LostError,
  VersionMismatchError,
} from "./errors.js";
import type { Answer, Call, Transport } from "./transport.js";

/** Percent-encodes one path segment. */
export const seg = (text: string | number): string => encodeURIComponent(String(text));

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

/** The answer's body when its status is `ok` (or one of them); else the error it stands for. */
export function expect<T>(answer: Answer, ...ok: number[]): T {
  if (ok.includes(answer.status)) return answer.body as T;
  throw errorFromAnswer(answer.status, answer.body);
}

/** Throws the typed refusal of a 409 lock or semaphore answer; other errors as they are. */
function refusal(answer: Answer): never {
  const body = answer.body as Partial<Schemas["AcquireRefused"]> | undefined;
  switch (body?.result) {
    case -1:
      throw new LockTimeoutError("not granted within the timeout", answer.status);
    case -2:
      throw new CancelledError("the wait was cancelled", answer.status);
    case -3:
      throw new DeadlockError(body.deadlock?.victim ?? "", body.deadlock?.cycle ?? [], answer.status);
    default:
      throw errorFromAnswer(answer.status, answer.body);
  }
}

/** A request within the I/O deadline, sent again only when it surely did not arrive (a write). */
export function send(t: Transport, method: Call["method"], path: string, body?: unknown): Promise<Answer> {
  return t.request({ method, path, body, retry: "refused", timeoutMs: t.ioTimeoutMs });
}

/** A GET within the I/O deadline, asked of the next node after any failure. */
function get(t: Transport, path: string): Promise<Answer> {
  return t.request({ method: "GET", path, retry: "idempotent", timeoutMs: t.ioTimeoutMs });
}

// Module-level so that the hot calls allocate no closure for their answer.
const none200 = (a: Answer): void => {
  expect(a, 200);
};

export function createSession(t: Transport, request: RequestOf<"createSession">): Promise<Schemas["Session"]> {
  return send(t, "POST", "/v1/sessions", request).then((a) => expect<Schemas["Session"]>(a, 201));
}

export function keepalive(t: Transport, id: string, timeoutMs: number): Promise<AnswerOf<"keepSessionAlive", 200>> {
  return t
    .request({ method: "POST", path: `/v1/sessions/${seg(id)}/keepalive`, retry: "idempotent", timeoutMs })
    .then((a) => expect<AnswerOf<"keepSessionAlive", 200>>(a, 200));
}

export async function endSession(t: Transport, id: string): Promise<void> {
  expect(await send(t, "DELETE", `/v1/sessions/${seg(id)}`), 204, 200);
}

export async function cancelWait(t: Transport, id: string): Promise<boolean> {
  const a = await t.request({
    method: "POST",
    path: `/v1/sessions/${seg(id)}/cancel`,
    retry: "idempotent",
    timeoutMs: t.ioTimeoutMs,
  });
  return expect<AnswerOf<"cancelSessionWait", 200>>(a, 200).cancelled;
}

/** The deadline of a call that waits `timeoutMs` on the server: that plus the I/O allowance; none for -1. */
function waitBudget(t: Transport, timeoutMs: number): number | undefined {
  return timeoutMs < 0 ? undefined : timeoutMs + t.ioTimeoutMs;
}

/** A lock's or semaphore's grant (200), else its typed refusal (409) or the API's error. */
function granted(a: Answer): unknown {
  if (a.status === 200) return a.body;
  if (a.status === 409) refusal(a);
  throw errorFromAnswer(a.status, a.body);
}

/** One acquire, sent once (`retry: never`): a break or a 503 is thrown for the ride-through. */
function acquire(t: Transport, path: string, request: { timeout_ms?: number }, signal?: AbortSignal): Promise<unknown> {
  return t
    .request({
      method: "POST",
      path,
      body: request,
      retry: "never",
      timeoutMs: waitBudget(t, request.timeout_ms ?? -1),
      signal,
    })
    .then(granted);
}

// The lock and semaphore calls are the hot path (a lock, a release): no
// async layer of their own, so callers must be async (a bad segment throws).

/** One lock acquire, sent once: a break or a 503 is thrown for the ride-through. */
export function acquireOnce(
  t: Transport,
  ns: string,
  request: RequestOf<"acquireLock">,
  signal?: AbortSignal,
): Promise<Schemas["AcquireGranted"]> {
  return acquire(t, `/v1/applocks/${seg(ns)}/acquire`, request, signal) as Promise<Schemas["AcquireGranted"]>;
}

export function releaseLock(t: Transport, ns: string, request: RequestOf<"releaseLock">): Promise<void> {
  return send(t, "POST", `/v1/applocks/${seg(ns)}/release`, request).then(none200);
}

export async function listLocks(t: Transport, ns: string): Promise<LockEntry[]> {
  return expect<AnswerOf<"listLocks", 200>>(await get(t, `/v1/applocks/${seg(ns)}`), 200).locks;
}

/** One semaphore acquire, sent once, as acquireOnce. */
export function acquireSemaphoreOnce(
  t: Transport,
  ns: string,
  name: string,
  request: RequestOf<"acquireSemaphore">,
  signal?: AbortSignal,
): Promise<Schemas["SemaphoreGranted"]> {
  const path = `/v1/semaphores/${seg(ns)}/${seg(name)}/acquire`;
  return acquire(t, path, request, signal) as Promise<Schemas["SemaphoreGranted"]>;
}

const permitsLeft = (a: Answer): number => expect<AnswerOf<"releaseSemaphore", 200>>(a, 200).permits;

/** Gives back permits; answers how many the owner still holds. */
export function releaseSemaphore(
  t: Transport,
  ns: string,
  name: string,
  request: RequestOf<"releaseSemaphore">,
): Promise<number> {
  return send(t, "POST", `/v1/semaphores/${seg(ns)}/${seg(name)}/release`, request).then(permitsLeft);
}

/** The semaphore's entry; undefined when nobody holds or waits for it. */
export async function getSemaphore(
  t: Transport,
  ns: string,
  name: string,
  principal?: string,
): Promise<SemaphoreEntry | undefined> {
  const a = await get(t, `/v1/semaphores/${seg(ns)}/${seg(name)}${query({ principal })}`);
  if (a.status === 404) return undefined;
  return expect<SemaphoreEntry>(a, 200);
}

export async function listSemaphores(t: Transport, ns: string): Promise<SemaphoreEntry[]> {
  return expect<AnswerOf<"listSemaphores", 200>>(await get(t, `/v1/semaphores/${seg(ns)}`), 200).semaphores;
}

/**
 * Takes or renews a checkout. With a token of the caller's own it is
 * idempotent and may be sent again; 423 throws LockedError.
 */
export async function checkout(
  t: Transport,
  ns: string,
  key: string,
  request: RequestOf<"checkout">,
  timeoutMs = t.ioTimeoutMs,
): Promise<Schemas["CheckoutGranted"]> {
  const a = await t.request({
    method: "POST",
    path: `/v1/records/${seg(ns)}/${seg(key)}/checkout`,
    body: request,
    retry: request.token === undefined ? "refused" : "idempotent",
    timeoutMs,
  });
  if (a.status === 423) {
    const refused = a.body as Schemas["CheckoutRefused"];
    throw new LockedError(refused.locked_by, refused.lock_expires_at);
  }
  return expect<Schemas["CheckoutGranted"]>(a, 200);
}

/** The error a 423 lease refusal stands for: someone else holds it, or ours ran out. */
function leaseRefusal(body: unknown): LeaseholdError {
  const reason = (body as { reason?: string } | undefined)?.reason ?? "not_owner";
  if (reason === "expired") return new LostError("the lease expired", 423);
  if (reason === "not_owner")
    return new LockedError(null, null, "refused: the caller does not hold the lease (not_owner)");
  return new LeaseholdError(`refused: ${reason}`, { code: reason, status: 423 });
}

export async function checkin(t: Transport, ns: string, key: string, request: RequestOf<"checkin">): Promise<void> {
  const a = await send(t, "POST", `/v1/records/${seg(ns)}/${seg(key)}/checkin`, request);
  if (a.status === 423) throw leaseRefusal(a.body);
  expect(a, 200);
}

/** A direct write's answer: the new version, or staged in the session's transaction. */
export interface WriteResult {
  /** The record's version after the write; undefined when staged. */
  version?: number;
  /** True when the write was staged in a transaction (applied at commit). */
  staged: boolean;
}

function written(a: Answer, ok: number): WriteResult {
  if (a.status === 202) return { staged: true };
  if (a.status === 423) throw leaseRefusal(a.body);
  if (a.status === 412) throw new VersionMismatchError();
  const body = expect<{ version?: number }>(a, ok);
  return { version: body.version, staged: false };
}

export async function saveRecord(
  t: Transport,
  ns: string,
  key: string,
  request: RequestOf<"saveRecord">,
): Promise<WriteResult> {
  return written(await send(t, "POST", `/v1/records/${seg(ns)}/${seg(key)}/save`, request), 200);
}

export async function insertRecord(
  t: Transport,
  ns: string,
  key: string,
  request: RequestOf<"insertRecord">,
): Promise<WriteResult> {
  return written(await send(t, "PUT", `/v1/records/${seg(ns)}/${seg(key)}`, request), 201);
}

export async function deleteRecord(
  t: Transport,
  ns: string,
  key: string,
  request: RequestOf<"deleteRecord">,
): Promise<WriteResult> {
  return written(await send(t, "DELETE", `/v1/records/${seg(ns)}/${seg(key)}`, request), 200);
}

export async function getRecord(t: Transport, ns: string, key: string): Promise<RecordInfo> {
  return expect<RecordInfo>(await get(t, `/v1/records/${seg(ns)}/${seg(key)}`), 200);
}
