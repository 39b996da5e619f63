// One way to send a request to a server or a cluster: the node believed to
// lead first, redirects followed by hand, nodes that cannot be connected to
// passed over, and a request that may have reached a node sent again only
// when that cannot do anything twice (docs/client.md, "Clusters").
// Requests go over node:http and node:https (exchange.ts).
import { connect } from "node:net";
import type { SecureContext } from "node:tls";
import { cancelledByCaller, errorFromAnswer, LeaseholdError, UnreachableError } from "./errors.js";
import { Abort, Connections, type Reply } from "./exchange.js";
import { tlsRefusal } from "./tls.js";

/**
 * When a request may go to the next node after a failure:
 * - `idempotent`: after any failure (GET, keepalive, cancel, a checkout with its own token);
 * - `refused`: only when it surely did not arrive (no connection) or the node answered 503;
 * - `never`: lock requests; a 503 or a broken connection is thrown for the ride-through.
 */
export type Retry = "idempotent" | "refused" | "never";

export interface Call {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Path and query, segments already encoded. */
  path: string;
  body?: unknown;
  retry: Retry;
  /** The whole call's time in ms; undefined for none (a lock wait without limit). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Answer a 200 with its body unread (the event stream). */
  stream?: boolean;
}

export interface Answer {
  status: number;
  body: unknown;
  /** Only for `stream` calls answered 200. */
  response?: Reply;
}

/** A request whose connection broke after it may have been written. */
export class BrokenRequestError extends UnreachableError {}

const kConnectBudgetMs = 2_000;
const kMaxNodes = 32;
// A node that answered this recently is not probed before a request.
const kTrustedForMs = 5_000;
const kLongestTimerMs = 2 ** 31 - 1;
const kConnectErrorCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "EADDRNOTAVAIL",
]);

interface Node {
  origin: string;
  /** https: */
  secure: boolean;
  host: string;
  port: number;
  suspect: boolean;
  lastOkAt: number;
}

type Attempt =
  | { kind: "notSent"; error: unknown }
  | { kind: "timedOut" }
  | { kind: "broken"; error: unknown }
  | { kind: "tls"; reason: string }
  | { kind: "answer"; status: number; body: unknown; location: string | null; response?: Reply };

/** Parses "http://a:1,http://b:2" into origins; throws LeaseholdError `bad_url`. */
export function parseUrls(urls: string): string[] {
  const origins: string[] = [];
  for (const part of urls.split(",")) {
    const text = part.trim();
    if (text === "") continue;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new LeaseholdError(`not a URL: ${text}`, { code: "bad_url" });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new LeaseholdError(`only http:// and https:// URLs: ${text}`, { code: "bad_url" });
    }
    if (!origins.includes(url.origin)) origins.push(url.origin);
  }
  if (origins.length === 0) throw new LeaseholdError("no URL given", { code: "bad_url" });
  return origins;
}

function nodeOf(origin: string): Node {
  const url = new URL(origin);
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return { origin, secure: url.protocol === "https:", host, port, suspect: false, lastOkAt: 0 };
}

/**
 * The error for a 307 from an https:// node to an http:// URL, which is
 * never followed: it would send the request (and its token) in cleartext.
 * Undefined for any other redirect: to https:// always, to http:// from an
 * http:// node.
 */
export function insecureRedirect(from: string, location: string | null): LeaseholdError | undefined {
  if (location === null || !from.startsWith("https:") || !/^http:/i.test(location)) return undefined;
  return new LeaseholdError(`${from} redirected to ${location}: a redirect from https:// to http:// is not followed`, {
    code: "bad_url",
    status: 307,
  });
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function isConnectError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = error;
  while (e !== null && typeof e === "object" && !seen.has(e)) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && kConnectErrorCodes.has(code)) return true;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every(isConnectError)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function tlsFailed(node: Node, reason: string): UnreachableError {
  return new UnreachableError(`TLS handshake with ${node.origin} failed: ${reason}`, { code: "tls" });
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** Whether a TCP connection to the node opens within `ms`: a host that is down must not use up the call's time. */
function canConnect(node: Node, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: node.host, port: node.port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Aborts each request in flight once its call's deadline passes, with one
 * timer for all of them (set for the earliest; unref'd: a call in flight
 * holds its socket, which keeps the process up).
 */
class Deadlines {
  private readonly pending = new Map<Abort, number>();
  private timer: NodeJS.Timeout | undefined;
  private at = Number.POSITIVE_INFINITY;

  add(abort: Abort, deadline: number): void {
    this.pending.set(abort, deadline);
    if (deadline < this.at) this.arm(deadline);
  }

  delete(abort: Abort): void {
    this.pending.delete(abort);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.at = at;
    // Capped as Node caps a delay (a longer one fires at once): past the cap it is set again.
    this.timer = setTimeout(this.fire, Math.min(Math.max(at - Date.now(), 0), kLongestTimerMs));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [abort, deadline] of this.pending) {
      if (deadline <= now) {
        this.pending.delete(abort);
        abort.abort();
      } else if (deadline < next) next = deadline;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  };
}

/** The nodes of one client and the rules for asking them; shared by every handle of the client. */
export class Transport {
  private readonly nodes: Node[];
  private leader: Node;
  readonly ioTimeoutMs: number;
  // Built once: node:http copies them as they are.
  private readonly headers: Readonly<Record<string, string>>;
  private readonly bodyHeaders: Readonly<Record<string, string>>;
  private readonly deadlines = new Deadlines();
  private readonly connections: Connections;

  /** `secureContext()` verifies the https:// nodes (and holds the client certificate). */
  constructor(urls: string, ioTimeoutMs: number, token: string | undefined, secureContext: () => SecureContext) {
    this.connections = new Connections(secureContext);
    this.nodes = parseUrls(urls).map(nodeOf);
    this.leader = this.nodes[0] as Node;
    this.ioTimeoutMs = ioTimeoutMs;
    const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    this.headers = { accept: "application/json", ...auth };
    this.bodyHeaders = { accept: "application/json", ...auth, "content-type": "application/json" };
  }

  /** The URLs known now (given and learned), the believed leader first. */
  get urls(): string[] {
    return this.ordered().map((n) => n.origin);
  }

  /**
   * Sends `call` as docs/client.md, "Clusters", says. Resolves with any
   * answer other than 307 and 503; throws UnreachableError when no node
   * answered (code `tls` when one refused TLS; BrokenRequestError when a
   * non-idempotent request broke), the 503's error after the deadline,
   * LeaseholdError `bad_url` for a redirect from https:// to http://,
   * CancelledError when `call.signal` aborts.
   */
  async request(call: Call): Promise<Answer> {
    let deadline = call.timeoutMs === undefined ? undefined : Date.now() + call.timeoutMs;
    let pause = 50;
    for (;;) {
      const queue = this.ordered();
      // Few nodes (at most 32): an array is cheaper than a Set.
      const visited: Node[] = [];
      let answered = false;
      let problem: LeaseholdError | undefined;
      let tls: UnreachableError | undefined;
      while (queue.length > 0) {
        const node = queue.shift() as Node;
        if (visited.includes(node)) continue;
        visited.push(node);
        const attempt = await this.attempt(node, call, deadline);
        if (attempt.kind === "notSent") {
          node.suspect = true;
          problem = new UnreachableError(`cannot connect to ${node.origin}: ${describe(attempt.error)}`, {
            cause: attempt.error,
          });
          continue;
        }
        if (attempt.kind === "tls") {
          node.suspect = true;
          tls = tlsFailed(node, attempt.reason);
          continue;
        }
        if (attempt.kind === "timedOut") {
          node.suspect = true;
          throw new UnreachableError(`no answer from ${node.origin} in time`, { code: "timeout" });
        }
        if (attempt.kind === "broken") {
          node.suspect = true;
          const message = `the connection to ${node.origin} broke: ${describe(attempt.error)}`;
          if (call.retry !== "idempotent") throw new BrokenRequestError(message, { cause: attempt.error });
          problem = new UnreachableError(message, { cause: attempt.error });
          continue;
        }
        answered = true;
        node.suspect = false;
        node.lastOkAt = Date.now();
        if (attempt.status === 307) {
          const refused = insecureRedirect(node.origin, attempt.location);
          if (refused !== undefined) throw refused;
          const next = this.learn(attempt.location);
          problem = new LeaseholdError(`${node.origin} redirects to ${attempt.location ?? "nowhere"}`, {
            code: "unavailable",
            status: 307,
          });
          if (next !== undefined && !visited.includes(next)) {
            this.leader = next;
            queue.unshift(next);
          }
          continue;
        }
        if (attempt.status === 503) {
          problem = errorFromAnswer(503, attempt.body);
          if (call.retry === "never") throw problem;
          continue;
        }
        this.leader = node;
        return { status: attempt.status, body: attempt.body, response: attempt.response };
      }
      if (!answered) throw tls ?? problem ?? new UnreachableError("no node to ask");
      // A takeover is under way: ask again after a pause, until the deadline.
      deadline ??= Date.now() + this.ioTimeoutMs;
      if (Date.now() + pause >= deadline) throw problem ?? new UnreachableError("no leader");
      try {
        await sleep(pause, call.signal);
      } catch (reason) {
        throw cancelledByCaller(reason);
      }
      pause = Math.min(pause * 2, 400);
    }
  }

  /**
   * Whether some node answers GET /healthz 200 now (it becomes the believed
   * leader). Throws UnreachableError `tls` when none answered and one
   * refused TLS: waiting does not mend a certificate.
   */
  async healthy(): Promise<boolean> {
    let answered = false;
    let tls: UnreachableError | undefined;
    for (const node of this.ordered()) {
      const attempt = await this.attempt(
        node,
        { method: "GET", path: "/healthz", retry: "idempotent" },
        Date.now() + 1_000,
      );
      if (attempt.kind === "answer" && attempt.status === 200) {
        node.suspect = false;
        node.lastOkAt = Date.now();
        this.leader = node;
        return true;
      }
      if (attempt.kind === "answer") answered = true;
      else node.suspect = true;
      if (attempt.kind === "tls") tls = tlsFailed(node, attempt.reason);
    }
    if (tls !== undefined && !answered) throw tls;
    return false;
  }

  /** The believed leader, then the other nodes in order, then those that failed us last. */
  private ordered(): Node[] {
    const leader = this.leader;
    if (this.nodes.length === 1) return [leader];
    const trusted: Node[] = [];
    const suspect: Node[] = [];
    (leader.suspect ? suspect : trusted).push(leader);
    for (const n of this.nodes) if (n !== leader) (n.suspect ? suspect : trusted).push(n);
    return suspect.length === 0 ? trusted : trusted.concat(suspect);
  }

  /** The node a redirect names, learned when new (up to 32); undefined when not http(s). */
  private learn(location: string | null): Node | undefined {
    if (location === null) return undefined;
    let url: URL;
    try {
      url = new URL(location);
    } catch {
      return undefined;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    const known = this.nodes.find((n) => n.origin === url.origin);
    if (known !== undefined) return known;
    if (this.nodes.length >= kMaxNodes) return undefined;
    const node = nodeOf(url.origin);
    this.nodes.push(node);
    return node;
  }

  private async attempt(node: Node, call: Call, deadline: number | undefined): Promise<Attempt> {
    const left = deadline === undefined ? undefined : deadline - Date.now();
    if (left !== undefined && left <= 0) return { kind: "timedOut" };
    if (Date.now() - node.lastOkAt > kTrustedForMs || node.suspect) {
      const budget = Math.min(kConnectBudgetMs, left ?? kConnectBudgetMs);
      if (!(await canConnect(node, budget))) {
        return { kind: "notSent", error: new Error(`no connection within ${budget} ms`) };
      }
    }
    if (call.signal?.aborted) throw cancelledByCaller(call.signal.reason);
    // An Abort only where something can end the call: its deadline (the
    // deadlines share one timer) or the caller's signal, until the answer is read.
    let abort: Abort | undefined;
    let onAbort: (() => void) | undefined;
    if (deadline !== undefined || call.signal !== undefined) {
      const own = new Abort();
      abort = own;
      if (deadline !== undefined) this.deadlines.add(own, deadline);
      if (call.signal !== undefined) {
        onAbort = () => own.abort();
        call.signal.addEventListener("abort", onAbort, { once: true });
      }
    }
    const cleanup = () => {
      if (abort === undefined) return;
      this.deadlines.delete(abort);
      if (onAbort !== undefined) call.signal?.removeEventListener("abort", onAbort);
    };
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers = payload === undefined ? this.headers : this.bodyHeaders;
    let response: Reply;
    try {
      response = await this.connections.send(node, call.method, call.path, headers, payload, abort);
    } catch (error) {
      cleanup();
      return this.failed(error, call, abort);
    }
    if (call.stream === true && response.status === 200) {
      cleanup();
      if (call.signal?.aborted) throw cancelledByCaller(call.signal.reason);
      return { kind: "answer", status: 200, body: undefined, location: null, response };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      cleanup();
      const failed = this.failed(error, call, abort);
      // The status arrived: the request was read, so never "not sent".
      return failed.kind === "notSent" ? { kind: "broken", error } : failed;
    }
    cleanup();
    let body: unknown;
    if (text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        if (response.status !== 307 && response.status !== 503) {
          throw new LeaseholdError(`not JSON from ${node.origin}${call.path}: ${text.slice(0, 80)}`, {
            code: "bad_response",
            status: response.status,
          });
        }
      }
    }
    return { kind: "answer", status: response.status, body, location: response.header("location") };
  }

  private failed(error: unknown, call: Call, abort: Abort | undefined): Attempt {
    if (call.signal?.aborted) throw cancelledByCaller(call.signal.reason);
    if (abort?.aborted) return { kind: "timedOut" };
    const reason = tlsRefusal(error);
    if (reason !== undefined) return { kind: "tls", reason };
    if (isConnectError(error)) return { kind: "notSent", error };
    return { kind: "broken", error };
  }
}
