// Lock and semaphore waits across a restart or a failover
// (docs/client.md, "Restarts"): a wait whose connection broke, or that was
// answered 503, is not asked again blindly. Once a server answers /healthz,
// what the session holds is read; a grant that reached the disk before the
// break is adopted, never taken twice.
import { cancelledByCaller, LeaseholdError, UnreachableError } from "./errors.js";
import { sleep, type Transport } from "./transport.js";

// As the server: a longer timeout is in effect forever.
const kLongestTimedWaitMs = 100 * 365.25 * 24 * 3600 * 1000;

/** Whether `error` broke a wait the server may have decided meanwhile. */
export function brokeTheWait(error: unknown): error is LeaseholdError {
  if (!(error instanceof LeaseholdError)) return false;
  return (error instanceof UnreachableError && error.code === "unreachable") || error.code === "unavailable";
}

/** Waits until some node answers /healthz 200; false when `until` passes first. */
async function awaitServer(t: Transport, until: number, signal?: AbortSignal): Promise<boolean> {
  for (;;) {
    if (await t.healthy()) return true;
    if (Date.now() >= until) return false;
    try {
      await sleep(100, signal);
    } catch (reason) {
      throw cancelledByCaller(reason);
    }
  }
}

/**
 * Sends `send(timeoutMs)` until it is answered. After each break, once a
 * server serves again, `afterBreak` reads what the session holds: a value
 * to adopt, undefined to ask again with what is left of the timeout (0 once
 * it passed: one last try that does not wait), or it throws.
 */
export async function acrossBreaks<T>(
  t: Transport,
  timeoutMs: number,
  send: (timeoutMs: number) => Promise<T>,
  afterBreak: (broke: LeaseholdError) => Promise<T | undefined>,
  signal?: AbortSignal,
): Promise<T> {
  const forever = timeoutMs < 0;
  let timeout = forever ? timeoutMs : Math.min(timeoutMs, kLongestTimedWaitMs);
  const deadline = Date.now() + Math.max(timeout, 0);
  for (;;) {
    try {
      return await send(timeout);
    } catch (error) {
      if (!brokeTheWait(error)) throw error;
      // A server gone for longer than the I/O allowance past the wait is reported.
      const giveUp = Math.max(forever ? Date.now() : deadline, Date.now()) + t.ioTimeoutMs;
      if (!(await awaitServer(t, giveUp, signal))) throw error;
      const adopted = await afterBreak(error);
      if (adopted !== undefined) return adopted;
      if (!forever) timeout = Math.max(deadline - Date.now(), 0);
    }
  }
}

/** Principal scopes compare ignoring ASCII case, as the server compares them. */
export function samePrincipal(listed: string, asked: string): boolean {
  return listed.toLowerCase() === asked.toLowerCase();
}
