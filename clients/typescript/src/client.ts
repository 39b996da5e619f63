// The client: one per process (or per cluster), cheap to share. Every call
// goes through one Transport, so the leader finding and the rules on what
// is sent twice are the same for all of them.
import type { ClaimedMessage, LockEntry, LockMode, RecordInfo, SemaphoreEntry } from "./api_types.js";
import {
  checkout,
  createSession,
  deleteRecord,
  endSession,
  getRecord,
  getSemaphore,
  insertRecord,
  listLocks,
  listSemaphores,
  saveRecord,
  type WriteResult,
} from "./calls.js";
import { Checkout, type CheckoutOptions } from "./checkout.js";
import { LeaseholdError } from "./errors.js";
import { Session, type SessionOptions } from "./session.js";
import { secureContextOf, type TlsOptions } from "./tls.js";
import { ackMessage, type ClaimOptions, claimMessages } from "./transaction.js";
import { Transport } from "./transport.js";
import { type WatchEvent, type WatchOptions, watchEvents } from "./watch.js";

/** Options of a Client; the TLS ones apply to https:// nodes (README, "TLS"). */
export interface ClientOptions extends TlsOptions {
  /**
   * One server, or a cluster's nodes comma-separated, in any order:
   * "http://a:7070,http://b:7070"; https:// (port 443 by default) too, mixed.
   */
  url: string;
  /** Sent as `Authorization: Bearer …` when given. */
  token?: string;
  /** The deadline of a call (a lock wait adds its own timeout). Default 30 000. */
  ioTimeoutMs?: number;
}

/** Options of the plain record writes. */
export interface WriteOptions {
  /** A lock's or checkout's fence: refused (StaleFenceError) once a newer fence wrote the record. */
  fence?: number;
  /** Proof of a checkout by its owner's name. */
  owner?: string;
  /** Proof of a checkout by its token. */
  token?: string;
  /** Stage the write in this session's open transaction. */
  session?: string;
}

/** Options of Client.withLock. */
export interface WithLockOptions {
  /** Default "Exclusive". */
  mode?: LockMode;
  /** The ttl of the session opened for the lock. Default 30 000. */
  ttlMs?: number;
  /** How long to wait for the lock; -1 (the default) without limit. */
  timeoutMs?: number;
  principal?: string;
  /** The name of the session (seen by others). Default "withLock". */
  sessionName?: string;
  /** Aborting it ends the wait, and is passed on to the body's signal. */
  signal?: AbortSignal;
}

/**
 * A leasehold client. Immutable once built; share one across the process:
 * every handle it gives shares its keep-alive connections and its view of
 * the cluster's leader.
 */
export class Client {
  /** @internal */
  readonly transport: Transport;

  /**
   * Throws LeaseholdError `bad_url` for a URL that is not http(s), `bad_tls`
   * for TLS files or PEMs that cannot be used (read here, once, from the
   * options or LEASEHOLD_CA_FILE, LEASEHOLD_CERT, LEASEHOLD_KEY).
   */
  constructor(options: ClientOptions) {
    const io = options.ioTimeoutMs ?? 30_000;
    if (!(io > 0)) throw new LeaseholdError("ioTimeoutMs must be positive", { code: "bad_request" });
    this.transport = new Transport(options.url, io, options.token, secureContextOf(options));
  }

  /**
   * Opens a session that keeps itself alive (a keepalive every ttl/3) until
   * ended or lost. Throws UnreachableError or the API's error.
   */
  async session(name: string, options: SessionOptions = {}): Promise<Session> {
    const info = await createSession(this.transport, {
      name,
      ttl_ms: options.ttlMs ?? 30_000,
      deadlock_priority: options.deadlockPriority ?? 0,
    });
    return new Session(this.transport, info);
  }

  /**
   * Checks out `key` and renews it every ttl/3 until checked in or lost.
   * Throws LockedError (someone else holds it, with `lockedBy`),
   * UnreachableError or the API's error. With its token the request is
   * idempotent, so it is safely sent again after a broken connection.
   */
  async checkout(ns: string, key: string, options: CheckoutOptions): Promise<Checkout> {
    const token = options.token ?? globalThis.crypto.randomUUID();
    const ttlMs = options.ttlMs ?? 300_000;
    const grant = await checkout(this.transport, ns, key, { owner: options.owner, ttl_ms: ttlMs, token });
    return new Checkout(this.transport, ns, key, { owner: options.owner, ttlMs, token }, grant);
  }

  /**
   * Runs `body` while holding `resource` on a session of its own, then
   * releases the lock and ends the session, whether `body` returns or
   * throws. A failed acquire throws and never runs `body`. `body`'s signal
   * aborts when the lock is lost (or `options.signal` aborts).
   */
  async withLock<T>(
    ns: string,
    resource: string,
    body: (signal: AbortSignal) => Promise<T> | T,
    options: WithLockOptions = {},
  ): Promise<T> {
    await using session = await this.session(options.sessionName ?? "withLock", { ttlMs: options.ttlMs });
    await using lock = await session.lock(ns, resource, {
      mode: options.mode,
      timeoutMs: options.timeoutMs,
      principal: options.principal,
      signal: options.signal,
    });
    const signal = options.signal === undefined ? lock.signal : AbortSignal.any([lock.signal, options.signal]);
    return await body(signal);
  }

  /** Inserts a record (PUT): its version (1). Throws `exists`, StaleFenceError, … */
  put(
    ns: string,
    key: string,
    body: string,
    options: Pick<WriteOptions, "fence" | "session"> = {},
  ): Promise<WriteResult> {
    return insertRecord(this.transport, ns, key, { body, fence: options.fence, session: options.session });
  }

  /** Reads a record with its body. Throws NotFoundError. */
  get(ns: string, key: string): Promise<RecordInfo> {
    return getRecord(this.transport, ns, key);
  }

  /**
   * Saves a record's body: a fenced write with `fence` alone, or under a
   * checkout with `owner` or `token`. Throws StaleFenceError, LockedError
   * (someone holds the key), LostError (the lease expired),
   * VersionMismatchError, NotFoundError.
   */
  save(
    ns: string,
    key: string,
    body: string,
    options: WriteOptions & { ifVersion?: number } = {},
  ): Promise<WriteResult> {
    return saveRecord(this.transport, ns, key, {
      body,
      fence: options.fence,
      owner: options.owner,
      token: options.token,
      session: options.session,
      if_version: options.ifVersion,
    });
  }

  /** Deletes a record, proven as save() is. */
  delete(ns: string, key: string, options: WriteOptions = {}): Promise<WriteResult> {
    return deleteRecord(this.transport, ns, key, {
      fence: options.fence,
      owner: options.owner,
      token: options.token,
      session: options.session,
    });
  }

  /** Every application lock of `ns` with its holders and waiters. */
  locks(ns: string): Promise<LockEntry[]> {
    return listLocks(this.transport, ns);
  }

  /** Every semaphore in use in `ns`. */
  semaphores(ns: string): Promise<SemaphoreEntry[]> {
    return listSemaphores(this.transport, ns);
  }

  /** One semaphore; undefined when nobody holds or waits for it. */
  semaphore(ns: string, name: string, principal?: string): Promise<SemaphoreEntry | undefined> {
    return getSemaphore(this.transport, ns, name, principal);
  }

  /**
   * Ends any session by id (an administrator's override with tokens):
   * its locks are released, and its own client sees it lost.
   */
  endSession(id: string): Promise<void> {
    return endSession(this.transport, id);
  }

  /** Leases up to `max` pending messages of `topic` under one claim token. */
  claim(ns: string, topic: string, options: ClaimOptions): Promise<ClaimedMessage[]> {
    return claimMessages(this.transport, ns, topic, options);
  }

  /**
   * Acks a claimed message once its effect is done. Throws LostError when
   * the claim expired or was claimed again; a repeated ack is harmless.
   */
  ack(ns: string, topic: string, message: Pick<ClaimedMessage, "id" | "claim_token">): Promise<boolean> {
    return ackMessage(this.transport, ns, topic, message.id, message.claim_token);
  }

  /**
   * Whether some node answers /healthz 200 (the leader, in a cluster).
   * Throws UnreachableError `tls` when none answered and one refused TLS.
   */
  healthy(): Promise<boolean> {
    return this.transport.healthy();
  }

  /**
   * Streams the events of `ns` (every namespace when undefined) from the
   * leader. Events before the stream opens may be missed. The iteration
   * ends quietly when `options.signal` aborts; it throws UnreachableError
   * when the stream ends or is silent for 45 s (the server pings every 15 s).
   */
  watch(ns?: string, options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    return watchEvents(this.transport, ns, options);
  }
}
