// TLS against real servers (`serve --tls-cert …`) with the throwaway
// certificates of scripts/test-certs: verification of the server, mutual
// TLS, the environment variables, and the redirect rule (never from
// https:// down to http://).
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { type AddressInfo, connect } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createServer as createTlsServer } from "node:tls";
import { Client, LeaseholdError, UnreachableError } from "../src/index.js";
import { insecureRedirect } from "../src/transport.js";
import { eventually, makeCerts, TestServer } from "./helpers.js";

let certs: string;
const servers: TestServer[] = [];
const kEnv = ["LEASEHOLD_CA_FILE", "LEASEHOLD_CERT", "LEASEHOLD_KEY"];
// The certificate subject worker.billing (client-billing.pem's SAN) is principal billing.
const kBilling = { tokens: [{ subject: "worker.billing", principal: "billing", namespaces: ["*"], role: "admin" }] };

before(() => {
  for (const name of kEnv) delete process.env[name];
  certs = makeCerts();
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(certs, { recursive: true, force: true });
});

const file = (name: string) => join(certs, name);
const ca = () => file("ca.pem");
const clientCert = (name: string) => ({ certFile: file(`${name}.pem`), keyFile: file(`${name}.key`) });

function tlsArgs(certificate = "server", clientCa = false): string[] {
  const args = ["--tls-cert", file(`${certificate}.pem`), "--tls-key", file(`${certificate}.key`)];
  if (clientCa) args.push("--tls-client-ca", ca(), "--tls-require-client-certificate");
  return args;
}

async function serve(args: string[], config?: unknown): Promise<TestServer> {
  const server = await TestServer.start({ args, config });
  servers.push(server);
  return server;
}

/**
 * The https URL of a real server presenting `certificate`. `serve` refuses
 * to start with an expired one: that one is presented by a TLS front that
 * relays to a plaintext server. `close()` the front after.
 */
async function serving(certificate: string): Promise<{ url: string; close(): void }> {
  if (certificate !== "server-expired") return { url: (await serve(tlsArgs(certificate))).url, close() {} };
  const plain = await serve([]);
  const front = createTlsServer(
    { cert: readFileSync(file(`${certificate}.pem`)), key: readFileSync(file(`${certificate}.key`)) },
    (client) => {
      const upstream = connect(plain.port, "127.0.0.1");
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    },
  );
  front.on("tlsClientError", () => undefined); // the refusals the tests are after
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${(front.address() as AddressInfo).port}`,
    close: () => front.close(),
  };
}

/** Asserts `promise` rejects with UnreachableError `tls` whose message names the TLS failure (`words`, any case). */
async function refusedTls(promise: Promise<unknown>, ...words: string[]): Promise<void> {
  await assert.rejects(promise, (e: any) => {
    assert.ok(e instanceof UnreachableError, String(e));
    assert.equal(e.code, "tls");
    assert.equal(e.status, 0);
    assert.match(e.message, /TLS handshake with https:\/\/.* failed/);
    for (const word of words) assert.ok(e.message.toLowerCase().includes(word), e.message);
    return true;
  });
}

async function openedBy(client: Client, session: string): Promise<string | undefined> {
  const answer = await client.transport.request({ method: "GET", path: "/v1/sessions", retry: "idempotent" });
  return (answer.body as any).sessions.find((s: any) => s.id === session)?.opened_by;
}

test("a lock over https, and the event stream", async () => {
  const server = await serve(tlsArgs());
  assert.match(server.url, /^https:\/\/127\.0\.0\.1:/);
  const client = new Client({ url: server.url, caFile: ca() });
  const controller = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const event of client.watch("app", { signal: controller.signal })) {
      seen.push(event.type);
      if (event.type === "applock.released") controller.abort();
    }
  })();
  await using s = await client.session("worker");
  await sleep(200); // the stream subscribes after it opens
  const lock = await s.lock("app", "invoice:481", { timeoutMs: 5_000 });
  assert.ok(lock.fence > 0);
  assert.equal((await client.locks("app"))[0].granted[0].session, s.id);
  await lock.release();
  await watching; // ends quietly on abort
  assert.deepEqual(seen.slice(-2), ["applock.granted", "applock.released"]);
  assert.equal(await client.healthy(), true);
});

test("localhost, and the CA given as PEM text", async () => {
  const server = await serve(tlsArgs());
  const client = new Client({ url: `https://localhost:${server.port}`, ca: readFileSync(ca(), "utf8") });
  assert.equal((await client.put("docs", "1", "over TLS")).version, 1);
  assert.throws(() => new Client({ url: server.url, ca: "x", caFile: ca() }), { code: "bad_tls" });
});

for (const [certificate, words] of [
  ["server-other-ca", ["unable_to_verify_leaf_signature"]],
  ["server-expired", ["cert_has_expired"]],
  ["server-wrong-host", ["altname", "127.0.0.1"]],
] as const) {
  test(`a server certificate not trusted is refused: ${certificate}`, async () => {
    const server = await serving(certificate);
    try {
      const client = new Client({ url: server.url, caFile: ca(), ioTimeoutMs: 5_000 });
      const started = Date.now();
      // A POST: refused before anything was sent, so not "sent once".
      await refusedTls(client.session("worker"), ...words);
      await refusedTls(client.healthy()); // no waiting for a certificate to mend
      assert.ok(Date.now() - started < 2_000);
    } finally {
      server.close();
    }
  });
}

test("Node's default CA store does not know the test CA", async () => {
  const server = await serve(tlsArgs());
  await refusedTls(new Client({ url: server.url }).get("docs", "1"), "unable_to_verify_leaf_signature");
});

test("mutual TLS: the client certificate's subject is the principal", async () => {
  const server = await serve(tlsArgs("server", true), kBilling);
  const client = new Client({ url: server.url, caFile: ca(), ...clientCert("client-billing") });
  await using s = await client.session("worker");
  assert.equal(await openedBy(client, s.id), "billing");
  const lock = await s.lock("billing", "invoice:1", { timeoutMs: 5_000 });
  assert.ok(lock.fence > 0);
  await lock.release();
});

test("mutual TLS refuses a missing or untrusted client certificate", async () => {
  const server = await serve(tlsArgs("server", true), kBilling);
  for (const [extra, word] of [
    [{}, "certificate required"],
    [clientCert("client-other-ca"), "unknown ca"],
    [clientCert("client-expired"), "expired"],
  ] as const) {
    const client = new Client({ url: server.url, caFile: ca(), ioTimeoutMs: 5_000, ...extra });
    await refusedTls(client.put("billing", "1", "draft"), word);
  }
  const unknown = new Client({ url: server.url, caFile: ca(), ...clientCert("client-unknown") });
  // The handshake passes (the server's CA signed it), but no token names its subject.
  await assert.rejects(unknown.session("worker"), { code: "unauthorized", status: 401 });
});

test("the environment variables are used when no option is", async (t) => {
  t.after(() => {
    for (const name of kEnv) delete process.env[name];
  });
  const server = await serve(tlsArgs("server", true), kBilling);
  process.env.LEASEHOLD_CA_FILE = ca();
  process.env.LEASEHOLD_CERT = file("client-billing.pem");
  process.env.LEASEHOLD_KEY = file("client-billing.key");
  const client = new Client({ url: server.url });
  await using s = await client.session("from-env");
  assert.equal(await openedBy(client, s.id), "billing");
  // An option given wins over its variable.
  await refusedTls(new Client({ url: server.url, ...clientCert("client-other-ca") }).get("billing", "1"), "unknown ca");
  process.env.LEASEHOLD_CA_FILE = file("missing.pem");
  assert.throws(
    () => new Client({ url: server.url }),
    (e: any) => e.code === "bad_tls" && /missing\.pem/.test(e.message),
  );
});

test("plaintext is unchanged with the variables set", async (t) => {
  t.after(() => delete process.env.LEASEHOLD_CA_FILE);
  const server = await serve([]);
  process.env.LEASEHOLD_CA_FILE = ca();
  const client = new Client({ url: server.url });
  await using s = await client.session("plain");
  assert.ok((await s.lock("app", "r")).fence > 0);
});

test("a node refusing TLS is passed over in a mixed list", async () => {
  const other = await serve(tlsArgs("server-other-ca"));
  const plain = await serve([]);
  const client = new Client({ url: `${other.url},${plain.url}`, caFile: ca() });
  assert.equal((await client.put("docs", "mixed", "x")).version, 1);
  assert.equal(client.transport.urls[0], plain.url);
});

/** An https standby: answers every request 307 to `leader()`; `seen` counts them. */
async function httpsStandby(leader: () => string): Promise<{ url: string; seen: () => number; close(): void }> {
  let seen = 0;
  const server: Server = createServer({
    cert: readFileSync(file("server.pem")),
    key: readFileSync(file("server.key")),
  });
  server.on("request", (req, res) => {
    seen++;
    req.resume();
    res.writeHead(307, { location: leader() + req.url, "content-type": "application/json" });
    res.end(JSON.stringify({ leader: leader(), message: "not the leader" }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: () => seen,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

test("no redirect from https down to http; up to https, and across, followed", async () => {
  const plain = await serve([]);
  const secure = await serve(tlsArgs());
  const down = await httpsStandby(() => plain.url);
  try {
    const client = new Client({ url: down.url, caFile: ca(), ioTimeoutMs: 5_000 });
    await assert.rejects(client.put("docs", "r", "never in cleartext"), (e: any) => {
      assert.ok(e instanceof LeaseholdError);
      assert.equal(e.code, "bad_url");
      assert.equal(e.status, 307);
      assert.match(e.message, /https:\/\/ to http:\/\//);
      return true;
    });
    assert.equal(down.seen(), 1);
    assert.deepEqual(client.transport.urls, [down.url]); // not learned
    await assert.rejects(new Client({ url: plain.url }).get("docs", "r"), { code: "not_found" }); // never got there
  } finally {
    down.close();
  }
  const across = await httpsStandby(() => secure.url);
  try {
    const client = new Client({ url: across.url, caFile: ca(), ioTimeoutMs: 5_000 });
    assert.equal((await client.put("docs", "across", "x")).version, 1);
    assert.equal(client.transport.urls[0], secure.url);
  } finally {
    across.close();
  }
  // http up to https: the fake http standby of cluster.test.ts, inline.
  const { createServer: createHttpServer } = await import("node:http");
  const up = createHttpServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: secure.url + req.url }).end();
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
    const client = new Client({ url, caFile: ca(), ioTimeoutMs: 5_000 });
    assert.equal((await client.put("docs", "up", "x")).version, 1);
    assert.equal(client.transport.urls[0], secure.url);
  } finally {
    up.closeAllConnections();
    up.close();
  }
});

test("the redirect rule", () => {
  assert.ok(insecureRedirect("https://a:1", "http://b:2/v1/x") instanceof LeaseholdError);
  assert.ok(insecureRedirect("https://a:1", "HTTP://b:2/v1/x") instanceof LeaseholdError);
  assert.equal(insecureRedirect("https://a:1", "https://b:2/v1/x"), undefined);
  assert.equal(insecureRedirect("http://a:1", "http://b:2/v1/x"), undefined);
  assert.equal(insecureRedirect("http://a:1", "https://b:2/v1/x"), undefined);
  assert.equal(insecureRedirect("https://a:1", null), undefined);
});

test("a wait broken by a restart with a bad certificate stops at once", async () => {
  const server = await serve(tlsArgs());
  const client = new Client({ url: server.url, caFile: ca(), ioTimeoutMs: 30_000 });
  await using holder = await client.session("holder", { ttlMs: 60_000 });
  await using waiter = await client.session("waiter", { ttlMs: 60_000 });
  await holder.lock("app", "job");
  const waiting = waiter.lock("app", "job", { timeoutMs: 60_000 });
  waiting.catch(() => undefined);
  await eventually(async () => (await client.locks("app")).some((l) => l.waiting.length > 0));
  await server.kill();
  server.args = tlsArgs("server-wrong-host");
  await server.launch();
  const started = Date.now();
  await refusedTls(waiting, "altname");
  assert.ok(Date.now() - started < 5_000, "not the 60 s wait plus the I/O allowance");
  // The sessions cannot be ended over this certificate: their disposal's errors are dropped.
  server.args = tlsArgs();
  await server.restart();
});
