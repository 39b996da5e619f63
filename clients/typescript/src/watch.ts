// The event stream (GET /v1/events) read from the answer's body: `event:` and
// `data:` lines parsed across chunks, a silent stream counted as broken.
import type { Schemas } from "./api_types.js";
import { errorFromAnswer, UnreachableError } from "./errors.js";
import type { Transport } from "./transport.js";

/** One event's data: `type` and `at` always, the rest as they apply (docs/api.md, "Events"). */
export interface WatchEventData {
  type: string;
  at: string;
  session?: string;
  session_name?: string;
  transaction?: number;
  ns?: string;
  resource?: string;
  principal?: string;
  owner?: string;
  mode?: string;
  count?: number;
  fence?: number;
  permits?: number;
  limit?: number;
  until?: string;
  holder?: string;
  version?: number;
  deadlock?: Schemas["DeadlockReport"];
  topic?: string;
  key?: string;
  id?: number;
  attempt?: number;
  leader?: string;
  epoch?: number;
  [field: string]: unknown;
}

/** One event of a watch. */
export interface WatchEvent {
  /** The event's type (`applock.granted`, `checkout.expired`, `cluster.leader`, …). */
  type: string;
  data: WatchEventData;
}

/** Options of Client.watch. */
export interface WatchOptions {
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/** Parses text/event-stream text given in arbitrary pieces. */
export class SseParser {
  private buffer = "";
  private eventType = "";
  private data: string[] = [];

  /** Feeds a piece of the stream; returns the events it completed. */
  push(text: string): WatchEvent[] {
    this.buffer += text;
    const events: WatchEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) break;
      // A \r at the end may be the first half of \r\n: wait for the next piece.
      if (this.buffer[end] === "\r" && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end);
      const width = this.buffer[end] === "\r" && this.buffer[end + 1] === "\n" ? 2 : 1;
      this.buffer = this.buffer.slice(end + width);
      const event = this.line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  private line(line: string): WatchEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventType = value;
    else if (field === "data") this.data.push(value);
    return undefined;
  }

  private dispatch(): WatchEvent | undefined {
    const type = this.eventType;
    const data = this.data.join("\n");
    this.eventType = "";
    this.data = [];
    if (data === "") return undefined;
    let parsed: WatchEventData;
    try {
      parsed = JSON.parse(data) as WatchEventData;
    } catch {
      parsed = { type, at: "", raw: data };
    }
    return { type: type !== "" ? type : parsed.type, data: parsed };
  }
}

const kSilenceMs = 45_000;

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

/** Reads the next chunk; "silent" when none comes within `ms`, "aborted" when `signal` aborts. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  signal?: AbortSignal,
): Promise<ReadResult | "silent" | "aborted"> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return resolve("aborted");
    const onAbort = () => finish("aborted");
    const timer = setTimeout(() => finish("silent"), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    function finish(result: ReadResult | "silent" | "aborted") {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(result);
    }
    reader.read().then(finish, (error: unknown) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(error);
    });
  });
}

/** See Client.watch. */
export async function* watchEvents(
  t: Transport,
  ns: string | undefined,
  options: WatchOptions = {},
): AsyncGenerator<WatchEvent> {
  const query = ns === undefined ? "" : `?ns=${encodeURIComponent(ns)}`;
  let answer: Awaited<ReturnType<Transport["request"]>>;
  try {
    answer = await t.request({
      method: "GET",
      path: `/v1/events${query}`,
      retry: "idempotent",
      timeoutMs: t.ioTimeoutMs,
      signal: options.signal,
      stream: true,
    });
  } catch (error) {
    if (options.signal?.aborted) return;
    throw error;
  }
  if (answer.status !== 200 || answer.response === undefined) throw errorFromAnswer(answer.status, answer.body);
  const reader = answer.response.body().getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const silence = Math.max(kSilenceMs, t.ioTimeoutMs);
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof readWithin>>;
      try {
        chunk = await readWithin(reader, silence, options.signal);
      } catch (error) {
        throw new UnreachableError("the event stream broke", { cause: error });
      }
      if (chunk === "aborted") return;
      if (chunk === "silent") throw new UnreachableError(`the event stream was silent for ${silence} ms`);
      if (chunk.done) throw new UnreachableError("the event stream ended");
      for (const event of parser.push(decoder.decode(chunk.value, { stream: true }))) yield event;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
