import assert from "node:assert/strict";
import { test } from "node:test";
import { serverAndClient } from "./helpers.js";

const fx = serverAndClient();

/** The README's walkthrough: finalize invoice 481 exactly once, the e-mail through the outbox. */
async function finalize(invoice: string): Promise<unknown> {
  await using s = await fx.client.session("billing-worker");
  await using lk = await s.lock("billing", `invoice:${invoice}`, { timeoutMs: 5_000 });
  await using tx = await s.transaction();
  const op = await tx.beginOperation("billing", `finalize:${invoice}`);
  if (op.state === "completed") return op.outcome;
  await fx.client.save("billing", invoice, "final", { fence: lk.fence, session: s.id });
  const outcome = { total: 120, currency: "EUR" };
  await tx.completeOperation("billing", `finalize:${invoice}`, outcome);
  await tx.enqueue("billing", "emails", `invoice-final:${invoice}`, { to: "asha@example.com", invoice });
  await tx.commit();
  return outcome;
}

test("an operation completes once and its message is enqueued once", async () => {
  await fx.client.put("billing", "481", "draft");
  const first = await finalize("481");
  const second = await finalize("481");
  assert.deepEqual(second, first);
  assert.equal((await fx.client.get("billing", "481")).version, 2, "saved once");
  const claimed = await fx.client.claim("billing", "emails", { consumer: "mailer", max: 10, leaseMs: 10_000 });
  assert.equal(claimed.length, 1);
  assert.equal(claimed[0].key, "invoice-final:481");
  assert.equal(await fx.client.ack("billing", "emails", claimed[0]), true);
  assert.equal(await fx.client.ack("billing", "emails", claimed[0]), true, "a repeated ack is harmless");
  assert.deepEqual(await fx.client.claim("billing", "emails", { consumer: "mailer" }), []);
});
