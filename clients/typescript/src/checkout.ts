// A checkout lease that renews itself every ttl/3 with its token; a renewal
// refused, or granted as a new lease, means the lease was lost.
import type { Schemas } from "./api_types.js";
import { checkin, checkout, saveRecord, type WriteResult } from "./calls.js";
import { LeaseholdError, LockedError, LostError } from "./errors.js";
import type { Transport } from "./transport.js";

/** Options of Client.checkout. */
export interface CheckoutOptions {
  /** The name others see as `locked_by`. */
  owner: string;
  /** The lease's ttl; renewed every ttl/3. Default 300 000. */
  ttlMs?: number;
  /** The lease's token; generated when not given. It makes a retried checkout idempotent. */
  token?: string;
}

/** Options of Checkout.save. */
export interface CheckoutSaveOptions {
  /** Save only if the record is at this version (else VersionMismatchError). */
  ifVersion?: number;
  /** Also check this fence (StaleFenceError when a newer one wrote the record). */
  fence?: number;
}

/**
 * A checked-out key. Renews itself every ttl/3 until checked in or lost;
 * its timers are unref'd. Lost (signal aborted once, with LostError) when
 * a renewal is refused (LockedError: someone else holds it) or is granted
 * as a new lease (the old one was broken or ran out; the accidental new
 * lease is checked in). Network failures are retried at the next period.
 */
export class Checkout implements AsyncDisposable {
  readonly ns: string;
  readonly key: string;
  readonly owner: string;
  readonly ttlMs: number;
  /** The lease's token: its proof, for saves by other processes too. */
  readonly token: string;
  /** The checkout's fence. */
  readonly fence: number;
  private expires: string;
  private readonly transport: Transport;
  private readonly lostController = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private checkedIn = false;

  /** @internal Use Client.checkout. */
  constructor(
    transport: Transport,
    ns: string,
    key: string,
    options: Required<CheckoutOptions>,
    grant: Schemas["CheckoutGranted"],
  ) {
    this.transport = transport;
    this.ns = ns;
    this.key = key;
    this.owner = options.owner;
    this.ttlMs = options.ttlMs;
    this.token = grant.token;
    this.fence = grant.fence;
    this.expires = grant.expires_at;
    this.schedule();
  }

  /** Aborted once when the lease is lost (reason: LostError); never by checkin(). */
  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  /** True while the lease is held: not checked in, not lost. */
  get held(): boolean {
    return !this.checkedIn && !this.lostController.signal.aborted;
  }

  /** When the lease runs out unless renewed (the server's clock, RFC 3339). */
  get expiresAt(): string {
    return this.expires;
  }

  /**
   * Saves the record's body under the lease. Throws LostError once the
   * lease is lost (or the server says it expired), VersionMismatchError,
   * StaleFenceError, NotFoundError (no record: insert it with Client.put),
   * UnreachableError.
   */
  async save(body: string, options: CheckoutSaveOptions = {}): Promise<WriteResult> {
    this.assertHeld();
    try {
      return await saveRecord(this.transport, this.ns, this.key, {
        token: this.token,
        body,
        if_version: options.ifVersion,
        fence: options.fence,
      });
    } catch (error) {
      if (error instanceof LockedError || error instanceof LostError) {
        const lost = new LostError(`the lease was lost: ${error.message}`, 423);
        this.lose(lost);
        throw lost;
      }
      throw error;
    }
  }

  /**
   * Gives the lease back. Throws LostError if it was lost, UnreachableError
   * or the API's error. Checking in twice does nothing the second time.
   */
  async checkin(): Promise<void> {
    if (this.checkedIn) return;
    this.assertHeld();
    this.checkedIn = true;
    clearTimeout(this.timer);
    await checkin(this.transport, this.ns, this.key, { token: this.token });
  }

  /** Checks in; errors ignored (best effort). */
  async [Symbol.asyncDispose](): Promise<void> {
    clearTimeout(this.timer);
    await this.checkin().catch(() => undefined);
  }

  private assertHeld(): void {
    if (this.lostController.signal.aborted) throw new LostError(`the checkout of ${this.ns}/${this.key} was lost`);
    if (this.checkedIn) throw new LeaseholdError(`${this.ns}/${this.key} was checked in`, { code: "checked_in" });
  }

  private lose(reason: LostError): void {
    if (this.lostController.signal.aborted || this.checkedIn) return;
    clearTimeout(this.timer);
    this.lostController.abort(reason);
  }

  private schedule(): void {
    if (!this.held) return;
    this.timer = setTimeout(() => void this.renew(), Math.max(1, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    if (!this.held) return;
    try {
      const timeout = Math.max(Math.floor(this.ttlMs / 6), 1_000);
      const grant = await checkout(
        this.transport,
        this.ns,
        this.key,
        { owner: this.owner, ttl_ms: this.ttlMs, token: this.token },
        timeout,
      );
      if (!this.held) return;
      if (!grant.renewed) {
        // The old lease was broken or ran out: this is someone else's chance, not ours.
        this.lose(new LostError("the lease ran out or was broken; a renewal would have been a new lease"));
        await checkin(this.transport, this.ns, this.key, { token: this.token }).catch(() => undefined);
        return;
      }
      this.expires = grant.expires_at;
    } catch (error) {
      if (error instanceof LockedError) {
        this.lose(new LostError(`the lease was taken by ${error.lockedBy ?? "someone else"}`, 423));
        return;
      }
      // Network failures and 503s are retried at the next period.
    }
    this.schedule();
  }
}
