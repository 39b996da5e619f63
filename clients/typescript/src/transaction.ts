// A session's transaction: staged record writes, operation records and
// outbox messages, applied together at commit or not at all (docs/outbox.md).
import type { AnswerOf, ClaimedMessage, RequestOf } from "./api_types.js";
import { expect, seg, send } from "./calls.js";
import { LostError } from "./errors.js";
import type { Transport } from "./transport.js";

/** What `beginOperation` found: new, or completed before with its outcome. */
export type OperationState = AnswerOf<"beginOperation", 200>;

/** What a commit applied, in the order staged. */
export type CommitResult = AnswerOf<"commitTransaction", 200>;

/**
 * The open transaction of a session. Writes are staged by passing
 * `{ session: session.id }` to Client.put/save/delete, or through the
 * methods here. Every call is sent once: a broken connection is
 * UnreachableError, and the transaction's fate is then read from the server.
 */
export class Transaction implements AsyncDisposable {
  /** The transaction's number. */
  readonly number: number;
  private readonly transport: Transport;
  private readonly sessionId: string;
  private finished = false;

  /** @internal Use Session.transaction. */
  constructor(transport: Transport, sessionId: string, number: number) {
    this.transport = transport;
    this.sessionId = sessionId;
    this.number = number;
  }

  /** Reads operation `opId` from the committed state: `new`, or `completed` with its outcome. */
  async beginOperation(ns: string, opId: string): Promise<OperationState> {
    const body: RequestOf<"beginOperation"> = { session: this.sessionId };
    return expect<OperationState>(await this.post(`/v1/operations/${seg(ns)}/${seg(opId)}/begin`, body), 200);
  }

  /** Stages operation `opId`'s completion with `outcome` (any JSON). Throws `exists` if completed. */
  async completeOperation(ns: string, opId: string, outcome: unknown): Promise<void> {
    const body: RequestOf<"completeOperation"> = { session: this.sessionId, outcome };
    expect(await this.post(`/v1/operations/${seg(ns)}/${seg(opId)}/complete`, body), 200);
  }

  /** Stages an outbox message; a key enqueued before is not enqueued again. */
  async enqueue(ns: string, topic: string, key: string, payload: unknown): Promise<AnswerOf<"enqueueMessage", 201>> {
    const body: RequestOf<"enqueueMessage"> = { key, payload, session: this.sessionId };
    return expect(await this.post(`/v1/outbox/${seg(ns)}/${seg(topic)}`, body), 200, 201);
  }

  /** Applies every staged write at once. Throws `transaction_aborted` (none applied), … */
  async commit(): Promise<CommitResult> {
    this.finished = true;
    return expect<CommitResult>(await this.post(`/v1/sessions/${seg(this.sessionId)}/transaction/commit`), 200);
  }

  /** Drops every staged write. */
  async rollback(): Promise<void> {
    this.finished = true;
    expect(await this.post(`/v1/sessions/${seg(this.sessionId)}/transaction/rollback`), 200);
  }

  /** Rolls back unless committed or rolled back; errors ignored. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.finished) await this.rollback().catch(() => undefined);
  }

  private post(path: string, body?: unknown) {
    return send(this.transport, "POST", path, body);
  }
}

/** Options of Client.claim. */
export interface ClaimOptions {
  /** The consumer's name. */
  consumer: string;
  /** At most this many messages (1..1000). Default 10. */
  max?: number;
  /** The claim's lease. Default 30 000. */
  leaseMs?: number;
}

export async function claimMessages(
  t: Transport,
  ns: string,
  topic: string,
  o: ClaimOptions,
): Promise<ClaimedMessage[]> {
  const body: RequestOf<"claimMessages"> = { consumer: o.consumer, max: o.max ?? 10, lease_ms: o.leaseMs ?? 30_000 };
  const a = await send(t, "POST", `/v1/outbox/${seg(ns)}/${seg(topic)}/claim`, body);
  return expect<AnswerOf<"claimMessages", 200>>(a, 200).messages;
}

/** Acks a claimed message; a repeated ack with the same token is idempotent, so it may be sent again. */
export async function ackMessage(
  t: Transport,
  ns: string,
  topic: string,
  id: number,
  claimToken: string,
): Promise<boolean> {
  const body: RequestOf<"ackMessage"> = { id, claim_token: claimToken };
  const a = await t.request({
    method: "POST",
    path: `/v1/outbox/${seg(ns)}/${seg(topic)}/ack`,
    body,
    retry: "idempotent",
    timeoutMs: t.ioTimeoutMs,
  });
  if (a.status === 423) {
    const reason = (a.body as { reason?: string } | undefined)?.reason ?? "not_owner";
    throw new LostError(`the claim is no longer ours (${reason})`, 423);
  }
  return expect<AnswerOf<"ackMessage", 200>>(a, 200).acked;
}
