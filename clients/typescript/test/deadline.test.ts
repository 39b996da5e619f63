// What ends a request in flight: the call's deadline (ioTimeoutMs, a lock
// wait's timeout plus it) and the caller's signal, before the answer's head
// and while its body is read.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { CancelledError, Client, UnreachableError } from "../src/index.js";
import { eventually, serverAndClient } from "./helpers.js";

const fx = serverAndClient();

/** A node that reads each request and answers as `behave` does (perhaps never); it counts the requests. */
async function stallingNode(behave: (res: ServerResponse) => void) {
  const seen: IncomingMessage[] = [];
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(req);
      behave(res);
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    [Symbol.asyncDispose]: () => {
      http.closeAllConnections();
      return new Promise<void>((r) => http.close(() => r()));
    },
  };
}

const isTimeout = (e: unknown) => e instanceof UnreachableError && e.code === "timeout";

test("no answer's head within ioTimeoutMs is UnreachableError timeout", async () => {
  await using node = await stallingNode(() => undefined);
  const client = new Client({ url: node.url, ioTimeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(client.session("silent"), isTimeout);
  const took = Date.now() - started;
  assert.ok(took >= 250 && took < 3_000, `took ${took} ms`);
  assert.equal(node.seen.length, 1, "sent once");
});

test("an answer whose body stalls past ioTimeoutMs is UnreachableError timeout", async () => {
  await using node = await stallingNode((res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"locks":');
  });
  const client = new Client({ url: node.url, ioTimeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(client.locks("app"), isTimeout);
  const took = Date.now() - started;
  assert.ok(took >= 250 && took < 3_000, `took ${took} ms`);
});

test("the caller's signal ends a lock wait, with a timeout or without: CancelledError", async () => {
  await using a = await fx.client.session("holder");
  await using b = await fx.client.session("waiter");
  await a.lock("app", "cancel-me");
  for (const timeoutMs of [-1, 60_000]) {
    const controller = new AbortController();
    const waiting = b.lock("app", "cancel-me", { timeoutMs, signal: controller.signal });
    await eventually(async () =>
      (await fx.client.locks("app")).some((l) => l.resource === "cancel-me" && l.waiting.length > 0),
    );
    const started = Date.now();
    controller.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof CancelledError && e.code === "cancelled");
    assert.ok(Date.now() - started < 1_000, `timeoutMs ${timeoutMs}: cancelled at once`);
    await eventually(
      async () => !(await fx.client.locks("app")).some((l) => l.resource === "cancel-me" && l.waiting.length > 0),
      10_000,
      "the wait to end on the server",
    );
  }
});

test("a signal aborted before the call sends nothing: CancelledError", async () => {
  await using s = await fx.client.session("early");
  const controller = new AbortController();
  controller.abort();
  for (const timeoutMs of [-1, 0, 5_000]) {
    await assert.rejects(
      s.lock("app", "never-asked", { timeoutMs, signal: controller.signal }),
      (e: unknown) => e instanceof CancelledError,
    );
  }
  assert.equal(
    (await fx.client.locks("app")).find((l) => l.resource === "never-asked"),
    undefined,
    "not granted",
  );
});
