// docs/openapi.yaml against a real `leasehold serve` (LEASEHOLD_BINARY) on
// an ephemeral loopback port: a walk that reaches every operation in the
// document, with its successes and its refusals, checks each answer's
// status, content type and body against the document, and fails when an
// operation was not exercised, when a route the server serves is missing
// from the document, or when the served /v1/openapi.json is not the YAML.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { AnswerChecker, findOperation, loadDocument, normalizeTemplate, operations, routesMissingFromDocument } from "./openapi.mjs";
import { serverRoutes } from "./server_routes.mjs";
import { ServerProcess } from "../testing/server_process.mjs";

const binary = process.env.LEASEHOLD_BINARY;
assert.ok(binary && existsSync(binary), "set LEASEHOLD_BINARY to the leasehold binary");

const document = loadDocument();
const checker = new AnswerChecker(document);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the walk reached: operationId -> set of statuses answered.
const reached = new Map();
// "METHOD /template" of operations answered by a handler (not "no endpoint").
const served = new Set();

// A `leasehold serve` (tests/testing/server_process.mjs) whose answers are
// checked against the document.
class Server extends ServerProcess {
  constructor(config, options) { super(binary, config, "leasehold-contract-", options); }

  // One request, checked against the document. `expect` is the status the
  // walk means to provoke; `body` a value (sent as JSON) or a raw string.
  async call(method, target, { body, token, headers = {}, expect } = {}) {
    const pathname = target.split("?")[0];
    const op = findOperation(document, method, pathname);
    assert.ok(op, `${method} ${pathname} is not in the document`);
    const h = { ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    let payload;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h["Content-Type"] = "application/json";
    }
    const res = await fetch(this.url + target, { method, headers: h, body: payload });
    const text = await res.text();
    const answer = { status: res.status, text, headers: res.headers, json: null };
    try { answer.json = JSON.parse(text); } catch { /* not JSON */ }
    const problems = checker.check(op, res.status, res.headers.get("content-type"), text);
    assert.deepEqual(problems, [], `${method} ${target} -> ${res.status} ${text.slice(0, 300)}`);
    if (expect !== undefined) {
      assert.equal(res.status, expect, `${method} ${target}: ${text.slice(0, 300)}`);
    }
    if (!reached.has(op.operationId)) reached.set(op.operationId, new Set());
    reached.get(op.operationId).add(res.status);
    const noEndpoint = res.status === 404 && answer.json?.error?.message?.startsWith("no endpoint");
    if (!noEndpoint) served.add(`${op.method} ${normalizeTemplate(op.template)}`);
    return answer;
  }
}

const config = {
  max_body_bytes: 1024,
  http_body_limit: 65536,
  namespaces: { secure: { require_token: true }, dead: { outbox_max_attempts: 1 } },
};
const open = new Server(config);
const readToken = "docs-reader-token-0001";
const adminToken = "ops-admin-token-000001";
const secured = new Server({
  tokens: [
    { token: readToken, principal: "docs", namespaces: ["docs"], role: "read" },
    { token: adminToken, principal: "ops", namespaces: ["*"], role: "admin" },
  ],
});

// Time moved by POST /v1/testing/clock (docs/testing.md).
const manual = new Server(undefined, { manualClock: true });

const errorCode = (a) => a.json?.error?.code;

// Polls `probe` until it is true, for up to 5 s.
async function until(probe, what) {
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    if (await probe()) return;
    await sleep(20);
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function openSession(name) {
  const a = await open.call("POST", "/v1/sessions", { body: { name, ttl_ms: 60000 }, expect: 201 });
  return a.json.id;
}

describe("docs/openapi.yaml against a real server", () => {
  before(async () => {
    await open.start();
    await secured.start();
    await manual.start();
  });
  after(async () => {
    await open.stop();
    await secured.stop();
    await manual.stop();
  });

  test("sessions and transactions", async () => {
    const a = await openSession("Asha");
    await open.call("POST", "/v1/sessions", { body: { name: 5 }, expect: 400 });
    assert.equal(errorCode(await open.call("POST", "/v1/sessions", { body: '{"name":', expect: 400 })), "bad_json");
    assert.equal(errorCode(await open.call("POST", "/v1/sessions",
      { body: { name: "n".repeat(70000) }, expect: 413 })), "body_too_large");
    await open.call("POST", "/v1/sessions", { body: { deadlock_priority: 11 }, expect: 400 });
    await open.call("GET", "/v1/sessions", { expect: 200 });
    await open.call("POST", `/v1/sessions/${a}/keepalive`, { expect: 200 });
    assert.equal(errorCode(await open.call("POST", "/v1/sessions/999999/keepalive", { expect: 404 })),
      "session_not_found");
    assert.equal((await open.call("POST", `/v1/sessions/${a}/cancel`, { expect: 200 })).json.cancelled, false);
    await open.call("POST", "/v1/sessions/999999/cancel", { expect: 404 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    assert.equal(errorCode(await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 409 })),
      "transaction_open");
    await open.call("GET", "/v1/sessions", { expect: 200 }); // with a transaction object
    await open.call("POST", `/v1/sessions/${a}/transaction/rollback`, { expect: 200 });
    await open.call("POST", `/v1/sessions/${a}/transaction/rollback`, { expect: 400 });
    await open.call("POST", `/v1/sessions/${a}/transaction/commit`, { expect: 400 });
    await open.call("POST", "/v1/sessions/999999/transaction", { expect: 404 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    await open.call("POST", `/v1/sessions/${a}/transaction/commit`, { expect: 200 });
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 404 });
  });

  test("application locks: grants, refusals, mode, test and release", async () => {
    const a = await openSession("Asha");
    const b = await openSession("Ravi");
    const lock = (session, resource, extra = {}) => ({ session, resource, mode: "Exclusive", owner: "Session",
      timeout_ms: 0, ...extra });
    await open.call("POST", "/v1/applocks/app/acquire", { body: lock(a, "r1"), expect: 200 });
    const refused = await open.call("POST", "/v1/applocks/app/acquire", { body: lock(b, "r1"), expect: 409 });
    assert.equal(refused.json.result, -1);
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/acquire",
      { body: lock(a, "r1", { mode: "Mighty" }), expect: 400 })), "bad_mode");
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/acquire",
      { body: lock(a, "r1", { owner: "Transaction" }), expect: 400 })), "no_transaction");
    await open.call("POST", "/v1/applocks/app/acquire", { body: lock("999999", "r1"), expect: 404 });
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/acquire",
      { body: lock(a, "x".repeat(256)), expect: 400 })), "name_too_long");

    const all = await open.call("POST", "/v1/applocks/app/acquire-all", { expect: 200, body:
      { session: b, owner: "Session", timeout_ms: 0, locks: [{ resource: "y", mode: "Exclusive" },
        { resource: "x", mode: "Shared" }] } });
    assert.deepEqual(all.json.locks.map((l) => l.resource), ["x", "y"]);
    const allRefused = await open.call("POST", "/v1/applocks/app/acquire-all", { expect: 409, body:
      { session: b, owner: "Session", timeout_ms: 0, locks: [{ resource: "r1", mode: "Shared" },
        { resource: "z", mode: "Shared" }] } });
    assert.equal(allRefused.json.resource, "r1");
    await open.call("POST", "/v1/applocks/app/acquire-all", { expect: 400, body:
      { session: b, owner: "Session", locks: [{ resource: "q", mode: "Shared" }, { resource: "q", mode: "Shared" }] } });

    const mode = await open.call("GET", `/v1/applocks/app/mode?session=${a}&resource=r1&owner=Session`, { expect: 200 });
    assert.equal(mode.json.mode, "Exclusive");
    await open.call("GET", "/v1/applocks/app/mode?session=999999&resource=r1&owner=Session", { expect: 404 });
    const t = await open.call("GET", `/v1/applocks/app/test?session=${b}&resource=r1&mode=Shared&owner=Session`,
      { expect: 200 });
    assert.equal(t.json.grantable, false);
    await open.call("GET", `/v1/applocks/app/test?session=${b}&resource=r1&owner=Session`, { expect: 400 });
    await open.call("GET", "/v1/applocks/app", { expect: 200 });

    await open.call("POST", "/v1/applocks/app/release", { body: { session: a, resource: "r1", owner: "Session" },
      expect: 200 });
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/release",
      { body: { session: a, resource: "r1", owner: "Session" }, expect: 409 })), "not_held");
    await open.call("POST", "/v1/applocks/app/release", { body: { resource: "r1" }, expect: 400 });
  });

  test("application locks: a wait, its cancellation and a deadlock", async () => {
    const a = await openSession("Asha");
    const b = await openSession("Ravi");
    const lock = (session, resource, timeout_ms) => ({ session, resource, mode: "Exclusive", owner: "Session",
      timeout_ms });
    await open.call("POST", "/v1/applocks/app/acquire", { body: lock(a, "w1", 0), expect: 200 });
    const waiting = open.call("POST", "/v1/applocks/app/acquire", { body: lock(b, "w1", 30000) });
    await until(async () => (await open.call("GET", "/v1/applocks/app", { expect: 200 })).json.locks
      .some((l) => l.resource === "w1" && l.waiting.length === 1), "Ravi to wait");
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/acquire",
      { body: lock(b, "w2", 0), expect: 409 })), "wait_pending");
    assert.equal((await open.call("POST", `/v1/sessions/${b}/cancel`, { expect: 200 })).json.cancelled, true);
    assert.equal((await waiting).json.status, "cancelled");

    // A holds d1, B holds d2; A waits for d2, then B asks for d1.
    await open.call("POST", "/v1/applocks/app/acquire", { body: lock(a, "d1", 0), expect: 200 });
    await open.call("POST", "/v1/applocks/app/acquire", { body: lock(b, "d2", 0), expect: 200 });
    const first = open.call("POST", "/v1/applocks/app/acquire", { body: lock(a, "d2", 30000) });
    await until(async () => (await open.call("GET", "/v1/applocks/app", { expect: 200 })).json.locks
      .some((l) => l.resource === "d2" && l.waiting.length === 1), "Asha to wait");
    const second = open.call("POST", "/v1/applocks/app/acquire", { body: lock(b, "d1", 30000) });
    const [who, victim] = await Promise.race([first.then((r) => ["a", r]), second.then((r) => ["b", r])]);
    assert.equal(victim.json.status, "deadlock", victim.text);
    assert.ok(victim.json.deadlock.cycle.length >= 2);
    // The victim keeps what it held; released, the other is granted.
    const [session, held, other] = who === "a" ? [a, "d1", second] : [b, "d2", first];
    await open.call("POST", "/v1/applocks/app/release", { body: { session, resource: held, owner: "Session" },
      expect: 200 });
    assert.equal((await other).json.status, "granted_after_wait");
    const recent = await open.call("GET", "/v1/deadlocks", { expect: 200 });
    assert.ok(recent.json.deadlocks.length >= 1);
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
    await open.call("DELETE", `/v1/sessions/${b}`, { expect: 204 });
  });

  test("hold limits and breaks: one lock read, a limit passed, a break, the news in a keepalive", async () => {
    const a = await openSession("Asha");
    const b = await openSession("Ravi");
    const granted = await open.call("POST", "/v1/applocks/app/acquire", { expect: 200,
      body: { session: a, resource: "held", mode: "Exclusive", owner: "Session", max_hold_ms: 300 } });
    const one = await open.call("GET", "/v1/applocks/app/held", { expect: 200 });
    assert.equal(one.json.granted[0].fence, granted.json.fence);
    assert.notEqual(one.json.granted[0].hold_until, null);
    assert.equal(errorCode(await open.call("GET", "/v1/applocks/app/nothing", { expect: 404 })), "not_found");
    await open.call("POST", "/v1/applocks/app/acquire", { expect: 400,
      body: { session: a, resource: "x", mode: "Exclusive", max_hold_ms: "soon" } });
    await until(async () => (await open.call("POST", `/v1/sessions/${a}/keepalive`, { expect: 200 })).json.lost
      .some((l) => l.resource === "held" && l.reason === "expired"), "the hold limit to pass");

    await open.call("POST", "/v1/applocks/app/acquire", { expect: 200,
      body: { session: b, resource: "job", mode: "Shared", owner: "Session" } });
    const broken = await open.call("POST", "/v1/applocks/app/break", { expect: 200,
      body: { session: b, resource: "job" } });
    assert.deepEqual(broken.json.taken.map((t) => t.mode), ["Shared"]);
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/break",
      { body: { session: b, resource: "job" }, expect: 409 })), "not_held");
    await open.call("POST", "/v1/applocks/app/break", { body: { resource: "job" }, expect: 400 });
    await open.call("POST", "/v1/semaphores/app/lanes/acquire", { expect: 200,
      body: { session: b, owner: "Session", limit: 2, permits: 2 } });
    const permits = await open.call("POST", "/v1/semaphores/app/lanes/break", { expect: 200, body: { session: b } });
    assert.equal(permits.json.taken[0].permits, 2);
    assert.equal(errorCode(await open.call("POST", "/v1/semaphores/app/lanes/break",
      { body: { session: "999999" }, expect: 404 })), "session_not_found");
    const told = await open.call("POST", `/v1/sessions/${b}/keepalive`, { expect: 200 });
    assert.deepEqual(told.json.lost.map((l) => [l.kind, l.reason]), [["applock", "broken"], ["semaphore", "broken"]]);
    assert.deepEqual((await open.call("POST", `/v1/sessions/${b}/keepalive`, { expect: 200 })).json.lost, []);
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
    await open.call("DELETE", `/v1/sessions/${b}`, { expect: 204 });
  });

  test("semaphores: grants, a wait, a deadlock with a lock, refusals and release", async () => {
    const a = await openSession("Asha");
    const b = await openSession("Ravi");
    const take = (session, extra) => ({ session, owner: "Session", limit: 2, ...extra });
    const first = await open.call("POST", "/v1/semaphores/app/pay/acquire",
      { body: take(a, { permits: 2, timeout_ms: 0 }), expect: 200 });
    assert.equal(first.json.permits, 2);
    assert.equal((await open.call("POST", "/v1/semaphores/app/pay/acquire",
      { body: take(b, { timeout_ms: 0 }), expect: 409 })).json.status, "timeout");
    assert.equal(errorCode(await open.call("POST", "/v1/semaphores/app/pay/acquire",
      { body: take(b, { limit: 3 }), expect: 409 })), "limit_mismatch");
    assert.equal(errorCode(await open.call("POST", "/v1/semaphores/app/pay/acquire",
      { body: { session: b, owner: "Session" }, expect: 400 })), "bad_request");
    assert.equal(errorCode(await open.call("POST", "/v1/applocks/app/acquire",
      { body: { session: b, resource: "pay", mode: "Shared", owner: "Session", timeout_ms: 0 }, expect: 409 })),
      "wrong_kind");
    await open.call("POST", "/v1/semaphores/app/pay/acquire", { body: take("999999", {}), expect: 404 });

    // Ravi waits for a permit; Asha gives one back.
    const waiting = open.call("POST", "/v1/semaphores/app/pay/acquire", { body: take(b, { timeout_ms: 30000 }) });
    await until(async () => (await open.call("GET", "/v1/semaphores/app/pay", { expect: 200 })).json.waiting
      .length === 1, "Ravi to wait");
    assert.equal((await open.call("POST", "/v1/semaphores/app/pay/release",
      { body: { session: a, owner: "Session", permits: 1 }, expect: 200 })).json.permits, 1);
    assert.equal((await waiting).json.status, "granted_after_wait");
    const listed = await open.call("GET", "/v1/semaphores/app", { expect: 200 });
    assert.equal(listed.json.semaphores.find((s) => s.name === "pay").held, 2);

    // A deadlock across a lock and the semaphore: Ravi holds lock L and
    // waits for a permit Asha holds; Asha then waits for L.
    await open.call("POST", "/v1/applocks/app/acquire",
      { body: { session: b, resource: "L", mode: "Exclusive", owner: "Session", timeout_ms: 0 }, expect: 200 });
    await open.call("POST", "/v1/semaphores/app/pay/release", { body: { session: b, owner: "Session" }, expect: 200 });
    await open.call("POST", "/v1/semaphores/app/one/acquire", { body: { ...take(a, {}), limit: 1 }, expect: 200 });
    const ravi = open.call("POST", "/v1/semaphores/app/one/acquire",
      { body: { ...take(b, { timeout_ms: 30000 }), limit: 1 } });
    await until(async () => (await open.call("GET", "/v1/semaphores/app/one", { expect: 200 })).json.waiting
      .length === 1, "Ravi to wait for a permit");
    const asha = await open.call("POST", "/v1/applocks/app/acquire",
      { body: { session: a, resource: "L", mode: "Exclusive", owner: "Session", timeout_ms: 30000 }, expect: 409 });
    assert.equal(asha.json.status, "deadlock", asha.text);
    assert.ok(asha.json.deadlock.cycle.some((e) => e.permits === 1));
    await open.call("POST", "/v1/semaphores/app/one/release", { body: { session: a, owner: "Session" }, expect: 200 });
    assert.equal((await ravi).json.status, "granted_after_wait");

    assert.equal(errorCode(await open.call("POST", "/v1/semaphores/app/pay/release",
      { body: { session: b, owner: "Session" }, expect: 409 })), "not_held");
    await open.call("POST", "/v1/semaphores/app/pay/release", { body: { owner: "Session" }, expect: 400 });
    assert.equal(errorCode(await open.call("GET", "/v1/semaphores/app/nothing", { expect: 404 })), "not_found");
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
    await open.call("DELETE", `/v1/sessions/${b}`, { expect: 204 });
  });

  test("records and checkouts", async () => {
    await open.call("PUT", "/v1/records/docs/k1", { body: { body: "first" }, expect: 201 });
    assert.equal(errorCode(await open.call("PUT", "/v1/records/docs/k1", { body: { body: "again" }, expect: 409 })),
      "exists");
    await open.call("PUT", "/v1/records/docs/big", { body: { body: "b".repeat(1025) }, expect: 413 });
    await open.call("PUT", "/v1/records/docs/k1", { body: "null", expect: 400 });
    await open.call("GET", "/v1/records/docs/k1", { expect: 200 });
    assert.equal(errorCode(await open.call("GET", "/v1/records/docs/none", { expect: 404 })), "not_found");
    await open.call("GET", "/v1/records/docs/%zz", { expect: 400 });

    const granted = await open.call("POST", "/v1/records/docs/k1/checkout", { body: { owner: "Asha", ttl_ms: 60000 },
      expect: 200 });
    assert.equal(granted.json.renewed, false);
    await open.call("POST", "/v1/records/docs/k1/checkout", { body: { owner: "Ravi" }, expect: 423 });
    await open.call("POST", "/v1/records/docs/k1/checkout", { body: { ttl_ms: 1000 }, expect: 400 });
    await open.call("GET", "/v1/records/docs?state=locked&limit=10", { expect: 200 });
    await open.call("GET", "/v1/records/docs?prefix=k&after=a", { expect: 200 });
    await open.call("GET", "/v1/records/docs?limit=0", { expect: 400 });

    await open.call("POST", "/v1/records/docs/k1/save", { body: { owner: "Ravi", body: "mine" }, expect: 423 });
    await open.call("POST", "/v1/records/docs/k1/save", { body: { owner: "Asha", body: "v", if_version: 7 },
      expect: 412 });
    await open.call("POST", "/v1/records/docs/k1/save", { body: { owner: "Asha" }, expect: 400 });
    await open.call("POST", "/v1/records/docs/k1/save", { body: { owner: "Asha", body: "b".repeat(1025) },
      expect: 413 });
    await open.call("POST", "/v1/records/docs/k1/save", { body: { token: granted.json.token, body: "second" },
      expect: 200 });
    await open.call("POST", "/v1/records/docs/k1/checkin", { body: { owner: "Ravi" }, expect: 423 });
    await open.call("POST", "/v1/records/docs/k1/checkin", { body: { owner: "Asha", token: 5 }, expect: 400 });
    await open.call("POST", "/v1/records/docs/k1/checkin", { body: { owner: "Asha" }, expect: 200 });
    await open.call("DELETE", "/v1/records/docs/k1", { body: { owner: "Asha" }, expect: 423 });
    await open.call("POST", "/v1/records/docs/k1/checkout", { body: { owner: "Asha" }, expect: 200 });
    await open.call("DELETE", "/v1/records/docs/k1", { body: { owner: "Asha" }, expect: 200 });
    await open.call("DELETE", "/v1/records/docs/k1", { body: { owner: "Asha" }, expect: 404 });

    // A lease-only key, broken by the administrator; then purged leases.
    await open.call("POST", "/v1/records/docs/lease/checkout", { body: { owner: "Asha" }, expect: 200 });
    await open.call("GET", "/v1/records/docs/lease", { expect: 200 });
    await open.call("POST", "/v1/records/docs/lease/save", { body: { owner: "Asha", body: "b" }, expect: 404 });
    await open.call("DELETE", "/v1/records/docs/lease", { body: { owner: "Asha" }, expect: 404 });
    assert.equal((await open.call("POST", "/v1/records/docs/lease/break", { expect: 200 })).json.broken, true);
    await open.call("POST", "/v1/records/docs/never/break", { expect: 404 });
    await open.call("POST", "/v1/records/docs/short/checkout", { body: { owner: "Asha", ttl_ms: 1 }, expect: 200 });
    await sleep(20);
    await open.call("POST", "/v1/records/docs/purge", { body: { older_than_ms: 0 }, expect: 200 });
    await open.call("POST", "/v1/records/docs/purge", { body: { older_than_ms: "1h" }, expect: 400 });

    // A namespace that needs the token as proof.
    await open.call("POST", "/v1/records/secure/s1/checkout", { body: { owner: "Asha" }, expect: 200 });
    const refused = await open.call("POST", "/v1/records/secure/s1/checkin", { body: { owner: "Asha" }, expect: 423 });
    assert.equal(refused.json.reason, "token_required");
  });

  test("fenced writes: a stale fence refused, a tombstone, bad fences", async () => {
    const holderFence = async () => {
      const s = await openSession("holder");
      const g = await open.call("POST", "/v1/applocks/app/acquire",
        { body: { session: s, resource: "fenced-job", mode: "Exclusive", owner: "Session", timeout_ms: 0 },
          expect: 200 });
      await open.call("DELETE", `/v1/sessions/${s}`, { expect: 204 });
      return g.json.fence;
    };
    const older = await holderFence();
    const newer = await holderFence();
    await open.call("PUT", "/v1/records/docs/fenced", { body: { body: "v1", fence: older }, expect: 201 });
    await open.call("POST", "/v1/records/docs/fenced/save", { body: { body: "v2", fence: newer }, expect: 200 });
    const stale = await open.call("POST", "/v1/records/docs/fenced/save",
      { body: { body: "stale", fence: older }, expect: 409 });
    assert.equal(errorCode(stale), "stale_fence");
    assert.match(stale.json.error.message, new RegExp(`fence ${older}\\b.*fence ${newer}\\b`));
    assert.equal((await open.call("GET", "/v1/records/docs/fenced", { expect: 200 })).json.write_fence, newer);
    await open.call("POST", "/v1/records/docs/fenced/save", { body: { body: "x", fence: 0 }, expect: 400 });
    await open.call("POST", "/v1/records/docs/fenced/save", { body: { body: "x", fence: "7" }, expect: 400 });
    await open.call("POST", "/v1/records/docs/fenced/save",
      { body: { body: "x", fence: newer + 1e9 }, expect: 400 });
    await open.call("DELETE", "/v1/records/docs/fenced", { body: { fence: newer }, expect: 200 });
    const tomb = await open.call("GET", "/v1/records/docs/fenced", { expect: 200 });
    assert.equal(tomb.json.has_record, false);
    assert.equal(tomb.json.write_fence, newer);
    assert.equal(errorCode(await open.call("PUT", "/v1/records/docs/fenced",
      { body: { body: "back", fence: older }, expect: 409 })), "stale_fence");
    await open.call("PUT", "/v1/records/docs/fenced", { body: { body: "anew", fence: newer }, expect: 201 });
    // A fence alone may not pass someone's checkout.
    await open.call("POST", "/v1/records/docs/fenced/checkout", { body: { owner: "Asha" }, expect: 200 });
    assert.equal((await open.call("POST", "/v1/records/docs/fenced/save",
      { body: { body: "x", fence: newer }, expect: 423 })).json.reason, "not_owner");
  });

  test("staged writes, commit and an aborted commit", async () => {
    const a = await openSession("Asha");
    await open.call("PUT", "/v1/records/docs/t1", { body: { body: "one" }, expect: 201 });
    await open.call("POST", "/v1/records/docs/t1/checkout", { body: { owner: "Asha", ttl_ms: 60000 }, expect: 200 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    await open.call("PUT", "/v1/records/docs/t2", { body: { body: "two", session: a }, expect: 202 });
    await open.call("POST", "/v1/records/docs/t1/save", { body: { owner: "Asha", body: "one'", session: a },
      expect: 202 });
    await open.call("POST", "/v1/records/docs/t1/save", { body: { owner: "Ravi", body: "x", session: a },
      expect: 423 });
    await open.call("DELETE", "/v1/records/docs/t1", { body: { owner: "Ravi", session: a }, expect: 423 });
    await open.call("DELETE", "/v1/records/docs/t1", { body: { owner: "Asha", session: a }, expect: 202 });
    const committed = await open.call("POST", `/v1/sessions/${a}/transaction/commit`, { expect: 200 });
    assert.deepEqual(committed.json.applied.map((w) => w.op), ["insert", "save", "delete"]);

    // A staged save whose lease is broken before the commit: nothing applies.
    await open.call("PUT", "/v1/records/docs/t3", { body: { body: "three" }, expect: 201 });
    await open.call("POST", "/v1/records/docs/t3/checkout", { body: { owner: "Asha" }, expect: 200 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    await open.call("POST", "/v1/records/docs/t3/save", { body: { owner: "Asha", body: "x", session: a },
      expect: 202 });
    await open.call("POST", "/v1/records/docs/t3/break", { expect: 200 });
    assert.equal(errorCode(await open.call("POST", `/v1/sessions/${a}/transaction/commit`, { expect: 409 })),
      "transaction_aborted");
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
  });

  test("idempotent operations and the outbox", async () => {
    const a = await openSession("Asha");
    assert.equal(errorCode(await open.call("POST", "/v1/operations/docs/op1/begin", { body: { session: a },
      expect: 400 })), "no_transaction");
    await open.call("POST", "/v1/operations/docs/op1/begin", { body: {}, expect: 400 });
    await open.call("POST", "/v1/operations/docs/op1/begin", { body: { session: "999999" }, expect: 404 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    assert.equal((await open.call("POST", "/v1/operations/docs/op1/begin", { body: { session: a },
      expect: 200 })).json.state, "new");
    await open.call("POST", "/v1/operations/docs/op1/complete", { body: { session: a }, expect: 400 });
    await open.call("POST", "/v1/operations/docs/op1/complete", { body: { session: a, outcome: { invoice: 7 } },
      expect: 200 });
    await open.call("POST", "/v1/outbox/docs/mail", { body: { session: a, key: "m0", payload: { to: "x" } },
      expect: 201 });
    await open.call("POST", `/v1/sessions/${a}/transaction/commit`, { expect: 200 });
    await open.call("POST", `/v1/sessions/${a}/transaction`, { expect: 201 });
    const done = await open.call("POST", "/v1/operations/docs/op1/begin", { body: { session: a }, expect: 200 });
    assert.deepEqual(done.json.outcome, { invoice: 7 });
    assert.equal(errorCode(await open.call("POST", "/v1/operations/docs/op1/complete",
      { body: { session: a, outcome: 1 }, expect: 409 })), "exists");
    await open.call("POST", `/v1/sessions/${a}/transaction/rollback`, { expect: 200 });

    await open.call("POST", "/v1/outbox/docs/mail", { body: { key: "m1", payload: [1, 2] }, expect: 201 });
    assert.equal((await open.call("POST", "/v1/outbox/docs/mail", { body: { key: "m1", payload: [1, 2] },
      expect: 200 })).json.duplicate, true);
    await open.call("POST", "/v1/outbox/docs/mail", { body: { key: "m2" }, expect: 400 });
    const claim = await open.call("POST", "/v1/outbox/docs/mail/claim", { body: { consumer: "c1", max: 10 },
      expect: 200 });
    assert.equal(claim.json.messages.length, 2);
    await open.call("POST", "/v1/outbox/docs/mail/claim", { body: { consumer: "c1", max: 0 }, expect: 400 });
    const [m] = claim.json.messages;
    await open.call("POST", "/v1/outbox/docs/mail/ack", { body: { id: m.id, claim_token: "not-it" }, expect: 423 });
    await open.call("POST", "/v1/outbox/docs/mail/ack", { body: { id: m.id, claim_token: m.claim_token },
      expect: 200 });
    assert.equal((await open.call("POST", "/v1/outbox/docs/mail/ack", { body: { id: String(m.id),
      claim_token: m.claim_token }, expect: 200 })).json.already, true);
    await open.call("POST", "/v1/outbox/docs/mail/ack", { body: { id: 999999, claim_token: "t" }, expect: 404 });
    await open.call("POST", "/v1/outbox/docs/mail/ack", { body: { claim_token: "t" }, expect: 400 });
    await open.call("GET", "/v1/outbox/docs/mail", { expect: 200 });

    // One attempt allowed in "dead": a claim that expires makes a dead letter.
    await open.call("POST", "/v1/outbox/dead/jobs", { body: { key: "j1", payload: "p" }, expect: 201 });
    await open.call("POST", "/v1/outbox/dead/jobs/claim", { body: { consumer: "c1", lease_ms: 1 }, expect: 200 });
    await sleep(20);
    await open.call("POST", "/v1/outbox/dead/jobs/claim", { body: { consumer: "c1" }, expect: 200 });
    const summary = await open.call("GET", "/v1/outbox/dead/jobs", { expect: 200 });
    assert.equal(summary.json.dead_letters.length, 1, summary.text);
    await open.call("DELETE", `/v1/sessions/${a}`, { expect: 204 });
  });

  test("events, metrics, health, the dashboard and this document", async () => {
    const events = new AbortController();
    const res = await fetch(`${open.url}/v1/events?ns=docs`, { signal: events.signal });
    const op = findOperation(document, "GET", "/v1/events");
    assert.deepEqual(checker.check(op, res.status, res.headers.get("content-type"), ""), []);
    reached.set(op.operationId, new Set([res.status]));
    served.add(`GET ${op.template}`);
    const reader = res.body.getReader();
    await open.call("POST", "/v1/records/docs/ev/checkout", { body: { owner: "Asha" }, expect: 200 });
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes("checkout.granted")) text += decoder.decode((await reader.read()).value);
    events.abort();
    assert.ok(text.startsWith("retry: 2000"), text);
    const pointer = "#/paths/~1v1~1events/get/responses/200/content/text~1event-stream/x-event-data";
    const data = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    assert.ok(data.length >= 1);
    for (const d of data) assert.deepEqual(checker.checkValue(pointer, d), []);
    assert.ok(checker.checkValue(pointer, { type: "x" }).length > 0, "an event without `at` is refused");

    const metrics = await open.call("GET", "/metrics", { expect: 200 });
    assert.match(metrics.text, /^# (HELP|TYPE) /m);
    await open.call("GET", "/healthz", { expect: 200 });
    const cluster = await open.call("GET", "/v1/cluster", { expect: 200 });
    assert.equal(cluster.json.role, "leader", "a node of its own leads itself");
    await open.call("GET", "/v1/whoami", { expect: 200 });
    await open.call("GET", "/v1/namespaces", { expect: 200 });
    await open.call("GET", "/v1/stats", { expect: 200 });
    await open.call("GET", "/v1/deadlocks", { expect: 200 });
    assert.equal((await open.call("POST", "/v1/admin/reload", { expect: 200 })).json.reloaded, true);
    assert.equal(errorCode(await manual.call("POST", "/v1/admin/reload", { expect: 400 })), "bad_request");
    for (const asset of ["/", "/assets/app.js", "/assets/app.css"]) {
      const page = await open.call("GET", asset, { expect: 200 });
      await open.call("GET", asset, { headers: { "If-None-Match": page.headers.get("etag") }, expect: 304 });
    }
    const served_ = await open.call("GET", "/v1/openapi.json", { expect: 200 });
    assert.deepEqual(served_.json, document, "the served document is docs/openapi.yaml");
  });

  test("with tokens: 401 without one, 403 outside its grants", async () => {
    const s = secured;
    assert.equal(errorCode(await s.call("GET", "/v1/sessions", { expect: 401 })), "unauthorized");
    await s.call("GET", "/v1/sessions", { token: "wrong-token-but-long", expect: 401 });
    await s.call("GET", "/metrics", { expect: 401 });
    await s.call("GET", "/v1/whoami", { expect: 401 });
    await s.call("GET", "/healthz", { expect: 200 });
    await s.call("GET", "/v1/openapi.json", { expect: 200 });
    await s.call("GET", "/", { expect: 200 });
    assert.equal(errorCode(await s.call("POST", "/v1/sessions", { token: readToken, expect: 403 })), "forbidden");
    await s.call("GET", "/v1/records/other", { token: readToken, expect: 403 });
    await s.call("POST", "/v1/records/docs/k/break", { token: readToken, expect: 403 });
    const mine = await s.call("POST", "/v1/sessions", { token: adminToken, body: { name: "ops" }, expect: 201 });
    assert.equal(mine.json.opened_by, "ops");
    const who = await s.call("GET", "/v1/whoami", { token: readToken, expect: 200 });
    assert.equal(who.json.principal, "docs");
    await s.call("GET", "/v1/records/docs", { token: readToken, expect: 200 });
    await s.call("POST", "/v1/admin/reload", { expect: 401 });
    assert.equal(errorCode(await s.call("POST", "/v1/admin/reload", { token: readToken, expect: 403 })), "forbidden");
    assert.equal((await s.call("POST", "/v1/admin/reload", { token: adminToken, expect: 200 })).json.reloaded, true);
    await s.call("GET", "/v1/whoami", { token: readToken, expect: 200 });
    const events = await fetch(`${s.url}/v1/events`);
    const op = findOperation(document, "GET", "/v1/events");
    assert.equal(events.status, 401);
    assert.deepEqual(checker.check(op, events.status, events.headers.get("content-type"), await events.text()), []);
    reached.get(op.operationId).add(401);
  });

  test("a backup: the admin's, a SQLite file; not_supported on the memory store", async () => {
    const backup = await open.call("GET", "/v1/admin/backup", { expect: 200 });
    assert.ok(backup.text.startsWith("SQLite format 3"), "the body is a SQLite database");
    await secured.call("GET", "/v1/admin/backup", { expect: 401 });
    assert.equal(errorCode(await secured.call("GET", "/v1/admin/backup", { token: readToken, expect: 403 })),
      "forbidden");
    await secured.call("GET", "/v1/admin/backup", { token: adminToken, expect: 200 });
    assert.equal(errorCode(await manual.call("GET", "/v1/admin/backup", { expect: 501 })), "not_supported");
  });

  test("the manual clock: only with --clock manual, moved by POST", async () => {
    assert.equal(errorCode(await open.call("GET", "/v1/testing/clock", { expect: 404 })), "not_found");
    await open.call("POST", "/v1/testing/clock", { body: { advance_ms: 1000 }, expect: 404 });
    const before = (await manual.call("GET", "/v1/testing/clock", { expect: 200 })).json.now;
    const idle = await manual.call("POST", "/v1/sessions", { body: { name: "idle", ttl_ms: 30000 }, expect: 201 });
    const after = (await manual.call("POST", "/v1/testing/clock",
      { body: { advance_ms: 600000 }, expect: 200 })).json.now;
    assert.equal(Date.parse(after) - Date.parse(before), 600000);
    await manual.call("POST", `/v1/sessions/${idle.json.id}/keepalive`, { expect: 404 });
    for (const body of [{}, { advance_ms: -1 }, { advance_ms: 1.5 }, { advance_ms: "5" }]) {
      assert.equal(errorCode(await manual.call("POST", "/v1/testing/clock", { body, expect: 400 })), "bad_request");
    }
  });

  test("every operation in the document was exercised", () => {
    const missed = operations(document).map((o) => o.operationId).filter((id) => !reached.has(id));
    assert.deepEqual(missed, []);
    const statuses = new Set([...reached.values()].flatMap((s) => [...s]));
    for (const status of [200, 201, 202, 204, 304, 400, 401, 403, 404, 409, 412, 413, 423]) {
      assert.ok(statuses.has(status), `no answer with status ${status} was checked`);
    }
  });

  test("every route the server serves is in the document and was served", () => {
    assert.deepEqual(routesMissingFromDocument(serverRoutes, document), []);
    const notServed = serverRoutes.map(([m, t]) => `${m} ${normalizeTemplate(t)}`).filter((r) => !served.has(r));
    assert.deepEqual(notServed, []);
  });
});
