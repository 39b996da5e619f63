// What a session holds: a lock or some permits of a semaphore, each with
// the signal that tells its holder it was lost.
import type { HeldMode } from "./api_types.js";
import { releaseLock, releaseSemaphore } from "./calls.js";
import { LostError, SessionLostError } from "./errors.js";
import type { Transport } from "./transport.js";

/** What a handle needs of its session; the session implements it. */
export interface HandleOwner {
  readonly id: string;
  readonly transport: Transport;
  /** Forget a handle that no longer holds anything. */
  forget(handle: Held): void;
  /** Called with an error that says the session is gone. */
  noticeLoss(error: unknown): void;
}

/** What every grant of a handle says. */
interface Grant {
  ns: string;
  principal: string;
  fence: number;
  waited: boolean;
}

/** Base of the session's handles: the loss signal and the bookkeeping. */
export abstract class Held implements AsyncDisposable {
  /** Namespace. */
  readonly ns: string;
  /** The principal scope the name lives in. */
  readonly principal: string;
  /** The fence of the grant: pass it to every write it guards. */
  readonly fence: number;
  /** True when it was granted after waiting (result 1, or adopted after a restart). */
  readonly waited: boolean;
  /** The key that names what this handle holds, within its session. */
  readonly key: string;
  protected readonly owner: HandleOwner;
  // Made when `signal` is first read (most handles are released unread);
  // a loss before that is kept in `lostReason` and handed to it then.
  private lostController: AbortController | undefined;
  private lostReason: unknown;
  private isLost = false;
  private released = false;

  protected constructor(owner: HandleOwner, grant: Grant, key: string) {
    this.owner = owner;
    this.ns = grant.ns;
    this.principal = grant.principal;
    this.fence = grant.fence;
    this.waited = grant.waited;
    this.key = key;
  }

  /**
   * Aborted once when the lock or permits are lost (the session is gone);
   * never by a release. Pass it to the work the lock guards.
   */
  get signal(): AbortSignal {
    if (this.lostController === undefined) {
      this.lostController = new AbortController();
      if (this.isLost) this.lostController.abort(this.lostReason);
    }
    return this.lostController.signal;
  }

  /** True while it holds: not released and not lost. */
  get held(): boolean {
    return !this.released && !this.isLost;
  }

  /** Marks it lost (once) with `reason`; called by its session. */
  markLost(reason: unknown): void {
    if (this.released || this.isLost) return;
    this.isLost = true;
    this.lostReason = reason;
    this.lostController?.abort(reason);
  }

  /**
   * Gives back what it holds. Throws SessionLostError (the session is gone:
   * it held nothing any more), LostError (lost before), UnreachableError, or
   * the API's error. Releasing twice does nothing the second time.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.owner.forget(this);
    if (this.isLost) throw new LostError("it was lost before the release");
    try {
      await this.sendRelease();
    } catch (error) {
      if (error instanceof SessionLostError) this.owner.noticeLoss(error);
      throw error;
    }
  }

  protected abstract sendRelease(): Promise<unknown>;

  /** Releases; errors ignored (best effort, as a destructor). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release().catch(() => undefined);
  }
}

/** An application lock the session holds (owner Session). */
export class Lock extends Held {
  /** The lock's name. */
  readonly resource: string;
  /** The mode the session holds it in now (combined with earlier grants). */
  readonly mode: HeldMode;
  /** How many times the session holds it (re-acquisition counts). */
  readonly count: number;

  constructor(owner: HandleOwner, grant: Grant & { resource: string; mode: HeldMode; count: number }) {
    super(owner, grant, lockKey(grant.ns, grant.principal, grant.resource));
    this.resource = grant.resource;
    this.mode = grant.mode;
    this.count = grant.count;
  }

  protected sendRelease(): Promise<void> {
    return releaseLock(this.owner.transport, this.ns, {
      session: this.owner.id,
      resource: this.resource,
      owner: "Session",
      principal: this.principal,
    });
  }
}

/** Permits of a semaphore the session holds (owner Session). */
export class SemaphoreSlot extends Held {
  /** The semaphore's name. */
  readonly name: string;
  /** The semaphore's limit. */
  readonly limit: number;
  /** The permits this handle holds (the session may hold more through others). */
  readonly permits: number;

  constructor(owner: HandleOwner, grant: Grant & { name: string; limit: number; permits: number }) {
    super(owner, grant, semaphoreKey(grant.ns, grant.principal, grant.name));
    this.name = grant.name;
    this.limit = grant.limit;
    this.permits = grant.permits;
  }

  protected sendRelease(): Promise<number> {
    return releaseSemaphore(this.owner.transport, this.ns, this.name, {
      session: this.owner.id,
      permits: this.permits,
      owner: "Session",
      principal: this.principal,
    });
  }
}

export const lockKey = (ns: string, principal: string, resource: string): string =>
  `lock\u0000${ns}\u0000${principal.toLowerCase()}\u0000${resource}`;
export const semaphoreKey = (ns: string, principal: string, name: string): string =>
  `semaphore\u0000${ns}\u0000${principal.toLowerCase()}\u0000${name}`;
