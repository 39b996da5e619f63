// A session kept alive by the client: a keepalive every ttl/3, loss
// signalled once, and its locks and semaphore permits taken through handles
// that ride through a restart of the server (docs/client.md).
import type { LockMode, Schemas } from "./api_types.js";
import {
  acquireOnce,
  acquireSemaphoreOnce,
  endSession,
  expect,
  getSemaphore,
  keepalive,
  listLocks,
  seg,
  send,
} from "./calls.js";
import { LeaseholdError, LostError, SessionLostError, UnreachableError } from "./errors.js";
import { type HandleOwner, type Held, Lock, lockKey, SemaphoreSlot, semaphoreKey } from "./handles.js";
import { acrossBreaks, samePrincipal } from "./ride_through.js";
import { Transaction } from "./transaction.js";
import type { Transport } from "./transport.js";

/** Options of Client.session. */
export interface SessionOptions {
  /** The session's ttl; a keepalive goes every ttl/3. Default 30 000. */
  ttlMs?: number;
  /** -10..10, as SET DEADLOCK_PRIORITY: the lower is chosen as the victim. Default 0. */
  deadlockPriority?: number;
}

/** Options of Session.lock. */
export interface LockOptions {
  /** Default "Exclusive". */
  mode?: LockMode;
  /** -1 (the default) waits as long as it takes, 0 never waits, n > 0 waits up to n ms. */
  timeoutMs?: number;
  /** The principal scope, as sp_getapplock's @DbPrincipal. Default "public". */
  principal?: string;
  /**
   * The longest the server lets it be held before taking it back (its handle's
   * `signal` then aborts). Default: the namespace's `max_hold_ms`, if any.
   */
  maxHoldMs?: number;
  /** Aborting it ends the wait (CancelledError). */
  signal?: AbortSignal;
}

/** Options of Session.semaphore. */
export interface SemaphoreOptions {
  /** The semaphore's permits; every holder must give the same. */
  limit: number;
  /** How many to take. Default 1. */
  permits?: number;
  /** As for LockOptions. */
  timeoutMs?: number;
  principal?: string;
  maxHoldMs?: number;
  signal?: AbortSignal;
}

/**
 * A session: what a database connection is to sp_getapplock. It sends a
 * keepalive every ttl/3 until it ends or is lost. Its timers are unref'd:
 * an open session does not by itself keep the process running.
 *
 * Loss: when the server says the session is gone (`session_not_found`),
 * `signal` is aborted once (reason SessionLostError) and so is every lock
 * and slot taken through it. After a restart of a `"locks":"memory"`
 * namespace, `locksLost` is aborted once: treat the locks taken there as lost.
 * A lock or slot the server takes back while the session lives on (its hold
 * limit passed, or an administrator broke it) is aborted within a keepalive
 * period (reason LostError); its release then sends nothing.
 *
 * Not thread-related: use it from any async code; calls may overlap.
 */
export class Session implements HandleOwner, AsyncDisposable {
  /** The server's id of the session. */
  readonly id: string;
  /** Its name, as others see it. */
  readonly name: string;
  /** Its ttl in ms. */
  readonly ttlMs: number;
  /** @internal */
  readonly transport: Transport;
  private readonly lostController = new AbortController();
  private readonly locksLostController = new AbortController();
  private readonly handles = new Set<Held>();
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  /** @internal Use Client.session. */
  constructor(transport: Transport, info: Schemas["Session"]) {
    this.transport = transport;
    this.id = info.id;
    this.name = info.name;
    this.ttlMs = info.ttl_ms;
    this.schedule();
  }

  /** Aborted once when the session is lost (reason: SessionLostError); never by end(). */
  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  /** Aborted once when a restart took the session's locks in a `"locks":"memory"` namespace. */
  get locksLost(): AbortSignal {
    return this.locksLostController.signal;
  }

  /** True once the session is known to be gone. */
  get lost(): boolean {
    return this.lostController.signal.aborted;
  }

  /**
   * Calls `listener` once when the session is lost (at once if it is).
   * Returns a function that removes it.
   */
  onLost(listener: (error: SessionLostError) => void): () => void {
    return onAbort(this.signal, listener);
  }

  /** Calls `listener` once when a restart took the session's memory-namespace locks. */
  onLocksLost(listener: () => void): () => void {
    return onAbort(this.locksLost, listener);
  }

  /**
   * Takes an application lock for the session (owner Session) and returns
   * its handle. Waits up to `timeoutMs`; rides through a restart or a
   * failover (docs/client.md, "Restarts") unless a handle of this session
   * holds the lock already, in which case a broken wait is UnreachableError.
   * Throws LockTimeoutError, DeadlockError (with the cycle), CancelledError,
   * SessionLostError, UnreachableError or the API's error (wrong_kind, …).
   */
  async lock(ns: string, resource: string, options: LockOptions = {}): Promise<Lock> {
    this.assertOpen();
    const mode = options.mode ?? "Exclusive";
    const principal = options.principal ?? "public";
    const ask = (timeout: number) =>
      acquireOnce(
        this.transport,
        ns,
        {
          session: this.id,
          resource,
          mode,
          owner: "Session",
          timeout_ms: timeout,
          principal,
          ...(options.maxHoldMs === undefined ? {} : { max_hold_ms: options.maxHoldMs }),
        },
        options.signal,
      );
    const afterBreak = async (broke: LeaseholdError) => {
      const entry = (await listLocks(this.transport, ns)).find(
        (l) => l.resource === resource && samePrincipal(l.principal, principal),
      );
      const mine = entry?.granted.find((h) => h.session === this.id && h.owner === "Session");
      if (mine === undefined) return undefined;
      if (mine.mode !== mode) {
        throw new UnreachableError(
          `${broke.message}; once served again the session holds ${resource} as ${mine.mode}, not as asked`,
        );
      }
      return {
        result: 1,
        status: "granted_after_wait",
        fence: mine.fence,
        mode: mine.mode,
        count: mine.count,
      } as const;
    };
    const grant = await this.acquire(lockKey(ns, principal, resource), options, ask, afterBreak);
    return this.keep(
      new Lock(this, {
        ns,
        resource,
        principal,
        mode: grant.mode,
        fence: grant.fence,
        count: grant.count,
        waited: grant.result === 1,
      }),
    );
  }

  /**
   * Takes `permits` of semaphore `name` (owner Session) and returns their
   * handle. Rides through a restart as lock() does (the listing of the
   * semaphore is read), unless a handle of this session holds permits of it.
   * Throws as lock() does, and `limit_mismatch`, `wrong_kind`, `bad_request`.
   */
  async semaphore(ns: string, name: string, options: SemaphoreOptions): Promise<SemaphoreSlot> {
    this.assertOpen();
    const principal = options.principal ?? "public";
    const permits = options.permits ?? 1;
    const ask = (timeout: number) =>
      acquireSemaphoreOnce(
        this.transport,
        ns,
        name,
        {
          session: this.id,
          limit: options.limit,
          permits,
          owner: "Session",
          timeout_ms: timeout,
          principal,
          ...(options.maxHoldMs === undefined ? {} : { max_hold_ms: options.maxHoldMs }),
        },
        options.signal,
      );
    const afterBreak = async (broke: LeaseholdError) => {
      const entry = await getSemaphore(this.transport, ns, name, principal);
      const mine = entry?.holders.find((h) => h.session === this.id && h.owner === "Session");
      if (mine === undefined) return undefined;
      if (mine.permits !== permits) {
        throw new UnreachableError(
          `${broke.message}; once served again the session holds ${mine.permits} permits, not ${permits}`,
        );
      }
      return { result: 1, status: "granted_after_wait", fence: mine.fence, permits: mine.permits } as const;
    };
    const grant = await this.acquire(semaphoreKey(ns, principal, name), options, ask, afterBreak);
    return this.keep(
      new SemaphoreSlot(this, {
        ns,
        name,
        principal,
        limit: options.limit,
        permits,
        fence: grant.fence,
        waited: grant.result === 1,
      }),
    );
  }

  /**
   * Opens the session's transaction (one at a time: `transaction_open`).
   * `await using` rolls it back unless committed.
   */
  async transaction(): Promise<Transaction> {
    this.assertOpen();
    try {
      const a = await send(this.transport, "POST", `/v1/sessions/${seg(this.id)}/transaction`);
      const begun = expect<Schemas["Transaction"]>(a, 201);
      return new Transaction(this.transport, this.id, begun.transaction);
    } catch (error) {
      throw this.sessionError(error);
    }
  }

  /**
   * Ends the session: stops the keepalives and deletes it on the server,
   * which releases everything it holds. Throws UnreachableError or the API's
   * error; ending twice does nothing the second time.
   */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.handles.clear();
    if (this.lost) return;
    await endSession(this.transport, this.id);
  }

  /** Ends the session; errors ignored (best effort). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.end().catch(() => undefined);
  }

  /** @internal */
  forget(handle: Held): void {
    this.handles.delete(handle);
  }

  /** @internal Marks the session lost when `error` says it is gone. */
  noticeLoss(error: unknown): void {
    if (!(error instanceof SessionLostError) || this.lost || this.ended) return;
    clearTimeout(this.timer);
    this.lostController.abort(error);
    for (const handle of this.handles) handle.markLost(error);
    this.handles.clear();
  }

  /**
   * Sends an acquire: once when a handle of this session holds `key` already
   * or the wait is 0 (a break is then UnreachableError: it may have been
   * granted), else across breaks (`afterBreak` reads what the session holds).
   */
  private async acquire<T>(
    key: string,
    options: { timeoutMs?: number; signal?: AbortSignal },
    ask: (timeoutMs: number) => Promise<T>,
    afterBreak: (broke: LeaseholdError) => Promise<T | undefined>,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? -1;
    if (timeoutMs !== 0 && !this.holds(key)) {
      try {
        return await acrossBreaks(this.transport, timeoutMs, ask, afterBreak, options.signal);
      } catch (error) {
        throw this.sessionError(error);
      }
    }
    try {
      return await ask(timeoutMs);
    } catch (error) {
      throw this.sessionError(notAskedAgain(error));
    }
  }

  // The server took a name back from the session (a hold limit, a break): its
  // handles are lost, and their release sends nothing (the session may hold
  // the name again through another handle). Transaction-owned losses are the
  // caller's own to read in the keepalive answer.
  private takenBack(taken: Schemas["LostHold"]): void {
    if (taken.owner !== "Session") return;
    const key =
      taken.kind === "semaphore"
        ? semaphoreKey(taken.ns, taken.principal, taken.resource)
        : lockKey(taken.ns, taken.principal, taken.resource);
    const reason = new LostError(`${taken.resource} was taken back by the server (${taken.reason})`);
    for (const handle of [...this.handles]) {
      if (handle.key !== key) continue;
      handle.markLost(reason);
      this.handles.delete(handle);
    }
  }

  private holds(key: string): boolean {
    for (const handle of this.handles) if (handle.key === key && handle.held) return true;
    return false;
  }

  private keep<T extends Held>(handle: T): T {
    this.handles.add(handle);
    return handle;
  }

  private assertOpen(): void {
    if (this.lost) throw new SessionLostError(`session ${this.id} was lost`, 0);
    if (this.ended) throw new LeaseholdError(`session ${this.id} was ended`, { code: "ended" });
  }

  private sessionError(error: unknown): unknown {
    this.noticeLoss(error);
    return error;
  }

  private schedule(): void {
    if (this.ended || this.lost) return;
    this.timer = setTimeout(() => void this.keepalive(), Math.max(1, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  // Gives up after half its period (at least 1 s) so that a silent node does
  // not hold it for the whole io timeout; the next one asks the others first.
  private async keepalive(): Promise<void> {
    try {
      const answer = await keepalive(this.transport, this.id, Math.max(Math.floor(this.ttlMs / 6), 1_000));
      if (answer.locks_lost && !this.locksLostController.signal.aborted) {
        this.locksLostController.abort(
          new LeaseholdError("a restart took the session's memory locks", { code: "locks_lost" }),
        );
      }
      for (const taken of answer.lost) this.takenBack(taken);
    } catch (error) {
      // session_not_found is the loss; anything else is retried next period.
      this.noticeLoss(error);
    }
    this.schedule();
  }
}

/** A break of a wait sent once is UnreachableError: the session may hold what it asked for. */
function notAskedAgain(error: unknown): unknown {
  if (error instanceof LeaseholdError && error.code === "unavailable") {
    return new UnreachableError(`${error.message} (not asked again: the session may hold it)`, { cause: error });
  }
  return error;
}

function onAbort<E>(signal: AbortSignal, listener: (reason: E) => void): () => void {
  if (signal.aborted) {
    queueMicrotask(() => listener(signal.reason as E));
    return () => undefined;
  }
  const handler = () => listener(signal.reason as E);
  signal.addEventListener("abort", handler, { once: true });
  return () => signal.removeEventListener("abort", handler);
}
