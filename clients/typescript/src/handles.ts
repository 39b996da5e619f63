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
  protected readonly owner: HandleOwner;
  private readonly lost = new AbortController();
  private released = false;

  protected constructor(owner: HandleOwner, ns: string, principal: string, fence: number, waited: boolean) {
    this.owner = owner;
    this.ns = ns;
    this.principal = principal;
    this.fence = fence;
    this.waited = waited;
  }

  /** The key that names what this handle holds, within its session. */
  abstract get key(): string;

  /**
   * Aborted once when the lock or permits are lost (the session is gone);
   * never by a release. Pass it to the work the lock guards.
   */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  /** True while it holds: not released and not lost. */
  get held(): boolean {
    return !this.released && !this.lost.signal.aborted;
  }

  /** Marks it lost (once) with `reason`; called by its session. */
  markLost(reason: unknown): void {
    if (this.released || this.lost.signal.aborted) return;
    this.lost.abort(reason);
  }

  /**
   * Gives back what it holds. Throws SessionLostError (the session is gone:
   * it held nothing any more), LostError (lost before), UnreachableError, or
   * the API's error. Releasing twice does nothing the second time.
   */
  async release(): Promise<void> {
    if (this.released) return;
    if (this.lost.signal.aborted) {
      this.released = true;
      this.owner.forget(this);
      throw new LostError("it was lost before the release");
    }
    this.released = true;
    this.owner.forget(this);
    try {
      await this.sendRelease();
    } catch (error) {
      if (error instanceof SessionLostError) this.owner.noticeLoss(error);
      throw error;
    }
  }

  protected abstract sendRelease(): Promise<void>;

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

  constructor(
    owner: HandleOwner,
    grant: {
      ns: string;
      resource: string;
      principal: string;
      mode: HeldMode;
      fence: number;
      count: number;
      waited: boolean;
    },
  ) {
    super(owner, grant.ns, grant.principal, grant.fence, grant.waited);
    this.resource = grant.resource;
    this.mode = grant.mode;
    this.count = grant.count;
  }

  get key(): string {
    return lockKey(this.ns, this.principal, this.resource);
  }

  protected async sendRelease(): Promise<void> {
    await releaseLock(this.owner.transport, this.ns, {
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

  constructor(
    owner: HandleOwner,
    grant: {
      ns: string;
      name: string;
      principal: string;
      limit: number;
      permits: number;
      fence: number;
      waited: boolean;
    },
  ) {
    super(owner, grant.ns, grant.principal, grant.fence, grant.waited);
    this.name = grant.name;
    this.limit = grant.limit;
    this.permits = grant.permits;
  }

  get key(): string {
    return semaphoreKey(this.ns, this.principal, this.name);
  }

  protected async sendRelease(): Promise<void> {
    await releaseSemaphore(this.owner.transport, this.ns, this.name, {
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
