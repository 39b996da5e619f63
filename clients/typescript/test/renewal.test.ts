import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { LockedError, LostError } from "../src/index.js";
import { aborted, serverAndClient } from "./helpers.js";

const fx = serverAndClient();

test("a session and its lock live past the ttl through keepalives", async () => {
  await using s = await fx.client.session("kept", { ttlMs: 1_200 });
  const lk = await s.lock("app", "kept-lock");
  await sleep(3_000);
  assert.equal(s.lost, false);
  assert.equal(lk.held, true);
  const listed = (await fx.client.locks("app")).find((l) => l.resource === "kept-lock");
  assert.equal(listed.granted[0].session, s.id);
});

test("a checkout lives past its ttl through renewals", async () => {
  await fx.client.put("docs", "renewed", "v1");
  await using doc = await fx.client.checkout("docs", "renewed", { owner: "Asha", ttlMs: 1_200 });
  const firstExpiry = doc.expiresAt;
  await sleep(3_000);
  assert.equal(doc.held, true);
  assert.notEqual(doc.expiresAt, firstExpiry);
  const saved = await doc.save("v2");
  assert.equal(saved.version, 2);
  await assert.rejects(fx.client.checkout("docs", "renewed", { owner: "Ben" }), LockedError);
});

test("a checkout broken by an administrator is lost at its next renewal; save throws LostError", async () => {
  await fx.client.put("docs", "broken", "v1");
  const doc = await fx.client.checkout("docs", "broken", { owner: "Asha", ttlMs: 1_500 });
  const broke = await fx.server.api("POST", "/v1/records/docs/broken/break");
  assert.equal(broke.body.broken, true);
  const reason = await aborted(doc.signal);
  assert.ok(reason instanceof LostError);
  assert.equal(doc.held, false);
  await assert.rejects(doc.save("late"), LostError);
  // The accidental new lease was checked in: someone else may take the key.
  const other = await fx.client.checkout("docs", "broken", { owner: "Ben", ttlMs: 5_000 });
  await other.checkin();
});

test("a checkout taken over by someone else is lost at its next renewal", async () => {
  const doc = await fx.client.checkout("docs", "taken", { owner: "Asha", ttlMs: 1_500 });
  await fx.server.api("POST", "/v1/records/docs/taken/break");
  const ben = await fx.client.checkout("docs", "taken", { owner: "Ben", ttlMs: 10_000 });
  const reason = await aborted(doc.signal);
  assert.ok(reason instanceof LostError);
  assert.equal((await fx.client.get("docs", "taken")).locked_by, "Ben");
  await ben.checkin();
});

test("a lock an administrator breaks is lost at the next keepalive; its release sends nothing", async () => {
  await using s = await fx.client.session("broken-lock", { ttlMs: 1_500 });
  const lk = await s.lock("app", "breakable");
  const slot = await s.semaphore("app", "breakable-lanes", { limit: 2 });
  const broke = await fx.server.api("POST", "/v1/applocks/app/break", { session: s.id, resource: "breakable" });
  assert.equal(broke.body.taken[0].owner, "Session");
  const reason = await aborted(lk.signal);
  assert.ok(reason instanceof LostError);
  assert.equal(lk.held, false);
  assert.equal(slot.held, true);
  assert.equal(s.lost, false);
  const again = await s.lock("app", "breakable", { timeoutMs: 0 });
  await assert.rejects(lk.release(), LostError);
  const listed = (await fx.client.locks("app")).find((l) => l.resource === "breakable");
  assert.deepEqual(
    listed.granted.map((g) => g.count),
    [1],
  );
  await again.release();
  await slot.release();
});

test("a lock past its hold limit is lost at the next keepalive", async () => {
  await using s = await fx.client.session("short-hold", { ttlMs: 1_500 });
  const lk = await s.lock("app", "short-hold", { maxHoldMs: 300 });
  const listed = (await fx.client.locks("app")).find((l) => l.resource === "short-hold");
  assert.notEqual(listed.granted[0].hold_until, null);
  const reason = await aborted(lk.signal);
  assert.ok(reason instanceof LostError);
  assert.equal(s.lost, false);
});
