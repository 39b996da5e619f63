// The TypeScript share of bench/clients/run.sh: lock+release pairs through
// the @leasehold/client Client, through bare node:http (what the client is
// built on) or through bare fetch, 16 concurrent promise loops, one JSON
// line out.
//
//   node ts_bench.mjs DRIVER --url URL [--callers 16] [--seconds 3]
//        [--warmup 0.5] [--dist clients/typescript/dist]
//
// DRIVER: "client" (Client.session, then session.lock + lock.release),
// "node-http" (http.request with a keep-alive Agent, one socket per
// concurrent request) or "fetch" (Node's global fetch, keep-alive by
// default: undici's pool opens one connection per concurrent request). Each caller opens its own session
// (ttl 60 s), then loops acquire (Exclusive, Session owner, timeout 0) +
// release of its own resource "r-<caller>" in namespace "bench"; the bare
// loops check the status and parses the answer as a client would. After
// --warmup seconds the pairs done and process.cpuUsage() (user + system, the
// whole process) are read, and again --seconds later: the difference is the
// figure. Exit 1 on any failed call.
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";

const NS = "bench";
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string" },
    callers: { type: "string", default: "16" },
    seconds: { type: "string", default: "3" },
    warmup: { type: "string", default: "0.5" },
    dist: { type: "string", default: process.env.LEASEHOLD_TS_CLIENT_DIST ?? "clients/typescript/dist" },
  },
});
const driver = positionals[0];
if (!["client", "node-http", "fetch"].includes(driver) || !values.url) {
  console.error("usage: node ts_bench.mjs client|node-http|fetch --url URL [--callers N] [--seconds S] [--warmup S] [--dist DIR]");
  process.exit(2);
}
const url = values.url.replace(/\/$/, "");
const callers = Number(values.callers);
const seconds = Number(values.seconds);
const warmup = Number(values.warmup);

const run = { pairs: new Array(callers).fill(0), stop: false, error: undefined };
const fail = (what, e) => {
  if (run.error === undefined) run.error = `${what}: ${e?.stack ?? e}`;
  run.stop = true;
};
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let started;
const go = new Promise((resolve) => {
  started = resolve;
});

let client;
async function clientLoop(i) {
  const session = await client.session(`bench-ts-${i}`, { ttlMs: 60_000 });
  try {
    await go;
    const r = `r-${i}`;
    const pairs = run.pairs;
    while (!run.stop) {
      const lk = await session.lock(NS, r, { mode: "Exclusive", timeoutMs: 0 });
      await lk.release();
      pairs[i] += 1;
    }
  } finally {
    await session.end();
  }
}

// One exchange with fetch or with node:http: [status, body text].
async function fetchExchange(method, p, body) {
  const res = await fetch(url + p, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body,
  });
  return [res.status, await res.text()];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: callers });
function nodeHttpExchange(method, p, body) {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const req = http.request(url + p, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve([res.statusCode, Buffer.concat(chunks).toString("utf8")]));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

let exchange;
async function post(p, body, status, what) {
  const [code, text] = await exchange("POST", p, JSON.stringify(body));
  const doc = JSON.parse(text);
  if (code !== status) throw new Error(`${what}: HTTP ${code} ${text}`);
  return doc;
}

async function bareLoop(i) {
  const sid = (await post("/v1/sessions", { name: `bench-${driver}-${i}`, ttl_ms: 60_000 }, 201, "session")).id;
  try {
    await go;
    const r = `r-${i}`;
    const pairs = run.pairs;
    const acquire = `/v1/applocks/${NS}/acquire`;
    const release = `/v1/applocks/${NS}/release`;
    while (!run.stop) {
      const a = await post(
        acquire,
        { session: sid, resource: r, mode: "Exclusive", owner: "Session", timeout_ms: 0 },
        200,
        "acquire",
      );
      if (a.result < 0) throw new Error(`acquire: ${JSON.stringify(a)}`);
      const b = await post(release, { session: sid, resource: r, owner: "Session" }, 200, "release");
      if (b.result !== 0) throw new Error(`release: ${JSON.stringify(b)}`);
      pairs[i] += 1;
    }
  } finally {
    await exchange("DELETE", `/v1/sessions/${sid}`);
  }
}

let loop;
let name;
if (driver === "client") {
  const dist = path.resolve(values.dist);
  const { Client } = await import(pathToFileURL(path.join(dist, "index.js")).href);
  client = new Client({ url });
  loop = clientLoop;
  name = "ts-client";
} else {
  exchange = driver === "fetch" ? fetchExchange : nodeHttpExchange;
  loop = bareLoop;
  name = driver;
}

const tasks = [];
for (let i = 0; i < callers; i++) tasks.push(loop(i).catch((e) => fail(name, e)));
// The sessions open during the warm-up (the clock starts after it).
started();
await sleep(warmup * 1000);
const sum = () => run.pairs.reduce((a, b) => a + b, 0);
const t0 = performance.now();
const c0 = cpuSeconds();
const p0 = sum();
await sleep(seconds * 1000);
const p1 = sum();
const c1 = cpuSeconds();
const t1 = performance.now();
run.stop = true;
await Promise.all(tasks);
if (run.error !== undefined) {
  console.error(`ts_bench ${name}: ${run.error}`);
  process.exit(1);
}
const pairs = p1 - p0;
const wall = (t1 - t0) / 1000;
const cpu = c1 - c0;
console.log(
  JSON.stringify({
    driver: name,
    callers,
    pairs,
    seconds: Number(wall.toFixed(3)),
    pairs_per_s: Number((pairs / wall).toFixed(1)),
    cpu_s: Number(cpu.toFixed(3)),
    cpu_us_per_call: pairs ? Number(((cpu * 1e6) / (2 * pairs)).toFixed(2)) : 0,
  }),
);
// Open sockets in the pool (and session timers, unref'd) must not hold the
// process: the figure is out.
process.exit(0);
