// The conformance driver of the TypeScript client (clients/conformance/PROTOCOL.md):
// JSON lines on stdin and stdout, each request run as its own promise, handles
// named by `as`, loss reported from the client's AbortSignals, errors mapped to
// `kind` by their class. It only translates: every behaviour is the client's.
import { createInterface } from "node:readline";
import {
  CancelledError,
  Checkout,
  Client,
  DeadlockError,
  LeaseholdError,
  LockedError,
  LockTimeoutError,
  LostError,
  SessionLostError,
  StaleFenceError,
  UnreachableError,
} from "../../../typescript/dist/index.js";

/** A request the driver cannot carry out (bad line, unknown handle). */
class DriverError extends Error {}

/** Reported as `{"error":{"kind":"unsupported"}}`. */
class UnsupportedError extends Error {}

let client;
const handles = new Map();
const watches = new Map();

function write(message) {
  // One process, one thread: each write is a whole line, in order.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function event(kind, of, fields = {}) {
  write({ event: kind, of, ...fields });
}

/** Reports each abort of `signal` as event `kind` of `name`. */
function watchSignal(signal, kind, name) {
  signal.addEventListener("abort", () => event(kind, name));
}

const kinds = [
  [LockTimeoutError, "timeout"],
  [DeadlockError, "deadlock"],
  [CancelledError, "cancelled"],
  [LockedError, "locked"],
  [SessionLostError, "session_lost"],
  [LostError, "lost"],
  [StaleFenceError, "stale_fence"],
  [UnreachableError, "unreachable"],
  [LeaseholdError, "error"],
];

function errorOf(error) {
  if (error instanceof DriverError) return { kind: "driver", message: error.message };
  if (error instanceof UnsupportedError) return { kind: "unsupported", message: error.message };
  const kind = kinds.find(([type]) => error instanceof type)?.[1] ?? "error";
  const out = {
    kind,
    code: error?.code ?? "internal",
    status: error?.status ?? 0,
    message: error?.message ?? String(error),
  };
  if (error instanceof DeadlockError) {
    out.cycle = error.cycle.map((e) => ({ waiter: String(e.waiter), holder: String(e.holder), resource: e.resource }));
  }
  return out;
}

function need(request, field) {
  const value = request[field];
  if (value === undefined) throw new DriverError(`missing field ${field}`);
  return value;
}

function handle(request, field, type) {
  const name = need(request, field);
  const found = handles.get(name);
  if (found === undefined) throw new DriverError(`unknown handle ${name}`);
  if (type !== undefined && !(found instanceof type)) throw new DriverError(`${name} is not a ${type.name}`);
  return found;
}

function name(request) {
  const as = need(request, "as");
  if (handles.has(as) || watches.has(as)) throw new DriverError(`handle ${as} exists already`);
  return as;
}

/** Names a new handle `as` and reports its loss as event "lost". */
function keep(as, held) {
  handles.set(as, held);
  watchSignal(held.signal, "lost", as);
  return held;
}

function theClient() {
  if (client === undefined) throw new DriverError("no client: send op client first");
  return client;
}

const ops = {
  async client(r) {
    client = new Client({ url: need(r, "url"), ioTimeoutMs: r.io_timeout_ms });
    return {};
  },
  async session(r) {
    const as = name(r);
    const s = keep(as, await theClient().session(need(r, "name"), { ttlMs: r.ttl_ms }));
    watchSignal(s.locksLost, "locks_lost", as);
    return { session: s.id };
  },
  async end_session(r) {
    await handle(r, "session").end();
    return {};
  },
  async lock(r) {
    const as = name(r);
    const acquired = handle(r, "session").lock(need(r, "ns"), need(r, "resource"), {
      mode: r.mode,
      timeoutMs: r.timeout_ms,
    });
    const lk = keep(as, await acquired);
    return { fence: lk.fence, mode: lk.mode, waited: lk.waited };
  },
  async semaphore(r) {
    const as = name(r);
    const acquired = handle(r, "session").semaphore(need(r, "ns"), need(r, "name"), {
      limit: need(r, "limit"),
      permits: r.permits,
      timeoutMs: r.timeout_ms,
    });
    const slot = keep(as, await acquired);
    return { fence: slot.fence, permits: slot.permits, waited: slot.waited };
  },
  async release(r) {
    await handle(r, "handle").release();
    return {};
  },
  async checkout(r) {
    const as = name(r);
    const taken = theClient().checkout(need(r, "ns"), need(r, "key"), { owner: need(r, "owner"), ttlMs: r.ttl_ms });
    const doc = keep(as, await taken);
    return { token: doc.token, fence: doc.fence };
  },
  async save(r) {
    const saved = await handle(r, "handle", Checkout).save(need(r, "body"));
    return { version: saved.version };
  },
  async checkin(r) {
    await handle(r, "handle", Checkout).checkin();
    return {};
  },
  async put(r) {
    const put = await theClient().put(need(r, "ns"), need(r, "key"), need(r, "body"));
    return { version: put.version };
  },
  async get(r) {
    const record = await theClient().get(need(r, "ns"), need(r, "key"));
    return { body: record.body, version: record.version, locked_by: record.locked_by, state: record.state };
  },
  async fenced_save(r) {
    const saved = await theClient().save(need(r, "ns"), need(r, "key"), need(r, "body"), { fence: need(r, "fence") });
    return { version: saved.version };
  },
  async watch(r) {
    const as = name(r);
    const controller = new AbortController();
    const stream = theClient().watch(need(r, "ns"), { signal: controller.signal });
    const done = (async () => {
      try {
        for await (const e of stream) event("watch", as, { type: e.type, data: e.data });
        event("watch_end", as, { error: null });
      } catch (error) {
        event("watch_end", as, { error: errorOf(error) });
      }
    })();
    watches.set(as, { controller, done });
    return {};
  },
  async stop_watch(r) {
    const watch = watches.get(need(r, "handle"));
    if (watch === undefined) throw new DriverError(`unknown watch ${r.handle}`);
    watch.controller.abort();
    await watch.done;
    return {};
  },
};

async function serve(request) {
  const op = ops[request.op];
  if (op === undefined) throw new UnsupportedError(`op ${request.op} is not offered`);
  return op(request);
}

/** Best effort, a few seconds at most: end sessions, check in checkouts, stop watches. */
async function closeAll() {
  for (const watch of watches.values()) watch.controller.abort();
  const closing = [...handles.values()].map((h) => h[Symbol.asyncDispose]?.().catch(() => undefined));
  await Promise.race([Promise.allSettled(closing), new Promise((r) => setTimeout(r, 3_000))]);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    write({ id: null, error: { kind: "driver", message: `not JSON: ${error.message}` } });
    return;
  }
  serve(request).then(
    (ok) => write({ id: request.id, ok }),
    (error) => write({ id: request.id, error: errorOf(error) }),
  );
});
lines.on("close", () => {
  closeAll().finally(() => process.exit(0));
});
