// One HTTP/1.1 request and its answer over node:http or node:https, each
// scheme with a keep-alive Agent of the client's own. Node's global fetch
// cannot be given a CA without undici's dispatcher (a dependency), and
// costs several times the CPU per call of node:http here (bench/clients),
// so both schemes go this way.
import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import type { SecureContext } from "node:tls";

// An idle connection is closed after this, before a server closes it under
// a request just written (undici's default, for the same reason).
const kIdleMs = 4_000;

/** Where a request goes: https (`secure`) or http, to `host` (an IP address without brackets) and `port`. */
export interface Server {
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
}

/** An answer: its status and headers at once, its body read once, as text or as a stream. */
export interface Reply {
  readonly status: number;
  header(name: string): string | null;
  text(): Promise<string>;
  /** The body as a web stream (the event stream reads it so). */
  body(): ReadableStream<Uint8Array>;
}

class NodeReply implements Reply {
  readonly status: number;
  private readonly message: IncomingMessage;

  constructor(message: IncomingMessage) {
    this.message = message;
    this.status = message.statusCode ?? 0;
  }

  header(name: string): string | null {
    const value = this.message.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  text(): Promise<string> {
    const message = this.message;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      message.on("data", (chunk: Buffer) => chunks.push(chunk));
      message.once("end", () => resolve(Buffer.concat(chunks).toString()));
      message.on("error", reject);
      message.once("close", () => {
        if (!message.complete) reject(new Error("the connection closed before the answer ended"));
      });
    });
  }

  body(): ReadableStream<Uint8Array> {
    return Readable.toWeb(this.message) as ReadableStream<Uint8Array>;
  }
}

/**
 * Ends one request before its answer is read: the call's deadline or the
 * caller's signal calls abort(). Not an AbortController: one per request,
 * with the listeners node:http hangs on its signal, cost more CPU than the
 * rest of the client's call (bench/clients).
 */
export class Abort {
  private request: ClientRequest | undefined;
  private done = false;

  /** True once abort() was called. */
  get aborted(): boolean {
    return this.done;
  }

  /** Destroys the request, now or once sent: its send, or its answer's text(), rejects. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    this.request?.destroy(new Error("aborted"));
  }

  /** Called by Connections.send with the request it made. */
  attach(request: ClientRequest): void {
    this.request = request;
    if (this.done) request.destroy(new Error("aborted"));
  }
}

/** The keep-alive connections of one client, per scheme; each Agent made when first used. */
export class Connections {
  private readonly secureContext: () => SecureContext;
  private http: HttpAgent | undefined;
  private https: HttpsAgent | undefined;

  /** `secureContext()` verifies https servers (and holds the client certificate). */
  constructor(secureContext: () => SecureContext) {
    this.secureContext = secureContext;
  }

  /**
   * Sends one request; resolves with the answer once its head arrived.
   * `abort` ends it, before or after the head. Rejects with Node's error
   * (`code` ECONNREFUSED, a TLS code, ECONNRESET, …).
   */
  send(
    server: Server,
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string | undefined,
    abort: Abort | undefined,
  ): Promise<Reply> {
    const { host, port } = server;
    return new Promise((resolve, reject) => {
      const onAnswer = (message: IncomingMessage) => resolve(new NodeReply(message));
      const req = server.secure
        ? httpsRequest({ host, port, path, method, headers, agent: this.httpsAgent() }, onAnswer)
        : httpRequest({ host, port, path, method, headers, agent: this.httpAgent() }, onAnswer);
      req.on("error", reject); // every time: an error event without a listener would throw
      abort?.attach(req);
      req.end(body);
    });
  }

  private httpAgent(): HttpAgent {
    this.http ??= new HttpAgent({ keepAlive: true, timeout: kIdleMs });
    return this.http;
  }

  private httpsAgent(): HttpsAgent {
    this.https ??= new HttpsAgent({ keepAlive: true, timeout: kIdleMs, secureContext: this.secureContext() });
    return this.https;
  }
}
