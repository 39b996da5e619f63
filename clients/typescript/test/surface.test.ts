import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DeadlockError,
  LeaseholdError,
  LockedError,
  LockTimeoutError,
  NotFoundError,
  SessionLostError,
  StaleFenceError,
} from "../src/index.js";
import { aborted, eventually, serverAndClient } from "./helpers.js";

const fx = serverAndClient();

test("a session's lock: fence, mode, release", async () => {
  await using s = await fx.client.session("worker", { ttlMs: 10_000 });
  assert.match(s.id, /^\d+$/);
  const lk = await s.lock("app", "invoice:481", { mode: "Exclusive", timeoutMs: 5_000 });
  assert.equal(typeof lk.fence, "number");
  assert.equal(lk.mode, "Exclusive");
  assert.equal(lk.waited, false);
  assert.equal(lk.held, true);
  const listed = (await fx.client.locks("app")).find((l) => l.resource === "invoice:481");
  assert.equal(listed.granted[0].session, s.id);
  await lk.release();
  assert.equal(lk.held, false);
  assert.equal(lk.signal.aborted, false, "a release is not a loss");
  assert.equal(
    (await fx.client.locks("app")).find((l) => l.resource === "invoice:481"),
    undefined,
  );
});

test("a waiting lock is granted after the holder releases (waited = true)", async () => {
  await using a = await fx.client.session("a");
  await using b = await fx.client.session("b");
  const held = await a.lock("app", "wait-me");
  const waiting = b.lock("app", "wait-me", { timeoutMs: 5_000 });
  await eventually(async () =>
    (await fx.client.locks("app")).some((l) => l.resource === "wait-me" && l.waiting.length > 0),
  );
  await held.release();
  const got = await waiting;
  assert.equal(got.waited, true);
  assert.ok(got.fence > held.fence);
});

test("semaphore slots share a limit", async () => {
  await using a = await fx.client.session("a");
  await using b = await fx.client.session("b");
  const one = await a.semaphore("app", "provider", { limit: 2, permits: 1, timeoutMs: 1_000 });
  const two = await b.semaphore("app", "provider", { limit: 2, permits: 1, timeoutMs: 1_000 });
  assert.equal(one.permits, 1);
  assert.ok(two.fence > one.fence);
  await assert.rejects(a.semaphore("app", "provider", { limit: 2, timeoutMs: 100 }), LockTimeoutError);
  await assert.rejects(
    b.semaphore("app", "provider", { limit: 3, timeoutMs: 0 }),
    (e: any) => e.code === "limit_mismatch",
  );
  await one.release();
  await two.release();
  assert.equal(await fx.client.semaphore("app", "provider"), undefined);
});

test("a lock not granted within its timeout is LockTimeoutError", async () => {
  await using a = await fx.client.session("a");
  await using b = await fx.client.session("b");
  await a.lock("app", "busy");
  const started = Date.now();
  await assert.rejects(
    b.lock("app", "busy", { timeoutMs: 200 }),
    (e: any) => e instanceof LockTimeoutError && e.code === "timeout",
  );
  assert.ok(Date.now() - started >= 150);
});

test("a deadlock victim gets DeadlockError with the cycle", async () => {
  await using a = await fx.client.session("a");
  await using b = await fx.client.session("b");
  await a.lock("app", "A");
  await b.lock("app", "B");
  const settle = (p: Promise<unknown>) =>
    p.then(
      (v) => v,
      (e) => e,
    );
  const aWaits = settle(a.lock("app", "B", { timeoutMs: 5_000 }));
  await eventually(async () => (await fx.client.locks("app")).some((l) => l.resource === "B" && l.waiting.length > 0));
  const bWaits = settle(b.lock("app", "A", { timeoutMs: 5_000 }));
  const error = await Promise.race([aWaits, bWaits]);
  assert.ok(error instanceof DeadlockError, `${error}`);
  assert.ok(error.victim === a.id || error.victim === b.id);
  assert.ok(error.cycle.length >= 2);
  assert.deepEqual(new Set(error.cycle.map((e) => e.waiter)), new Set([a.id, b.id]));
  // Once the victim lets go, the other is granted.
  const [victim, survivor] = error.victim === a.id ? [a, bWaits] : [b, aWaits];
  await victim.end();
  assert.equal((await survivor).waited, true);
});

test("a checkout held by another is LockedError; save and get", async () => {
  await fx.client.put("docs", "17", "first draft");
  await using doc = await fx.client.checkout("docs", "17", { owner: "Asha", ttlMs: 240_000 });
  assert.equal(typeof doc.token, "string");
  assert.ok(doc.fence > 0);
  await assert.rejects(
    fx.client.checkout("docs", "17", { owner: "Ben" }),
    (e: any) => e instanceof LockedError && e.lockedBy === "Asha",
  );
  const saved = await doc.save("text");
  assert.equal(saved.version, 2);
  const record = await fx.client.get("docs", "17");
  assert.equal(record.body, "text");
  assert.equal(record.locked_by, "Asha");
  assert.equal(record.state, "locked");
  await doc.checkin();
  assert.equal((await fx.client.get("docs", "17")).state, "free");
  await assert.rejects(fx.client.get("docs", "nope"), NotFoundError);
});

test("a fenced write with an older fence is StaleFenceError", async () => {
  await using a = await fx.client.session("a");
  const first = await a.lock("billing", "invoice:1");
  await fx.client.put("billing", "1", "draft", { fence: first.fence });
  await first.release();
  const second = await a.lock("billing", "invoice:1");
  await fx.client.save("billing", "1", "paid", { fence: second.fence });
  await assert.rejects(
    fx.client.save("billing", "1", "late", { fence: first.fence }),
    (e: any) => e instanceof StaleFenceError && e.status === 409,
  );
  await assert.rejects(
    fx.client.put("billing", "1", "again"),
    (e: any) => e instanceof LeaseholdError && e.code === "exists",
  );
});

test("a session ended by an administrator is lost: its signal and its locks' signals abort once", async () => {
  const s = await fx.client.session("victim", { ttlMs: 1_500 });
  const lk = await s.lock("app", "admin-ends-me");
  let calls = 0;
  s.onLost(() => calls++);
  const done = await fx.server.api("DELETE", `/v1/sessions/${s.id}`);
  assert.equal(done.status, 204);
  const reason = await aborted(s.signal);
  assert.ok(reason instanceof SessionLostError);
  assert.ok(lk.signal.aborted);
  assert.equal(lk.held, false);
  assert.equal(calls, 1);
  await assert.rejects(s.lock("app", "x"), SessionLostError);
  await s.end();
});

test("withLock releases on throw and never runs the body when the acquire fails", async () => {
  await assert.rejects(
    fx.client.withLock("app", "nightly", async (signal) => {
      assert.equal(signal.aborted, false);
      assert.equal((await fx.client.locks("app")).find((l) => l.resource === "nightly").granted.length, 1);
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(
    (await fx.client.locks("app")).find((l) => l.resource === "nightly"),
    undefined,
  );
  await using holder = await fx.client.session("holder");
  await holder.lock("app", "nightly");
  let ran = false;
  await assert.rejects(
    fx.client.withLock(
      "app",
      "nightly",
      () => {
        ran = true;
      },
      { timeoutMs: 100 },
    ),
    LockTimeoutError,
  );
  assert.equal(ran, false);
  assert.equal(await fx.client.withLock("app", "other", () => 42, { ttlMs: 10_000, timeoutMs: 5_000 }), 42);
});

test("watch streams the namespace's events", async () => {
  const controller = new AbortController();
  const seen = [];
  const reading = (async () => {
    for await (const event of fx.client.watch("watched", { signal: controller.signal })) {
      seen.push(event);
      if (event.type === "applock.released") controller.abort();
    }
  })();
  await using s = await fx.client.session("watcher");
  // The stream subscribes after the call starts: take locks until one is seen.
  await eventually(async () => {
    const lk = await s.lock("watched", `r${Date.now()}`);
    await lk.release();
    return seen.some((e: any) => e.type === "applock.released");
  });
  await reading;
  const granted = seen.find((e: any) => e.type === "applock.granted");
  assert.equal(granted.data.ns, "watched");
  assert.equal(granted.data.session, s.id);
});
