// Several URLs: leader finding, redirects, 503s and what is never sent twice,
// against one real server and small fake nodes in front of it.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Client, UnreachableError } from "../src/index.js";
import { TestServer } from "./helpers.js";

let server: TestServer;

interface FakeNode {
  seen: { method: string; url: string; body: string }[];
  http: Server;
  url: string;
  close(): Promise<void>;
}
type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;
before(async () => {
  server = await TestServer.start();
});
after(async () => {
  await server?.stop();
});

/** A fake node: `behave(req, res)` decides; it counts the requests it saw. */
async function fakeNode(behave: Behaviour): Promise<FakeNode> {
  const node = { seen: [] } as unknown as FakeNode;
  node.http = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      node.seen.push({ method: req.method ?? "", url: req.url ?? "", body });
      behave(req, res);
    });
  });
  await new Promise<void>((r) => node.http.listen(0, "127.0.0.1", r));
  node.url = `http://127.0.0.1:${(node.http.address() as AddressInfo).port}`;
  node.close = () => {
    node.http.closeAllConnections();
    return new Promise<void>((r) => node.http.close(() => r()));
  };
  return node;
}

const redirectTo =
  (target: () => string): Behaviour =>
  (req, res) => {
    res.writeHead(307, { location: target() + req.url, "content-type": "application/json" });
    res.end(JSON.stringify({ leader: target(), message: "not the leader" }));
  };
const unavailable: Behaviour = (_req, res) => {
  res.writeHead(503, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: "unavailable", message: "no leader yet" } }));
};
const hangUp: Behaviour = (req) => req.socket.destroy();

async function closedPort(): Promise<string> {
  const probe = await fakeNode(() => undefined);
  await probe.close();
  return probe.url;
}

test("a node that cannot be connected to is passed over, and asked last afterwards", async () => {
  const dead = await closedPort();
  const client = new Client({ url: `${dead},${server.url}` });
  await using s = await client.session("c");
  const lk = await s.lock("app", "cluster-a");
  assert.ok(lk.fence > 0);
  assert.equal(client.transport.urls[0], server.url);
});

test("a 307 is followed with the same method and body, and its node learned", async () => {
  const standby = await fakeNode(redirectTo(() => server.url));
  try {
    const client = new Client({ url: standby.url });
    await using s = await client.session("redirected", { ttlMs: 7_000 });
    assert.equal(standby.seen[0].method, "POST");
    assert.match(standby.seen[0].body, /redirected/);
    assert.deepEqual(client.transport.urls, [server.url, standby.url]);
    const lk = await s.lock("app", "cluster-b");
    await lk.release();
    assert.equal(standby.seen.length, 1, "the leader is asked first afterwards");
  } finally {
    await standby.close();
  }
});

test("a node answering 503 is passed over for the next", async () => {
  const standby = await fakeNode(unavailable);
  try {
    const client = new Client({ url: `${standby.url},${server.url}` });
    await using s = await client.session("past-503");
    assert.ok(s.id);
    assert.equal(standby.seen.length, 1);
  } finally {
    await standby.close();
  }
});

test("redirects in a circle with no leader end in an error by the deadline", async () => {
  let b: FakeNode | undefined;
  const a = await fakeNode(redirectTo(() => b?.url ?? ""));
  b = await fakeNode(redirectTo(() => a.url));
  try {
    const client = new Client({ url: `${a.url},${b.url}`, ioTimeoutMs: 600 });
    const started = Date.now();
    await assert.rejects(client.locks("app"), (e: any) => e.status === 307 || e instanceof UnreachableError);
    assert.ok(Date.now() - started < 3_000);
    assert.ok(a.seen.length >= 2, "asked again after a pause");
  } finally {
    await a.close();
    await b.close();
  }
});

test("a POST whose connection broke after it was sent is never sent again", async () => {
  const breaker = await fakeNode(hangUp);
  try {
    const client = new Client({ url: `${breaker.url},${server.url}` });
    const before = (await server.api("GET", "/v1/sessions")).body.sessions.length;
    await assert.rejects(client.session("once"), UnreachableError);
    assert.equal(breaker.seen.length, 1);
    assert.equal((await server.api("GET", "/v1/sessions")).body.sessions.length, before, "not sent to the next node");
    // A GET is idempotent: it goes on to the next node.
    const locks = await client.locks("app");
    assert.ok(Array.isArray(locks));
  } finally {
    await breaker.close();
  }
});

test("a round in which no node answered fails at once", async () => {
  const client = new Client({ url: `${await closedPort()},${await closedPort()}`, ioTimeoutMs: 5_000 });
  const started = Date.now();
  await assert.rejects(client.session("nobody"), (e: any) => e instanceof UnreachableError && e.code === "unreachable");
  assert.ok(Date.now() - started < 1_000);
});
