import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, LockTimeoutError, UnreachableError } from "../src/index.js";
import { aborted, eventually, TestServer } from "./helpers.js";

test("kill -9 and restart: the session keeps its lock and stays alive", async (t) => {
  const server = await TestServer.start();
  t.after(() => server.stop());
  const client = new Client({ url: server.url, ioTimeoutMs: 10_000 });
  await using s = await client.session("survivor", { ttlMs: 3_000 });
  const lk = await s.lock("app", "held-across", { timeoutMs: 1_000 });
  await server.restart();
  await sleep(4_000); // past the ttl: only keepalives after the restart keep it
  assert.equal(s.lost, false);
  assert.equal(lk.held, true);
  const listed = (await client.locks("app")).find((l) => l.resource === "held-across");
  assert.equal(listed.granted[0].session, s.id);
  assert.equal(listed.granted[0].fence, lk.fence);
  await using other = await client.session("other");
  await assert.rejects(other.lock("app", "held-across", { timeoutMs: 0 }), LockTimeoutError);
  await lk.release();
});

test("a lock wait rides through a restart and is granted once", async (t) => {
  const server = await TestServer.start();
  t.after(() => server.stop());
  const client = new Client({ url: server.url, ioTimeoutMs: 10_000 });
  await using holder = await client.session("holder", { ttlMs: 10_000 });
  await using waiter = await client.session("waiter", { ttlMs: 10_000 });
  const held = await holder.lock("app", "ride");
  const waiting = waiter.lock("app", "ride", { timeoutMs: 20_000 });
  await eventually(async () => (await client.locks("app")).some((l) => l.resource === "ride" && l.waiting.length > 0));
  await server.kill();
  await sleep(300);
  await server.launch();
  await eventually(
    async () => (await client.locks("app")).some((l) => l.resource === "ride" && l.waiting.length > 0),
    10_000,
    "the waiter to ask again",
  );
  await held.release();
  const got = await waiting;
  assert.equal(got.waited, true);
  const listed = (await client.locks("app")).find((l) => l.resource === "ride");
  assert.equal(listed.granted.length, 1);
  assert.equal(listed.granted[0].session, waiter.id);
  assert.equal(listed.granted[0].count, 1, "never taken twice");
  assert.equal(listed.granted[0].fence, got.fence);
});

test("a grant that reached the disk before the break is adopted, not taken twice", async (t) => {
  // wait_grant.durable: the server dies after the grant is on disk, before its answer.
  const server = await TestServer.start();
  t.after(() => server.stop());
  const client = new Client({ url: server.url, ioTimeoutMs: 10_000 });
  await using holder = await client.session("holder", { ttlMs: 10_000 });
  await using waiter = await client.session("waiter", { ttlMs: 10_000 });
  const held = await holder.lock("app", "adopt");
  const waiting = waiter.lock("app", "adopt", { timeoutMs: 20_000 });
  await eventually(async () => (await client.locks("app")).some((l) => l.resource === "adopt" && l.waiting.length > 0));
  // Restart under the fault point, then let the holder go: the grant is journaled, the answer is lost.
  await server.kill();
  process.env.LEASEHOLD_FAULT = "wait_grant.durable";
  try {
    await server.launch();
  } finally {
    delete process.env.LEASEHOLD_FAULT;
  }
  // The waiter asks again once the server answers; wait for it to queue, then release.
  await eventually(
    async () => {
      const r = await server.api("GET", "/v1/applocks/app").catch(() => undefined);
      return r?.body?.locks?.some((l) => l.resource === "adopt" && l.waiting.length > 0);
    },
    15_000,
    "the waiter to queue again",
  );
  // The release's commit grants the waiter: the server dies before answering either.
  await server
    .api("POST", "/v1/applocks/app/release", { session: holder.id, resource: "adopt", owner: "Session" })
    .catch(() => undefined);
  await eventually(
    async () => server.proc.exitCode !== null || server.proc.signalCode !== null,
    10_000,
    "the fault to fire",
  );
  await server.launch();
  const got = await waiting;
  assert.equal(got.waited, true);
  const listed = (await client.locks("app")).find((l) => l.resource === "adopt");
  assert.equal(listed.granted[0].session, waiter.id);
  assert.equal(listed.granted[0].count, 1, "adopted, not taken twice");
  assert.equal(got.fence, listed.granted[0].fence);
  void held;
});

test("a wait re-acquiring a lock the session holds is not asked again after a break", async (t) => {
  const server = await TestServer.start();
  t.after(() => server.stop());
  const client = new Client({ url: server.url, ioTimeoutMs: 5_000 });
  await using a = await client.session("a", { ttlMs: 10_000 });
  await using b = await client.session("b", { ttlMs: 10_000 });
  await a.lock("app", "conv", { mode: "Shared" });
  await b.lock("app", "conv", { mode: "Shared" });
  const converting = assert.rejects(a.lock("app", "conv", { mode: "Exclusive", timeoutMs: 20_000 }), UnreachableError);
  await eventually(async () => (await client.locks("app")).some((l) => l.resource === "conv" && l.waiting.length > 0));
  await server.restart();
  await converting;
});

test("memory namespace: a restart fires the session's locksLost signal once", async (t) => {
  const server = await TestServer.start({ config: { namespaces: { mem: { locks: "memory" } } } });
  t.after(() => server.stop());
  const client = new Client({ url: server.url, ioTimeoutMs: 5_000 });
  await using s = await client.session("mem-user", { ttlMs: 1_500 });
  await s.lock("mem", "volatile");
  let calls = 0;
  s.onLocksLost(() => calls++);
  await server.restart();
  // Session timers are unref'd: keep the test's process alive while it waits.
  await Promise.race([aborted(s.locksLost), sleep(10_000)]);
  assert.equal(s.locksLost.aborted, true);
  assert.equal(s.lost, false);
  await sleep(1_200);
  assert.equal(calls, 1);
});
